package stack

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// Latency is round-trip latency injected on the links kcbench controls
// (user space: in-process TCP proxies, as this kernel has no netem).
type Latency struct {
	// NodeDB is added between every Keycloak node and PostgreSQL: the
	// nodes' JDBC URL points at a proxy in front of it.
	NodeDB Delay `json:"node_db,omitzero"`
	// NodeNode is added between the nodes of a cluster: each node's
	// JGroups ports have a proxy in front, and the node advertises the
	// proxy's address to its peers (--cache-embedded-network-external-*),
	// so that every connection a peer opens to it goes through the delay.
	NodeNode Delay `json:"node_node,omitzero"`
}

// Zero reports whether no latency is injected (then there is no proxy).
func (l Latency) Zero() bool { return l.NodeDB.Zero() && l.NodeNode.Zero() }

// String reads "node-node=5ms,node-db=2ms~1ms" ("" without latency).
func (l Latency) String() string {
	var parts []string
	if !l.NodeNode.Zero() {
		parts = append(parts, "node-node="+l.NodeNode.String())
	}
	if !l.NodeDB.Zero() {
		parts = append(parts, "node-db="+l.NodeDB.String())
	}
	return strings.Join(parts, ",")
}

// link is the delay on the link named k ("node-db", "node-node").
func (l Latency) link(k string) Delay {
	if k == "node-node" {
		return l.NodeNode
	}
	return l.NodeDB
}

func (l *Latency) setLink(k string, d Delay) {
	if k == "node-node" {
		l.NodeNode = d
	} else {
		l.NodeDB = d
	}
}

// Params are the injected latency as result params: as --latency takes
// it, and each link's round trip in milliseconds (none when zero).
func (l Latency) Params() map[string]string {
	if l.Zero() {
		return map[string]string{}
	}
	ms := func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'g', -1, 64)
	}
	p := map[string]string{results.ParamLatency: l.String()}
	if !l.NodeNode.Zero() {
		p[results.ParamLatencyNodeNodeMs] = ms(l.NodeNode.RTT)
	}
	if !l.NodeDB.Zero() {
		p[results.ParamLatencyNodeDBMs] = ms(l.NodeDB.RTT)
	}
	return p
}

// ParseLatency reads "node-node=5ms,node-db=2ms" (optional jitter
// "2ms~1ms"), the round trip added on each named link.
func ParseLatency(s string) (Latency, error) {
	var l Latency
	if strings.TrimSpace(s) == "" {
		return l, nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return l, fmt.Errorf("latency %q: want LINK=DURATION[~JITTER], e.g. node-db=2ms", part)
		}
		if seen[k] {
			return l, fmt.Errorf("latency %q: %s given twice", s, k)
		}
		seen[k] = true
		d, err := ParseDelay(v)
		if err != nil {
			return l, fmt.Errorf("latency %s: %w", k, err)
		}
		switch k {
		case "node-db":
			l.NodeDB = d
		case "node-node":
			l.NodeNode = d
		default:
			return l, fmt.Errorf("latency %q: unknown link %q (want node-node or node-db)", part, k)
		}
	}
	return l, nil
}

// Validate checks l against the rest of the topology and the stack's
// database (external: not proxied) and whether kcbench holds the stack
// (a detached stack outlives the process that would hold the proxies).
func (l Latency) validate(detached, externalDB bool) error {
	if l.Zero() {
		return nil
	}
	var errs []error
	if detached {
		errs = append(errs, errors.New("latency: the proxies live in kcbench's process: use up --foreground (or quickstart, capacity, experiment), not a detached up"))
	}
	if externalDB && !l.NodeDB.Zero() {
		errs = append(errs, errors.New("latency node-db: only with kcbench's own database, not --db-url"))
	}
	return errors.Join(errs...)
}

// latencyLinks are the running proxies (in-process, not in the state
// file).
type latencyLinks struct {
	db *delayProxy
	// nodes are the proxies in front of each node's JGroups ports, by
	// node index: the data port and FD_SOCK2's (port + 50000).
	nodes map[int][2]*delayProxy
}

func (l *latencyLinks) close() {
	if l == nil {
		return
	}
	if l.db != nil {
		l.db.Close()
		l.db = nil
	}
	for i, ps := range l.nodes {
		ps[0].Close()
		ps[1].Close()
		delete(l.nodes, i)
	}
}

