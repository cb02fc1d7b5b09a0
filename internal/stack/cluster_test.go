package stack

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTopologyValidate(t *testing.T) {
	for _, tc := range []struct {
		top  Topology
		want string // "" = valid
	}{
		{Topology{}, ""},
		{Topology{Nodes: 1}, ""},
		{Topology{Nodes: 4, LB: LBHAProxy, Sticky: true, NodeCPUs: 0.5}, ""},
		{Topology{Nodes: 2, LB: LBNone}, ""},
		{Topology{Nodes: -1}, "nodes -1: want 1 to 4"},
		{Topology{Nodes: 9}, "nodes 9: want 1 to 4"},
		{Topology{Nodes: 2, LB: "nginx"}, `lb "nginx"`},
		{Topology{Nodes: 2, LB: LBNone, Sticky: true}, "sticky needs a balancer"},
		{Topology{NodeCPUs: -1}, "node cpus -1"},
	} {
		err := tc.top.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.top, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.top, err, tc.want)
		}
	}
}

func TestTopologyDefaults(t *testing.T) {
	one := Topology{}
	one.defaults()
	if one.Nodes != 1 || one.LB != LBNone {
		t.Errorf("one node: %+v", one)
	}
	two := Topology{Nodes: 2}
	two.defaults()
	if two.LB != LBHAProxy {
		t.Errorf("two nodes: %+v, want haproxy in front", two)
	}
}

func TestClusterStartArgs(t *testing.T) {
	o := KeycloakOptions{Version: "26.7.3"}
	args := strings.Join(o.startArgs(dbConn{URL: "jdbc:postgresql://127.0.0.1:1/keycloak", User: "keycloak"},
		NodeState{Index: 2, Host: "127.0.0.3", HTTPPort: 8080, MgmtPort: 9000, JGroupsPort: 7800}, nil), " ")
	for _, want := range []string{"--http-host=127.0.0.3", "--cache=ispn", "--cache-embedded-network-bind-address=127.0.0.3", "--cache-embedded-network-bind-port=7800"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--cache=local") {
		t.Errorf("cluster node with --cache=local: %q", args)
	}
	n := NodeState{Index: 2, Host: "127.0.0.3", HTTPPort: 8080, MgmtPort: 9000, JGroupsPort: 7800}
	if p := o.jgroupsProperties(n, "127.0.0.1"); p != "" {
		t.Errorf("26.7.3 has the network options, yet system properties %q", p)
	}
	// 26.3.5 refuses --cache-embedded-network-* ("Unknown option"): the
	// JGroups stack's system properties say the same
	old := KeycloakOptions{Version: "26.3.5"}
	args = strings.Join(old.startArgs(dbConn{URL: "jdbc:postgresql://127.0.0.1:1/keycloak", User: "keycloak"}, n, nil), " ")
	if !strings.Contains(args, "--cache=ispn") || strings.Contains(args, "--cache-embedded-network") {
		t.Errorf("26.3.5 args %q", args)
	}
	if p, want := old.jgroupsProperties(n, "127.0.0.1"), "-Djgroups.bind.address=127.0.0.3 -Djgroups.bind.port=7800 -Djgroups.external_addr=127.0.0.1"; p != want {
		t.Errorf("26.3.5 properties %q, want %q", p, want)
	}
	if p := old.jgroupsProperties(NodeState{Host: "127.0.0.1"}, ""); p != "" {
		t.Errorf("a node without a cluster got %q", p)
	}
}

func TestNodeLayout(t *testing.T) {
	if h := nodeHost(1, 1); h != "127.0.0.1" {
		t.Errorf("single node on %s", h)
	}
	if h := nodeHost(3, 3); h != "127.0.0.4" {
		t.Errorf("node 3 of 3 on %s", h)
	}
	home, log := nodeFiles("/s", 1)
	if home != "/s/keycloak" || log != "/s/keycloak.log" {
		t.Errorf("node 1: %s %s", home, log)
	}
	home, log = nodeFiles("/s", 2)
	if home != "/s/keycloak-2" || log != "/s/keycloak-2.log" {
		t.Errorf("node 2: %s %s", home, log)
	}
}

