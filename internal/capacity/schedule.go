package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// A split search (kcbench capacity --segment i/n) runs on agents that
// never talk to each other, and each sees only its share of a step: no
// agent can decide the next rate from the last step's verdict. So the
// agents run the linear search's ramp fixed in advance — a warm-up at
// Start, then Start, Start+Step, … up to MaxRate, each StepDuration long —
// every step at the same instant on every agent, and JudgeSchedule judges
// the merged steps afterwards. There is no binary search: the answer is
// known within Step.

// ErrAdaptiveSchedule: the adaptive search cannot be fixed in advance.
var ErrAdaptiveSchedule = errors.New("the adaptive search picks each step from the last one's verdict, which only the merge of the agents' results sees: a split search runs the linear search's ramp as a fixed schedule")

// Schedule returns the steps of a fixed schedule: a warm-up at Start
// (when Warmup > 0), then rates rising by Step from Start to MaxRate (the
// last step at MaxRate), each StepDuration long, with gap between one
// step's end and the next one's start; Start is each step's offset from
// the schedule's start (add it to the common start time). o needs a
// MaxRate, and at most MaxSteps steps.
func (o Options) Schedule(start time.Time, gap time.Duration) ([]results.ScheduledStep, error) {
	if o.Adaptive {
		return nil, ErrAdaptiveSchedule
	}
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	var errs []error
	if o.MaxRate <= 0 {
		errs = append(errs, errors.New("max rate: a split search needs one: its fixed schedule climbs from start to it by step"))
	}
	if gap < 0 || gap > MaxWait {
		errs = append(errs, fmt.Errorf("gap: %v: must be between 0 and %v", gap, MaxWait))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ramp := int(math.Ceil((o.MaxRate-o.Start)/o.Step*(1-1e-9))) + 1
	if ramp > o.MaxSteps {
		return nil, fmt.Errorf("max rate: %d steps from %g/s to %g/s by %g/s, more than %d: raise the step or lower the max rate",
			ramp, o.Start, o.MaxRate, o.Step, o.MaxSteps)
	}
	var steps []results.ScheduledStep
	at := start
	add := func(phase string, rate float64, d time.Duration) {
		steps = append(steps, results.ScheduledStep{Index: len(steps), Phase: phase, Rate: rate, Duration: d.Seconds(), Start: at})
		at = at.Add(d + gap)
	}
	if o.Warmup > 0 {
		add(results.StepWarmup, o.Start, o.Warmup)
	}
	for k := range ramp {
		add(results.StepRamp, min(o.Start+float64(k)*o.Step, o.MaxRate), o.StepDuration)
	}
	return steps, nil
}

// FixedSettings are the settings of a fixed schedule made with o.
func (o Options) FixedSettings() results.CapacitySettings {
	o = o.WithDefaults()
	s := o.settings()
	s.Mode, s.Resolution = results.ModeFixed, o.Step
	return s
}

// JudgeSchedule judges the steps of a fixed schedule from what they
// measured (ms[i] is steps[i]'s; fewer measurements than steps mean the
// schedule was cut short) as a linear search judges its ramp: each step
// with Judge; the answer is the highest rate that passed below the first
// judged step that failed, known within Step. A step that passes after a
// failed one does not raise the answer. The result is a capacity.json
// like a search's, its mode ModeFixed.
func JudgeSchedule(o Options, steps []results.ScheduledStep, ms []StepResult) (*results.CapacityResult, error) {
	if o.Adaptive {
		return nil, ErrAdaptiveSchedule
	}
	o = o.WithDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if len(ms) > len(steps) {
		return nil, fmt.Errorf("%d measurements of a schedule of %d steps", len(ms), len(steps))
	}
	r := &results.CapacityResult{Schema: results.CapacitySchema, Kind: results.CapacityKind, SLOs: o.SLOs,
		Settings: o.FixedSettings(), BestStep: -1}
	failedAt := -1
	passedAfter := 0
	for i, m := range ms {
		p := steps[i]
		st := o.Judge(p.Rate, m)
		st.Index, st.Phase = i, p.Phase
		r.Steps = append(r.Steps, st)
		r.MaxRSSBytes = max(r.MaxRSSBytes, st.RSSBytes)
		switch {
		case !st.Judged():
		case failedAt >= 0:
			if st.Pass {
				passedAfter++
			}
		case st.Pass:
			best(r, st)
		default:
			failedAt = i
			r.FirstFailedRate = st.Rate
		}
	}
	missing := len(ms) < len(steps)
	r.Capped = failedAt < 0 && !missing
	r.Interrupted = failedAt < 0 && missing
	finish(context.Background(), o, r, nil)
	if passedAfter > 0 {
		r.Conclusion += fmt.Sprintf(" (%d higher step(s) passed again after it: the verdicts are noisy, lengthen the steps)", passedAfter)
	}
	if missing {
		r.Conclusion += fmt.Sprintf("; %d of the schedule's %d steps did not run on every agent", len(steps)-len(ms), len(steps))
	}
	// The schedule's own times, not the judging's.
	if len(ms) > 0 {
		r.Start = ms[0].Stats.Start
		if r.Start.IsZero() {
			r.Start = steps[0].Start
		}
		last := steps[len(ms)-1]
		r.End = last.Start.Add(time.Duration(last.Duration * float64(time.Second)))
		r.Elapsed = r.End.Sub(r.Start).Seconds()
	}
	return r, nil
}
