package capacity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// The adaptive search finds the limit without tuning flags, in three
// parts:
//
//  1. Probe: short steps (ProbeDuration) from Start, doubling, until one
//     falls behind (fails any guard or SLO; the first failure where
//     something succeeded runs once more, since a cold server fails at
//     any rate) or the rate passes the
//     CPU-bound prediction (Cores ÷ the server CPU per operation the last
//     probe measured). The probes warm the server up and are not judged.
//     The estimate is the failing probe's successful throughput when it
//     fell behind (a saturated server completes what it can), else the
//     prediction, else the last rate.
//  2. Settle: unjudged steps at 0.7 × the estimate until the server's CPU
//     per operation has stopped falling over the last three (a JVM
//     warming up), from the last probe's cost even when every probe fell
//     behind; the estimate follows the warming server's prediction
//     (after a probe's failure only once it fell far below the probes').
//  3. Bracket: judged steps from 0.9 × the estimate, growing (or
//     shrinking) by bracketGrowth until one passes and one fails; without
//     a pass below the estimate the search shrinks on; passes in a row
//     grow faster each time (1.1, 1.21, 1.46, then 2), and at once by up
//     to probeGrowth when far below the prediction.
//  4. Bisect between the highest pass and the lowest failure until they
//     are within Precision of the pass. When the server has become much
//     cheaper per operation since the failure (the step that passed just
//     before it cost staleFailure times the highest pass's CPU per
//     operation: the JVM was still warming up, as in the first search
//     after a boot), the failure no longer holds: the bracket opens again
//     at its rate as soon as a pass shows it (at most maxReopen times).
//     An overload's own cost (a failing step often costs more per
//     operation) does not count.
//  5. Confirm: the highest pass runs again for long enough to see an
//     overload of Precision (the shorter steps before it may pass a rate
//     a few per cent too high); when it fails, lower rates are confirmed
//     in turn. Only a confirmed rate is the answer. Where the bracket's
//     steps were as long as confirming ones already (below ~300/s for a
//     p99: its 2,000 arrivals take longer than the latency-rise guard
//     needs), their verdicts stand: the bisection goes on to Precision
//     and no rate runs twice (a 50/s password grant's steps last 20 s).
//     When the server went on warming up through the confirmation, the
//     same rule opens the bracket again above the lowest failure.
//
// A judged step lasts long enough for TailSamples arrivals beyond the
// percentile the SLOs name (2,000 for a p99: the percentile rests on 20
// samples), between MinStepDuration and MaxStepDuration. Every guard of
// the linear search holds, and one more: a step whose latency rose
// through it (a growing queue) fails (MaxLatencyRise). A step whose
// recorded iterations already fail it ends at once (EarlyEnd, where the
// caller wires it).

func (o Options) adaptiveDefaults() Options {
	o.Start = cmp.Or(o.Start, DefaultAdaptiveStart)
	o.Warmup = cmp.Or(o.Warmup, -1) // the probe warms the server up
	o.Precision = cmp.Or(o.Precision, DefaultPrecision)
	o.MinStepDuration = cmp.Or(o.MinStepDuration, DefaultMinStepDuration)
	o.MaxStepDuration = cmp.Or(o.MaxStepDuration, DefaultMaxStepDuration)
	o.ProbeDuration = cmp.Or(o.ProbeDuration, DefaultProbeDuration)
	o.MaxLatencyRise = cmp.Or(o.MaxLatencyRise, DefaultMaxLatencyRise)
	return o.guardDefaults()
}

func (o Options) validateAdaptive() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !(o.Precision > 0 && o.Precision <= 0.5) {
		add("precision: %v: must be a fraction in (0, 0.5]", o.Precision)
	}
	if o.Cores < 0 || math.IsNaN(o.Cores) || o.Cores > 4096 {
		add("cores: %v: must be between 0 (unknown) and 4096", o.Cores)
	}
	for _, d := range []time.Duration{o.MinStepDuration, o.MaxStepDuration, o.ProbeDuration} {
		if d <= 0 || d > MaxWait {
			add("step duration: %v: must be positive and at most %v", d, MaxWait)
		}
	}
	if o.MinStepDuration > o.MaxStepDuration {
		add("step duration: the least (%v) exceeds the most (%v)", o.MinStepDuration, o.MaxStepDuration)
	}
	if o.StepDuration < 0 || o.StepDuration > MaxWait {
		add("step duration: %v: must be 0 (chosen from the rate) or positive and at most %v", o.StepDuration, MaxWait)
	}
	return errors.Join(errs...)
}

