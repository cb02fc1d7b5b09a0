package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// Published figures (an experiment file's references:) are drawn as dashed
// lines on the chart each names, in the colour of the measured line it
// compares with, and tabled beside the measured value at the same x.

// withReferences adds to c the references that name the chart, and their
// comparison rows to the report's table of published figures.
func (b *builder) withReferences(name, title string, c lineChart) lineChart {
	for i, ref := range b.e.refs {
		if ref.Chart != name {
			continue
		}
		b.refsDrawn[i] = true
		color := -1
		var measured []xy
		for _, s := range c.series {
			if ref.Series != "" && s.label == ref.Series && !s.reading {
				color = s.color
				for _, part := range s.parts {
					measured = append(measured, part...)
				}
			}
		}
		if color < 0 {
			color = len(c.series)
		}
		pts := make([]xy, len(ref.Points))
		for j, p := range ref.Points {
			pts[j] = xy{p[0], p[1]}
		}
		slices.SortFunc(pts, func(a, b xy) int { return cmp.Compare(a.x, b.x) })
		c.series = append(c.series, lineSeries{label: ref.Label, parts: [][]xy{pts}, color: color, dashed: true})
		if len(c.xTicks) > 0 {
			// a chart that ticks its measured x values ticks the published ones too
			c.xTicks = slices.Clone(c.xTicks)
			for _, p := range pts {
				if !slices.Contains(c.xTicks, p.x) {
					c.xTicks = append(c.xTicks, p.x)
				}
			}
			slices.Sort(c.xTicks)
		}
		for _, p := range pts {
			row := []string{title, ref.Label, sig3(p.x), sig3(p.y), "-", "-"}
			if ref.Series == "" {
				row[4] = "(not compared)"
			} else if i := slices.IndexFunc(measured, func(q xy) bool { return q.x == p.x }); i >= 0 {
				row[4] = sig3(measured[i].y) + " (" + ref.Series + ")"
				if p.y != 0 {
					row[5] = fmtFixed(2)(measured[i].y/p.y) + "×"
				}
			}
			b.refRows = append(b.refRows, row)
		}
	}
	return c
}

// referenceTable adds the table of published figures beside the measured
// ones, and notes the references no chart took.
func (b *builder) referenceTable() {
	if len(b.e.refs) == 0 {
		return
	}
	var notes []string
	for i, ref := range b.e.refs {
		if !b.refsDrawn[i] {
			b.note("Published figures %q left out: the report has no chart %q.", ref.Label, ref.Chart)
			continue
		}
		n := ref.Label
		if ref.Source != "" {
			n += ": " + ref.Source
		}
		if ref.Note != "" {
			n += " (" + ref.Note + ")"
		}
		if !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	if len(b.refRows) == 0 {
		return
	}
	b.m.Tables = append(b.m.Tables, Table{
		Title: "Published figures beside kcbench's",
		Caption: "Each published point (dashed on its chart) beside kcbench's value at the same x on the line it compares with, " +
			"and their ratio (kcbench ÷ published); \"-\": kcbench has no point there. Sources: " + strings.Join(notes, "; ") + ".",
		Header: []string{"chart", "published", "x", "published value", "kcbench", "ratio"},
		Rows:   b.refRows,
	})
}

// sig3 formats v with about three significant digits, without exponents
// for the magnitudes a report shows.
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 100 || a == math.Trunc(a) && a >= 1:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// loadReferences reads the experiment folder's published figures; a file
// that cannot be read is a note, not a failed report.
func (e *experiment) loadReferences() (note string) {
	refs, err := results.ReadReferences(e.dir)
	if err != nil {
		return fmt.Sprintf("Published figures left out: %v.", err)
	}
	e.refs = refs
	return ""
}