// nodeLink places the proxies in front of node ns's JGroups ports, when
// the stack has node-node latency, and returns the address the node
// must advertise to reach them ("" without). A node started again keeps
// its proxies.
//
// The proxies listen on 127.0.0.1 at the node's own port numbers (its
// bind port, and FD_SOCK2's at bind port + 50000), and the node
// advertises only the address (--cache-embedded-network-external-address,
// or the jgroups.external_addr property before 26.4):
// with an external port as well, FD_SOCK2 declares its server at that
// port without its offset, its CONNECT to a peer through the proxy fails
// ("failed connecting … null" in its trace), no node watches its
// neighbour's socket, and a killed node was noticed only by FD_ALL3 after
// 40 s (a refresh on the survivor timed out on the dead owner, HTTP
// 500). The node's port moves, before it starts, to one free on both
// addresses.
func (s *Stack) nodeLink(ns *NodeState) (string, error) {
	d := s.st.Topology.Latency.NodeNode
	if d.Zero() || ns.JGroupsPort == 0 {
		return "", nil
	}
	if s.links == nil {
		return "", errors.New("the stack's node-node latency proxies live in the kcbench process that started it (up --foreground); start or restart nodes from there")
	}
	if _, ok := s.links.nodes[ns.Index]; !ok {
		free := func(p int) bool {
			for _, h := range []string{ns.Host, "127.0.0.1"} {
				if checkPortFreeOn(h, p) != nil || checkPortFreeOn(h, p+fdSockOffset) != nil {
					return false
				}
			}
			return true
		}
		if !free(ns.JGroupsPort) {
			port := 0
			for p := jgroupsFirstPort; p <= jgroupsLastPort && port == 0; p++ {
				if free(p) {
					port = p
				}
			}
			if port == 0 {
				return "", fmt.Errorf("latency node-node: no JGroups port in %d–%d free on both %s and 127.0.0.1", jgroupsFirstPort, jgroupsLastPort, ns.Host)
			}
			ns.JGroupsPort = port
		}
		var ps [2]*delayProxy
		for k, off := range []int{0, fdSockOffset} {
			listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(ns.JGroupsPort+off))
			up := net.JoinHostPort(ns.Host, strconv.Itoa(ns.JGroupsPort+off))
			var err error
			if ps[k], err = startDelayProxy(listen, up, d); err != nil {
				if k == 1 {
					ps[0].Close()
				}
				return "", fmt.Errorf("latency node-node: %w", err)
			}
		}
		if s.links.nodes == nil {
			s.links.nodes = map[int][2]*delayProxy{}
		}
		s.links.nodes[ns.Index] = ps
	}
	return "127.0.0.1", nil
}

// startLatency places the proxies the topology asks for and measures the
// round trip each adds (MeasuredLatency). The node-node proxies are
// placed as each node starts (nodeLink).
func (s *Stack) startLatency() error {
	lat := s.st.Topology.Latency
	if lat.Zero() {
		return nil
	}
	s.links = &latencyLinks{}
	if !lat.NodeNode.Zero() {
		rtt, err := echoRTT(lat.NodeNode)
		if err != nil {
			return fmt.Errorf("latency node-node: timing a round trip through a proxy: %w", err)
		}
		s.st.MeasuredLatency.NodeNode = rtt
		s.logf("latency node-node: %s injected, %s measured (round trips through the proxy's delay)", lat.NodeNode, rtt.Round(10*time.Microsecond))
	}
	if lat.NodeDB.Zero() {
		return nil
	}
	port, probe, name := 0, pgSSLRequest, "PostgreSQL"
	switch {
	case s.st.PG != nil:
		port = s.st.PG.Port
	case s.st.MariaDB != nil:
		// MariaDB speaks first: its greeting is the round trip.
		port, probe, name = s.st.MariaDB.Port, nil, "MariaDB"
	default:
		return errors.New("latency node-db: only with kcbench's own database, not --db-url")
	}
	p, err := startDelayProxy("127.0.0.1:0", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), lat.NodeDB)
	if err != nil {
		return err
	}
	s.links.db = p
	if _, err := probeRTT(p.Addr(), probe); err != nil {
		return fmt.Errorf("latency node-db: %s does not answer through the proxy: %w", name, err)
	}
	rtt, err := s.MeasureLatency()
	if err != nil {
		return fmt.Errorf("latency node-db: timing a round trip through the proxy: %w", err)
	}
	s.st.MeasuredLatency.NodeDB = rtt
	s.logf("latency node-db: %s injected, %s measured (round trips through the proxy's delay)", lat.NodeDB, rtt.Round(10*time.Microsecond))
	return nil
}