func (o Options) adaptiveSettings() results.CapacitySettings {
	return results.CapacitySettings{
		Mode: results.ModeAdaptive, Start: o.Start, StepDuration: o.StepDuration.Seconds(), Warmup: max(o.Warmup, 0).Seconds(),
		MaxRate: o.MaxRate, MinOK: o.MinOK, MinAchieved: 100 * o.MinAchieved, MaxDropped: 100 * o.MaxDropped,
		Pause: max(o.Pause, 0).Seconds(), PrecisionPct: 100 * o.Precision, Cores: o.Cores,
		MinStepDuration: o.MinStepDuration.Seconds(), MaxStepDuration: o.MaxStepDuration.Seconds(),
		MaxLatencyRise: 100 * max(o.MaxLatencyRise, 0),
	}
}

// StepDurationFor is how long a judged step at rate lasts when it must
// tell an overload of resolve (a fraction of the rate) from a pass:
// StepDuration when set; else long enough for TailSamples arrivals beyond
// the highest percentile the SLOs name, and for a queue growing at
// resolve × 1 s per second to raise the median latency between the step's
// first and last quarters by the latency-rise guard's threshold; within
// MinStepDuration and MaxStepDuration. Never too short for MinOK
// successes, even when StepDuration is set.
func (o Options) StepDurationFor(rate, resolve float64) time.Duration {
	enough := wholeSeconds(1.1 * float64(o.MinOK) / rate)
	if o.StepDuration > 0 {
		return max(o.StepDuration, enough)
	}
	secs := float64(o.MinOK) / rate
	if q, ok := highestPercentile(o.SLOs); ok && q < 1 {
		secs = max(secs, TailSamples/(1-q)/rate)
	}
	if limit, ok := LatencyLimit(o.SLOs); ok && o.MaxLatencyRise > 0 && resolve > 0 {
		// the quarters' centres are 3/4 of the step apart
		secs = max(secs, o.MaxLatencyRise*limit/1000/(resolve*0.75))
	}
	return max(min(max(wholeSeconds(secs), o.MinStepDuration), o.MaxStepDuration), enough)
}

// wholeSeconds rounds secs up to whole seconds, ignoring float noise.
func wholeSeconds(secs float64) time.Duration {
	return time.Duration(math.Ceil(secs-1e-6)) * time.Second
}

// highestPercentile is the highest latency percentile the SLOs name, as
// a fraction (p99 → 0.99).
func highestPercentile(ts []results.Threshold) (float64, bool) {
	var q float64
	found := false
	for _, t := range ts {
		if t.Unit() != results.UnitMillis || !strings.HasPrefix(t.Metric, "p") {
			continue
		}
		if p, err := strconv.ParseFloat(t.Metric[1:], 64); err == nil && p/100 > q {
			q, found = p/100, true
		}
	}
	return q, found
}

// latencyRise says why a step failed the latency-rise guard ("" when it
// did not): the median latency of the last quarter of its measured window
// exceeds the first quarter's by more than MaxLatencyRise × the latency
// SLO, and at least doubled. Rows are per interval, by completion; a
// quarter's median is the mean of its intervals' medians (meanMedian).
func (o Options) latencyRise(s results.Stats) string {
	limit, ok := LatencyLimit(o.SLOs)
	if o.MaxLatencyRise <= 0 || !ok || limit <= 0 {
		return ""
	}
	end := s.Warmup + s.Duration
	var rows []results.OpInterval
	for _, r := range s.Timeline {
		if !r.Warmup && r.End <= end+time.Millisecond && len(r.Ops) > 0 && r.Ops[0].Count > 0 {
			rows = append(rows, r.Ops[0])
		}
	}
	if len(rows) < 4 {
		return ""
	}
	q := len(rows) / 4
	first, last := meanMedian(rows[:q]), meanMedian(rows[len(rows)-q:])
	rise := float64(last-first) / float64(time.Millisecond)
	if rise > o.MaxLatencyRise*limit && last >= 2*first {
		return fmt.Sprintf("latency rose through the step (median %s → %s ms): its queue was growing",
			results.FormatMs(ms(first)), results.FormatMs(ms(last)))
	}
	return ""
}

// meanMedian is the count-weighted mean of the rows' medians: the
// intervals keep no histogram to take the median of their union from.
func meanMedian(rows []results.OpInterval) time.Duration {
	var sum float64
	var n int64
	for _, r := range rows {
		sum += float64(r.P50) * float64(r.Count)
		n += r.Count
	}
	if n == 0 {
		return 0
	}
	return time.Duration(sum / float64(n))
}

