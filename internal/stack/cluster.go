package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxNodes bounds --nodes: more JVMs than that on one box measure the box,
// not Keycloak.
const MaxNodes = 4

// Load balancer kinds.
const (
	LBNone    = "none"
	LBHAProxy = "haproxy"
)

// Topology is the shape of the Keycloak side of a stack: how many nodes,
// what sits in front of them, and how much CPU each gets.
type Topology struct {
	// Nodes is the number of Keycloak nodes (1..MaxNodes; 0 means 1).
	// Several nodes form one Infinispan cluster (--cache=ispn, Keycloak's
	// default jdbc-ping discovery through the shared database); one node
	// keeps --cache=local, so single-node figures do not change.
	Nodes int `json:"nodes"`
	// LB is the load balancer in front of the nodes: "haproxy" (default
	// for several nodes) or "none" (the target is node 1).
	LB string `json:"lb"`
	// Sticky makes the balancer keep a client on the node that holds its
	// AUTH_SESSION_ID (Keycloak's reverse-proxy guide).
	Sticky bool `json:"lb_sticky,omitempty"`
	// HAProxy is the haproxy binary; empty means haproxy on PATH.
	HAProxy string `json:"haproxy,omitempty"`
	// NodeCPUs is each node's CPU quota in cores (0: no limit).
	NodeCPUs float64 `json:"node_cpus,omitempty"`
	// Latency is injected on the links kcbench controls (zero: none, and
	// no proxy).
	Latency Latency `json:"latency,omitzero"`
	// LBTLS is how the balancer handles TLS (LBTLSModes; "": passthrough)
	// on a stack that serves HTTPS.
	LBTLS string `json:"lb_tls,omitempty"`
}

// ServerCores is the CPU the nodes may use together on a machine with
// machine cores: their quotas, or the whole machine without one.
func (t Topology) ServerCores(machine int) float64 {
	t.defaults()
	if t.NodeCPUs > 0 {
		return min(float64(t.Nodes)*t.NodeCPUs, float64(machine))
	}
	return float64(machine)
}

func (t *Topology) defaults() {
	if t.Nodes == 0 {
		t.Nodes = 1
	}
	if t.LB == "" {
		t.LB = LBNone
		if t.Nodes > 1 {
			t.LB = LBHAProxy
		}
	}
}

// Validate checks the topology without side effects (after defaults, or
// with zero values meaning "default").
func (t Topology) Validate() error {
	var errs []error
	if t.Nodes < 0 || t.Nodes > MaxNodes {
		errs = append(errs, fmt.Errorf("nodes %d: want 1 to %d", t.Nodes, MaxNodes))
	}
	switch t.LB {
	case "", LBNone, LBHAProxy:
	default:
		errs = append(errs, fmt.Errorf("lb %q: want %s or %s", t.LB, LBHAProxy, LBNone))
	}
	if t.Sticky && t.LB == LBNone {
		errs = append(errs, errors.New("lb sticky needs a balancer (--lb haproxy)"))
	}
	if t.LBTLS != "" && !contains(LBTLSModes, t.LBTLS) {
		errs = append(errs, fmt.Errorf("lb tls %q: want %s", t.LBTLS, strings.Join(LBTLSModes, ", ")))
	}
	if t.LBTLS != "" && t.LB == LBNone {
		errs = append(errs, errors.New("--lb-tls needs a balancer (--lb haproxy)"))
	}
	if t.NodeCPUs < 0 || t.NodeCPUs != t.NodeCPUs {
		errs = append(errs, fmt.Errorf("node cpus %g: want a number of cores > 0 (0: no limit)", t.NodeCPUs))
	}
	if !t.Latency.NodeNode.Zero() && t.Nodes < 2 {
		errs = append(errs, errors.New("latency node-node: a single node has no node-node link (--nodes 2 or more)"))
	}
	return errors.Join(errs...)
}

// Params are the topology as result params: nodes, node_cpus ("0": no
// limit) and lb (haproxy, haproxy+sticky or none).
func (t Topology) Params() map[string]string {
	t.defaults()
	lb := t.LB
	if t.Sticky {
		lb += "+sticky"
	}
	p := map[string]string{"nodes": strconv.Itoa(t.Nodes), "node_cpus": strconv.FormatFloat(t.NodeCPUs, 'g', -1, 64), "lb": lb}
	maps.Copy(p, t.Latency.Params())
	return p
}

// Clustered reports whether the nodes form an Infinispan cluster.
func (t Topology) Clustered() bool { return t.Nodes > 1 }

// NodeState is one Keycloak node of a stack: its own folder, log, address
// and ports.
type NodeState struct {
	// Index is 1-based.
	Index int `json:"index"`
	// Host is the loopback address the node binds: 127.0.0.1 for a single
	// node, 127.0.0.(1+Index) in a cluster.
	Host        string `json:"host"`
	HTTPPort    int    `json:"http_port"`
	MgmtPort    int    `json:"management_port"`
	JGroupsPort int    `json:"jgroups_port,omitempty"`
	Home        string `json:"home"`
	Log         string `json:"log"`
	// LogOffset is where the current run's output starts in Log.
	LogOffset int64       `json:"log_offset,omitempty"`
	Proc      *node       `json:"process,omitempty"`
	LastBoot  *BootResult `json:"last_boot,omitempty"`
	// CPU is the node's CPU limit (nil: none).
	CPU *CPULimit `json:"cpu_limit,omitempty"`
	// TLS: the node serves HTTPS (its management interface too).
	TLS bool `json:"tls,omitempty"`
	// Edge: the node sits behind a balancer that ends TLS, and reads the
	// client's scheme and host from X-Forwarded-* headers.
	Edge bool `json:"edge,omitempty"`
}

