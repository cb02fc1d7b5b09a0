package observe

import (
	"math"
	"slices"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// WarmAfter is how long a run went before Keycloak served it at its warm
// cost: the start of the first window (of width win, counted from start,
// the run's start with its warm-up) from which on every window's Keycloak
// CPU per successful iteration is at most (1+tol) times the warm cost, the
// median cost of the run's last third of windows (at least three). A
// window is judged by the median cost of itself and its two neighbours,
// the first window by its own (a cold start is never smoothed away), the
// last by the last three's: one noisy window neither undoes a warm run
// nor makes a cold one look warm. A cost that rises to the end is no
// warm-up: such a run is warm from its start. end is the run's regular
// length, warm-up included and graceful stop not; tl is its timeline
// (warm-up rows included) and samples the server's (time order), whose
// CPU is counted from start on. ok is false when the run has fewer than
// four windows, a window has no successful iteration or no CPU sample, or
// the run settled only inside its last third (the reference would not be
// warm).
func WarmAfter(tl []results.TimelineRow, start time.Time, end time.Duration, samples []results.ObserveSample, win time.Duration, tol float64) (after time.Duration, ok bool) {
	if win <= 0 {
		return 0, false
	}
	n := int(end / win)
	if n < 4 {
		return 0, false
	}
	iters := make([]float64, n)
	for _, r := range tl {
		if i := int(r.Start / win); i < n && len(r.Ops) > 0 && r.Ops[0].Op == results.IterationOp {
			iters[i] += float64(r.Ops[0].Count - r.Ops[0].Errors)
		}
	}
	cpu := windowCPU(samples, start, n, win)
	cost := make([]float64, n)
	for j := range n {
		if iters[j] == 0 || math.IsNaN(cpu[j]) {
			return 0, false
		}
		cost[j] = cpu[j] / iters[j]
	}
	refN := max(n/3, 3)
	warm := median(cost[n-refN:])
	judged := func(j int) float64 {
		switch j {
		case 0:
			return cost[0]
		case n - 1:
			return median(cost[n-3:])
		}
		return median(cost[j-1 : j+2])
	}
	after = time.Duration(n) * win
	for j := n - 1; j >= 0 && judged(j) <= (1+tol)*warm; j-- {
		after = time.Duration(j) * win
	}
	if after > time.Duration(n-refN)*win {
		return 0, false
	}
	return after, true
}

// median is the middle of xs (the mean of the two middle ones for an even
// count); xs is not changed.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// windowCPU is Keycloak's CPU seconds in each of n windows of width win
// from start, from samples' CPU rates (each over the time since the
// sample before, counted from start on); NaN for a window no sample fell
// in.
func windowCPU(samples []results.ObserveSample, start time.Time, n int, win time.Duration) []float64 {
	cpu := make([]float64, n)
	seen := make([]bool, n)
	for i := 1; i < len(samples); i++ {
		s := &samples[i]
		from := samples[i-1].T
		if from.Before(start) {
			from = start
		}
		if !s.T.After(from) || math.IsNaN(s.KCCPUPct) {
			continue
		}
		if j := int(s.T.Sub(start) / win); j < n {
			cpu[j] += s.KCCPUPct / 100 * s.T.Sub(from).Seconds()
			seen[j] = true
		}
	}
	for j := range n {
		if !seen[j] {
			cpu[j] = math.NaN()
		}
	}
	return cpu
}
