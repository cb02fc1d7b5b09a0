package stack

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
)

// Status is what `kcbench status` shows of a local stack.
type Status struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	Detached bool   `json:"detached"`
	// Keycloak sums the nodes: pid of node 1, RSS and CPU of all, alive
	// when every node is.
	Keycloak ProcStatus      `json:"keycloak"`
	Nodes    []NodeStatus    `json:"nodes"`
	Topology Topology        `json:"topology"`
	Balancer *BalancerStatus `json:"balancer,omitempty"`
	Postgres *ProcStatus     `json:"postgres,omitempty"`
	// MariaDB is the private MariaDB (--db mariadb).
	MariaDB *ProcStatus `json:"mariadb,omitempty"`
	// Slapd is the private directory server (--ldap slapd); LDAPURL the
	// directory the users live in (--ldap).
	Slapd     *ProcStatus `json:"slapd,omitempty"`
	LDAPURL   string      `json:"ldap_url,omitempty"`
	Version   string      `json:"keycloak_version"`
	Java      JDK         `json:"java"`
	URL       string      `json:"url"`
	MgmtURL   string      `json:"management_url"`
	DBURL     string      `json:"db_url"`
	Ready     bool        `json:"ready"`
	Listeners []Listener  `json:"listeners"`
	LastBoot  *BootResult `json:"last_boot,omitempty"`
	// Heap is the running JVM's maximum heap (node 1's).
	Heap *Heap `json:"heap,omitempty"`
	// JavaOpts are the extra JVM options the nodes start with (--java-opt).
	JavaOpts []string `json:"java_opts,omitempty"`
	// VolatileSessions: online user sessions in memory only
	// (--persistent-sessions=false).
	VolatileSessions bool `json:"volatile_sessions,omitempty"`
	// TLS describes how the stack serves HTTPS ("" when plain); CAFile is
	// the CA that clients (curl --cacert, k6, a browser) must trust.
	TLS    string `json:"tls,omitempty"`
	CAFile string `json:"ca_file,omitempty"`
}

// NodeStatus is one Keycloak node.
type NodeStatus struct {
	Index   int        `json:"index"`
	URL     string     `json:"url"`
	MgmtURL string     `json:"management_url"`
	Process ProcStatus `json:"process"`
	Ready   bool       `json:"ready"`
	// View is the member count of the node's cluster view (from its
	// log); 0 for a single node.
	View int `json:"cluster_view,omitempty"`
	// CPULimit is the node's quota and how it is applied; Throttling its
	// cgroup's cpu.stat.
	CPULimit   *CPULimit   `json:"cpu_limit,omitempty"`
	Throttling *Throttling `json:"throttling,omitempty"`
}

// BalancerStatus is the HAProxy in front of a cluster.
type BalancerStatus struct {
	URL      string         `json:"url"`
	Process  ProcStatus     `json:"process"`
	Backends []BackendStats `json:"backends,omitempty"`
	Error    string         `json:"error,omitempty"`
}

// ProcStatus describes one server process.
type ProcStatus struct {
	Version string        `json:"version,omitempty"`
	PID     int           `json:"pid"`
	Alive   bool          `json:"alive"`
	RSS     int64         `json:"rss_bytes"`
	CPU     time.Duration `json:"cpu_ns"`
	Uptime  time.Duration `json:"uptime_ns,omitempty"`
}

// Status reads the stack's processes and asks each node whether it is
// ready (and, in a cluster, reads its view).
func (s *Stack) Status(ctx context.Context) Status {
	st := Status{
		Name: s.st.Name, Dir: s.st.Dir, Detached: s.st.Detached,
		Version: s.st.Options.Version, Java: s.st.Java, Topology: s.st.Topology,
		URL: s.Target().BaseURL, MgmtURL: s.managementURL(), DBURL: s.st.DB.URL,
		LastBoot: s.st.LastBoot, JavaOpts: s.st.Options.JavaOpts,
		VolatileSessions: s.st.Options.VolatileSessions,
	}
	if c := s.st.TLS; c != nil {
		st.TLS, st.CAFile = c.Key+" certificate", c.CA
		if s.st.LB != nil {
			st.TLS += ", balancer in " + cmp.Or(s.st.Topology.LBTLS, LBTLSPassthrough)
		}
	}
	hc := s.httpClient(3 * time.Second)
	st.Ready = len(s.st.Nodes) > 0
	st.Keycloak = ProcStatus{Version: s.st.Options.Version, Alive: len(s.st.Nodes) > 0}
	for _, ns := range s.st.Nodes {
		nst := s.nodeStatus(ctx, ns, hc, &st)
		if st.Keycloak.PID == 0 {
			st.Keycloak.PID, st.Keycloak.Uptime = nst.Process.PID, nst.Process.Uptime
		}
		st.Keycloak.Alive = st.Keycloak.Alive && nst.Process.Alive
		st.Keycloak.RSS += nst.Process.RSS
		st.Keycloak.CPU += nst.Process.CPU
		st.Ready = st.Ready && nst.Ready
		st.Nodes = append(st.Nodes, nst)
	}
	if b := s.st.LB; b != nil {
		bs := &BalancerStatus{URL: b.URL(), Process: procStatus("", b.Proc)}
		if bs.Process.Alive {
			var err error
			if bs.Backends, err = b.serverStats(ctx, hc); err != nil {
				bs.Error = err.Error()
			}
		}
		st.Ready = st.Ready && bs.Process.Alive
		st.Balancer = bs
	}
	if pg := s.st.PG; pg != nil {
		ps := ProcStatus{Version: pg.Version, PID: pg.Proc.PID, Alive: pg.Proc.Alive()}
		if ps.Alive {
			ps.Uptime = pg.Proc.Uptime()
			for _, p := range pg.Proc.Members() {
				r, _ := RSS(p)
				ps.RSS += r
				c, _ := CPUTime(p)
				ps.CPU += c
			}
		}
		st.Postgres = &ps
	}
	if m := s.st.MariaDB; m != nil {
		ps := procStatus(m.Version, m.Proc)
		st.MariaDB = &ps
	}
	if d := s.Directory(); d != nil {
		st.LDAPURL = d.URL
	}
	if l := s.st.Slapd; l != nil {
		ps := procStatus("", l.Proc)
		st.Slapd = &ps
	}
	st.Listeners, _ = Listeners(s.Pids())
	return st
}