func (n NodeState) scheme() string {
	if n.TLS {
		return "https://"
	}
	return "http://"
}

// URL is the node's own URL.
func (n NodeState) URL() string {
	return n.scheme() + net.JoinHostPort(n.Host, strconv.Itoa(n.HTTPPort))
}

// MgmtURL is the node's management URL (health, metrics): https when
// the node serves HTTPS, as Keycloak's management interface inherits it.
func (n NodeState) MgmtURL() string {
	return n.scheme() + net.JoinHostPort(n.Host, strconv.Itoa(n.MgmtPort))
}

// nodeHost is node i's address: 127.0.0.1 alone, 127.0.0.(1+i) in a
// cluster (every node its own address, so logs, listeners and JGroups
// members are told apart at a glance).
func nodeHost(i, n int) string {
	if n <= 1 {
		return "127.0.0.1"
	}
	return fmt.Sprintf("127.0.0.%d", 1+i)
}

// nodeDir is node i's home and log: node 1 keeps the single-node names.
func nodeFiles(dir string, i int) (home, log string) {
	if i == 1 {
		return filepath.Join(dir, "keycloak"), filepath.Join(dir, "keycloak.log")
	}
	return filepath.Join(dir, fmt.Sprintf("keycloak-%d", i)), filepath.Join(dir, fmt.Sprintf("keycloak-%d.log", i))
}

// freePortOn asks the kernel for a free TCP port on host.
func freePortOn(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// checkPortFreeOn fails with ErrPortInUse when host:port is taken.
func checkPortFreeOn(host string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("%s:%d: %w (%v)", host, port, ErrPortInUse, err)
	}
	return l.Close()
}

// JGroups ports: Keycloak's default bind port is 7800 and FD_SOCK2 listens
// at bind port + 50000, so the port must stay below 15536.
const (
	jgroupsFirstPort = 7800
	jgroupsLastPort  = 7999
	fdSockOffset     = 50000
)

// jgroupsPort finds a port for JGroups on host whose FD_SOCK2 partner
// (port + 50000) is free too.
func jgroupsPort(host string) (int, error) {
	for p := jgroupsFirstPort; p <= jgroupsLastPort; p++ {
		if checkPortFreeOn(host, p) == nil && checkPortFreeOn(host, p+fdSockOffset) == nil {
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free JGroups port in %d–%d on %s", jgroupsFirstPort, jgroupsLastPort, host)
}

// clusterViewRe matches Infinispan's view line, e.g. "ISPN000094: Received
// new cluster view for channel ISPN: [vm-25842|1] (2) [vm-25842, vm-14667]".
var clusterViewRe = regexp.MustCompile(`ISPN000094: Received new cluster view for channel [^:]*: \[[^\]]*\] \((\d+)\)`)

// lastClusterView returns the member count of the last cluster view in r,
// 0 when there is none.
func lastClusterView(r io.Reader) int {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	view := 0
	for sc.Scan() {
		if m := clusterViewRe.FindSubmatch(sc.Bytes()); m != nil {
			view, _ = strconv.Atoi(string(m[1]))
		}
	}
	return view
}

// ClusterView is the member count of the node's current Infinispan view,
// as its log reports it (0: none yet, or a node without clustering).
func (n NodeState) ClusterView() int {
	f, err := os.Open(n.Log)
	if err != nil {
		return 0
	}
	defer f.Close()
	if _, err := f.Seek(n.LogOffset, io.SeekStart); err != nil {
		return 0
	}
	return lastClusterView(f)
}

// viewPoll is how often the nodes' logs are read for the cluster view.
const viewPoll = 100 * time.Millisecond

// waitClusterView waits until every running node's log reports a view of
// all the stack's running nodes (a node a fault event stopped is out of
// the cluster). It returns when each node reached it.
func (s *Stack) waitClusterView(ctx context.Context, timeout time.Duration) error {
	want := s.runningNodes()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(viewPoll)
	defer tick.Stop()
	for {
		done := true
		var views []int
		for i := range s.st.Nodes {
			n := &s.st.Nodes[i]
			if n.Proc == nil {
				continue
			}
			v := n.ClusterView()
			views = append(views, v)
			if v == want {
				if n.Proc != nil && n.Proc.ViewAt.IsZero() {
					n.Proc.ViewAt = time.Now()
				}
			} else {
				done = false
			}
			if n.Proc != nil && n.Proc.exited != nil {
				select {
				case <-n.Proc.exited:
					return fmt.Errorf("node %d exited while the cluster formed", n.Index)
				default:
				}
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("cluster did not form within %s: views %v, want %d members on every node (see the nodes' logs for ISPN000094)", timeout, views, want)
		case <-tick.C:
		}
	}
}

// runningNodes counts the nodes with a process.
func (s *Stack) runningNodes() int {
	k := 0
	for _, n := range s.st.Nodes {
		if n.Proc != nil {
			k++
		}
	}
	return k
}
