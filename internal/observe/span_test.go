package observe

import (
	"math"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// SpanOf keeps the rows of its window: the largest RSS, the mean CPU and
// heap, and the GC pauses each rate times its interval.
func TestSpanOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(sec float64, rss, cpu, heap, gcs, paused float64) results.ObserveSample {
		s := results.BlankObserveSample(t0.Add(time.Duration(sec * float64(time.Second))))
		s.KCRSSBytes, s.KCCPUPct, s.HeapUsed, s.GCCount, s.GCPauseSeconds = rss, cpu, heap, gcs, paused
		return s
	}
	nan := math.NaN()
	rows := []results.ObserveSample{
		row(0, 900, 10, 100, nan, nan),   // before the window
		row(1, 500, 50, 200, nan, nan),   // first of the window: no rate yet
		row(2, 700, 100, 300, 2, 0.008),  // 2 pauses of 4 ms
		row(4, 600, nan, nan, 0.5, 0.01), // over 2 s: 1 pause of 20 ms
		row(5, 2000, 90, 500, 3, 0.3),    // after the window
	}
	sp := SpanOf(rows, t0.Add(time.Second), t0.Add(4*time.Second))
	if sp.MaxRSSBytes != 700 || sp.MeanCPUPct != 75 || sp.MeanHeapBytes != 250 {
		t.Errorf("%+v", sp)
	}
	if !sp.HasGC || sp.GCPauses != 3 || math.Abs(sp.GCPauseSeconds-0.028) > 1e-12 || math.Abs(sp.MeanGCPauseMs()-28.0/3) > 1e-9 {
		t.Errorf("GC: %+v, mean %v ms", sp, sp.MeanGCPauseMs())
	}
	if sp := SpanOf(rows, t0.Add(10*time.Second), t0.Add(20*time.Second)); !math.IsNaN(sp.MaxRSSBytes) || !math.IsNaN(sp.MeanGCPauseMs()) || sp.HasGC {
		t.Errorf("empty window: %+v", sp)
	}
}
