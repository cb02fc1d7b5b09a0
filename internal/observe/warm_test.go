package observe

import (
	"math"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// warmRun is a run of secs seconds at 10 iterations a second whose
// Keycloak CPU is cpu(second) percent of a core.
func warmRun(secs int, cpu func(int) float64) ([]results.TimelineRow, time.Time, []results.ObserveSample) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var tl []results.TimelineRow
	samples := []results.ObserveSample{results.BlankObserveSample(start)}
	for i := range secs {
		tl = append(tl, results.TimelineRow{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Ops: []results.OpInterval{{Op: results.IterationOp, Count: 10}}})
		s := results.BlankObserveSample(start.Add(time.Duration(i+1)*time.Second - time.Millisecond))
		s.KCCPUPct = cpu(i)
		samples = append(samples, s)
	}
	return tl, start, samples
}

func TestWarmAfter(t *testing.T) {
	for _, c := range []struct {
		name string
		secs int
		cpu  func(int) float64
		want time.Duration
		ok   bool
	}{
		{"cold for 20 s", 60, func(i int) float64 { return map[bool]float64{true: 100, false: 30}[i < 20] }, 20 * time.Second, true},
		{"one noisy window once warm", 80, func(i int) float64 {
			if i < 10 {
				return 100
			}
			if i >= 60 && i < 70 {
				return 40
			}
			return 30
		}, 10 * time.Second, true},
		{"warm at once", 60, func(int) float64 { return 30 }, 0, true},
		{"within the tolerance", 60, func(i int) float64 { return map[bool]float64{true: 35, false: 30}[i < 10] }, 0, true},
		{"a noisy last window", 60, func(i int) float64 { return map[bool]float64{true: 150, false: 30}[i >= 50] }, 0, true},
		// a cost that rises is no warm-up
		{"dearer to the end", 60, func(i int) float64 { return map[bool]float64{true: 150, false: 30}[i >= 40] }, 0, true},
		{"one cold first window", 60, func(i int) float64 { return map[bool]float64{true: 60, false: 30}[i < 10] }, 10 * time.Second, true},
		{"settled in its last third", 60, func(i int) float64 { return map[bool]float64{true: 100, false: 30}[i < 40] }, 0, false},
		{"too short", 39, func(int) float64 { return 30 }, 0, false},
		{"no CPU", 60, func(int) float64 { return math.NaN() }, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tl, start, samples := warmRun(c.secs, c.cpu)
			got, ok := WarmAfter(tl, start, tl[len(tl)-1].End, samples, results.WarmWindow, results.WarmTolerance)
			if got != c.want || ok != c.ok {
				t.Errorf("WarmAfter = %v, %v; want %v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// A window without a successful iteration (the server down) makes the
// figure unknown rather than a division by zero.
func TestWarmAfterIdleWindow(t *testing.T) {
	tl, start, samples := warmRun(60, func(int) float64 { return 30 })
	for i := 20; i < 30; i++ {
		tl[i].Ops[0].Errors = 10
	}
	if got, ok := WarmAfter(tl, start, tl[len(tl)-1].End, samples, results.WarmWindow, results.WarmTolerance); ok {
		t.Errorf("WarmAfter = %v, true; want unknown", got)
	}
}

// The graceful stop's windows (after end) are not judged, and CPU spent
// before start (a full GC between workloads, in the sample that straddles
// the start) is not counted.
func TestWarmAfterBounds(t *testing.T) {
	tl, start, samples := warmRun(60, func(int) float64 { return 30 })
	for i := 60; i < 85; i++ { // a drain: few iterations, CPU still burning
		tl = append(tl, results.TimelineRow{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second,
			Ops: []results.OpInterval{{Op: results.IterationOp, Count: 1}}})
		s := results.BlankObserveSample(start.Add(time.Duration(i+1) * time.Second))
		s.KCCPUPct = 90
		samples = append(samples, s)
	}
	// the sample before start is 5 s earlier, the one after it at 100 %:
	// only its last second counts
	samples[0].T = start.Add(-4 * time.Second)
	samples[1].KCCPUPct = 50
	if got, ok := WarmAfter(tl, start, 60*time.Second, samples, results.WarmWindow, results.WarmTolerance); got != 0 || !ok {
		t.Errorf("WarmAfter = %v, %v; want 0, true", got, ok)
	}
	if cpu := windowCPU(samples, start, 6, results.WarmWindow); math.Abs(cpu[0]-(0.4995+9*0.3)) > 1e-6 {
		t.Errorf("the first window's CPU: %.3f s, want %.3f (none of it before the start)", cpu[0], 0.4995+9*0.3)
	}
	// the windows are end's: 39 s of a run that went on for 85 are too few
	if got, ok := WarmAfter(tl, start, 39*time.Second, samples, results.WarmWindow, results.WarmTolerance); ok {
		t.Errorf("with an end of 39 s: WarmAfter = %v, true; want unknown", got)
	}
}
