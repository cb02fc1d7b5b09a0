package metrics

import (
	"flag"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/load"
)

// Flags serve kcbench's own Prometheus metrics during a run.
type Flags struct {
	addr   string
	remote bool
}

// RegisterFlags adds --metrics-addr and --metrics-allow-remote.
func (m *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", m.addr, "`HOST:PORT` to serve kcbench's own Prometheus metrics on while it runs (/metrics: operations, errors, latency histograms, dropped iterations, VUs, seeding progress, phase), e.g. 127.0.0.1:9464")
	fs.BoolVar(&m.remote, "metrics-allow-remote", m.remote, "allow --metrics-addr on a non-loopback address (e.g. 0.0.0.0:9464 in a pod)")
}

// Check checks the flags alone, right after parsing.
func (m *Flags) Check() error {
	if m.addr == "" {
		return nil
	}
	if err := CheckAddr(m.addr, m.remote); err != nil {
		return cliutil.Usagef("--metrics-addr %v", err)
	}
	return nil
}

// Start serves the metrics when asked; the hook feeds them, and stop
// ends the server. Without --metrics-addr both are nil-safe no-ops.
func (m *Flags) Start(logf func(string, ...any), seg load.Segment) (hook func(load.Interval), stop func(), err error) {
	c, stop, err := m.Serve(logf, seg)
	if err != nil {
		return nil, nil, err
	}
	return c.Hook(), stop, nil
}

// Serve checks the flags and serves the metrics when asked; stop ends the
// server. Without --metrics-addr the Collector is nil (its methods do
// nothing) and stop a no-op.
func (m *Flags) Serve(logf func(string, ...any), seg load.Segment) (c *Collector, stop func(), err error) {
	if m.addr == "" {
		return nil, func() {}, nil
	}
	if err := m.Check(); err != nil {
		return nil, nil, err
	}
	c = NewCollector()
	labels := map[string]string{}
	if !seg.Whole() {
		labels["segment"] = seg.String()
	}
	s, err := Serve(m.addr, c, labels)
	if err != nil {
		return nil, nil, cliutil.Usagef("--metrics-addr: %v", err)
	}
	logf("metrics on http://%s/metrics", s.Addr())
	return c, func() { s.Close() }, nil
}
