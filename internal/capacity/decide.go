package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// The adaptive search finds the limit without tuning flags, in five
// parts:
//
//  1. Probe: short steps (ProbeDuration) from Start, doubling, until one
//     falls behind (fails any guard or SLO; the first failure where
//     something succeeded runs once more, since a cold server fails at
//     any rate) or the rate passes the CPU-bound prediction (Cores ÷ the
//     server CPU per operation the last probe measured). The probes warm
//     the server up and are not judged. The estimate is the failing
//     probe's successful throughput when it fell behind (a saturated
//     server completes what it can), else the prediction, else the last
//     rate.
//  2. Settle: unjudged steps at settleShare of the estimate until the
//     server's CPU per operation has stopped falling over the last
//     settleSpan (a JVM warming up), from the last probe's cost even when
//     every probe fell behind; the estimate follows the warming server's
//     prediction (after a probe's failure only once it fell far below the
//     probes').
//  3. Bracket: judged steps from bracketStart × the estimate, growing (or
//     shrinking) by bracketGrowth until one passes and one fails; without
//     a pass below the estimate the search shrinks on; passes in a row
//     grow faster each time (1.1, 1.21, 1.46, then 2), and at once by up
//     to probeGrowth when far below the prediction.
//  4. Bisect between the highest pass and the lowest failure until they
//     are within coarse/2 of the pass. When the server has become much
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
//
// The rules are a pure function of the steps run so far (Next): Search
// asks them for a step, runs it, judges it and asks again.

// The adaptive search's rules, each a named number.
const (
	// probeGrowth multiplies the rate from one probe to the next;
	// maxProbes bounds them.
	probeGrowth = 2.0
	maxProbes   = 12
	// missedSLOShare: a probe that kept up but missed an SLO puts the
	// limit between the probe before it (half its rate) and itself; the
	// estimate starts at three quarters of its rate.
	missedSLOShare = 0.75
	// Settling: unjudged steps of ProbeDuration at settleShare of the
	// estimate, until the server's CPU per operation has fallen by less
	// than settleTolerance over the last settleSpan steps (the latest
	// probe counting as the first), at most maxSettle of them.
	settleShare     = 0.7
	settleTolerance = 0.1
	settleSpan      = 3
	maxSettle       = 15
	// bracketStart: the first judged step runs a little below the
	// estimate, so that it usually passes and the bracket grows from a
	// pass.
	bracketStart = 0.9
	// bracketGrowth is the factor between judged steps until the limit is
	// bracketed (it bounds the bracket the bisection starts from).
	bracketGrowth = 1.1
	// servedShare: a failure that fell behind served about the limit;
	// the bisection tries just below what it served.
	servedShare = 0.98
	// A failure after a pass whose server CPU per operation was more than
	// staleFailure times the highest pass's came from a server that has
	// warmed up since; the bracket opens again at most maxReopen times.
	staleFailure = 1.25
	maxReopen    = 2
	// coarse is the overload the bracket and bisection steps must see:
	// they are short, so a rate a little above the limit may pass them;
	// confirm then holds the answer for long enough to see an overload of
	// Precision.
	coarse = 0.05
	// maxConfirmFalls bounds how often confirm steps down by coarse.
	maxConfirmFalls = 6
	// within is the float tolerance of "within the precision": rates are
	// products of roundings and must not bisect forever over 1e-13.
	within = 1 + 1e-9
)

// Next is the search's rule book: given the options (defaults applied)
// and the steps run so far, in order and judged, it returns the next
// step to run, or done when the search has ended. It is a pure function
// of its arguments: it replays the steps through the rules from the
// first to find where the search stands. Steps that the rules would not
// have asked for (another phase or rate at some index) are an error.
func Next(o Options, steps []results.CapacityStep) (next Step, done bool, err error) {
	d := decide(o, steps)
	return d.next, d.next == (Step{}), d.err
}

