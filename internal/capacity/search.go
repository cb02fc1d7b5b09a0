package capacity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// Defaults of Options; zero fields take them (WithDefaults).
const (
	DefaultStart        = 10.0             // iterations per second
	DefaultStep         = 10.0             // iterations per second
	DefaultStepDuration = 30 * time.Second // per step
	DefaultWarmup       = 30 * time.Second // discarded, at the starting rate
	// DefaultResolutionDivisor: without a Resolution, the binary search
	// stops within Step/DefaultResolutionDivisor.
	DefaultResolutionDivisor = 10.0
	// DefaultMinOK is the fewest successful iterations a passing step
	// needs: a percentile of a handful of samples proves nothing.
	DefaultMinOK = 50
	// DefaultMaxDropped is the share of arrivals a passing step may drop
	// (or have cut off at its end): it must stay below it.
	DefaultMaxDropped = 0.01
	// DefaultPause follows a failed step, so that the server drains what
	// the step left queued before the next one starts.
	DefaultPause = 2 * time.Second
	// DefaultMaxSteps bounds a search whose SLOs never fail.
	DefaultMaxSteps = 100
)

// Defaults of the adaptive search (Options.Adaptive).
const (
	// DefaultAdaptiveStart is the first probe's rate: low enough for a
	// cold server doing expensive work (an argon2 login) to keep up.
	DefaultAdaptiveStart = 20.0
	// DefaultProbeDuration is the length of a probe step.
	DefaultProbeDuration = 2 * time.Second
	// DefaultPrecision: the bisection stops when the limit is known
	// within this fraction of it.
	DefaultPrecision = 0.01
	// A judged step lasts long enough for TailSamples arrivals beyond the
	// SLO's percentile (2,000 arrivals for a p99), within these bounds.
	DefaultMinStepDuration = 5 * time.Second
	DefaultMaxStepDuration = 20 * time.Second
	TailSamples            = 20
	// DefaultMaxLatencyRise fails a step whose median latency rose, from
	// its first quarter to its last, by more than this share of the
	// latency SLO (and at least doubled): its queue was growing, so the
	// rate would not hold for longer than the step, whatever its p99.
	DefaultMaxLatencyRise = 0.1
	// cpuBoundShare: the limit is CPU-bound when the server used at least
	// this share of its cores at the first failed step. Not 1: the load
	// generator and the database share the machine, and a saturated
	// Keycloak gets less than all of its cores.
	cpuBoundShare = 0.75
)

// StepResult is what a StepFunc measured at one rate.
type StepResult struct {
	// Stats are the engine's results of a constant-arrival-rate run.
	Stats results.Stats
	// Server figures over the measured window; 0 when unknown.
	CPUMsPerOp  float64 // server CPU-ms per successful iteration
	ServerCores float64 // server CPU time / window
	RSSBytes    int64   // peak server RSS
	// DB is the database's work over the window (nil when unknown).
	DB *results.DBCost
	// Directory is the LDAP directory's CPU over the window (nil when
	// the users are not in LDAP).
	Directory *results.DirectoryCost
	// Note is carried into the step, e.g. why the server CPU is unknown.
	Note string
	// Faults are what the caller found wrong with the step beyond its
	// figures (e.g. agents that did not run it together); a step with any
	// never passes.
	Faults []string
}

// Step is one step the search asks for: Rate iterations per second for
// Duration (open model).
type Step struct {
	// Phase is the step's part in the search (results.StepWarmup,
	// StepProbe, …). A StepFunc ends only judged steps early (EarlyEnd):
	// a warm-up or probe that falls behind is there to warm a cold server
	// up.
	Phase    string
	Rate     float64
	Duration time.Duration
}

// Judged reports whether the step's verdict counts (results.JudgedPhase).
func (st Step) Judged() bool { return results.JudgedPhase(st.Phase) }

// StepFunc runs one step and returns what it measured. Search calls it
// once per step, never concurrently. When ctx is cancelled it should
// return promptly with an error wrapping ctx.Err().
type StepFunc func(ctx context.Context, st Step) (StepResult, error)

