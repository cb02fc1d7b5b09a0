package observe

import (
	"encoding/json"
	"math"
	"time"
)

// PhaseSummary condenses the rows of one phase. Mean and Max hold, per
// column, the mean and the maximum of the values observed in the phase,
// NaN where none was (their T is zero and their Phase the phase's). For
// rate columns Mean × (End − Start) approximates the phase's total.
type PhaseSummary struct {
	Phase      string
	Start, End time.Time // first and last sample
	Samples    int
	Mean, Max  Sample
}

// Summarize groups rows by phase, in order of first appearance (rows with
// no phase form the phase ""), and summarizes each.
func Summarize(rows []Sample) []PhaseSummary {
	var out []PhaseSummary
	at := map[string]int{}
	var n [][len(columns)]int
	for i := range rows {
		r := &rows[i]
		k, ok := at[r.Phase]
		if !ok {
			k = len(out)
			at[r.Phase] = k
			ps := PhaseSummary{Phase: r.Phase, Start: r.T, End: r.T, Mean: Blank(time.Time{}), Max: Blank(time.Time{})}
			ps.Mean.Phase, ps.Max.Phase = r.Phase, r.Phase
			out = append(out, ps)
			n = append(n, [len(columns)]int{})
		}
		ps := &out[k]
		ps.Samples++
		if r.T.Before(ps.Start) {
			ps.Start = r.T
		}
		if r.T.After(ps.End) {
			ps.End = r.T
		}
		for j, c := range columns {
			v := *c.get(r)
			if math.IsNaN(v) {
				continue
			}
			mean, mx := c.get(&ps.Mean), c.get(&ps.Max)
			if n[k][j] == 0 {
				*mean, *mx = 0, v
			}
			n[k][j]++
			*mean += (v - *mean) / float64(n[k][j])
			*mx = max(*mx, v)
		}
	}
	return out
}

// phaseSummaryJSON is PhaseSummary as JSON: NaN has no JSON form, so Mean
// and Max become objects keyed by CSV column name without the unobserved
// columns.
type phaseSummaryJSON struct {
	Phase   string             `json:"phase"`
	Start   time.Time          `json:"start"`
	End     time.Time          `json:"end"`
	Samples int                `json:"samples"`
	Mean    map[string]float64 `json:"mean"`
	Max     map[string]float64 `json:"max"`
}

// MarshalJSON implements json.Marshaler.
func (p PhaseSummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(phaseSummaryJSON{
		Phase: p.Phase, Start: p.Start, End: p.End, Samples: p.Samples,
		Mean: observed(&p.Mean), Max: observed(&p.Max),
	})
}

// UnmarshalJSON implements json.Unmarshaler.
func (p *PhaseSummary) UnmarshalJSON(b []byte) error {
	var j phaseSummaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = PhaseSummary{Phase: j.Phase, Start: j.Start, End: j.End, Samples: j.Samples,
		Mean: fromObserved(j.Mean, j.Phase), Max: fromObserved(j.Max, j.Phase)}
	return nil
}

func observed(s *Sample) map[string]float64 {
	m := map[string]float64{}
	for _, c := range columns {
		if v := *c.get(s); !math.IsNaN(v) {
			m[c.name] = v
		}
	}
	return m
}

func fromObserved(m map[string]float64, phase string) Sample {
	s := Blank(time.Time{})
	s.Phase = phase
	for _, c := range columns {
		if v, ok := m[c.name]; ok {
			*c.get(&s) = v
		}
	}
	return s
}

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
func SpanOf(rows []Sample, from, to time.Time) Span {
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