// adaptive runs the adaptive search (see the comment at the top).
func (s *searcher) adaptive(ctx context.Context) error {
	o := s.o
	if o.Warmup > 0 {
		if _, err := s.step(ctx, results.StepWarmup, o.Start, o.Warmup); err != nil {
			return err
		}
	}
	estimate, err := s.probe(ctx)
	if err != nil {
		return err
	}
	if estimate == 0 {
		return nil
	}
	if estimate, err = s.settle(ctx, estimate); err != nil {
		return err
	}
	s.res.Estimate = roundRate(estimate)
	return s.bracket(ctx, roundRate(0.9*estimate))
}

// capRate applies MaxRate.
func (s *searcher) capRate(r float64) float64 {
	if s.o.MaxRate > 0 {
		return min(r, s.o.MaxRate)
	}
	return r
}

// probe runs the rising probes and returns the estimate of the limit.
func (s *searcher) probe(ctx context.Context) (float64, error) {
	o := s.o
	rate := s.capRate(o.Start)
	retried := false
	for range maxProbes {
		st, err := s.step(ctx, results.StepProbe, rate, o.ProbeDuration)
		if err != nil {
			return 0, err
		}
		predicted := s.predict(st)
		if !st.Pass {
			// A just-booted server fails a probe at any rate and keeps
			// up with ten times it seconds later
			// (docs/results/capacity-search). When something succeeded,
			// the same rate once more tells.
			if st.OK > 0 && !retried {
				retried = true
				continue
			}
			s.probeFailed = true
			if st.OK == 0 {
				return 0, nil // nothing succeeded: no rate will do
			}
			if st.OKRate > 0 && st.Achieved < o.MinAchieved*rate {
				return min(st.OKRate, rate), nil // saturated: it completed what it could
			}
			return rate / probeGrowth * 1.5, nil // it kept up but missed an SLO: the limit is below
		}
		if o.MaxRate > 0 && rate >= o.MaxRate {
			return rate, nil
		}
		if predicted > 0 && rate*probeGrowth > predicted {
			return s.capRate(max(predicted, rate)), nil
		}
		rate = s.capRate(rate * probeGrowth)
	}
	return rate, nil
}

// Settling: unjudged steps of ProbeDuration at settleShare of the
// estimate, until the server's CPU per operation has fallen by less than
// settleTolerance over the last settleSpan steps (the latest probe
// counting as the first), at most maxSettle of them.
const (
	settleShare     = 0.7
	settleTolerance = 0.1
	settleSpan      = 3
	maxSettle       = 15
)

// settle warms the server up before anything is judged: a JVM's first
// minute of load costs it many times the CPU per operation of a warm one,
// and a step judged meanwhile finds a limit the warm server no longer
// has. It runs unjudged steps below the estimate until the CPU per
// operation stops falling (settleSpan steps at least; none when the
// server's CPU is not measured). The fall is judged over several steps,
// not from one to the next: while its compiler threads are busy a
// just-booted JVM gets cheaper by a few per cent a step for half a
// minute (docs/results/capacity-search). The estimate follows the warming server's CPU-bound prediction
// (doubling at most per step), so that it warms up near its limit; after
// a probe's failure only once the server became much cheaper than during
// the probes (staleFailure), since that failure came from a colder one.
func (s *searcher) settle(ctx context.Context, estimate float64) (float64, error) {
	// the last probe's cost, even when it fell behind: a slow operation
	// (an argon2 login) on a just-booted server fails every probe
	probeCPU := cmp.Or(s.lastOKCPU, s.lastCPU)
	if s.o.Cores <= 0 || probeCPU <= 0 {
		return estimate, nil
	}
	cpus := []float64{probeCPU}
	for range maxSettle {
		st, err := s.step(ctx, results.StepWarmup, s.capRate(roundRate(settleShare*estimate)), s.o.ProbeDuration)
		if err != nil {
			return estimate, err
		}
		if st.CPUMsPerOp <= 0 || st.OK == 0 {
			return estimate, nil
		}
		cpu := st.CPUMsPerOp
		cpus = append(cpus, cpu)
		if s.probeFailed && probeCPU > staleFailure*cpu {
			s.probeFailed = false
		}
		if !s.probeFailed {
			estimate = s.capRate(max(estimate, min(s.predict(st), probeGrowth*estimate)))
		}
		if n := len(cpus); n > settleSpan && cpu > cpus[n-1-settleSpan]*(1-settleTolerance) {
			break
		}
	}
	return estimate, nil
}

// predict records the CPU-bound limit a step's CPU per operation
// predicts and returns it (0 when unknown).
func (s *searcher) predict(st results.CapacityStep) float64 {
	if s.o.Cores <= 0 || st.CPUMsPerOp <= 0 {
		return 0
	}
	p := s.o.Cores * 1000 / st.CPUMsPerOp
	s.res.Predicted = roundRate(p)
	return p
}