// decide replays steps through the rules: the searcher it returns holds
// the next step (zero when the search has ended) and the answer so far.
func decide(o Options, steps []results.CapacityStep) *searcher {
	s := &searcher{o: o, steps: steps, res: &results.CapacityResult{BestStep: -1}}
	var err error
	if o.Adaptive {
		err = s.adaptive()
	} else {
		err = s.linear()
	}
	if !errors.Is(err, errNextStep) {
		s.next, s.err = Step{}, err
	}
	return s
}

// errNextStep ends a replay where the steps run so far end.
var errNextStep = errors.New("capacity: the next step has not run yet")

// searcher replays the steps run so far through the rules.
type searcher struct {
	o     Options
	steps []results.CapacityStep // run so far
	// res holds the steps replayed (Steps, a prefix of steps) and the
	// answer they give: Found, MaxRate, BestStep, Capped, Estimate,
	// Predicted, FirstFailedRate, ResolutionPct.
	res  *results.CapacityResult
	next Step // the step the rules asked for beyond steps
	err  error

	// What the adaptive rules remember of the steps replayed:
	// probeFailed: a probe fell behind, so the limit was seen, not only
	// predicted.
	probeFailed bool
	// reopened counts the brackets opened again above a failure the
	// warming server has outgrown.
	reopened int
	// hiPrevCPU is the server CPU-ms per operation of the step that
	// passed before the lowest failure.
	hiPrevCPU float64
	// lastOKCPU is the server CPU-ms per operation of the latest step
	// that passed (a probe that kept up included); lastCPU of the latest
	// step that completed anything, whatever its verdict.
	lastOKCPU, lastCPU float64
}

// answer copies the answer of the steps replayed into r.
func (s *searcher) answer(r *results.CapacityResult) {
	a := s.res
	r.Found, r.MaxRate, r.BestStep, r.Capped = a.Found, a.MaxRate, a.BestStep, a.Capped
	r.Estimate, r.Predicted, r.FirstFailedRate, r.ResolutionPct = a.Estimate, a.Predicted, a.FirstFailedRate, a.ResolutionPct
}

// step returns the next step run, or asks for it (errNextStep) when the
// steps run so far end here.
func (s *searcher) step(phase string, rate float64, d time.Duration) (results.CapacityStep, error) {
	i := len(s.res.Steps)
	if i >= len(s.steps) {
		s.next = Step{Phase: phase, Rate: rate, Duration: d}
		return results.CapacityStep{}, errNextStep
	}
	st := s.steps[i]
	if st.Phase != phase || st.Rate != rate {
		return st, fmt.Errorf("step %d: the rules ask for %s at %g/s, the steps run have %s at %g/s", i, phase, rate, st.Phase, st.Rate)
	}
	s.res.Steps = s.steps[:i+1]
	if st.CPUMsPerOp > 0 && st.OK > 0 {
		s.lastCPU = st.CPUMsPerOp
		if st.Pass {
			s.lastOKCPU = st.CPUMsPerOp
		}
	}
	return st, nil
}

// full reports whether the search has run MaxSteps steps.
func (s *searcher) full() bool { return len(s.res.Steps) >= s.o.MaxSteps }

func (s *searcher) pass(st results.CapacityStep) { best(s.res, st) }

// linear is the linear search (see Search).
func (s *searcher) linear() error {
	o := s.o
	if o.Warmup > 0 {
		if _, err := s.step(results.StepWarmup, o.Start, o.Warmup); err != nil {
			return err
		}
	}
	var lo, hi float64 // last pass, first failure
	for rate := o.Start; ; {
		if s.full() {
			s.res.Capped = true
			return nil
		}
		st, err := s.step(results.StepRamp, rate, o.StepDuration)
		if err != nil {
			return err
		}
		if !st.Pass {
			hi = rate
			break
		}
		s.pass(st)
		lo = rate
		if o.MaxRate > 0 && rate >= o.MaxRate {
			s.res.Capped = true
			return nil
		}
		rate = s.capRate(rate + o.Step)
	}
	if !s.res.Found {
		return nil
	}
	for hi-lo > o.Resolution*within && !s.full() {
		mid := midpoint(lo, hi, o.Resolution)
		st, err := s.step(results.StepSearch, mid, o.StepDuration)
		if err != nil {
			return err
		}
		if st.Pass {
			s.pass(st)
			lo = mid
		} else {
			hi = mid
		}
	}
	s.res.FirstFailedRate = hi
	return nil
}