// Options configure a search. Zero fields take the defaults above
// (WithDefaults); then Validate checks them.
type Options struct {
	// SLOs every passing step must meet (ParseSLOs); at least one.
	SLOs         []results.Threshold
	Start        float64       // first rate, iterations per second
	Step         float64       // ramp increment, iterations per second
	StepDuration time.Duration // length of each step
	// Warmup is a discarded run at Start before the first step; negative
	// means none.
	Warmup time.Duration
	// Resolution ends the binary search: the limit is known within it.
	Resolution float64
	// MaxRate caps the ramp (0: no cap); reaching it without a failure
	// ends the search as Capped.
	MaxRate     float64
	MinOK       int64   // successful iterations a passing step needs
	MinAchieved float64 // fraction of the asked rate a passing step achieves
	MaxDropped  float64 // fraction of arrivals a passing step must stay below
	// Pause follows every failed step; negative means none.
	Pause    time.Duration
	MaxSteps int

	// Adaptive selects the adaptive search (see SearchAdaptive): Start is
	// the first probe's rate; Step and Resolution do not apply, and
	// StepDuration, when set, fixes every judged step's length.
	Adaptive bool
	// Cores the server may use, for the CPU-bound prediction (0: unknown).
	Cores float64
	// Precision is the relative width of the final bracket (adaptive).
	Precision                        float64
	MinStepDuration, MaxStepDuration time.Duration
	ProbeDuration                    time.Duration
	// MaxLatencyRise fails a step whose latency rose through it (see
	// DefaultMaxLatencyRise), as a fraction of the latency SLO; 0 or
	// negative: not checked (the linear search's default).
	MaxLatencyRise float64

	// BeforeStep and AfterStep, when set, are called around each step
	// (warm-up included), for progress.
	BeforeStep func(index int, st Step)
	AfterStep  func(results.CapacityStep)
}

// WithDefaults returns o with its zero fields set to the defaults.
func (o Options) WithDefaults() Options {
	if o.Adaptive {
		return o.adaptiveDefaults()
	}
	o.Start = cmp.Or(o.Start, DefaultStart)
	o.Step = cmp.Or(o.Step, DefaultStep)
	o.StepDuration = cmp.Or(o.StepDuration, DefaultStepDuration)
	o.Warmup = cmp.Or(o.Warmup, DefaultWarmup)
	o.Resolution = cmp.Or(o.Resolution, o.Step/DefaultResolutionDivisor)
	return o.guardDefaults()
}

// guardDefaults sets the defaults both searches share: the guards, the
// pause and the step limit.
func (o Options) guardDefaults() Options {
	o.MinOK = cmp.Or(o.MinOK, DefaultMinOK)
	o.MinAchieved = cmp.Or(o.MinAchieved, results.DefaultMinAchieved)
	o.MaxDropped = cmp.Or(o.MaxDropped, DefaultMaxDropped)
	o.Pause = cmp.Or(o.Pause, DefaultPause)
	o.MaxSteps = cmp.Or(o.MaxSteps, DefaultMaxSteps)
	return o
}

// Validate reports every problem with o (defaults applied) at once.
// Bounds of a search's options.
const (
	MaxRate  = 1_000_000 // iterations per second
	MaxWait  = time.Hour // step duration, warm-up, pause
	MaxCores = 4096      // server cores, for the CPU-bound prediction
)

func (o Options) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	positive := func(v float64) bool { return v > 0 && v <= MaxRate }
	if len(o.SLOs) == 0 {
		add("slo: at least one is required (e.g. 'p99<500ms,errors<0.1%%')")
	}
	if !positive(o.Start) {
		add("start rate: %v: must be a rate > 0 and at most %g/s", o.Start, float64(MaxRate))
	}
	if o.Adaptive {
		errs = append(errs, o.validateAdaptive())
	} else {
		if !positive(o.Step) {
			add("step: %v: must be a rate > 0 and at most %g/s", o.Step, float64(MaxRate))
		}
		if o.StepDuration <= 0 || o.StepDuration > MaxWait {
			add("step duration: %v: must be positive and at most %v", o.StepDuration, MaxWait)
		}
		if !positive(o.Resolution) {
			add("resolution: %v: must be a rate > 0 and at most %g/s", o.Resolution, float64(MaxRate))
		}
	}
	if o.Warmup > MaxWait || o.Pause > MaxWait {
		add("warmup, pause: at most %v", MaxWait)
	}
	if o.MaxRate < 0 || math.IsNaN(o.MaxRate) || o.MaxRate > MaxRate || (o.MaxRate > 0 && o.MaxRate < o.Start) {
		add("max rate: %v: must be 0 (no cap), or at least the start rate %v and at most %g/s", o.MaxRate, o.Start, float64(MaxRate))
	}
	if o.MinOK < 1 {
		add("min ok: %d: a passing step needs at least 1 successful iteration", o.MinOK)
	}
	if !(o.MinAchieved > 0 && o.MinAchieved <= 1) {
		add("min achieved: %v: must be a fraction in (0, 1]", o.MinAchieved)
	}
	if !(o.MaxDropped > 0 && o.MaxDropped < 1) {
		add("max dropped: %v: must be a fraction in (0, 1)", o.MaxDropped)
	}
	if o.MaxSteps < 1 {
		add("max steps: %d: must be at least 1", o.MaxSteps)
	}
	return errors.Join(errs...)
}

