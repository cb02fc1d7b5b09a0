package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/kcbench/kcbench/internal/capacity/gate"
	"github.com/kcbench/kcbench/internal/results"
)

// Verdicts of a delta.
const (
	VerdictNoise  = "noise"  // within the spread of the repeats
	VerdictBetter = "better" // beyond the spread, in the good direction
	VerdictWorse  = "worse"  // beyond the spread, in the bad direction
	VerdictSame   = "same"   // no change at all
	// suffix when neither side has repeats
	unknownSpread = " (spread unknown)"
)

// Comparison is the per-scenario difference of two result folders, B
// against A.
type Comparison struct {
	A     string   `json:"a"`
	B     string   `json:"b"`
	Rows  []Delta  `json:"rows"`
	Notes []string `json:"notes,omitempty"`
}

// Delta is one figure of one scenario (workload and phase) of one
// configuration, in A and in B.
type Delta struct {
	Config   string   `json:"config"`
	Workload string   `json:"workload"` // "(point)" for point-level figures
	Phase    string   `json:"phase,omitempty"`
	Metric   string   `json:"metric"`
	A        Stat     `json:"a"`
	B        Stat     `json:"b"`
	Delta    float64  `json:"delta"`               // B − A (means)
	DeltaPct *float64 `json:"delta_pct,omitempty"` // relative to A, when A is not 0
	// Spread is the larger range (max − min) of the repeats of A and B;
	// SpreadKnown is false when neither side has two repeats.
	Spread      float64 `json:"spread"`
	SpreadKnown bool    `json:"spread_known"`
	Verdict     string  `json:"verdict"`
}

// pointScenario names the point-level figures in a Comparison.
const pointScenario = "(point)"

// compareMetric is one figure Compare looks at.
type compareMetric struct {
	name         string
	higherBetter bool
	stat         func(*wlAgg) Stat
	format       func(float64) string
}

var compareMetrics = []compareMetric{
	{"throughput/s", true, func(w *wlAgg) Stat { return w.throughput }, fmtFixed(1)},
	{"p50 ms", false, func(w *wlAgg) Stat { return w.p50 }, results.FormatMs},
	{"p95 ms", false, func(w *wlAgg) Stat { return w.p95 }, results.FormatMs},
	{"p99 ms", false, func(w *wlAgg) Stat { return w.p99 }, results.FormatMs},
	{"CPU-ms/op", false, func(w *wlAgg) Stat { return w.cpuMs }, fmtFixed(2)},
	{"max RSS MiB", false, func(w *wlAgg) Stat { return w.rssMiB }, fmtFixed(0)},
	{"DB CPU-ms/op", false, func(w *wlAgg) Stat { return w.dbCPUMs }, fmtFixed(3)},
	{"DB xacts/op", false, func(w *wlAgg) Stat { return w.dbXacts }, fmtFixed(2)},
	{"WAL KiB/op", false, func(w *wlAgg) Stat { return w.dbWALKiB }, fmtFixed(2)},
}

// Compare reads two result folders (experiments or single points) and
// compares them configuration by configuration (points whose params
// differ only by "repeat"), scenario by scenario (workload and phase).
// When the two sides share no configuration but each has exactly one,
// those two are compared. A delta within the spread of the repeats is
// flagged as noise.
func Compare(ctx context.Context, dirA, dirB string) (*Comparison, error) {
	a, err := loadExperiment(dirA)
	if err != nil {
		return nil, err
	}
	b, err := loadExperiment(dirB)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmp := &Comparison{A: dirA, B: dirB}
	type pair struct {
		label string
		a, b  *config
	}
	var pairs []pair
	bByKey := map[string]*config{}
	for _, c := range b.configs {
		bByKey[c.key] = c
	}
	matched := map[string]bool{}
	for _, ca := range a.configs {
		if cb := bByKey[ca.key]; cb != nil {
			pairs = append(pairs, pair{ca.label, ca, cb})
			matched[ca.key] = true
		}
	}
	switch {
	case len(pairs) == 0 && len(a.configs) == 1 && len(b.configs) == 1:
		ca, cb := a.configs[0], b.configs[0]
		pairs = append(pairs, pair{ca.label + " → " + cb.label, ca, cb})
		matched[ca.key] = true
		matched[cb.key] = true
	case len(pairs) == 0:
		return nil, fmt.Errorf("%s and %s have no configuration in common (A: %s; B: %s)",
			dirA, dirB, configLabels(a), configLabels(b))
	}
	for _, c := range a.configs {
		if !matched[c.key] {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("only in A: %s", c.label))
		}
	}
	for _, c := range b.configs {
		if !matched[c.key] {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("only in B: %s", c.label))
		}
	}
	for _, p := range pairs {
		cmp.comparePair(p.label, p.a, p.b)
	}
	if len(cmp.Rows) == 0 {
		return nil, errors.New("nothing to compare: the matching points share no workload or figure")
	}
	return cmp, nil
}

func configLabels(e *experiment) string {
	ls := make([]string, len(e.configs))
	for i, c := range e.configs {
		ls[i] = c.label
	}
	return strings.Join(ls, ", ")
}