// procStatus is a server process's status: alive, with its uptime, RSS
// and CPU time when it is.
func procStatus(version string, p Proc) ProcStatus {
	ps := ProcStatus{Version: version, PID: p.PID, Alive: p.Alive()}
	if ps.Alive {
		ps.Uptime = p.Uptime()
		ps.RSS, _ = RSS(p.PID)
		ps.CPU, _ = CPUTime(p.PID)
	}
	return ps
}

// nodeStatus is one node's status: its JVM, CPU quota and throttling,
// readiness and cluster view (a node that does not see them all makes the
// stack not ready); st gets the heap in force from the first live node.
func (s *Stack) nodeStatus(ctx context.Context, ns NodeState, hc *http.Client, st *Status) NodeStatus {
	nst := NodeStatus{Index: ns.Index, URL: ns.URL(), MgmtURL: ns.MgmtURL(), CPULimit: ns.CPU}
	if ns.CPU != nil && ns.CPU.Group != "" {
		if th, err := ns.CPU.Throttling(); err == nil {
			nst.Throttling = &th
		}
	}
	if n := ns.Proc; n != nil {
		nst.Process = procStatus(s.st.Options.Version, n.JVM)
		if nst.Process.Alive {
			if st.Heap == nil {
				if h, err := HeapInForce(n.JVM.PID); err == nil {
					st.Heap = &h
				}
			}
			nst.Ready, _ = kc.Ready(ctx, hc, nst.MgmtURL)
		}
	}
	if s.st.Topology.Clustered() {
		nst.View = ns.ClusterView()
		if nst.View != len(s.st.Nodes) {
			st.Ready = false
		}
	}
	return nst
}

// NodeSample is one node's counters at a moment (or, from Since, their
// change over an interval).
type NodeSample struct {
	Node int           `json:"node"`
	CPU  time.Duration `json:"cpu_ns"`
	RSS  int64         `json:"rss_bytes"`
	// Throttling is the node's cgroup cpu.stat (nil without a cgroup).
	Throttling *Throttling `json:"throttling,omitempty"`
	// Requests is what the balancer sent the node (nil without one).
	Requests *int64 `json:"lb_requests,omitempty"`
}

// NodeSamples are every node's counters and the balancer's CPU.
type NodeSamples struct {
	At          time.Time     `json:"at"`
	Nodes       []NodeSample  `json:"nodes"`
	BalancerCPU time.Duration `json:"balancer_cpu_ns,omitempty"`
}

// SampleNodes reads each node's JVM CPU and RSS, cgroup throttling and
// balancer request count.
func (s *Stack) SampleNodes(ctx context.Context) NodeSamples {
	out := NodeSamples{At: time.Now()}
	var lb map[string]int64
	if st, err := s.BalancerStats(ctx); err == nil && st != nil {
		lb = map[string]int64{}
		for _, b := range st {
			lb[b.Node] = b.Requests
		}
		out.BalancerCPU, _ = CPUTime(s.st.LB.Proc.PID)
	}
	for _, ns := range s.st.Nodes {
		smp := NodeSample{Node: ns.Index}
		if ns.Proc != nil {
			smp.CPU, _ = CPUTime(ns.Proc.JVM.PID)
			smp.RSS, _ = RSS(ns.Proc.JVM.PID)
		}
		if ns.CPU != nil && ns.CPU.Group != "" {
			if th, err := ns.CPU.Throttling(); err == nil {
				smp.Throttling = &th
			}
		}
		if r, ok := lb[fmt.Sprintf("node%d", ns.Index)]; ok {
			smp.Requests = &r
		}
		out.Nodes = append(out.Nodes, smp)
	}
	return out
}

// Since is the change from before to a: CPU, throttling and requests as
// differences, RSS as in a.
func (a NodeSamples) Since(before NodeSamples) NodeSamples {
	d := NodeSamples{At: a.At, BalancerCPU: a.BalancerCPU - before.BalancerCPU}
	for i, n := range a.Nodes {
		if i >= len(before.Nodes) {
			d.Nodes = append(d.Nodes, n)
			continue
		}
		b := before.Nodes[i]
		n.CPU -= b.CPU
		if n.Throttling != nil && b.Throttling != nil {
			t := Throttling{Periods: n.Throttling.Periods - b.Throttling.Periods, Throttled: n.Throttling.Throttled - b.Throttling.Throttled, Time: n.Throttling.Time - b.Throttling.Time}
			n.Throttling = &t
		}
		if n.Requests != nil && b.Requests != nil {
			r := *n.Requests - *b.Requests
			n.Requests = &r
		}
		d.Nodes = append(d.Nodes, n)
	}
	return d
}
