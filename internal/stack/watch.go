package stack

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Watch watches the stack's Keycloak from now on, for a run that needs to
// know when the server goes away (scenario.RunInput.Alive takes its
// Check). In a cluster every node is watched; one gone is enough. Nodes
// that fault events (ApplyFault) take down are not watched until an event
// brings them back, as their new process.
func (s *Stack) Watch() *Watcher {
	w := &Watcher{nodes: map[int]*nodeWatch{}}
	for _, ns := range s.st.Nodes {
		w.nodes[ns.Index] = s.newNodeWatch(ns)
	}
	if len(w.nodes) == 0 {
		w.nodes[1] = &nodeWatch{log: s.LogPath(), hc: s.httpClient(watchReadyTimeout)}
	}
	s.watchMu.Lock()
	s.watchers = append(s.watchers, w)
	s.watchMu.Unlock()
	return w
}

func (s *Stack) newNodeWatch(ns NodeState) *nodeWatch {
	w := &nodeWatch{log: ns.Log, ready: ns.MgmtURL() + "/health/ready",
		hc: s.httpClient(watchReadyTimeout)}
	if len(s.st.Nodes) > 1 {
		w.who = fmt.Sprintf("Keycloak node %d", ns.Index)
	}
	if n := ns.Proc; n != nil {
		w.jvm = n.JVM
	}
	if fi, err := os.Stat(w.log); err == nil {
		w.off = fi.Size()
	}
	return w
}

// watchNode tells the stack's watchers that node i went down (up=false:
// no longer watched) or is up again as its current process.
func (s *Stack) watchNode(i int, up bool) {
	up = up && i >= 1 && i <= len(s.st.Nodes)
	s.watchMu.Lock()
	defer s.watchMu.Unlock()
	for _, w := range s.watchers {
		w.mu.Lock()
		if up {
			nw := s.newNodeWatch(s.st.Nodes[i-1])
			nw.off = s.st.Nodes[i-1].LogOffset
			w.nodes[i] = nw
		} else {
			delete(w.nodes, i)
		}
		w.mu.Unlock()
	}
}

// Watcher tells whether Keycloak is still there: its JVM runs, its log
// shows no OutOfMemoryError since the watch began, and its readiness
// endpoint does not answer that it is down.
type Watcher struct {
	mu    sync.Mutex
	nodes map[int]*nodeWatch // by node index; a node down by an event is absent
}

// nodeWatch watches one node.
type nodeWatch struct {
	who   string // "Keycloak node 2" in a cluster; "" means "Keycloak"
	jvm   Proc
	log   string
	off   int64
	ready string
	hc    *http.Client

	mu       sync.Mutex
	notReady int    // readiness checks in a row that answered "not ready"
	found    string // the OutOfMemoryError seen
}

const (
	watchReadyTimeout = 2 * time.Second
	// watchNotReady is how many readiness checks in a row must answer
	// "not ready" (HTTP 503) before readiness counts as lost. Checks that
	// time out or fail at connect do not count: a server under more load
	// than it can take answers slowly without being down, and one that is
	// gone is told by its process.
	watchNotReady = 3
)

var oomRe = regexp.MustCompile(`(?:java\.lang\.)?OutOfMemoryError(?::\s*([^\r\n]*))?`)

// Check returns nil while Keycloak is there, else an error saying what
// happened, e.g. "Keycloak exited: OutOfMemoryError: Java heap space".
func (w *Watcher) Check(ctx context.Context) error {
	w.mu.Lock()
	ids := slices.Sorted(maps.Keys(w.nodes))
	nodes := make([]*nodeWatch, len(ids))
	for k, i := range ids {
		nodes[k] = w.nodes[i]
	}
	w.mu.Unlock()
	for k, n := range nodes {
		if err := n.check(ctx); err != nil {
			// A fault event may have taken the node down (or brought a
			// new process up) while it was checked: only the node still
			// watched as this process counts.
			w.mu.Lock()
			current := w.nodes[ids[k]] == n
			w.mu.Unlock()
			if current {
				return err
			}
		}
	}
	return nil
}

func (w *nodeWatch) check(ctx context.Context) error {
	who := w.who
	if who == "" {
		who = "Keycloak"
	}
	if w.jvm.PID > 0 && !w.jvm.Alive() {
		if oom := w.oom(); oom != "" {
			return fmt.Errorf("%s exited: %s (log: %s)", who, oom, w.log)
		}
		return fmt.Errorf("%s exited (log: %s)", who, w.log)
	}
	if oom := w.oom(); oom != "" {
		return fmt.Errorf("%s logged %s (log: %s)", who, oom, w.log)
	}
	if w.ready == "" {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.ready, nil)
	if err != nil {
		return nil
	}
	resp, err := w.hc.Do(req)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		return nil
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		w.notReady++
	} else {
		w.notReady = 0
	}
	if w.notReady >= watchNotReady {
		return fmt.Errorf("%s lost readiness: %s answered HTTP 503 %d times in a row", who, w.ready, w.notReady)
	}
	return nil
}

// oom returns the first OutOfMemoryError line Keycloak logged since the
// watch began, shortened to "OutOfMemoryError: <what ran out>". Each call
// reads only what was logged since the last (whole lines).
func (w *nodeWatch) oom() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.found != "" {
		return w.found
	}
	out := readFrom(w.log, w.off)
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[:i+1]
	} else {
		out = ""
	}
	w.off += int64(len(out))
	m := oomRe.FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	w.found = "OutOfMemoryError"
	if what := strings.TrimSpace(m[1]); what != "" {
		w.found += ": " + what
	}
	return w.found
}
