package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// EarlyEnd returns a check that sees a step at rate for d interval by
// interval (load.WithEarlyEnd) and says when the step has already failed:
// when what it has recorded so far fails a guard or an SLO however the
// rest of it goes. Such a step ends at once instead of overloading the
// server for the rest of its length, and the search learns the same
// verdict sooner. (A short overload does not leave the server dearer per
// operation afterwards: docs/results/capacity-search.)
//
// Only what can be decided early counts, on whole iterations:
//   - a latency SLO on a percentile q (or the max) fails once more
//     iterations took longer than its limit (only those that certainly
//     did: whole histogram buckets above it) than the percentile lets
//     through of the most the step can finish (tailAllowance);
//   - an error-rate SLO fails once the errors alone exceed it over the
//     most the step can finish;
//   - the dropped-arrivals guard fails once the drops alone exceed
//     MaxDropped of every arrival the step plans.
//
// The most a step can finish is its planned arrivals, rate × d (plus one).
// The latency-rise guard, the achieved rate and the minimum of successes
// are judged at the end only. A step that ended early still fails by the
// same measures at the end (Judge), with the reason in its failures.
func (o Options) EarlyEnd(rate float64, d time.Duration) func(load.Interval) string {
	planned := math.Floor(rate*d.Seconds()) + 1
	var (
		slow    = make([]int64, len(o.SLOs))
		errs    int64
		dropped int64
	)
	return func(iv load.Interval) string {
		dropped += iv.Dropped
		if o.MaxDropped > 0 && float64(dropped) >= o.MaxDropped*planned {
			return fmt.Sprintf("dropped %d arrivals, %g%% of the step's %.0f already", dropped, 100*o.MaxDropped, planned)
		}
		if len(iv.Ops) == 0 || iv.Ops[0].Name != results.IterationOp {
			return ""
		}
		it := iv.Ops[0]
		errs += it.Errors
		for i, t := range o.SLOs {
			if t.Op != "" && t.Op != results.IterationOp || !strings.HasPrefix(t.Cmp, "<") {
				continue
			}
			if t.Metric == "errors" {
				pct := 100 * float64(errs) / planned
				if pct > t.Limit || pct == t.Limit && t.Cmp == "<" {
					return fmt.Sprintf("SLO %s can no longer be met: %d iterations failed, %.2f%% of the most the step can finish (%.0f)", t, errs, pct, planned)
				}
				continue
			}
			allow, ok := tailAllowance(t.Metric, planned)
			if !ok || it.Latency == nil {
				continue
			}
			slow[i] += countAbove(it, time.Duration(t.Limit*float64(time.Millisecond)))
			if slow[i] > allow {
				return fmt.Sprintf("SLO %s can no longer be met: %d iterations took longer than %g ms, more than the %d of the most the step can finish (%.0f) it allows",
					t, slow[i], t.Limit, allow, planned)
			}
		}
		return ""
	}
}

// tailAllowance is how many of n iterations a latency metric lets exceed
// its limit: for a percentile q, those above the sample it reports, which
// HdrHistogram takes at rank round(q × n) (n − that rank never falls as n
// grows, so n, the most a step can finish, is the worst case); none for
// the max; false for the others (min, avg), which the rest of a step can
// still bring down.
func tailAllowance(metric string, n float64) (int64, bool) {
	if metric == "max" {
		return 0, true
	}
	if !strings.HasPrefix(metric, "p") {
		return 0, false
	}
	p, err := strconv.ParseFloat(metric[1:], 64)
	if err != nil || p <= 0 || p >= 100 {
		return 0, false
	}
	rank := math.Max(1, math.Min(n, math.Floor(p/100*n+0.5)))
	return int64(n - rank), true
}

// countAbove counts an interval's iterations certainly longer than limit:
// those in histogram buckets whose lowest value exceeds it.
func countAbove(op load.IntervalOp, limit time.Duration) int64 {
	us := limit.Microseconds()
	var n int64
	for _, b := range op.Latency.Distribution() {
		if b.From > us {
			n += b.Count
		}
	}
	return n
}