func TestLastClusterView(t *testing.T) {
	log := `2026-11-25 00:10:01,000 INFO  [org.infinispan.CLUSTER] (main) ISPN000094: Received new cluster view for channel ISPN: [vm-25842|0] (1) [vm-25842]
2026-11-25 00:10:07,000 INFO  [org.infinispan.CLUSTER] (jgroups-5,vm-25842) ISPN100000: Node vm-14667 joined the cluster
2026-11-25 00:10:07,001 INFO  [org.infinispan.CLUSTER] (jgroups-5,vm-25842) ISPN000094: Received new cluster view for channel ISPN: [vm-25842|1] (2) [vm-25842, vm-14667]
`
	if v := lastClusterView(strings.NewReader(log)); v != 2 {
		t.Errorf("view %d, want 2", v)
	}
	if v := lastClusterView(strings.NewReader("no view here\n")); v != 0 {
		t.Errorf("view %d, want 0", v)
	}
	// The view of this run only: the offset skips an earlier run's lines.
	f := filepath.Join(t.TempDir(), "kc.log")
	os.WriteFile(f, []byte(log+"==== kcbench: restart\n"), 0o644)
	n := NodeState{Log: f, LogOffset: int64(len(log))}
	if v := n.ClusterView(); v != 0 {
		t.Errorf("view after offset %d, want 0", v)
	}
}

func TestAttachReadsSchema1(t *testing.T) {
	d := Dirs{State: t.TempDir(), Cache: t.TempDir()}
	dir := stackDir(d, "old")
	os.MkdirAll(dir, 0o755)
	v1 := map[string]any{"schema": 1, "name": "old", "dir": dir, "home": filepath.Join(dir, "keycloak"),
		"http_port": 8080, "management_port": 9000, "keycloak": map[string]any{"script": map[string]any{"pid": 1}}}
	b, _ := json.Marshal(v1)
	os.WriteFile(filepath.Join(dir, "stack.json"), b, 0o644)
	s, err := Attach(d, "old")
	if err != nil {
		t.Fatal(err)
	}
	st := s.State()
	if len(st.Nodes) != 1 || st.Nodes[0].HTTPPort != 8080 || st.Nodes[0].MgmtPort != 9000 || st.Nodes[0].Proc == nil || st.Nodes[0].Proc.Script.PID != 1 {
		t.Fatalf("nodes %+v", st.Nodes)
	}
	if got := s.Target().BaseURL; got != "http://127.0.0.1:8080" {
		t.Errorf("target %s", got)
	}
}

func TestParseCPUStat(t *testing.T) {
	v1, err := parseCPUStat(strings.NewReader("nr_periods 120\nnr_throttled 30\nthrottled_time 2500000000\nnr_bursts 0\n"))
	if err != nil || v1.Periods != 120 || v1.Throttled != 30 || v1.Time.Seconds() != 2.5 {
		t.Errorf("v1: %+v %v", v1, err)
	}
	v2, _ := parseCPUStat(strings.NewReader("usage_usec 100\nnr_periods 10\nnr_throttled 4\nthrottled_usec 1500000\n"))
	if v2.Periods != 10 || v2.Throttled != 4 || v2.Time.Seconds() != 1.5 {
		t.Errorf("v2: %+v", v2)
	}
}

func TestAffinityList(t *testing.T) {
	for _, tc := range []struct {
		i    int
		cpus float64
		n    int
		want string
	}{
		{1, 1, 2, "0"}, {2, 1, 2, "1"}, {3, 1, 2, "0"}, {1, 0.5, 2, "0"}, {1, 1.5, 4, "0,1"}, {2, 1.5, 4, "2,3"}, {1, 3, 2, "0,1"},
	} {
		if got := affinityList(tc.i, tc.cpus, tc.n); got != tc.want {
			t.Errorf("node %d, %g cpus of %d: %q, want %q", tc.i, tc.cpus, tc.n, got, tc.want)
		}
	}
}

