package capacity

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

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
	if o.Cores < 0 || math.IsNaN(o.Cores) || o.Cores > MaxCores {
		add("cores: %v: must be between 0 (unknown) and %d", o.Cores, MaxCores)
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
	enough := wholeSeconds(minOKMargin * float64(o.MinOK) / rate)
	if o.StepDuration > 0 {
		return max(o.StepDuration, enough)
	}
	secs := float64(o.MinOK) / rate
	if q, ok := highestPercentile(o.SLOs); ok && q < 1 {
		secs = max(secs, TailSamples/(1-q)/rate)
	}
	if limit, ok := LatencyLimit(o.SLOs); ok && o.MaxLatencyRise > 0 && resolve > 0 {
		secs = max(secs, o.MaxLatencyRise*limit/1000/(resolve*quarterSpan))
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

// What a search typically runs, for Estimate: the linear search a dozen
// steps; the adaptive search eight probes and three settling steps, five
// short judged steps and three long ones, six of them failing (each
// followed by a pause).
const (
	typicalLinearSteps = 12
	typicalProbeSteps  = 11
	typicalShortSteps  = 5
	typicalLongSteps   = 3
	typicalFailedSteps = 6
)

// Estimate guesses a search's duration (defaults applied) from the steps
// a search typically runs.
func (o Options) Estimate() time.Duration {
	pause := max(o.Pause, 0)
	if !o.Adaptive {
		return max(o.Warmup, 0) + typicalLinearSteps*(o.StepDuration+pause)
	}
	short, long := o.StepDurationFor(MaxRate, coarse), o.StepDurationFor(MaxRate, o.Precision)
	return max(o.Warmup, 0) + typicalProbeSteps*o.ProbeDuration + typicalShortSteps*short + typicalLongSteps*long + typicalFailedSteps*pause
}

// StepDurationFor's numbers: minOKMargin over the time MinOK successes
// take at the rate, so that a step a little short of the rate still has
// them; quarterSpan, the distance between the centres of a step's first
// and last quarters, as a share of the step (the latency-rise guard
// compares them).
const (
	minOKMargin = 1.1
	quarterSpan = 0.75
)