// nodeDB is the database connection the nodes use: through the node-db
// proxy when there is one.
func (s *Stack) nodeDB() dbConn {
	db := s.st.DB
	if s.links != nil && s.links.db != nil {
		scheme := "postgresql"
		if s.st.MariaDB != nil {
			scheme = "mariadb"
		}
		db.URL = fmt.Sprintf("jdbc:%s://%s/keycloak", scheme, s.links.db.Addr())
	}
	return db
}

// SetLatency changes the injected latency of a running stack (a fault
// event): only on links that have a proxy.
func (s *Stack) SetLatency(l Latency) error {
	if !l.NodeDB.Zero() || !s.st.Topology.Latency.NodeDB.Zero() {
		if s.links == nil || s.links.db == nil {
			return errors.New("latency node-db: the stack has no proxy on that link (start it with --latency node-db=…, 0 and a jitter for none)")
		}
		s.links.db.SetDelay(l.NodeDB)
	}
	if !l.NodeNode.Zero() || !s.st.Topology.Latency.NodeNode.Zero() {
		if s.links == nil || len(s.links.nodes) == 0 {
			return errors.New("latency node-node: the stack has no proxies on that link (start it with --latency node-node=…, 0 and a jitter for none)")
		}
		for _, ps := range s.links.nodes {
			ps[0].SetDelay(l.NodeNode)
			ps[1].SetDelay(l.NodeNode)
		}
	}
	s.st.Topology.Latency = l
	return s.save()
}

// RunParams are what the stack's options add to a result's params: the
// injected and measured latency, the extra JVM options (java_opts), and
// the certificate's key type and the balancer's TLS mode.
func (s *Stack) RunParams() map[string]string {
	p := s.latencyParams()
	if p == nil {
		p = map[string]string{}
	}
	if o := s.st.Options.JavaOpts; len(o) > 0 {
		p[ParamJavaOpts] = strings.Join(o, " ")
	}
	if s.st.Options.VolatileSessions {
		p[ParamPersistentSessions] = "off"
	}
	if s.st.TLS != nil {
		p[ParamTLSKey] = s.st.TLS.Key
		if s.st.LB != nil {
			p[ParamLBTLS] = cmp.Or(s.st.Topology.LBTLS, LBTLSPassthrough)
		}
	}
	return p
}

// Result params of the stack's TLS.
const (
	ParamTLSKey = "tls_key"
	ParamLBTLS  = "lb_tls"
)

// ParamPersistentSessions is "off" when the stack keeps online user
// sessions in memory only (absent: Keycloak's default, on).
const ParamPersistentSessions = "persistent_sessions"

// ParamJavaOpts is the result param of the stack's extra JVM options.
const ParamJavaOpts = "java_opts"

// latencyParams are the injected and measured latency as result params.
func (s *Stack) latencyParams() map[string]string {
	l := s.st.Topology.Latency
	if l.Zero() {
		return nil
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 2, 64) }
	p := l.Params()
	if !l.NodeDB.Zero() {
		p[results.ParamLatencyNodeDBMeasure] = ms(s.st.MeasuredLatency.NodeDB)
	}
	if !l.NodeNode.Zero() {
		p[results.ParamLatencyNodeNodeMeasure] = ms(s.st.MeasuredLatency.NodeNode)
	}
	return p
}

// MeasureLatency times the round trip the node-db proxy adds now: round
// trips through a proxy with the same delay in front of a loopback echo
// server, against straight to it (medians of 5). PostgreSQL itself is no
// good probe: its only answer before a login (to an SSLRequest) comes
// from a freshly forked backend, whose fork varies by milliseconds on a
// busy box, more than the latency being checked.
func (s *Stack) MeasureLatency() (time.Duration, error) {
	if s.links == nil || s.links.db == nil {
		return 0, errors.New("the stack has no latency proxy in this process")
	}
	s.links.db.mu.Lock()
	d := s.links.db.delay
	s.links.db.mu.Unlock()
	return echoRTT(d)
}

// HoldsLatencyProxy reports whether this process holds the stack's
// latency proxies (it started the stack), so that latency events can
// change them.
func (s *Stack) HoldsLatencyProxy() bool {
	return s.links != nil && (s.links.db != nil || len(s.links.nodes) > 0)
}
