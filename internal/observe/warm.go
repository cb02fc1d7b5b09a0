package observe

import (
	"math"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// WarmAfter is how long a run went before Keycloak served it at its warm
// cost: the start of the first window (of width win, counted from start,
// the run's start with its warm-up) from which on every whole window's
// Keycloak CPU per iteration, smoothed over the window and its neighbours
// (one noisy window does not undo a warm run), is at most (1+tol) times
// the cost over the run's last half. A run that was warm from its first
// window gives 0, one that never settled its length. tl is the run's timeline (warm-up rows
// included), samples the server's (time order). ok is false when the run
// has fewer than four whole windows, or a window has no iteration or no
// CPU sample.
func WarmAfter(tl []results.TimelineRow, start time.Time, samples []results.ObserveSample, win time.Duration, tol float64) (after time.Duration, ok bool) {
	if len(tl) == 0 || win <= 0 {
		return 0, false
	}
	n := int(tl[len(tl)-1].End / win) // whole windows
	if n < 4 {
		return 0, false
	}
	iters := make([]float64, n)
	for _, r := range tl {
		if i := int(r.Start / win); i < n && len(r.Ops) > 0 && r.Ops[0].Op == results.IterationOp {
			iters[i] += float64(r.Ops[0].Count - r.Ops[0].Errors)
		}
	}
	cpu := make([]float64, n) // CPU seconds
	seen := make([]bool, n)
	for i := 1; i < len(samples); i++ {
		s := &samples[i]
		w := s.T.Sub(start)
		if w < 0 || math.IsNaN(s.KCCPUPct) {
			continue
		}
		if j := int(w / win); j < n {
			cpu[j] += s.KCCPUPct / 100 * s.T.Sub(samples[i-1].T).Seconds()
			seen[j] = true
		}
	}
	var warmCPU, warmIters float64
	for j := n / 2; j < n; j++ {
		warmCPU += cpu[j]
		warmIters += iters[j]
	}
	for j := range n {
		if iters[j] == 0 || !seen[j] {
			return 0, false
		}
	}
	warm := warmCPU / warmIters
	smoothed := func(j int) float64 {
		var c, it float64
		for k := max(j-1, 0); k <= min(j+1, n-1); k++ {
			c += cpu[k]
			it += iters[k]
		}
		return c / it
	}
	after = time.Duration(n) * win
	for j := n - 1; j >= 0 && smoothed(j) <= (1+tol)*warm; j-- {
		after = time.Duration(j) * win
	}
	return after, true
}
