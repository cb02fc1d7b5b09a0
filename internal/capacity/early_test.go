package capacity

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// interval makes a load.Interval of n iterations, errs of them failed,
// each with one of the latencies (cycled), and dropped arrivals.
func interval(n, errs int64, dropped int64, lat ...time.Duration) load.Interval {
	h := hdr.New(1, 3_600_000_000, 3)
	for i := range n {
		h.RecordValue(lat[int(i)%len(lat)].Microseconds())
	}
	return load.Interval{Dropped: dropped, Ops: []load.IntervalOp{{Name: results.IterationOp, Count: n, Errors: errs, Latency: h}}}
}

func TestEarlyEnd(t *testing.T) {
	o := Options{Adaptive: true, SLOs: mustSLOs(t, "p99<500ms,errors<0.1%")}.WithDefaults()
	// 100/s for 10 s: at most 1,001 iterations; p99 lets 10 of them
	// exceed 500 ms, the error SLO one failure (2 are 0.2 %).
	check := o.EarlyEnd(100, 10*time.Second)
	if why := check(interval(100, 1, 0, 10*time.Millisecond, 500*time.Millisecond)); why != "" {
		t.Fatalf("50 at exactly the limit, 1 error: ended: %s", why)
	}
	if why := check(interval(100, 0, 0, 10*time.Millisecond)); why != "" {
		t.Fatalf("fast: ended: %s", why)
	}
	if why := check(interval(10, 0, 0, 600*time.Millisecond)); why != "" {
		t.Fatalf("10 slow (the p99's allowance): ended: %s", why)
	}
	why := check(interval(1, 0, 0, 501*time.Millisecond))
	if !strings.Contains(why, "p99<500ms can no longer be met: 11 iterations took longer than 500 ms, more than the 10 of the most the step can finish (1001)") {
		t.Errorf("11th slow iteration: %q", why)
	}

	check = o.EarlyEnd(100, 10*time.Second)
	if why := check(interval(100, 2, 0, time.Millisecond)); !strings.Contains(why, "errors<0.1% can no longer be met: 2 iterations failed") {
		t.Errorf("2 errors: %q", why)
	}

	// dropped: 1 % of 1,001 planned arrivals is 10.01
	check = o.EarlyEnd(100, 10*time.Second)
	if why := check(interval(50, 0, 10, time.Millisecond)); why != "" {
		t.Errorf("10 dropped: %q", why)
	}
	if why := check(interval(50, 0, 1, time.Millisecond)); !strings.Contains(why, "dropped 11 arrivals") {
		t.Errorf("11 dropped: %q", why)
	}

	// What the rest of a step can still change is left to the end: an
	// average, a rate, another operation's percentile.
	o = Options{SLOs: mustSLOs(t, "avg<100ms,rate>50,login:p99<100ms")}.WithDefaults()
	check = o.EarlyEnd(10, time.Second)
	if why := check(interval(11, 0, 0, 5*time.Second)); why != "" {
		t.Errorf("undecidable SLOs ended the step: %q", why)
	}
	// max: one iteration above the limit is enough
	o = Options{SLOs: mustSLOs(t, "max<1s")}.WithDefaults()
	if why := o.EarlyEnd(10, time.Second)(interval(1, 0, 0, 2*time.Second)); !strings.Contains(why, "more than the 0 of") {
		t.Errorf("max: %q", why)
	}
}

