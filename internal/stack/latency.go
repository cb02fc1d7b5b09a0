package stack

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Latency is round-trip latency injected on the links kcbench controls
// (user space: in-process TCP proxies, as this kernel has no netem).
type Latency struct {
	// NodeDB is added between every Keycloak node and PostgreSQL: the
	// nodes' JDBC URL points at a proxy in front of it.
	NodeDB Delay `json:"node_db,omitzero"`
}

// Zero reports whether no latency is injected (then there is no proxy).
func (l Latency) Zero() bool { return l.NodeDB.Zero() }

// String reads "node-db=2ms~1ms" ("" without latency).
func (l Latency) String() string {
	if l.NodeDB.Zero() {
		return ""
	}
	return "node-db=" + l.NodeDB.String()
}

// ParseLatency reads "node-db=2ms" (optional jitter "2ms~1ms"), the
// round trip added on each named link. node-node (JGroups) is named and
// refused: kcbench does not proxy it yet.
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
			return l, errors.New("latency node-node: not available yet (the JGroups link is not proxied); node-db is")
		default:
			return l, fmt.Errorf("latency %q: unknown link %q (want node-db)", part, k)
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
		errs = append(errs, errors.New("latency node-db: only with kcbench's own PostgreSQL, not --db-url"))
	}
	return errors.Join(errs...)
}

// latencyLinks are the running proxies (in-process, not in the state
// file).
type latencyLinks struct {
	db *delayProxy
}

func (l *latencyLinks) close() {
	if l != nil && l.db != nil {
		l.db.Close()
		l.db = nil
	}
}

// startLatency places the proxies the topology asks for and measures the
// round trip each adds (MeasuredLatency).
func (s *Stack) startLatency() error {
	lat := s.st.Topology.Latency
	if lat.NodeDB.Zero() {
		return nil
	}
	p, err := startDelayProxy("127.0.0.1:0", net.JoinHostPort("127.0.0.1", strconv.Itoa(s.st.PG.Port)), lat.NodeDB)
	if err != nil {
		return err
	}
	s.links = &latencyLinks{db: p}
	if _, err := probeRTT(p.Addr(), pgSSLRequest); err != nil {
		return fmt.Errorf("latency node-db: PostgreSQL does not answer through the proxy: %w", err)
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
		db.URL = fmt.Sprintf("jdbc:postgresql://%s/keycloak", s.links.db.Addr())
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
	s.st.Topology.Latency = l
	return s.save()
}

// LatencyParams are the injected and measured latency as result params.
func (s *Stack) LatencyParams() map[string]string {
	l := s.st.Topology.Latency
	if l.Zero() {
		return nil
	}
	return map[string]string{"latency": l.String(), "latency_node_db_measured_ms": strconv.FormatFloat(float64(s.st.MeasuredLatency.NodeDB.Microseconds())/1000, 'f', 2, 64)}
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
func (s *Stack) HoldsLatencyProxy() bool { return s.links != nil && s.links.db != nil }
