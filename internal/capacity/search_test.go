package capacity

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// model is a fake server: below capacity every iteration takes base; above
// it, latency grows with the excess rate, as a queue would. fail makes
// every iteration fail; dropFrac drops that share of arrivals.
type model struct {
	capacity float64
	base     time.Duration
	perExtra time.Duration // added latency per iteration/s above capacity
	fail     bool
	dropFrac float64
	calls    []float64
}

func (m *model) run(_ context.Context, st Step) (StepResult, error) {
	rate, d := st.Rate, st.Duration
	m.calls = append(m.calls, rate)
	arrivals := int64(math.Round(rate * d.Seconds()))
	dropped := int64(math.Round(float64(arrivals) * m.dropFrac))
	n := arrivals - dropped
	lat := m.base
	if rate > m.capacity {
		lat += time.Duration((rate - m.capacity) * float64(m.perExtra))
	}
	it := results.OpStats{Name: results.IterationOp, Count: n, OK: n, Rate: float64(n) / d.Seconds(),
		Latency: results.Dist{P50: lat / 2, P95: lat * 9 / 10, P99: lat, Max: lat * 2}}
	if m.fail {
		it.OK, it.Errors = 0, n
	}
	return StepResult{Stats: results.Stats{Start: time.Now(), Duration: d, Model: results.ModelOpen, Iterations: n,
		Dropped: dropped, Ops: []results.OpStats{it}}, CPUMsPerOp: 4, ServerCores: rate * 4 / 1000}, nil
}

func mustSLOs(t *testing.T, s string) []results.Threshold {
	t.Helper()
	ts, err := ParseSLOs(s)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func quick(t *testing.T, slo string) Options {
	return Options{SLOs: mustSLOs(t, slo), StepDuration: 10 * time.Second, Warmup: -1, Pause: -1}
}

func TestSearchFindsCapacity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name                   string
		capacity               float64
		start, step, res, maxR float64
	}{
		{"round", 100, 10, 10, 1, 0},
		{"between steps", 137, 20, 40, 5, 0},
		{"fractional", 7.3, 1, 2, 0.25, 0},
		{"at start", 10, 10, 10, 1, 0},
		{"high", 2400, 100, 500, 25, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := &model{capacity: c.capacity, base: 10 * time.Millisecond, perExtra: 100 * time.Millisecond}
			o := quick(t, "p99<50ms,errors<1%")
			o.Start, o.Step, o.Resolution, o.MaxRate = c.start, c.step, c.res, c.maxR
			o.StepDuration = time.Duration(float64(time.Second) * max(10, 100/c.start)) // ≥ 50 iterations a step
			r, err := Search(t.Context(), m.run, o)
			if err != nil {
				t.Fatal(err)
			}
			// 10 ms + (rate−capacity)·100 ms < 50 ms  ⇔  rate < capacity + 0.4
			limit := c.capacity + 0.4
			if !r.Found || r.MaxRate > limit || limit-r.MaxRate > c.res {
				t.Errorf("max rate %g (found %v), want within %g below %g; steps %v\n%s", r.MaxRate, r.Found, c.res, limit, m.calls, r.Conclusion)
			}
			if r.FirstFailedRate <= r.MaxRate || r.FirstFailedRate-r.MaxRate > c.res*(1+1e-9) {
				t.Errorf("first failed %g, max %g: want within the resolution %g", r.FirstFailedRate, r.MaxRate, c.res)
			}
			if len(r.Steps) != len(m.calls) {
				t.Errorf("%d steps recorded, %d run", len(r.Steps), len(m.calls))
			}
			b := r.Best()
			if b == nil || !b.Pass || b.Rate != r.MaxRate || r.CPUMsPerOp != 4 || r.OpsPerCPUSecond != 250 {
				t.Errorf("best step %+v, cpu %g, ops/cpu-s %g", b, r.CPUMsPerOp, r.OpsPerCPUSecond)
			}
			if !strings.Contains(r.Conclusion, "highest rate that met every SLO") {
				t.Errorf("conclusion %q", r.Conclusion)
			}
		})
	}
}

func TestSearchPhases(t *testing.T) {
	t.Parallel()
	m := &model{capacity: 45, base: time.Millisecond, perExtra: time.Second}
	o := quick(t, "p99<100ms")
	o.Warmup = time.Second
	o.Start, o.Step, o.Resolution = 10, 10, 1
	r, err := Search(t.Context(), m.run, o)
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for i, s := range r.Steps {
		if s.Index != i {
			t.Errorf("step %d has index %d", i, s.Index)
		}
		phases = append(phases, s.Phase)
	}
	// warm-up at 10, ramp 10..50 (50 fails), then 45 (pass), 48, 47, 46 (fail)
	want := []float64{10, 10, 20, 30, 40, 50, 45, 48, 47, 46}
	if !equalRates(m.calls, want) {
		t.Errorf("rates %v, want %v", m.calls, want)
	}
	if phases[0] != results.StepWarmup || phases[1] != results.StepRamp || phases[len(phases)-1] != results.StepSearch {
		t.Errorf("phases %v", phases)
	}
	if r.MaxRate != 45 || r.FirstFailedRate != 46 {
		t.Errorf("max %g first failed %g, want 45 and 46", r.MaxRate, r.FirstFailedRate)
	}
}

