package observe

import (
	"github.com/kcbench/kcbench/internal/results"
	"math"
	"time"
)

// Span is what the samples of [From, To] say of Keycloak during one
// workload: the largest RSS, the mean CPU, the mean heap in use and the
// GC pauses. A figure no sample had is NaN (GCPauses and GCPauseSeconds
// are 0 then too, with HasGC false).
type Span struct {
	MaxRSSBytes   float64
	MeanCPUPct    float64
	MeanHeapBytes float64
	// GCPauses and GCPauseSeconds are the pauses counted in the span and
	// the time they took: each sample's rate times the time since the
	// sample before it.
	GCPauses, GCPauseSeconds float64
	HasGC                    bool
}

// MeanGCPauseMs is the mean GC pause in the span (NaN without a pause).
func (s Span) MeanGCPauseMs() float64 {
	if !s.HasGC || s.GCPauses <= 0 {
		return math.NaN()
	}
	return 1000 * s.GCPauseSeconds / s.GCPauses
}

// SpanOf summarizes the rows (in time order) whose T lies in [from, to].
func SpanOf(rows []results.ObserveSample, from, to time.Time) Span {
	sp := Span{MaxRSSBytes: math.NaN(), MeanCPUPct: math.NaN(), MeanHeapBytes: math.NaN()}
	var cpuN, heapN int
	var cpu, heap float64
	for i := range rows {
		r := &rows[i]
		if r.T.Before(from) || r.T.After(to) {
			continue
		}
		if v := r.KCRSSBytes; !math.IsNaN(v) && (math.IsNaN(sp.MaxRSSBytes) || v > sp.MaxRSSBytes) {
			sp.MaxRSSBytes = v
		}
		if v := r.KCCPUPct; !math.IsNaN(v) {
			cpu += v
			cpuN++
		}
		if v := r.HeapUsed; !math.IsNaN(v) {
			heap += v
			heapN++
		}
		if i > 0 && !math.IsNaN(r.GCCount) && !math.IsNaN(r.GCPauseSeconds) {
			dt := r.T.Sub(rows[i-1].T).Seconds()
			sp.GCPauses += r.GCCount * dt
			sp.GCPauseSeconds += r.GCPauseSeconds * dt
			sp.HasGC = true
		}
	}
	if cpuN > 0 {
		sp.MeanCPUPct = cpu / float64(cpuN)
	}
	if heapN > 0 {
		sp.MeanHeapBytes = heap / float64(heapN)
	}
	return sp
}
