// Package capacitytest makes capacity search results for tests of the
// tools that read them (report, gate, size): a real capacity.Search over a
// made-up server whose latency holds up to a limit.
package capacitytest

import (
	"cmp"
	"context"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/results"
)

// Server is the made-up server and the search run against it.
type Server struct {
	Limit      float64       // the latency holds up to this rate
	CPUMsPerOp float64       // server CPU per operation at every rate
	Latency    time.Duration // p99 up to Limit (default 20 ms)
	// Cliff makes p99 2 s above Limit; without it p99 climbs by 100 ms
	// per 1/s above Limit.
	Cliff bool
	// The search: Start, Step, Resolution default to 20, 20, 2; a 1 s
	// warm-up unless NoWarmup.
	Start, Step, Resolution float64
	NoWarmup                bool
}

// Search runs the search against s (SLOs p99<500ms,errors<0.1%, steps of
// 10 s, no pauses).
func Search(t testing.TB, scenario string, params map[string]string, s Server) *results.CapacityResult {
	t.Helper()
	base := cmp.Or(s.Latency, 20*time.Millisecond)
	run := func(_ context.Context, st capacity.Step) (capacity.StepResult, error) {
		rate, d := st.Rate, st.Duration
		n := int64(rate * d.Seconds())
		lat := base
		switch {
		case rate > s.Limit && s.Cliff:
			lat = 2 * time.Second
		case rate > s.Limit:
			lat = time.Duration(rate-s.Limit) * 100 * time.Millisecond
		}
		return capacity.StepResult{CPUMsPerOp: s.CPUMsPerOp, RSSBytes: 600 << 20, Stats: results.Stats{Start: time.Now(), Duration: d, Ops: []results.OpStats{{
			Name: results.IterationOp, Count: n, OK: n, Rate: rate * 0.99, Latency: results.Dist{P50: lat / 2, P95: lat * 8 / 10, P99: lat, Max: lat}}}}}, nil
	}
	slos, _ := capacity.ParseSLOs(capacity.DefaultSLOs)
	warmup := time.Second
	if s.NoWarmup {
		warmup = -1
	}
	r, err := capacity.Search(t.Context(), run, capacity.Options{SLOs: slos, Start: cmp.Or(s.Start, 20), Step: cmp.Or(s.Step, 20),
		Resolution: cmp.Or(s.Resolution, 2), StepDuration: 10 * time.Second, Warmup: warmup, Pause: -1})
	if err != nil {
		t.Fatal(err)
	}
	r.Scenario, r.Params = scenario, params
	return r
}

// Write runs Search and writes the result's folder into dir.
func Write(t testing.TB, dir, scenario string, params map[string]string, s Server) *results.CapacityResult {
	t.Helper()
	r := Search(t, scenario, params, s)
	if err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	return r
}
