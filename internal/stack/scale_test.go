package stack

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// A reload puts a new node behind the running HAProxy: the stats show it
// up, requests reach it, the replaced process exits (HAProxy from PATH;
// the nodes are plain HTTP servers answering /health/ready).
func TestBalancerReload(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	var nodes []NodeState
	hits := make([]int, 3)
	for i := range 3 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/health/ready" {
				hits[i]++
			}
		}))
		t.Cleanup(srv.Close)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		p, _ := strconv.Atoi(port)
		nodes = append(nodes, NodeState{Index: i + 1, Host: "127.0.0.1", HTTPPort: p, MgmtPort: p, Proc: &node{}})
	}
	s := &Stack{logf: t.Logf, st: State{Dir: t.TempDir(), Nodes: nodes[:2], Topology: Topology{Nodes: 2, LB: LBHAProxy}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.startBalancer(ctx, bin); err != nil {
		t.Fatal(err)
	}
	defer s.st.LB.stop()
	old := s.st.LB.Proc
	s.st.Nodes = nodes
	if err := s.reloadBalancer(ctx); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for range 6 {
		resp, err := hc.Get(s.st.LB.URL() + "/x")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if hits[2] == 0 {
		t.Errorf("node 3 served none of 6 requests: %v", hits)
	}
	deadline := time.Now().Add(35 * time.Second)
	for old.Alive() && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if old.Alive() {
		t.Errorf("the replaced haproxy (pid %d) still runs", old.PID)
	}
}

// With --lb-sticky, the real HAProxy keeps a client on the node that set
// its AUTH_SESSION_ID cookie (as a Keycloak node does when a login flow
// begins), while requests without the cookie still go round-robin.
func TestBalancerSticky(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy not installed")
	}
	var nodes []NodeState
	hits := make([]atomic.Int64, 2)
	for i := range 2 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/health/ready" {
				return
			}
			hits[i].Add(1)
			if _, err := r.Cookie("AUTH_SESSION_ID"); err != nil {
				http.SetCookie(w, &http.Cookie{Name: "AUTH_SESSION_ID", Value: fmt.Sprintf("s%d-%d.node%d", i, hits[i].Load(), i+1), Path: "/realms/t1/"})
			}
			fmt.Fprint(w, i+1)
		}))
		t.Cleanup(srv.Close)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		p, _ := strconv.Atoi(port)
		nodes = append(nodes, NodeState{Index: i + 1, Host: "127.0.0.1", HTTPPort: p, MgmtPort: p, Proc: &node{}})
	}
	s := &Stack{logf: t.Logf, st: State{Dir: t.TempDir(), Nodes: nodes, Topology: Topology{Nodes: 2, LB: LBHAProxy, Sticky: true}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.startBalancer(ctx, bin); err != nil {
		t.Fatal(err)
	}
	defer s.st.LB.stop()
	// get returns the node that answered and the cookie it set, if any.
	get := func(cookie string) (string, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.st.LB.URL()+"/realms/t1/login", nil)
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "AUTH_SESSION_ID", Value: cookie})
		}
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		set := ""
		for _, c := range resp.Cookies() {
			if c.Name == "AUTH_SESSION_ID" {
				set = c.Value
			}
		}
		return string(b), set
	}
	// Without the cookie, round-robin: both nodes answer.
	seen := map[string]string{} // node → a cookie it set
	for range 4 {
		n, c := get("")
		if c == "" {
			t.Fatalf("node %s set no AUTH_SESSION_ID", n)
		}
		seen[n] = c
	}
	if len(seen) != 2 {
		t.Fatalf("4 requests without a cookie reached nodes %v, want both", seen)
	}
	// With it, always the node that set it.
	for node, cookie := range seen {
		for range 5 {
			if got, _ := get(cookie); got != node {
				t.Fatalf("a request holding node %s's session went to node %s", node, got)
			}
		}
	}
}