// OptionsOf are the options a search (or a fixed schedule) ran with, read
// back from its result's SLOs and settings: the inverse of the settings a
// result records. ProbeDuration is not recorded and takes its default.
func OptionsOf(slos []results.Threshold, s results.CapacitySettings) Options {
	secs := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	o := Options{SLOs: slos, Start: s.Start, Step: s.Step, StepDuration: secs(s.StepDuration), Warmup: secs(s.Warmup),
		Resolution: s.Resolution, MaxRate: s.MaxRate, MinOK: s.MinOK, MinAchieved: s.MinAchieved / 100,
		MaxDropped: s.MaxDropped / 100, Pause: secs(s.Pause)}
	if s.Mode == results.ModeFixed {
		o.Resolution = s.Step
	}
	if s.Mode == results.ModeAdaptive {
		o.Adaptive, o.Precision, o.Cores = true, s.PrecisionPct/100, s.Cores
		o.MinStepDuration, o.MaxStepDuration = secs(s.MinStepDuration), secs(s.MaxStepDuration)
		o.MaxLatencyRise = s.MaxLatencyRise / 100
		if o.MaxLatencyRise == 0 {
			o.MaxLatencyRise = -1 // not checked
		}
	}
	if o.Warmup == 0 {
		o.Warmup = -1
	}
	if o.Pause == 0 {
		o.Pause = -1
	}
	return o
}

func (o Options) settings() results.CapacitySettings {
	if o.Adaptive {
		return o.adaptiveSettings()
	}
	return results.CapacitySettings{
		Mode: results.ModeLinear, Start: o.Start, Step: o.Step, StepDuration: o.StepDuration.Seconds(), Warmup: max(o.Warmup, 0).Seconds(),
		Resolution: o.Resolution, MaxRate: o.MaxRate, MinOK: o.MinOK,
		MinAchieved: 100 * o.MinAchieved, MaxDropped: 100 * o.MaxDropped, Pause: max(o.Pause, 0).Seconds(),
	}
}