// midpoint returns a rate strictly between lo and hi, near their middle,
// on a multiple of res above lo so that the rates tried stay round.
func midpoint(lo, hi, res float64) float64 {
	n := max(math.Round((hi-lo)/res/2), 1)
	mid := lo + n*res
	if mid >= hi || mid <= lo {
		mid = (lo + hi) / 2
	}
	return mid
}

// adaptive is the adaptive search (see the comment at the top).
func (s *searcher) adaptive() error {
	o := s.o
	if o.Warmup > 0 {
		if _, err := s.step(results.StepWarmup, o.Start, o.Warmup); err != nil {
			return err
		}
	}
	estimate, err := s.probe()
	if err != nil || estimate == 0 {
		return err
	}
	if estimate, err = s.settle(estimate); err != nil {
		return err
	}
	s.res.Estimate = roundRate(estimate)
	// bracket returns a rate when the bracket opens again above it
	for rate := roundRate(bracketStart * estimate); rate > 0; {
		if rate, err = s.bracket(rate); err != nil {
			return err
		}
	}
	return nil
}

// capRate applies MaxRate.
func (s *searcher) capRate(r float64) float64 {
	if s.o.MaxRate > 0 {
		return min(r, s.o.MaxRate)
	}
	return r
}

// probe runs the rising probes and returns the estimate of the limit.
func (s *searcher) probe() (float64, error) {
	o := s.o
	rate := s.capRate(o.Start)
	retried := false
	for range maxProbes {
		st, err := s.step(results.StepProbe, rate, o.ProbeDuration)
		if err != nil {
			return 0, err
		}
		predicted := s.predict(st)
		if !st.Pass {
			// A just-booted server fails a probe at any rate and keeps
			// up with ten times it seconds later. When something
			// succeeded, the same rate once more tells.
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
			return missedSLOShare * rate, nil // it kept up but missed an SLO: the limit is below
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

// settle warms the server up before anything is judged: a JVM's first
// minute of load costs it many times the CPU per operation of a warm one,
// and a step judged meanwhile finds a limit the warm server no longer
// has. It runs unjudged steps below the estimate until the CPU per
// operation stops falling (settleSpan steps at least; none when the
// server's CPU is not measured). The fall is judged over several steps,
// not from one to the next: while its compiler threads are busy a
// just-booted JVM gets cheaper by a few per cent a step for half a
// minute. The estimate follows the warming server's CPU-bound prediction
// (doubling at most per step), so that it warms up near its limit; after
// a probe's failure only once the server became much cheaper than during
// the probes (staleFailure), since that failure came from a colder one.
func (s *searcher) settle(estimate float64) (float64, error) {
	// the last probe's cost, even when it fell behind: a slow operation
	// (an argon2 login) on a just-booted server fails every probe
	probeCPU := cmp.Or(s.lastOKCPU, s.lastCPU)
	if s.o.Cores <= 0 || probeCPU <= 0 {
		return estimate, nil
	}
	cpus := []float64{probeCPU}
	for range maxSettle {
		st, err := s.step(results.StepWarmup, s.capRate(roundRate(settleShare*estimate)), s.o.ProbeDuration)
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

// bracket finds a passing and a failing judged rate around rate, bisects
// between them and confirms the answer. It returns a rate to bracket
// again from when the failure no longer holds (reopen), else 0.
func (s *searcher) bracket(rate float64) (float64, error) {
	o := s.o
	var lo, hi float64 // highest pass, lowest failure
	var loCPU float64  // the highest pass's server CPU-ms per operation
	passes := 0        // in a row, before the first failure
	var served float64 // what the lowest failure completed per second, when it fell behind
	for rate > 0 && (lo == 0 || hi == 0) {
		if s.full() {
			s.res.Capped = lo > 0
			return 0, nil
		}
		prev := s.lastOKCPU
		st, err := s.step(results.StepRamp, rate, o.StepDurationFor(rate, coarse))
		if err != nil {
			return 0, err
		}
		if st.Pass {
			s.pass(st)
			lo, loCPU = rate, st.CPUMsPerOp
			if hi > 0 {
				break
			}
			if o.MaxRate > 0 && rate >= o.MaxRate {
				s.res.Capped = true
				return 0, nil
			}
			rate = s.capRate(roundRate(rate * s.growth(st, rate, passes)))
			passes++
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
			return 0, nil // nothing passed down to 1/s
		}
		rate = next
	}
	if lo == 0 {
		return 0, nil
	}
	// short steps cannot tell apart rates closer than about coarse; at
	// low rates they are as long as confirming ones and bisect on
	narrow := max(o.Precision, coarse/2)
	if s.confirming(hi) {
		narrow = o.Precision
	}
	for hi-lo > narrow*lo*within && !s.full() {
		mid := roundRate((lo + hi) / 2)
		if t := roundRate(servedShare * served); t > lo && t < mid {
			mid = t // the failure fell behind: the limit is about what it served
		}
		served = 0
		if mid <= lo || mid >= hi {
			mid = (lo + hi) / 2
		}
		prev := s.lastOKCPU
		st, err := s.step(results.StepSearch, mid, o.StepDurationFor(mid, coarse))
		if err != nil {
			return 0, err
		}
		if st.Pass {
			s.pass(st)
			lo, loCPU = mid, st.CPUMsPerOp
			if s.reopen(loCPU) {
				// the server has outgrown the failure already: no
				// need to narrow the bracket below it first
				return hi, nil
			}
		} else {
			hi, s.hiPrevCPU = mid, prev
			if st.Achieved < o.MinAchieved*mid {
				served = st.OKRate
			}
		}
	}
	if s.reopen(loCPU) {
		return hi, nil
	}
	return s.confirm(lo, hi)
}

// growth is the factor to the next bracket step after a pass at rate,
// the passes-th in a row: bracketGrowth, and after two passes faster each
// time (1.21, 1.46, then probeGrowth); at once up to probeGrowth when the
// prediction lies far above (and no probe fell behind).
func (s *searcher) growth(st results.CapacityStep, rate float64, passes int) float64 {
	g := min(math.Pow(bracketGrowth, math.Pow(2, float64(max(passes-1, 0)))), probeGrowth)
	if p := s.predict(st); p > rate*bracketGrowth*bracketGrowth && !s.probeFailed {
		g = max(g, min(p/rate, probeGrowth))
	}
	return g
}

// reopen says whether the bracket opens again above its lowest failure:
// when the step that passed just before that failure cost more than
// staleFailure times cpu (a pass's since) per operation, the failure came
// from a server that has warmed up since. At most maxReopen times.
func (s *searcher) reopen(cpu float64) bool {
	if s.reopened >= maxReopen || cpu <= 0 || s.hiPrevCPU <= staleFailure*cpu || s.full() {
		return false
	}
	s.reopened++
	return true
}

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
// rate that failed above it. Like bracket, it returns a rate to bracket
// again from when the server went on warming up, else 0.
func (s *searcher) confirm(lo, hi float64) (float64, error) {
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
	for (!aOK || b-a > o.Precision*a*within) && !s.full() {
		prev := s.lastOKCPU
		st, err := s.step(results.StepConfirm, rate, o.StepDurationFor(rate, o.Precision))
		if err != nil {
			return 0, err
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
				return 0, nil
			}
			b, a = rate, roundRate(rate*(1-coarse))
		default:
			b = rate
		}
		if b-a <= o.Precision*a*within {
			rate = a // the loop ends when a is confirmed
			continue
		}
		rate = between(a, b)
	}
	// the server may have gone on warming up through the confirmation
	if s.res.Found && s.reopen(s.lastOKCPU) {
		return b, nil
	}
	s.res.FirstFailedRate = b
	if s.res.Found {
		s.res.ResolutionPct = 100 * (b - s.res.MaxRate) / s.res.MaxRate
	}
	return 0, nil
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
