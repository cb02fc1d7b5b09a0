package main

import (
	"flag"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
)

// metricsFlags serve kcbench's own Prometheus metrics during a run.
type metricsFlags struct {
	addr   string
	remote bool
}

func (m *metricsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", m.addr, "`HOST:PORT` to serve kcbench's own Prometheus metrics on while it runs (/metrics: operations, errors, latency histograms, dropped iterations, VUs), e.g. 127.0.0.1:9464")
	fs.BoolVar(&m.remote, "metrics-allow-remote", m.remote, "allow --metrics-addr on a non-loopback address (e.g. 0.0.0.0:9464 in a pod)")
}

func (m *metricsFlags) check() error {
	if m.addr == "" {
		return nil
	}
	if err := metrics.CheckAddr(m.addr, m.remote); err != nil {
		return usagef("--metrics-addr %v", err)
	}
	return nil
}

// start serves the metrics when asked; the hook feeds them, and stop
// ends the server. Without --metrics-addr both are nil-safe no-ops.
func (m *metricsFlags) start(e *env, seg load.Segment) (hook func(load.Interval), stop func(), err error) {
	if m.addr == "" {
		return nil, func() {}, nil
	}
	c := metrics.NewCollector()
	labels := map[string]string{}
	if !seg.Whole() {
		labels["segment"] = seg.String()
	}
	s, err := metrics.Serve(m.addr, c, labels)
	if err != nil {
		return nil, nil, usagef("--metrics-addr: %v", err)
	}
	e.logf("metrics on http://%s/metrics", s.Addr())
	return c.Observe, func() { s.Close() }, nil
}