// bracket finds a passing and a failing judged rate around rate, then
// bisects between them.
func (s *searcher) bracket(ctx context.Context, rate float64) error {
	o := s.o
	var lo, hi float64 // highest pass, lowest failure
	var loCPU float64  // the highest pass's server CPU-ms per operation
	passes := 0        // in a row, before the first failure
	var served float64 // what the lowest failure completed per second, when it fell behind
	for rate > 0 && (lo == 0 || hi == 0) {
		if len(s.res.Steps) >= o.MaxSteps {
			s.res.Capped = lo > 0
			return nil
		}
		prev := s.lastOKCPU
		st, err := s.step(ctx, results.StepRamp, rate, o.StepDurationFor(rate, coarse))
		if err != nil {
			return err
		}
		if st.Pass {
			s.pass(st)
			lo, loCPU = rate, st.CPUMsPerOp
			if hi > 0 {
				break
			}
			if o.MaxRate > 0 && rate >= o.MaxRate {
				s.res.Capped = true
				return nil
			}
			// passes in a row: the estimate was low; after two, grow
			// faster each time (1.21, 1.46, then 2), and at once when far
			// below the prediction
			passes++
			g := min(math.Pow(bracketGrowth, math.Pow(2, float64(max(passes-2, 0)))), probeGrowth)
			if p := s.predict(st); p > rate*bracketGrowth*bracketGrowth && !s.probeFailed {
				g = max(g, min(p/rate, probeGrowth))
			}
			rate = s.capRate(roundRate(rate * g))
			continue
		}
		hi, s.hiPrevCPU = rate, prev
		if st.Achieved < o.MinAchieved*rate {
			served = st.OKRate
		}
		if lo > 0 || st.OK == 0 {
			break // bracketed, or nothing succeeded at all
		}
		next := roundRate(rate / bracketGrowth)
		if next < 1 || next >= rate {
			return nil // nothing passed down to 1/s
		}
		rate = next
	}
	// short steps cannot tell apart rates closer than about coarse; at
	// low rates they are as long as confirming ones and bisect on
	if lo == 0 {
		return nil
	}
	narrow := max(o.Precision, coarse/2)
	if s.confirming(hi) {
		narrow = o.Precision
	}
	for hi-lo > narrow*lo*(1+1e-9) {
		if len(s.res.Steps) >= o.MaxSteps {
			break
		}
		mid := roundRate((lo + hi) / 2)
		if t := roundRate(0.98 * served); t > lo && t < mid {
			mid = t // the failure fell behind: the limit is about what it served
		}
		served = 0
		if mid <= lo || mid >= hi {
			mid = (lo + hi) / 2
		}
		prev := s.lastOKCPU
		st, err := s.step(ctx, results.StepSearch, mid, o.StepDurationFor(mid, coarse))
		if err != nil {
			return err
		}
		if st.Pass {
			s.pass(st)
			lo, loCPU = mid, st.CPUMsPerOp
			if s.reopen(loCPU) {
				// the server has outgrown the failure already: no
				// need to narrow the bracket below it first
				return s.bracket(ctx, hi)
			}
		} else {
			hi, s.hiPrevCPU = mid, prev
			if st.Achieved < o.MinAchieved*mid {
				served = st.OKRate
			}
		}
	}
	if s.reopen(loCPU) {
		return s.bracket(ctx, hi)
	}
	return s.confirm(ctx, lo, hi)
}

// reopen says whether the bracket opens again above its lowest failure:
// when the step that passed just before that failure cost more than
// staleFailure times cpu (a pass's since) per operation, the failure came
// from a server that has warmed up since. At most maxReopen times.
func (s *searcher) reopen(cpu float64) bool {
	if s.reopened >= maxReopen || cpu <= 0 || s.hiPrevCPU <= staleFailure*cpu || len(s.res.Steps) >= s.o.MaxSteps {
		return false
	}
	s.reopened++
	return true
}

// A failure after a pass whose server CPU per operation was more than
// staleFailure times the highest pass's came from a server that has
// warmed up since; the bracket opens again at most maxReopen times.
const (
	staleFailure = 1.25
	maxReopen    = 2
)

// coarse is the overload the bracket and bisection steps must see: they
// are short, so a rate a little above the limit may pass them; confirm
// then holds the answer for long enough to see an overload of Precision.
const coarse = 0.05

// maxConfirmFalls bounds how often confirm steps down by coarse.
const maxConfirmFalls = 6

