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
	fs.StringVar(&m.addr, "metrics-addr", m.addr, "`HOST:PORT` to serve kcbench's own Prometheus metrics on while it runs (/metrics: operations, errors, latency histograms, dropped iterations, VUs), e.g. 127.0.0.1:9464")
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
	if m.addr == "" {
		return nil, func() {}, nil
	}
	c := NewCollector()
	labels := map[string]string{}
	if !seg.Whole() {
		labels["segment"] = seg.String()
	}
	s, err := Serve(m.addr, c, labels)
	if err != nil {
		return nil, nil, cliutil.Usagef("--metrics-addr: %v", err)
	}
	logf("metrics on http://%s/metrics", s.Addr())
	return c.Observe, func() { s.Close() }, nil
}
