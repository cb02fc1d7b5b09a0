//go:build integration

package capacity

import (
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// The searches against a real HTTP queue depend on timing: a busy machine
// delays the load generator and fails steps below the queue's rate. They
// run with the integration tests, one package at a time.

func TestHTTPSearchFindsQueueRate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 15 s")
	}
	t.Parallel()
	const rate = 100.0
	srv := httptest.NewServer(&queue{interval: time.Duration(float64(time.Second) / rate)})
	defer srv.Close()
	// Above 100/s the queue's wait at the end of a 2 s step is
	// 2·(r−100)/100 s: p99 < 100 ms holds up to about 105/s.
	o := Options{SLOs: mustSLOs(t, "p99<100ms,errors<1%"), Start: 25, Step: 25, Resolution: 10,
		StepDuration: 2 * time.Second, Warmup: 500 * time.Millisecond, Pause: 200 * time.Millisecond}
	r, err := Search(t.Context(), httpSteps(srv.URL, 300), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Steps {
		t.Logf("%-6s %6.1f/s achieved %6.1f p99 %7.2fms dropped %d pass %v %v", s.Phase, s.Rate, s.Achieved, s.P99, s.Dropped, s.Pass, s.Failures)
	}
	if !r.Found || math.Abs(r.MaxRate-rate) > o.Resolution {
		t.Errorf("max rate %g, want %g ± %g: %s", r.MaxRate, rate, o.Resolution, r.Conclusion)
	}
	if r.Steps[0].Phase != results.StepWarmup || len(r.Steps) < 6 {
		t.Errorf("%d steps, first %s", len(r.Steps), r.Steps[0].Phase)
	}
}

func TestHTTPAdaptiveFindsQueueRate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 40 s")
	}
	t.Parallel()
	const rate = 100.0
	srv := httptest.NewServer(&queue{interval: time.Duration(float64(time.Second) / rate)})
	defer srv.Close()
	o := Options{Adaptive: true, SLOs: mustSLOs(t, "p99<50ms,errors<1%"), ProbeDuration: time.Second,
		MinStepDuration: 3 * time.Second, MaxStepDuration: 3 * time.Second, Pause: 300 * time.Millisecond}
	r, err := Search(t.Context(), httpStepsEnding(srv.URL, 300, o.WithDefaults().EarlyEnd), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Steps {
		t.Logf("%-6s %6.1f/s achieved %6.1f p50 %6.2fms p99 %7.2fms pass %v %v", s.Phase, s.Rate, s.Achieved, s.P50, s.P99, s.Pass, s.Failures)
	}
	// the queue serves exactly 100/s; a 3 s step above it grows a queue
	// the latency-rise guard sees within about 1 %
	if !r.Found || r.MaxRate > rate*1.01 || r.MaxRate < rate*0.97 {
		t.Errorf("max rate %g, want %g within 1%% above and 3%% below: %s", r.MaxRate, rate, r.Conclusion)
	}
	ended := 0
	for _, s := range r.Steps {
		if s.Judged() && s.Pass && s.Rate > rate*1.01 {
			t.Errorf("step at %g/s passed, above the queue's rate", s.Rate)
		}
		if s.Duration > 3.001 {
			t.Errorf("step at %g/s measured %gs, longer than its 3 s", s.Rate, s.Duration)
		}
		if strings.Contains(strings.Join(s.Failures, ";"), "can no longer be met") {
			if s.Pass {
				t.Errorf("step at %g/s ended early and passed", s.Rate)
			}
			if s.Judged() && s.Duration < 2.9 {
				ended++
			}
		}
	}
	// a judged step well above 100/s fails its p99 within a second or two
	if ended == 0 {
		t.Error("no overloaded judged step ended early")
	}
}