// Judge turns one step's measurements at the asked rate into a Step: its
// figures, its SLOs evaluated, and whether it passed. A step passes only
// when it met every SLO, achieved at least MinAchieved of the asked rate,
// dropped (and cut off) fewer than MaxDropped of its arrivals, completed
// at least MinOK successful iterations and was not interrupted. A step in
// which every iteration failed never passes, whatever the SLOs say.
func (o Options) Judge(rate float64, r StepResult) results.CapacityStep {
	s := r.Stats
	st := results.CapacityStep{Rate: rate, Duration: s.Duration.Seconds(), Dropped: s.Dropped, Interrupted: s.Interrupted,
		CPUMsPerOp: r.CPUMsPerOp, ServerCores: r.ServerCores, RSSBytes: r.RSSBytes, Database: r.DB, Directory: r.Directory, Note: r.Note, Start: s.Start}
	it, _ := s.Op(results.IterationOp)
	st.Iterations, st.OK, st.Errors = it.Count, it.OK, it.Errors
	st.Achieved = it.Rate
	if st.Duration > 0 {
		st.OKRate = float64(it.OK) / st.Duration
	}
	if s.EndReason != "" && st.Duration > 0 {
		// the backlog of a step that ended early finishes after its
		// window and would count as served in it: what it served is
		// what finished inside the window
		var n, ok int64
		end := s.Warmup + s.Duration
		for _, row := range s.Timeline {
			if !row.Warmup && row.End <= end && len(row.Ops) > 0 {
				n += row.Ops[0].Count
				ok += row.Ops[0].Count - row.Ops[0].Errors
			}
		}
		st.Achieved, st.OKRate = float64(n)/st.Duration, float64(ok)/st.Duration
	}
	arrivals := it.Count + s.Dropped + s.Interrupted
	if arrivals > 0 {
		st.DroppedPct = 100 * float64(s.Dropped) / float64(arrivals)
	}
	st.ErrorPct = 100 * it.ErrorRate()
	st.P50, st.P95, st.P99, st.Max = ms(it.Latency.P50), ms(it.Latency.P95), ms(it.Latency.P99), ms(it.Latency.Max)

	fail := func(k results.FailureKind, format string, args ...any) {
		st.Failures = append(st.Failures, fmt.Sprintf(format, args...))
		st.Kinds = append(st.Kinds, k)
	}
	if s.Aborted {
		fail(results.FailInterrupted, "interrupted before its end")
	}
	if s.EndReason != "" {
		// ended early (EarlyEnd, or the server went down): never a pass
		fail(results.FailEndedEarly, "ended after %s: %s", s.Duration.Round(100*time.Millisecond), s.EndReason)
	}
	switch {
	case it.Count == 0:
		fail(results.FailNoIteration, "no iteration finished")
	case it.OK == 0:
		fail(results.FailAllFailed, "every iteration failed (%d of %d)", it.Errors, it.Count)
	case it.OK < o.MinOK:
		fail(results.FailTooFewOK, "only %d successful iterations, fewer than the %d a step needs", it.OK, o.MinOK)
	}
	if st.Achieved < o.MinAchieved*rate {
		fail(results.FailAchieved, "achieved %.1f/s, below %g%% of the asked %g/s", st.Achieved, 100*o.MinAchieved, rate)
	}
	if s.Dropped > 0 && st.DroppedPct >= 100*o.MaxDropped {
		fail(results.FailDropped, "dropped %d arrivals (%.1f%%, not below %g%%): no free VU", s.Dropped, st.DroppedPct, 100*o.MaxDropped)
	}
	if arrivals > 0 && s.Interrupted > 0 {
		if pct := 100 * float64(s.Interrupted) / float64(arrivals); pct >= 100*o.MaxDropped {
			fail(results.FailCutOff, "%d iterations (%.1f%%) were still running at the end of the step and were cut off", s.Interrupted, pct)
		}
	}
	if why := o.latencyRise(s); why != "" {
		fail(results.FailLatencyRise, "%s", why)
	}
	for _, f := range r.Faults {
		fail(results.FailFault, "%s", f)
	}
	for _, t := range o.SLOs {
		tr := t.Evaluate(s)
		st.SLOs = append(st.SLOs, tr)
		if !tr.Pass {
			fail(results.FailSLO, "SLO %s", strings.TrimPrefix(tr.String(), "✗ "))
		}
	}
	st.Pass = len(st.Failures) == 0
	return st
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Search finds the highest arrival rate that meets every SLO: a discarded
// warm-up at the starting rate, then steps rising by Step from Start until
// one fails (or MaxRate passes), then a binary search between the last
// passing and the first failing rate until they are within Resolution.
// Every step is recorded in the Result.
//
// When even the starting rate fails the Result says so (Found false) and
// the error is nil: that is a finding, not a failure of the search. An
// error from run, or a cancelled ctx, ends the search; the Result returned
// beside the error holds the steps run so far.
func Search(ctx context.Context, run StepFunc, o Options) (*results.CapacityResult, error) {
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	r := &results.CapacityResult{Schema: results.CapacitySchema, Kind: results.CapacityKind, SLOs: o.SLOs, Settings: o.settings(),
		BestStep: -1, Start: time.Now().UTC()}
	var err error
	decided := 0 // the steps the last decision saw: the answer is theirs
	for {
		next, done, nerr := Next(o, r.Steps)
		decided = len(r.Steps)
		if done {
			err = nerr // the steps came from the rules: never an error
			break
		}
		if err = runStep(ctx, run, o, r, next); err != nil {
			break
		}
	}
	decide(o, r.Steps[:decided]).answer(r)
	finish(ctx, o, r, err)
	return r, err
}

// runStep runs one step, judges it and records it in r; after a failed
// step it pauses (Options.Pause).
func runStep(ctx context.Context, run StepFunc, o Options, r *results.CapacityResult, want Step) error {
	idx := len(r.Steps)
	if o.BeforeStep != nil {
		o.BeforeStep(idx, want)
	}
	m, err := run(ctx, want)
	if err != nil && m.Stats.Start.IsZero() {
		return fmt.Errorf("step %d (%s, %g/s): %w", idx, want.Phase, want.Rate, err)
	}
	judge := o
	if want.Phase == results.StepProbe {
		judge.MinOK = 1 // a probe is short: it only asks whether the server kept up
	}
	st := judge.Judge(want.Rate, m)
	st.Index, st.Phase = idx, want.Phase
	r.Steps = append(r.Steps, st)
	r.MaxRSSBytes = max(r.MaxRSSBytes, st.RSSBytes)
	if o.AfterStep != nil {
		o.AfterStep(st)
	}
	if err != nil {
		return fmt.Errorf("step %d (%s, %g/s): %w", idx, want.Phase, want.Rate, err)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !st.Pass && want.Phase != results.StepWarmup && o.Pause > 0 {
		// a failed step (a probe that fell behind included) leaves a queue
		return load.Sleep(ctx, o.Pause)
	}
	return nil
}

// best records st, which passed, as the answer so far.
func best(r *results.CapacityResult, st results.CapacityStep) {
	r.Found = true
	r.MaxRate = st.Rate
	r.BestStep = st.Index
}

// finish fills the result's summary figures and its conclusion.
func finish(ctx context.Context, o Options, r *results.CapacityResult, err error) {
	r.End = time.Now().UTC()
	r.Elapsed = r.End.Sub(r.Start).Seconds()
	r.Interrupted = r.Interrupted || ctx.Err() != nil
	if b := r.Best(); b != nil {
		r.Achieved, r.P95, r.P99 = b.Achieved, b.P95, b.P99
		r.CPUMsPerOp, r.ServerCores = b.CPUMsPerOp, b.ServerCores
		if b.CPUMsPerOp > 0 {
			r.OpsPerCPUSecond = 1000 / b.CPUMsPerOp
		}
	}
	// the failure that bounds the result: the lowest failed judged rate
	var failed *results.CapacityStep
	for i := range r.Steps {
		st := &r.Steps[i]
		if st.Judged() && !st.Pass && (failed == nil || st.Rate < failed.Rate) {
			failed = st
		}
	}
	if r.Settings.Mode == results.ModeAdaptive && r.Found && r.FirstFailedRate > 0 {
		// the bracket's top, not a failure below the answer (a warming
		// server's, or one of an unsteady limit's, counted apart)
		for i := range r.Steps {
			if st := &r.Steps[i]; st.Judged() && !st.Pass && st.Rate == r.FirstFailedRate {
				failed = st
			}
		}
		r.FailedBelow = 0
		for _, st := range r.Steps {
			if st.Judged() && !st.Pass && st.Rate <= r.MaxRate {
				r.FailedBelow++
			}
		}
	}
	if failed == nil { // the adaptive search stops when even its first probe got nothing right
		for i := range r.Steps {
			if st := &r.Steps[i]; st.Phase == results.StepProbe && !st.Pass && (failed == nil || st.Rate < failed.Rate) {
				failed = st
			}
		}
	}
	why := func(st *results.CapacityStep) string { return strings.Join(st.Failures, "; ") }
	switch {
	case r.Interrupted || err != nil:
		what := "interrupted"
		if !r.Interrupted {
			what = "stopped by an error"
		}
		if r.Found {
			r.Conclusion = fmt.Sprintf("%s: so far %g/s met every SLO", what, r.MaxRate)
		} else {
			r.Conclusion = what + " before any step met every SLO"
		}
	case !r.Found && failed != nil:
		advice := "Start lower."
		if r.Settings.Mode == results.ModeAdaptive {
			advice = "Nothing lower passed either."
			if failed.OK == 0 {
				advice = "No iteration succeeded: check the target and the dataset."
			}
		}
		if failed.OnlyFailure(results.FailTooFewOK) {
			advice = "Lengthen the steps or start higher."
		}
		r.Conclusion = fmt.Sprintf("even the starting rate %g/s failed: %s. %s", failed.Rate, why(failed), advice)
	case !r.Found:
		r.Conclusion = "no step was judged"
	case r.Capped && failed == nil:
		r.Conclusion = fmt.Sprintf("%g/s met every SLO and is as high as the search was allowed to go: the server may take more", r.MaxRate)
	case failed != nil && r.Settings.Mode == results.ModeAdaptive:
		r.Conclusion = fmt.Sprintf("%g/s is the highest rate that met every SLO (within %.1f%%); %g/s failed: %s",
			r.MaxRate, r.ResolutionPct, failed.Rate, why(failed))
		if c := o.Cores; c > 0 && failed.ServerCores > 0 {
			if failed.ServerCores >= cpuBoundShare*c {
				r.CPUBound = results.CPUBoundYes
				r.Conclusion += fmt.Sprintf(". CPU-bound: the server used %.2f of its %g cores there", failed.ServerCores, c)
			} else {
				r.CPUBound = results.CPUBoundNo
				r.Conclusion += fmt.Sprintf(". Not CPU-bound: the server used only %.2f of its %g cores there, so the CPU prediction (%g/s) was only a start",
					failed.ServerCores, c, r.Predicted)
			}
		}
	case failed != nil:
		r.Conclusion = fmt.Sprintf("%g/s is the highest rate that met every SLO (within %g/s); %g/s failed: %s",
			r.MaxRate, r.Settings.Resolution, failed.Rate, why(failed))
	default:
		r.Conclusion = fmt.Sprintf("%g/s met every SLO", r.MaxRate)
	}
}
