package stack

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
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