// TestTailAllowance: HdrHistogram's p99 of n samples is the sample at
// rank round(0.99 n), so a step of n that many may exceed the limit and
// still pass; at 1,071 iterations 11 may (0.01 × 1,071 = 10.71).
func TestTailAllowance(t *testing.T) {
	for _, c := range []struct {
		metric string
		n      float64
		want   int64
		ok     bool
	}{{"p99", 1001, 10, true}, {"p99", 1071, 11, true}, {"p99", 56, 1, true}, {"p99", 10, 0, true},
		{"p50", 10, 5, true}, {"p99.9", 100000, 100, true}, {"max", 100, 0, true}, {"avg", 100, 0, false}, {"p100", 100, 0, false}} {
		got, ok := tailAllowance(c.metric, c.n)
		if got != c.want || ok != c.ok {
			t.Errorf("%s of %g: %d %v, want %d %v", c.metric, c.n, got, ok, c.want, c.ok)
		}
		if !ok || c.metric == "max" {
			continue
		}
		// the allowance's worth of slow samples passes, one more fails
		h := hdr.New(1, 3_600_000_000, 3)
		for i := range int64(c.n) {
			v := int64(1000)
			if i < got {
				v = 600_000
			}
			h.RecordValue(v)
		}
		q, _ := strconv.ParseFloat(c.metric[1:], 64)
		if h.ValueAtQuantile(q) > 500_000 {
			t.Errorf("%s of %g with %d slow: %d µs", c.metric, c.n, got, h.ValueAtQuantile(q))
		}
		h.Reset()
		for i := range int64(c.n) {
			v := int64(1000)
			if i <= got {
				v = 600_000
			}
			h.RecordValue(v)
		}
		if h.ValueAtQuantile(q) <= 500_000 {
			t.Errorf("%s of %g with %d slow passed", c.metric, c.n, got+1)
		}
	}
}

// TestJudgeEarlyEndFails: a step that ended early never passes, whatever
// its figures.
func TestJudgeEarlyEndFails(t *testing.T) {
	o := Options{SLOs: mustSLOs(t, "p99<500ms")}.WithDefaults()
	s := results.Stats{Duration: 2 * time.Second, EndReason: "SLO p99<500ms can no longer be met",
		Ops: []results.OpStats{{Name: results.IterationOp, Count: 200, OK: 200, Rate: 100, Latency: results.Dist{P99: time.Millisecond}}}}
	st := o.Judge(100, StepResult{Stats: s})
	if st.Pass || !strings.Contains(strings.Join(st.Failures, ";"), "ended after 2s: SLO p99<500ms can no longer be met") {
		t.Errorf("pass %v, failures %q", st.Pass, st.Failures)
	}
}

// TestJudgeEarlyEndServed: a step that ended early served what finished
// inside its window; its backlog, finishing after, does not count.
func TestJudgeEarlyEndServed(t *testing.T) {
	o := Options{SLOs: mustSLOs(t, "p99<500ms")}.WithDefaults()
	row := func(from, to int, n, errs int64) results.TimelineRow {
		return results.TimelineRow{Start: time.Duration(from) * time.Second, End: time.Duration(to) * time.Second,
			Ops: []results.OpInterval{{Op: results.IterationOp, Count: n, Errors: errs}}}
	}
	s := results.Stats{Duration: 2 * time.Second, EndReason: "SLO p99<500ms can no longer be met",
		Timeline: []results.TimelineRow{row(0, 1, 100, 0), row(1, 2, 100, 10), row(2, 3, 300, 0)},
		Ops:      []results.OpStats{{Name: results.IterationOp, Count: 500, OK: 490, Errors: 10, Rate: 250, Latency: results.Dist{P99: time.Second}}}}
	st := o.Judge(300, StepResult{Stats: s})
	if st.Achieved != 100 || st.OKRate != 95 || st.Pass {
		t.Errorf("achieved %g, served %g, pass %v; want 100, 95, false", st.Achieved, st.OKRate, st.Pass)
	}
}

// TestStepPhase: a StepFunc learns the phase of the step it runs.
func TestStepPhase(t *testing.T) {
	m := &saturating{limit: 500, base: 5 * time.Millisecond, cpuMs: 3}
	var seen []string
	run := func(ctx context.Context, st Step) (StepResult, error) {
		seen = append(seen, st.Phase)
		return m.run(ctx, st)
	}
	r, err := Search(t.Context(), run, adaptiveOpts(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]bool{}
	for i, s := range r.Steps {
		if seen[i] != s.Phase {
			t.Errorf("step %d: the StepFunc saw phase %q, the step is %q", i, seen[i], s.Phase)
		}
		phases[s.Phase] = true
	}
	if !phases[results.StepProbe] || !phases[results.StepConfirm] {
		t.Errorf("phases %v", phases)
	}
}
