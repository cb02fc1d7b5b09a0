package capacity

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

func TestSchedule(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		name             string
		start, step, max float64
		warmup           time.Duration
		rates            []float64 // warm-up first when any
		offsets          []time.Duration
	}{
		{"exact", 10, 10, 40, -1, []float64{10, 20, 30, 40}, []time.Duration{0, 13 * time.Second, 26 * time.Second, 39 * time.Second}},
		{"last step at the cap", 10, 20, 45, -1, []float64{10, 30, 45}, []time.Duration{0, 13 * time.Second, 26 * time.Second}},
		{"warm-up", 5, 5, 10, 4 * time.Second, []float64{5, 5, 10}, []time.Duration{0, 7 * time.Second, 20 * time.Second}},
		{"one step", 50, 10, 50, -1, []float64{50}, []time.Duration{0}},
		{"fractions", 0.1, 0.1, 0.3, -1, []float64{0.1, 0.2, 0.3}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := Options{SLOs: mustSLOs(t, "p99<100ms"), Start: c.start, Step: c.step, MaxRate: c.max, StepDuration: 10 * time.Second, Warmup: c.warmup}
			steps, err := o.Schedule(t0, 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(steps) != len(c.rates) {
				t.Fatalf("%d steps, want %d: %+v", len(steps), len(c.rates), steps)
			}
			for i, s := range steps {
				if s.Index != i || s.Rate != c.rates[i] {
					t.Errorf("step %d: %+v, want rate %g", i, s, c.rates[i])
				}
				if c.offsets != nil && !s.Start.Equal(t0.Add(c.offsets[i])) {
					t.Errorf("step %d starts at %v, want %v", i, s.Start.Sub(t0), c.offsets[i])
				}
				wantPhase := results.StepRamp
				if i == 0 && c.warmup > 0 {
					wantPhase = results.StepWarmup
				}
				if s.Phase != wantPhase {
					t.Errorf("step %d: phase %s, want %s", i, s.Phase, wantPhase)
				}
			}
		})
	}
	bad := []struct {
		name string
		o    Options
		want string
	}{
		{"no max rate", Options{Start: 10}, "max rate: a split search needs one"},
		{"adaptive", Options{Adaptive: true, MaxRate: 100}, "adaptive search picks each step"},
		{"too many steps", Options{Start: 1, Step: 1, MaxRate: 1000}, "1000 steps from 1/s to 1000/s"},
		{"max below start", Options{Start: 100, MaxRate: 10}, "max rate"},
	}
	for _, b := range bad {
		b.o.SLOs = mustSLOs(t, "p99<100ms")
		if _, err := b.o.Schedule(t0, time.Second); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %v, want one saying %q", b.name, err, b.want)
		}
	}
	if _, err := (Options{Adaptive: true}).Schedule(t0, 0); !errors.Is(err, ErrAdaptiveSchedule) {
		t.Errorf("adaptive: %v", err)
	}
}