func (cmp *Comparison) comparePair(label string, ca, cb *config) {
	if len(ca.done) == 0 || len(cb.done) == 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: no finished point on one side (A: %s, B: %s)", label, statusText(ca), statusText(cb)))
		return
	}
	wb := map[wlKey]*wlAgg{}
	for _, w := range cb.workloads() {
		wb[w.key] = w
	}
	seen := map[wlKey]bool{}
	for _, wa := range ca.workloads() {
		seen[wa.key] = true
		w2 := wb[wa.key]
		if w2 == nil {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: workload %s only in A", label, wa.key))
			continue
		}
		for _, m := range compareMetrics {
			cmp.add(label, wa.key.name, wa.key.phase, m.name, m.higherBetter, m.stat(wa), m.stat(w2))
		}
	}
	for _, w := range cb.workloads() {
		if !seen[w.key] {
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: workload %s only in B", label, w.key))
		}
	}
	pa, pb := ca.pointFigures(), cb.pointFigures()
	cmp.add(label, pointScenario, "", "boot s", false, pa.bootS, pb.bootS)
	cmp.add(label, pointScenario, "", "RSS at ready MiB", false, pa.rssMiB, pb.rssMiB)
}

func (cmp *Comparison) add(label, workload, phase, metric string, higherBetter bool, a, b Stat) {
	if !a.Known() && !b.Known() {
		return
	}
	d := Delta{Config: label, Workload: workload, Phase: phase, Metric: metric, A: a, B: b}
	sa, okA := a.Spread()
	sb, okB := b.Spread()
	d.SpreadKnown = okA || okB
	d.Spread = max(sa, sb)
	switch {
	case !a.Known():
		d.Verdict = "only in B"
	case !b.Known():
		d.Verdict = "only in A"
	default:
		d.Delta = b.Mean - a.Mean
		if a.Mean != 0 {
			pct := 100 * d.Delta / math.Abs(a.Mean)
			d.DeltaPct = &pct
		}
		d.Verdict = verdict(a.Mean, b.Mean, d.Spread, d.SpreadKnown, higherBetter)
	}
	cmp.Rows = append(cmp.Rows, d)
}

// verdict words gate.Judge's classification of a delta with no threshold
// and no floor: within the spread of the repeats it is noise (so is no
// change when the spread is known); beyond it, better or worse. Without
// repeats the spread is unknown, and the direction is given with that
// caveat.
func verdict(a, b, spread float64, spreadKnown, higherBetter bool) string {
	var v string
	switch gate.Judge(a, b, spread, 0, 0, higherBetter) {
	case gate.Within:
		if spreadKnown {
			return VerdictNoise
		}
		return VerdictSame
	case gate.Noise:
		return VerdictNoise
	case gate.Worse:
		v = VerdictWorse
	default:
		v = VerdictBetter
	}
	if !spreadKnown {
		v += unknownSpread
	}
	return v
}

// WriteText writes the comparison as an aligned table.
func (cmp *Comparison) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("A: %s\nB: %s\n", cmp.A, cmp.B)
	ew.printf("Δ = B − A. A delta within the spread (max − min) of the repeats of either side is noise;\n")
	ew.printf("with a single run per side the spread is unknown. ±x: half the range of the repeats.\n\n")
	tw := tabwriter.NewWriter(ew.w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	if ew.err == nil {
		row(compareHeader...)
		for _, d := range cmp.Rows {
			row(d.cells()...)
		}
		ew.err = tw.Flush()
	}
	if len(cmp.Notes) > 0 {
		ew.printf("\nnotes:\n")
		for _, n := range cmp.Notes {
			ew.printf("  %s\n", n)
		}
	}
	return ew.err
}

func formatFor(metric string) func(float64) string {
	for _, m := range compareMetrics {
		if m.name == metric {
			return m.format
		}
	}
	if metric == "boot s" {
		return fmtFixed(2)
	}
	return fmtFixed(0)
}

func signed(f func(float64) string, v float64) string {
	if v > 0 {
		return "+" + f(v)
	}
	return f(v)
}

// WriteJSON writes the comparison as indented JSON.
func (cmp *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(cmp)
}

// compareHeader heads the table of every figure of a comparison.
var compareHeader = []string{"config", "scenario", "metric", "A", "B", "Δ", "Δ%", "spread", "verdict"}

// cells are d's row of the table of every figure, in compareHeader's
// order.
func (d Delta) cells() []string {
	f := formatFor(d.Metric)
	delta, pct, spread := "-", "-", "?"
	if d.A.Known() && d.B.Known() {
		delta = signed(f, d.Delta)
		if d.DeltaPct != nil {
			pct = signed(fmtFixed(1), *d.DeltaPct) + "%"
		}
	}
	if d.SpreadKnown {
		spread = f(d.Spread)
	}
	return []string{d.Config, wlKey{d.Workload, d.Phase}.String(), d.Metric, fmtStat(d.A, f), fmtStat(d.B, f), delta, pct, spread, d.Verdict}
}
