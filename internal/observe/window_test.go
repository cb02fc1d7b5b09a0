package observe

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// fakeCPU is a server whose CPU time grows by rate per wall second.
type fakeCPU struct {
	mu    sync.Mutex
	start time.Time
	rate  float64
}

func (f *fakeCPU) CPUTime(context.Context) (time.Duration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Duration(float64(time.Since(f.start)) * f.rate), nil
}

func (f *fakeCPU) Source() string { return "fake" }

func TestCPUWindow(t *testing.T) {
	f := &fakeCPU{start: time.Now(), rate: 0.1}
	w := &cpuWindow{window: newWindow(context.Background(), f.CPUTime), sampler: f, res: "exact"}
	if err := w.baseline(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.rate = 0.5 // the load starts
	f.start = time.Now().Add(-time.Duration(float64(time.Since(f.start)) * 0.1 / 0.5))
	f.mu.Unlock()
	w.begin(50 * time.Millisecond)
	select { // the window's first sample, after the warm-up
	case <-w.sampled:
	case <-time.After(10 * time.Second):
		t.Fatal("no first sample after the warm-up")
	}
	// The window ends once the server spent 0.1 s of CPU in it (0.2 s at
	// half a core), polled with a deadline.
	w.mu.Lock()
	c0 := w.v0
	w.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, _ := f.CPUTime(context.Background()); c-c0 >= 100*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake server's CPU did not grow")
		}
	}
	w.end()
	s := results.Stats{Ops: []results.OpStats{{Name: results.IterationOp, OK: 100}, {Name: results.OpJWKS, OK: 100}}}
	r := w.result(s)
	if !r.Available || r.Window < 0.15 || r.Window > 0.5 {
		t.Fatalf("%+v", r)
	}
	if c := r.Cores; c < 0.45 || c > 0.55 {
		t.Errorf("cores %v, want 0.5", c)
	}
	if r.IdleCores < 0.08 || r.IdleCores > 0.12 || r.NetPerIteration >= r.PerIteration || r.PerOp[results.OpJWKS] != r.PerIteration {
		t.Errorf("%+v", r)
	}
	var b strings.Builder
	r.Write(&b)
	if !strings.Contains(b.String(), "ms per successful jwks") || !strings.Contains(b.String(), "net of the idle") {
		t.Errorf("%s", b.String())
	}
}

func TestCPUWindowEndsWithinWarmup(t *testing.T) {
	f := &fakeCPU{start: time.Now(), rate: 1}
	w := &cpuWindow{window: newWindow(context.Background(), f.CPUTime), sampler: f}
	w.begin(time.Hour)
	w.end()
	if r := w.result(results.Stats{}); r.Available || !strings.Contains(r.Reason, "warm-up") {
		t.Fatalf("%+v", r)
	}
	w = &cpuWindow{reason: "no way"}
	w.begin(0)
	w.end()
	var b strings.Builder
	w.result(results.Stats{}).Write(&b)
	if b.String() != "server cpu:   unavailable: no way\n" {
		t.Fatalf("%q", b.String())
	}
}