// TestJudgeSchedule: the answer is the highest rate passing below the
// first failure, within the step; a later pass does not raise it; a step
// with a fault or a guard broken never passes; a cut-short schedule says so.
func TestJudgeSchedule(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	o := Options{SLOs: mustSLOs(t, "p99<50ms,errors<1%"), Start: 20, Step: 20, MaxRate: 200, StepDuration: 10 * time.Second, Warmup: 5 * time.Second}
	steps, err := o.Schedule(t0, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m := &model{capacity: 130, base: 10 * time.Millisecond, perExtra: 10 * time.Millisecond}
	measure := func(n int, tweak func(i int, r *StepResult)) []StepResult {
		var ms []StepResult
		for i, s := range steps[:n] {
			r, _ := m.run(t.Context(), Step{Rate: s.Rate, Duration: time.Duration(s.Duration * float64(time.Second))})
			if tweak != nil {
				tweak(i, &r)
			}
			ms = append(ms, r)
		}
		return ms
	}
	cases := []struct {
		name        string
		ms          []StepResult
		found       bool
		max, failed float64
		capped      bool
		interrupted bool
		want        string
	}{
		// 140/s: p99 = 10 ms + 10 × 10 ms = 110 ms > 50 ms.
		{name: "queue above 130/s", ms: measure(len(steps), nil), found: true, max: 120, failed: 140, want: "120/s is the highest rate that met every SLO (within 20/s); 140/s failed"},
		{name: "later pass does not count", ms: measure(len(steps), func(i int, r *StepResult) {
			if steps[i].Rate == 60 {
				r.Faults = []string{"agent 1/3 started 2s late"}
			}
		}), found: true, max: 40, failed: 60, want: "agent 1/3 started 2s late"},
		{name: "dropped arrivals", ms: measure(len(steps), func(i int, r *StepResult) {
			if steps[i].Rate == 100 {
				r.Stats.Dropped = 500
			}
		}), found: true, max: 80, failed: 100, want: "dropped 500 arrivals"},
		{name: "warm-up does not count", ms: measure(len(steps), func(i int, r *StepResult) {
			if i == 0 {
				r.Faults = []string{"bad"}
			}
		}), found: true, max: 120, failed: 140},
		{name: "never fails", ms: measure(len(steps), func(i int, r *StepResult) {
			r.Stats.Ops[0].Latency = results.Dist{P50: time.Millisecond, P95: time.Millisecond, P99: time.Millisecond, Max: time.Millisecond}
		}), found: true, max: 200, capped: true, want: "as high as the search was allowed to go"},
		{name: "cut short before a failure", ms: measure(4, nil), found: true, max: 60, interrupted: true, want: "interrupted: so far 60/s"},
		{name: "cut short after a failure", ms: measure(9, nil), found: true, max: 120, failed: 140, want: "2 of the schedule's 11 steps did not run"},
		{name: "starting rate fails", failed: 20, ms: measure(len(steps), func(i int, r *StepResult) { r.Stats.Ops[0].OK, r.Stats.Ops[0].Errors = 0, r.Stats.Ops[0].Count }),
			want: "even the starting rate 20/s failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := JudgeSchedule(o, steps, c.ms)
			if err != nil {
				t.Fatal(err)
			}
			if r.Found != c.found || r.MaxRate != c.max || r.FirstFailedRate != c.failed || r.Capped != c.capped || r.Interrupted != c.interrupted {
				t.Errorf("found %v max %g failed %g capped %v interrupted %v; want %v %g %g %v %v: %s",
					r.Found, r.MaxRate, r.FirstFailedRate, r.Capped, r.Interrupted, c.found, c.max, c.failed, c.capped, c.interrupted, r.Conclusion)
			}
			if !strings.Contains(r.Conclusion, c.want) && !strings.Contains(strings.Join(stepFailures(r), ";"), c.want) {
				t.Errorf("conclusion %q (failures %q) lacks %q", r.Conclusion, stepFailures(r), c.want)
			}
			if r.Settings.Mode != results.ModeFixed || r.Settings.Resolution != 20 || len(r.Steps) != len(c.ms) {
				t.Errorf("settings %+v, %d steps", r.Settings, len(r.Steps))
			}
			for _, s := range r.Steps {
				if len(s.Failures) > 0 && s.Pass {
					t.Errorf("step %d passed with failures %q", s.Index, s.Failures)
				}
			}
		})
	}
	// OptionsOf reads back what the settings hold.
	back := OptionsOf(o.SLOs, o.FixedSettings())
	if b, w := back.WithDefaults(), o.WithDefaults(); b.Start != w.Start || b.Step != w.Step || b.MaxRate != w.MaxRate || b.StepDuration != w.StepDuration ||
		b.Warmup != w.Warmup || b.MinOK != w.MinOK || b.MinAchieved != w.MinAchieved || b.MaxDropped != w.MaxDropped {
		t.Errorf("OptionsOf: %+v, want %+v", b, w)
	}
}

func stepFailures(r *results.CapacityResult) []string {
	var out []string
	for _, s := range r.Steps {
		out = append(out, s.Failures...)
	}
	return out
}