func TestCPULimitWrap(t *testing.T) {
	var none *CPULimit
	if n, a := none.wrap("kc.sh", []string{"start"}); n != "kc.sh" || len(a) != 1 {
		t.Errorf("no limit: %s %v", n, a)
	}
	l := &CPULimit{Method: CPULimitV1, Group: "/sys/fs/cgroup/cpu/kcbench/x/node1"}
	n, a := l.wrap("kc.sh", []string{"start"})
	if n != "/bin/sh" || a[len(a)-2] != "kc.sh" || a[len(a)-3] != "/sys/fs/cgroup/cpu/kcbench/x/node1/cgroup.procs" {
		t.Errorf("cgroup wrap: %s %q", n, a)
	}
	// The wrapper really moves itself and execs: run it against a plain file.
	procs := filepath.Join(t.TempDir(), "cgroup.procs")
	l.Group = filepath.Dir(procs)
	n, a = l.wrap("/bin/echo", []string{"hello"})
	out, err := exec.Command(n, a...).Output()
	if err != nil || strings.TrimSpace(string(out)) != "hello" {
		t.Fatalf("wrapped echo: %q %v", out, err)
	}
	if b, _ := os.ReadFile(procs); strings.TrimSpace(string(b)) == "" {
		t.Error("the wrapper did not write its pid")
	}
}

func TestParseHAProxyCSV(t *testing.T) {
	// Captured from HAProxy 2.6 (Debian 12): two servers down.
	f, err := os.Open("testdata/haproxy-stats.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := parseHAProxyCSV(f, "nodes")
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 2 || st[0].Node != "node1" || st[1].Node != "node2" || st[0].Status != "DOWN" {
		t.Fatalf("%+v", st)
	}
	csv := "# pxname,svname,stot,status,hrsp_5xx,req_tot\nnodes,node1,3,UP,1,40\nnodes,node2,2,UP,0,\nnodes,BACKEND,5,UP,1,40\nstats,FRONTEND,1,OPEN,0,1\n"
	st, err = parseHAProxyCSV(strings.NewReader(csv), "nodes")
	if err != nil || len(st) != 2 || st[0].Requests != 40 || st[0].Errors5xx != 1 || st[1].Requests != 2 {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := parseHAProxyCSV(strings.NewReader("# a,b\n"), "nodes"); err == nil {
		t.Error("want an error for a CSV without the columns")
	}
}

func TestHAProxyConfig(t *testing.T) {
	dir := t.TempDir()
	nodes := []NodeState{{Index: 1, Host: "127.0.0.2", HTTPPort: 8080, MgmtPort: 9000}, {Index: 2, Host: "127.0.0.3", HTTPPort: 8080, MgmtPort: 9000}}
	b := &balancer{Config: filepath.Join(dir, "haproxy.cfg"), Port: 18080, StatsPort: 18081}
	for _, sticky := range []bool{false, true} {
		if err := b.writeConfig(nodes, sticky, nil, ""); err != nil {
			t.Fatal(err)
		}
		cfg, _ := os.ReadFile(b.Config)
		for _, want := range []string{"bind 127.0.0.1:18080", "balance roundrobin", "option httpchk GET /health/ready",
			"server node1 127.0.0.2:8080 check port 9000", "server node2 127.0.0.3:8080 check port 9000", "bind 127.0.0.1:18081"} {
			if !strings.Contains(string(cfg), want) {
				t.Errorf("sticky=%v: config lacks %q:\n%s", sticky, want, cfg)
			}
		}
		if got := strings.Contains(string(cfg), "stick on req.cook(AUTH_SESSION_ID)"); got != sticky {
			t.Errorf("sticky=%v: stick rule present %v", sticky, got)
		}
		// HAProxy itself accepts it, when installed.
		if bin, err := findHAProxy(""); err == nil {
			if out, err := exec.Command(bin, "-c", "-f", b.Config).CombinedOutput(); err != nil {
				t.Errorf("sticky=%v: haproxy -c: %v\n%s", sticky, err, out)
			}
		}
	}
}

func TestFindHAProxyMissing(t *testing.T) {
	_, err := findHAProxy("/nonexistent/haproxy")
	if !errors.Is(err, ErrNoHAProxy) {
		t.Fatalf("err %v", err)
	}
}
