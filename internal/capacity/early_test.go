package capacity

import (
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
	if !strings.Contains(why, "p99<500ms can no longer be met: 11 iterations took longer than 500 ms") {
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
	if why := o.EarlyEnd(10, time.Second)(interval(1, 0, 0, 2*time.Second)); !strings.Contains(why, "more than none of") {
		t.Errorf("max: %q", why)
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
