package load

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Schedule gives the intended start offset of arrival i (0-based) from the
// start of an open-model run; ok=false ends the schedule. Implementations are
// pure: no clock, no sleeping, the same answer for the same i. Because every
// arrival's time is absolute, a scheduler driven by a Schedule never drifts,
// and the intended start time needed to measure latency comes for free.
type Schedule interface {
	At(i uint64) (off time.Duration, ok bool)
}

var (
	_ Schedule = Constant{}
	_ Schedule = Ramp{}
)

// Constant is a fixed arrival rate: arrival i starts at i/Rate seconds.
// Duration bounds the schedule (arrivals at or after it are not made);
// Duration <= 0 means no bound. A Rate that is not positive makes no arrivals.
type Constant struct {
	Rate     float64       // arrivals per second
	Duration time.Duration // length of the schedule; <= 0 for unbounded
}

// At implements Schedule.
func (c Constant) At(i uint64) (time.Duration, bool) {
	if !(c.Rate > 0) || math.IsInf(c.Rate, 0) {
		return 0, false
	}
	off, ok := seconds(float64(i) / c.Rate)
	if !ok || (c.Duration > 0 && off >= c.Duration) {
		return 0, false
	}
	return off, true
}

func (c Constant) String() string {
	if c.Duration <= 0 {
		return "Constant{" + fmtRate(c.Rate) + "}"
	}
	return "Constant{" + fmtRate(c.Rate) + " for " + c.Duration.String() + "}"
}

// Stage is one leg of a Ramp: the rate moves linearly from the previous
// stage's Target (or the Ramp's Start) to Target over Duration. A stage with
// zero Duration jumps to Target at once.
type Stage struct {
	Target   float64       // arrivals per second at the end of the stage
	Duration time.Duration // length of the stage
}

// Ramp is a piecewise linear arrival rate starting at Start arrivals per
// second. The schedule ends with the last stage.
//
// The cumulative number of arrivals by time t is the area under the rate
// curve, N(t) = ∫₀ᵗ r(u) du, and arrival i is made at the t where N(t) = i
// (so arrival 0 is at t = 0, and Ramp{Start: r, Stages: {{r, d}}} equals
// Constant{r, d}). Within a stage that starts at T₀ with N(T₀) = N₀, moving
// from rate a to rate b over D seconds, the rate is a + s·τ with slope
// s = (b−a)/D, so
//
//	N(T₀+τ) = N₀ + a·τ + s·τ²/2.
//
// Solving N(T₀+τ) = i for n = i − N₀ gives τ = (−a + √(a² + 2·s·n)) / s;
// the same root written as
//
//	τ = 2n / (a + √(a² + 2·s·n))
//
// needs no special case for s = 0 and does not lose precision when s is
// small. At walks the stages subtracting each stage's area (a+b)/2·D until
// n falls inside one.
type Ramp struct {
	Start  float64 // arrivals per second at t = 0
	Stages []Stage
}

// At implements Schedule.
func (r Ramp) At(i uint64) (time.Duration, bool) {
	n := float64(i)
	from := nonNegative(r.Start)
	var t0 float64 // seconds since the start of the ramp
	for _, s := range r.Stages {
		to := nonNegative(s.Target)
		d := s.Duration.Seconds()
		if d <= 0 {
			from = to
			continue
		}
		area := (from + to) / 2 * d
		if n < area {
			var tau float64
			if n > 0 {
				slope := (to - from) / d
				tau = 2 * n / (from + math.Sqrt(max(from*from+2*slope*n, 0)))
			}
			return seconds(t0 + min(tau, d))
		}
		n -= area
		t0 += d
		from = to
	}
	return 0, false
}

func (r Ramp) String() string {
	var b strings.Builder
	b.WriteString("Ramp{from ")
	b.WriteString(fmtRate(r.Start))
	for i, s := range r.Stages {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(fmtRate(s.Target))
		b.WriteString(" over ")
		b.WriteString(s.Duration.String())
	}
	b.WriteString("}")
	return b.String()
}

// Duration returns the total length of the ramp's stages.
func (r Ramp) Duration() time.Duration {
	var d time.Duration
	for _, s := range r.Stages {
		d += s.Duration
	}
	return d
}

// seconds converts s seconds to a Duration, rounding to the nearest
// nanosecond; ok is false if s is negative, NaN or too large.
func seconds(s float64) (time.Duration, bool) {
	ns := math.Round(s * 1e9)
	if !(ns >= 0) || ns >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(ns), true
}

func nonNegative(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

func fmtRate(r float64) string {
	return strconv.FormatFloat(r, 'g', -1, 64) + "/s"
}

// VUStage is one leg of a RampingVUs run: the number of VUs moves linearly
// from the previous stage's Target (or StartVUs) to Target over Duration.
type VUStage struct {
	Target   int
	Duration time.Duration
}

// vuStep says that from offset At on, VUs virtual users are active.
type vuStep struct {
	At  time.Duration
	VUs int
}

// vuSteps turns a VU ramp into the offsets at which the VU count changes.
// The count follows the linear ramp rounded to the nearest integer, so
// during a stage from a to b over D the k-th change happens at
// D·(2k−1)/(2·|b−a|): going from 0 to 10 VUs over 10 s adds VUs at 0.5 s,
// 1.5 s, … 9.5 s, and the average VU count equals the ramp's.
func vuSteps(start int, stages []VUStage) []vuStep {
	steps := []vuStep{{0, start}}
	from := start
	var t0 time.Duration
	for _, s := range stages {
		to := s.Target
		switch {
		case to == from:
		case s.Duration <= 0:
			steps = append(steps, vuStep{t0, to})
		default:
			m := int64(to - from)
			dir := 1
			if m < 0 {
				m, dir = -m, -1
			}
			for j := int64(1); j <= m; j++ {
				at := t0 + time.Duration(int64(s.Duration)*(2*j-1)/(2*m))
				steps = append(steps, vuStep{at, from + dir*int(j)})
			}
		}
		t0 += s.Duration
		from = to
	}
	return steps
}
