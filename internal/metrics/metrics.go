// Package metrics serves kcbench's own Prometheus metrics while a load
// runs: operations, errors by class, latency histograms per operation,
// dropped iterations and VUs, and while a dataset is seeded, the tenants
// done of the planned; so that a dashboard shows the load beside the
// Keycloak it drives (see dashboards/grafana-kcbench.json).
//
// The load's figures come from the engine once per timeline interval
// (load.WithIntervalHook), not per request: they cost the load nothing
// and lag it by at most an interval. Seeding progress comes from the
// seeder's progress callback.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kcbench/kcbench/internal/load"
)

// Buckets are the latency histogram's upper bounds, in seconds.
var Buckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// Metric names.
const (
	NameOperations = "kcbench_operations_total"
	NameErrors     = "kcbench_operation_errors_total"
	NameLatency    = "kcbench_operation_latency_seconds"
	NameDropped    = "kcbench_dropped_iterations_total"
	NameVUs        = "kcbench_vus"
	NameActiveVUs  = "kcbench_active_vus"
	NameWarmup     = "kcbench_warmup"
	NameElapsed    = "kcbench_elapsed_seconds"
	NameSeedDone   = "kcbench_seed_tenants_done"
	NameSeedPlan   = "kcbench_seed_tenants_planned"
	NamePhase      = "kcbench_phase"
)

var (
	descOps     = prometheus.NewDesc(NameOperations, "Operations finished (failed ones included), warm-up included; op=iteration counts whole iterations.", []string{"op"}, nil)
	descErrs    = prometheus.NewDesc(NameErrors, "Failed operations by error class.", []string{"op", "class"}, nil)
	descLat     = prometheus.NewDesc(NameLatency, "Latency of operations (open model: from the intended start), from the engine's HDR histograms.", []string{"op"}, nil)
	descDropped = prometheus.NewDesc(NameDropped, "Arrivals dropped for want of a free VU (open model).", nil, nil)
	descVUs     = prometheus.NewDesc(NameVUs, "VUs allocated.", nil, nil)
	descActive  = prometheus.NewDesc(NameActiveVUs, "VUs in an iteration.", nil, nil)
	descWarmup  = prometheus.NewDesc(NameWarmup, "1 during the warm-up, whose numbers the results discard.", nil, nil)
	descElapsed = prometheus.NewDesc(NameElapsed, "Time since the start of the run.", nil, nil)
	descSeeded  = prometheus.NewDesc(NameSeedDone, "Tenants of the dataset being seeded that are complete (those there before included).", nil, nil)
	descPlanned = prometheus.NewDesc(NameSeedPlan, "Tenants the dataset being seeded will have.", nil, nil)
	descPhase   = prometheus.NewDesc(NamePhase, "1 for what kcbench is doing (seed, load; an experiment's stack, seed, cold, warm, capacity), of which point.", []string{"phase", "point"}, nil)
)

type opState struct {
	count   int64
	errors  map[string]int64
	buckets []uint64 // cumulative counts per Buckets bound
	sum     float64  // seconds
}

// Collector holds the run's figures, fed by Observe, SeedProgress and
// SetPhase, read by scrapes. Its methods do nothing on a nil Collector
// (no --metrics-addr).
type Collector struct {
	mu             sync.Mutex
	ops            map[string]*opState
	dropped        int64
	last           load.Interval
	seeded, seedOf int // tenants; seedOf 0: no seeding yet
	phase, point   string
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{ops: map[string]*opState{}} }

// Hook is Observe, or nil on a nil Collector (no hook for the engine to
// call).
func (c *Collector) Hook() func(load.Interval) {
	if c == nil {
		return nil
	}
	return c.Observe
}

// SeedProgress returns a seeding progress callback (dataset.SeedOptions
// .Progress: tenants done of total) that records the progress and then
// calls next, when not nil. On a nil Collector it is next.
func (c *Collector) SeedProgress(next func(done, total int)) func(done, total int) {
	if c == nil {
		return next
	}
	return func(done, total int) {
		c.mu.Lock()
		c.seeded, c.seedOf = done, total
		c.mu.Unlock()
		if next != nil {
			next(done, total)
		}
	}
}