// confirming says whether a bracket step at rate is already as long as
// a confirming one (StepDurationFor the same with coarse and with
// Precision: below ~300/s for a p99, whose 2,000 arrivals outlast the
// latency-rise guard's needs), so that its verdict counts as confirmed.
func (s *searcher) confirming(rate float64) bool {
	return s.o.StepDurationFor(rate, coarse) >= s.o.StepDurationFor(rate, s.o.Precision)
}

// confirm finds the answer with steps long enough to see an overload of
// Precision, in [lo, hi): lo passed a short step, which may have been
// optimistic, hi failed. It tries lo first (unless lo's step was as long
// as a confirming one already: a slow operation's 20 s steps need no
// second run); when that fails the limit lies below, and the search goes
// on between lo × (1 − coarse), not yet confirmed, and lo. It bisects
// until the bracket is within Precision and its bottom is confirmed. The
// answer is the highest rate confirmed; the bracket's top is the lowest
// rate that failed above it.
func (s *searcher) confirm(ctx context.Context, lo, hi float64) error {
	o := s.o
	a, b := lo, hi // the answer is in [a, b); a is confirmed when aOK
	aOK := s.confirming(lo)
	rate := lo
	if aOK {
		rate = between(a, b)
	} else {
		// only confirmed rates count from here on
		s.res.Found, s.res.MaxRate, s.res.BestStep = false, 0, -1
	}
	falls := 0
	for !aOK || b-a > o.Precision*a*(1+1e-9) {
		if len(s.res.Steps) >= o.MaxSteps {
			break
		}
		prev := s.lastOKCPU
		st, err := s.step(ctx, results.StepConfirm, rate, o.StepDurationFor(rate, o.Precision))
		if err != nil {
			return err
		}
		if !st.Pass {
			s.hiPrevCPU = prev
		}
		switch {
		case st.Pass:
			s.pass(st)
			a, aOK = rate, true
		case rate == a: // the bottom failed: the limit is lower still
			if falls++; falls > maxConfirmFalls {
				s.res.FirstFailedRate = rate
				return nil
			}
			b, a = rate, roundRate(rate*(1-coarse))
		default:
			b = rate
		}
		if b-a <= o.Precision*a*(1+1e-9) {
			rate = a // the loop ends when a is confirmed
			continue
		}
		rate = between(a, b)
	}
	// the server may have gone on warming up through the confirmation
	if s.res.Found && s.reopen(s.lastOKCPU) {
		return s.bracket(ctx, b)
	}
	s.res.FirstFailedRate = b
	if s.res.Found {
		s.res.ResolutionPct = 100 * (b - s.res.MaxRate) / s.res.MaxRate
	}
	return nil
}

// between is the rounded midpoint of a and b, or the exact one when
// rounding leaves it outside (a, b).
func between(a, b float64) float64 {
	if r := roundRate((a + b) / 2); r > a && r < b {
		return r
	}
	return (a + b) / 2
}

// roundRate rounds r to three significant digits, so that the rates
// tried read well (1234.5 → 1230, 17.26 → 17.3).
func roundRate(r float64) float64 {
	if r <= 0 {
		return r
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(r, 'g', 3, 64), 64)
	return v
}

// Describe says in one line how the search will run (defaults applied).
func (o Options) Describe() string {
	if !o.Adaptive {
		return fmt.Sprintf("start %g/s, step %g/s, %s per step, resolution %g/s", o.Start, o.Step, o.StepDuration, o.Resolution)
	}
	cores := "unknown server cores (no CPU prediction)"
	if o.Cores > 0 {
		cores = fmt.Sprintf("prediction from %g server cores", o.Cores)
	}
	steps := fmt.Sprintf("steps of %s–%s chosen from the rate", o.MinStepDuration, o.MaxStepDuration)
	if o.StepDuration > 0 {
		steps = fmt.Sprintf("%s per step", o.StepDuration)
	}
	return fmt.Sprintf("adaptive: probes from %g/s, %s, precision %g%%, %s", o.Start, steps, 100*o.Precision, cores)
}

// Estimate guesses a search's duration (defaults applied): the linear
// search's warm-up and a dozen steps; the adaptive search's probes, three
// settling steps, five short steps and three long ones.
func (o Options) Estimate() time.Duration {
	pause := max(o.Pause, 0)
	if !o.Adaptive {
		return max(o.Warmup, 0) + 12*(o.StepDuration+pause)
	}
	short, long := o.StepDurationFor(MaxRate, coarse), o.StepDurationFor(MaxRate, o.Precision)
	return max(o.Warmup, 0) + 11*o.ProbeDuration + 5*short + 3*long + 6*pause
}
