package stack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Watch watches the stack's Keycloak from now on, for a run that needs to
// know when the server goes away (scenario.RunInput.Alive takes its
// Check).
func (s *Stack) Watch() *Watcher {
	w := &Watcher{log: s.LogPath(), ready: s.managementURL() + "/health/ready",
		hc: &http.Client{Timeout: watchReadyTimeout}}
	if n := s.st.Node; n != nil {
		w.jvm = n.JVM
	}
	if fi, err := os.Stat(w.log); err == nil {
		w.off = fi.Size()
	}
	return w
}

// Watcher tells whether Keycloak is still there: its JVM runs, its log
// shows no OutOfMemoryError since the watch began, and its readiness
// endpoint does not answer that it is down.
type Watcher struct {
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
	if w.jvm.PID > 0 && !w.jvm.Alive() {
		if oom := w.oom(); oom != "" {
			return fmt.Errorf("Keycloak exited: %s (log: %s)", oom, w.log)
		}
		return fmt.Errorf("Keycloak exited (log: %s)", w.log)
	}
	if oom := w.oom(); oom != "" {
		return fmt.Errorf("Keycloak logged %s (log: %s)", oom, w.log)
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
		return fmt.Errorf("Keycloak lost readiness: %s answered HTTP 503 %d times in a row", w.ready, w.notReady)
	}
	return nil
}

// oom returns the first OutOfMemoryError line Keycloak logged since the
// watch began, shortened to "OutOfMemoryError: <what ran out>". Each call
// reads only what was logged since the last (whole lines).
func (w *Watcher) oom() string {
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