// SetPhase says what kcbench does now, and for which experiment point
// ("" for none).
func (c *Collector) SetPhase(phase, point string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.phase, c.point = phase, point
	c.mu.Unlock()
}

// Observe adds an interval (the hook of load.WithIntervalHook).
func (c *Collector) Observe(iv load.Interval) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropped += iv.Dropped
	for _, o := range iv.Ops {
		s := c.ops[o.Name]
		if s == nil {
			s = &opState{errors: map[string]int64{}, buckets: make([]uint64, len(Buckets))}
			c.ops[o.Name] = s
		}
		s.count += o.Count
		for k, n := range o.Classes {
			s.errors[k] += n
		}
		if h := o.Latency; h != nil && h.TotalCount() > 0 {
			s.sum += h.Mean() * float64(h.TotalCount()) / 1e6
			for _, b := range h.Distribution() {
				if b.Count == 0 {
					continue
				}
				v := float64(b.To) / 1e6 // the bar's highest equivalent value, in s
				for i := range Buckets {
					if v <= Buckets[i] {
						s.buckets[i] += uint64(b.Count)
					}
				}
			}
		}
	}
	iv.Ops = nil // the histograms are the engine's
	c.last = iv
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descOps, descErrs, descLat, descDropped, descVUs, descActive, descWarmup, descElapsed, descSeeded, descPlanned, descPhase} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range slices.Sorted(maps.Keys(c.ops)) {
		s := c.ops[name]
		ch <- prometheus.MustNewConstMetric(descOps, prometheus.CounterValue, float64(s.count), name)
		for _, k := range slices.Sorted(maps.Keys(s.errors)) {
			ch <- prometheus.MustNewConstMetric(descErrs, prometheus.CounterValue, float64(s.errors[k]), name, k)
		}
		b := make(map[float64]uint64, len(Buckets))
		for i, ub := range Buckets {
			b[ub] = s.buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(descLat, uint64(s.count), s.sum, b, name)
	}
	ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(c.dropped))
	ch <- prometheus.MustNewConstMetric(descVUs, prometheus.GaugeValue, float64(c.last.VUs))
	ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, float64(c.last.ActiveVUs))
	warm := 0.0
	if c.last.Warmup {
		warm = 1
	}
	ch <- prometheus.MustNewConstMetric(descWarmup, prometheus.GaugeValue, warm)
	ch <- prometheus.MustNewConstMetric(descElapsed, prometheus.GaugeValue, c.last.End.Seconds())
	if c.seedOf > 0 {
		ch <- prometheus.MustNewConstMetric(descSeeded, prometheus.GaugeValue, float64(c.seeded))
		ch <- prometheus.MustNewConstMetric(descPlanned, prometheus.GaugeValue, float64(c.seedOf))
	}
	if c.phase != "" {
		ch <- prometheus.MustNewConstMetric(descPhase, prometheus.GaugeValue, 1, c.phase, c.point)
	}
}

// CheckAddr accepts a host:port on a loopback address unless remote is
// allowed.
func CheckAddr(addr string, remote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("%q: want HOST:PORT, e.g. 127.0.0.1:9464", addr)
	}
	if remote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q: not a loopback address (allow others with --metrics-allow-remote)", addr)
	}
	return nil
}

// Server serves a Collector's metrics (and Go's process metrics) on
// /metrics.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Serve starts serving c's metrics on addr, labelled with constLabels
// (e.g. the agent's segment).
func Serve(addr string, c *Collector, constLabels map[string]string) (*Server, error) {
	reg := prometheus.NewRegistry()
	wrapped := prometheus.WrapRegistererWith(prometheus.Labels(constLabels), reg)
	if err := errors.Join(wrapped.Register(c), reg.Register(prometheus.NewGoCollector()),
		reg.Register(prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, letting a scrape in progress finish.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if e := <-s.done; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}
