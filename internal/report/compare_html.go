package report

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Model turns the comparison into a report page (WriteHTML): a verdict
// (how many figures moved beyond the spread, and the largest moves), a
// chart of the relative change of throughput, p95 and CPU-ms/op per
// scenario, and the table of every delta.
func (cmp *Comparison) Model(ctx context.Context) *Model {
	m := &Model{Experiment: "compare " + cmp.A + " → " + cmp.B, Kind: "comparison", Notes: cmp.Notes}
	b := &builder{ctx: ctx, m: m}
	count := map[string]int{}
	for _, d := range cmp.Rows {
		count[strings.TrimSuffix(d.Verdict, unknownSpread)]++
	}
	// the first screen: the counts, the noise, what was not compared, and
	// the largest moves as a table
	say := func(s *sentence) { b.say(s); b.answer(s) }
	say(new(sentence).t("B (%s) against A (%s): %d figures compared; %d better and %d worse beyond the spread of the repeats, %d within it (noise), %d unchanged.",
		cmp.B, cmp.A, len(cmp.Rows), count[VerdictBetter], count[VerdictWorse], count[VerdictNoise], count[VerdictSame]))
	if slices.ContainsFunc(cmp.Rows, func(d Delta) bool { return !d.SpreadKnown }) {
		say(new(sentence).t("Some figures ran once per side, so their spread is unknown: their direction is given, but a few percent may be noise."))
	}
	if n := len(cmp.Notes); n > 0 {
		more := ""
		notes := cmp.Notes
		if n > 3 {
			notes, more = notes[:3], fmt.Sprintf("; and %d more (the notes below)", n-3)
		}
		say(new(sentence).t("Not compared: %s%s.", strings.Join(notes, "; "), more))
	}
	moved := slices.Clone(cmp.Rows)
	moved = slices.DeleteFunc(moved, func(d Delta) bool {
		return d.DeltaPct == nil || !(strings.HasPrefix(d.Verdict, VerdictWorse) || strings.HasPrefix(d.Verdict, VerdictBetter))
	})
	slices.SortStableFunc(moved, func(x, y Delta) int {
		return -cmpFloat(math.Abs(*x.DeltaPct), math.Abs(*y.DeltaPct))
	})
	if len(moved) == 0 {
		say(new(sentence).t("No figure moved beyond the spread of the repeats."))
	} else {
		t := &AnswerTable{Columns: []Column{{Title: "config"}, {Title: "scenario", Text: true}, {Title: "metric", Text: true}, {Title: "A"}, {Title: "B"}, {Title: "Δ%"}, {Title: "verdict", Text: true}}}
		for _, d := range moved[:min(len(moved), 5)] {
			f := formatFor(d.Metric)
			scen := wlKey{d.Workload, d.Phase}.String()
			key := FigKey(d.Config, scen, d.Metric)
			t.Rows = append(t.Rows, []Cell{{Text: d.Config}, {Text: scen, Class: "text"}, {Text: d.Metric, Class: "text"},
				{Text: f(d.A.Mean), Fig: key + "|A", Value: d.A.Mean}, {Text: f(d.B.Mean), Fig: key + "|B", Value: d.B.Mean},
				{Text: signedPct(*d.DeltaPct)}, {Text: d.Verdict, Class: "text"}})
		}
		t.Caption = fmt.Sprintf("The largest moves beyond the spread (%d of %d); every figure in the table below.", len(t.Rows), len(moved))
		m.Answer.Table = t
	}

	// relative change per scenario, one bar per metric
	var groups []string
	type gk struct{ config, wl string }
	var keys []gk
	for _, d := range cmp.Rows {
		k := gk{d.Config, wlKey{d.Workload, d.Phase}.String()}
		if d.Workload != pointScenario && !slices.Contains(keys, k) {
			keys = append(keys, k)
			label := k.wl
			if d.Config != "" && d.Config != "all" {
				label = d.Config + " · " + k.wl
			}
			groups = append(groups, label)
		}
	}
	var bars []barSeries
	for i, metric := range []string{"throughput/s", "p95 ms", "CPU-ms/op"} {
		bs := barSeries{label: metric, values: make([]float64, len(keys)), color: i}
		for j := range bs.values {
			bs.values[j] = math.NaN()
		}
		for _, d := range cmp.Rows {
			if d.Metric == metric && d.DeltaPct != nil {
				if j := slices.Index(keys, gk{d.Config, wlKey{d.Workload, d.Phase}.String()}); j >= 0 {
					bs.values[j] = *d.DeltaPct
				}
			}
		}
		bars = append(bars, bs)
	}
	if len(keys) > 0 {
		b.startSection("Change from A to B", false)
		title := "Relative change B − A per scenario"
		b.add("compare-change", title, nil, barChart{title: title, yLabel: "% of A", groups: groups, bars: bars})
	}

	t := Table{Title: "Every figure", Caption: "Δ = B − A. A delta within the spread (max − min) of the repeats of either side is noise; with a single run per side the spread is unknown. ±x: half the range of the repeats.",
		Header: compareHeader}
	for _, d := range cmp.Rows {
		t.Rows = append(t.Rows, d.cells())
	}
	m.Tables = append(m.Tables, t)
	return m
}

// WriteHTML writes the comparison as a report page.
func (cmp *Comparison) WriteHTML(ctx context.Context, w io.Writer) error {
	if err := cmp.Model(ctx).WriteHTML(w); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