func equalRates(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*max(1, math.Abs(a[i]), math.Abs(b[i])) {
			return false
		}
	}
	return true
}

func TestSearchStartFails(t *testing.T) {
	t.Parallel()
	m := &model{capacity: 5, base: 10 * time.Millisecond, perExtra: time.Second}
	o := quick(t, "p99<500ms")
	o.Start = 50
	r, err := Search(t.Context(), m.run, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found || r.MaxRate != 0 || r.BestStep != -1 || len(r.Steps) != 1 {
		t.Errorf("found %v max %g best %d steps %d", r.Found, r.MaxRate, r.BestStep, len(r.Steps))
	}
	if !strings.Contains(r.Conclusion, "even the starting rate 50/s failed") || !strings.Contains(r.Conclusion, "p99<500ms") {
		t.Errorf("conclusion %q", r.Conclusion)
	}
}

func TestSearchEverythingFailsNeverPasses(t *testing.T) {
	t.Parallel()
	// Fast failures meet any latency SLO; only the guards stop them.
	m := &model{capacity: 1e9, base: time.Millisecond, fail: true}
	o := quick(t, "p99<500ms")
	r, err := Search(t.Context(), m.run, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found || len(r.Steps) != 1 || r.Steps[0].Pass {
		t.Fatalf("found %v, steps %+v", r.Found, r.Steps)
	}
	if !strings.Contains(strings.Join(r.Steps[0].Failures, ";"), "every iteration failed") {
		t.Errorf("failures %v", r.Steps[0].Failures)
	}
}

func TestSearchCapped(t *testing.T) {
	t.Parallel()
	m := &model{capacity: 1e9, base: time.Millisecond}
	o := quick(t, "p99<500ms")
	o.Start, o.Step, o.MaxRate = 10, 30, 50
	r, err := Search(t.Context(), m.run, o)
	if err != nil {
		t.Fatal(err)
	}
	if !equalRates(m.calls, []float64{10, 40, 50}) || !r.Capped || r.MaxRate != 50 || r.FirstFailedRate != 0 {
		t.Errorf("calls %v capped %v max %g first failed %g", m.calls, r.Capped, r.MaxRate, r.FirstFailedRate)
	}
	if !strings.Contains(r.Conclusion, "may take more") {
		t.Errorf("conclusion %q", r.Conclusion)
	}

	o.MaxRate, o.MaxSteps = 0, 4
	m.calls = nil
	r, err = Search(t.Context(), m.run, o)
	if err != nil || len(m.calls) != 4 || !r.Capped {
		t.Errorf("max steps: err %v calls %v capped %v", err, m.calls, r.Capped)
	}
}

func TestSearchDroppedFails(t *testing.T) {
	t.Parallel()
	m := &model{capacity: 1e9, base: time.Millisecond, dropFrac: 0.02}
	r, err := Search(t.Context(), m.run, quick(t, "p99<500ms"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Found {
		t.Fatalf("a step that dropped 2%% of its arrivals passed: %+v", r.Steps[0])
	}
	if f := strings.Join(r.Steps[0].Failures, ";"); !strings.Contains(f, "dropped") || strings.Contains(f, "achieved") {
		t.Errorf("failures %v: want the dropped arrivals (and the achieved rate still within 95%%)", r.Steps[0].Failures)
	}
}

func TestSearchErrorsAndCancel(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	m := &model{capacity: 1e9, base: time.Millisecond}
	n := 0
	run := func(ctx context.Context, st Step) (StepResult, error) {
		if n++; n == 3 {
			return StepResult{}, boom
		}
		return m.run(ctx, st)
	}
	r, err := Search(t.Context(), run, quick(t, "p99<500ms"))
	if !errors.Is(err, boom) || r == nil || len(r.Steps) != 2 || !r.Found || !strings.Contains(r.Conclusion, "error") {
		t.Errorf("err %v result %+v", err, r)
	}

	ctx, cancel := context.WithCancel(t.Context())
	run = func(ctx context.Context, st Step) (StepResult, error) {
		if st.Rate >= 30 {
			cancel()
			return StepResult{}, ctx.Err()
		}
		return m.run(ctx, st)
	}
	r, err = Search(ctx, run, quick(t, "p99<500ms"))
	if !errors.Is(err, context.Canceled) || !r.Interrupted || r.MaxRate != 20 {
		t.Errorf("err %v interrupted %v max %g", err, r.Interrupted, r.MaxRate)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	o := Options{SLOs: mustSLOs(t, "p99<500ms,errors<1%")}.WithDefaults()
	stats := func(count, ok int64, rate float64, dropped, interrupted int64, p99 time.Duration, aborted bool) StepResult {
		return StepResult{Stats: results.Stats{Duration: 10 * time.Second, Dropped: dropped, Interrupted: interrupted, Aborted: aborted,
			Ops: []results.OpStats{{Name: results.IterationOp, Count: count, OK: ok, Errors: count - ok, Rate: rate,
				Latency: results.Dist{P99: p99}}}}}
	}
	cases := []struct {
		name string
		r    StepResult
		want string // "" for a pass; else a substring of the failures
	}{
		{"pass", stats(1000, 1000, 100, 0, 0, 100*time.Millisecond, false), ""},
		{"just enough achieved", stats(950, 950, 95, 0, 0, time.Millisecond, false), ""},
		{"achieved short", stats(940, 940, 94, 0, 0, time.Millisecond, false), "achieved 94.0/s, below 95% of the asked 100/s"},
		{"dropped below 1%", stats(995, 995, 99.5, 5, 0, time.Millisecond, false), ""},
		{"dropped 1%", stats(990, 990, 99, 10, 0, time.Millisecond, false), "dropped 10 arrivals"},
		{"cut off", stats(980, 980, 98, 0, 20, time.Millisecond, false), "cut off"},
		{"few ok", stats(1000, 49, 100, 0, 0, time.Millisecond, false), "only 49 successful"},
		{"all failed", stats(1000, 0, 100, 0, 0, time.Millisecond, false), "every iteration failed (1000 of 1000)"},
		{"nothing finished", stats(0, 0, 0, 0, 0, 0, false), "no iteration finished"},
		{"slo latency", stats(1000, 1000, 100, 0, 0, 600*time.Millisecond, false), "SLO p99<500ms (actual 600ms)"},
		{"slo errors", stats(1000, 980, 100, 0, 0, time.Millisecond, false), "SLO errors<1% (actual 2%)"},
		{"aborted", stats(1000, 1000, 100, 0, 0, time.Millisecond, true), "interrupted"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := o.Judge(100, c.r)
			got := strings.Join(st.Failures, "; ")
			if c.want == "" && !st.Pass {
				t.Errorf("failed: %s", got)
			}
			if c.want != "" && (st.Pass || !strings.Contains(got, c.want)) {
				t.Errorf("pass %v, failures %q, want %q", st.Pass, got, c.want)
			}
		})
	}
}

func TestMidpoint(t *testing.T) {
	t.Parallel()
	cases := []struct{ lo, hi, res, want float64 }{
		{40, 50, 1, 45},
		{45, 50, 1, 48}, // 2.5 rounds away from zero
		{45, 48, 1, 47},
		{47, 48, 1, 47.5}, // not called when hi−lo ≤ res; still strictly between
		{100, 200, 25, 150},
		{0.5, 1, 0.1, 0.8},
	}
	for _, c := range cases {
		if got := midpoint(c.lo, c.hi, c.res); math.Abs(got-c.want) > 1e-9 || got <= c.lo || got >= c.hi {
			t.Errorf("midpoint(%g, %g, %g) = %g, want %g", c.lo, c.hi, c.res, got, c.want)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	o := Options{Start: -1, Step: math.Inf(1), StepDuration: -time.Second, Resolution: -1, MaxRate: -3,
		MinOK: -1, MinAchieved: 2, MaxDropped: 1, MaxSteps: -1}
	err := o.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"slo:", "start rate:", "step:", "step duration:", "resolution:", "max rate:", "min ok:", "min achieved:", "max dropped:", "max steps:"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	if err := (Options{SLOs: mustSLOs(t, "p99<1s")}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestParseSLOs(t *testing.T) {
	t.Parallel()
	ts, err := ParseSLOs(" p99<500ms, errors<0.1% ,token:p95<=1s")
	if err != nil {
		t.Fatal(err)
	}
	if got := results.FormatSLOs(ts); got != "p99<500ms,errors<0.1%,token:p95<=1000ms" {
		t.Errorf("got %q", got)
	}
	if l, ok := LatencyLimit(ts); !ok || l != 1000 {
		t.Errorf("latency limit %g %v", l, ok)
	}
	if _, err := ParseSLOs("p99<fast,bogus<1"); err == nil || !strings.Contains(err.Error(), "fast") || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("want both errors, got %v", err)
	}
	if _, err := ParseSLOs(" , "); err == nil {
		t.Error("empty list accepted")
	}
}

func TestResultFilesAndCommonRate(t *testing.T) {
	t.Parallel()
	run := func(capacity float64) *results.CapacityResult {
		m := &model{capacity: capacity, base: 10 * time.Millisecond, perExtra: 100 * time.Millisecond}
		o := quick(t, "p99<50ms")
		o.Start, o.Step, o.Resolution = 10, 10, 2
		r, err := Search(t.Context(), m.run, o)
		if err != nil {
			t.Fatal(err)
		}
		r.Scenario = "fake"
		return r
	}
	a, b := run(35), run(62)
	if rate, ok := results.CommonRate([]*results.CapacityResult{a, b}); !ok || rate != 30 {
		t.Errorf("common rate %g %v, want 30", rate, ok)
	}
	if _, ok := results.CommonRate([]*results.CapacityResult{a, run(5)}); ok {
		t.Error("a common rate with a result that never passed")
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := b.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadCapacityDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxRate != b.MaxRate || len(got.Steps) != len(b.Steps) || got.SLOs[0].String() != "p99<50ms" || got.Scenario != "fake" {
		t.Errorf("read back %+v", got)
	}
	var csv bytes.Buffer
	if err := b.WriteStepsCSV(&csv); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if len(lines) != len(b.Steps)+1 || !strings.HasPrefix(lines[0], "index,phase,rate,achieved_rate") {
		t.Errorf("steps.csv:\n%s", csv.String())
	}
	dirs, err := results.FindCapacityDirs(filepath.Dir(dir))
	if err != nil || len(dirs) != 1 || dirs[0] != dir {
		t.Errorf("FindDirs: %v %v", dirs, err)
	}
}

// An adaptive search's conclusion names the failure at the bracket's top,
// not a lower one (a warming server's, or an unsteady limit's), and
// counts those below the answer.
func TestConclusionNamesTheBracketsTop(t *testing.T) {
	step := func(i int, phase string, rate float64, pass bool, why string) results.CapacityStep {
		s := results.CapacityStep{Index: i, Phase: phase, Rate: rate, Pass: pass, CPUMsPerOp: 2}
		if !pass {
			s.Failures = []string{why}
		}
		return s
	}
	r := &results.CapacityResult{Settings: results.CapacitySettings{Mode: results.ModeAdaptive}, Found: true, MaxRate: 846,
		FirstFailedRate: 851, BestStep: 3, Steps: []results.CapacityStep{
			step(0, results.StepProbe, 20, true, ""),
			step(1, results.StepRamp, 798, false, "a stall"),
			step(2, results.StepSearch, 900, false, "too much"),
			step(3, results.StepConfirm, 846, true, ""),
			step(4, results.StepConfirm, 851, false, "just too much"),
		}}
	finish(t.Context(), Options{Adaptive: true}, r, nil)
	if !strings.Contains(r.Conclusion, "851/s failed: just too much") || strings.Contains(r.Conclusion, "798") {
		t.Errorf("conclusion: %s", r.Conclusion)
	}
	if r.FailedBelow != 1 {
		t.Errorf("failed at or below the answer: %d, want 1", r.FailedBelow)
	}
	var b strings.Builder
	if err := WriteText(&b, r); err != nil || !strings.Contains(b.String(), "steadiness:      1 judged step(s) at or below 846/s failed") ||
		!strings.Contains(b.String(), "repeatability:   unknown from one search") {
		t.Errorf("text (%v):\n%s", err, b.String())
	}
}

func TestParseSLOsRefusesWhatNoServiceLevelIs(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"max>5ms", "max must be bounded from above"},
		{"token:p99>=1s", "p99 must be bounded from above"},
		{"errors>1%", "errors must be bounded from above"},
		{"errors<200%", "an error rate is at most 100%"},
		{"p99.9<0ms", "can never pass"},
		{"p99<-5ms", "negative"},
	}
	for _, tt := range tests {
		if _, err := ParseSLOs(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseSLOs(%q) = %v, want an error saying %q", tt.in, err, tt.want)
		}
	}
	if _, err := ParseSLOs("rate>100,p99<1s,errors<=0%"); err != nil {
		t.Errorf("a lower bound on the rate and no errors at all: %v", err)
	}
}

// A starting step whose only failure is too few successful iterations
// gets the advice to lengthen the steps, from the failure's kind.
func TestTooFewIterationsAdvice(t *testing.T) {
	t.Parallel()
	m := &model{capacity: 1000, base: time.Millisecond}
	o := quick(t, "p99<500ms")
	o.Start, o.Step, o.StepDuration, o.MinOK = 2, 2, 2*time.Second, 100
	r, err := Search(t.Context(), m.run, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found || len(r.Steps) == 0 || !r.Steps[0].OnlyFailure(results.FailTooFewOK) || !strings.Contains(r.Conclusion, "Lengthen the steps") {
		t.Errorf("steps %+v: %s", r.Steps, r.Conclusion)
	}
}
