package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"
)

// palette is Okabe and Ito's colour-blind-safe palette (black last); a
// series keeps its palette index on every chart, PNG and interactive.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0xF0, 0xE4, 0x42, 0xff}, // yellow
	{0x00, 0x00, 0x00, 0xff}, // black
}

func paletteColor(i int) color.Color {
	if i < 0 {
		i = -i
	}
	return palette[i%len(palette)]
}

func paletteHex(i int) string {
	c := paletteColor(i).(color.RGBA)
	return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B)
}

// ChartSpec is what kcbench.js draws: the interactive twin of a PNG
// chart, written into the page as JSON.
type ChartSpec struct {
	Kind   string       `json:"kind"` // line or bar
	X      AxisSpec     `json:"x"`
	Y      AxisSpec     `json:"y"`
	Series []SeriesSpec `json:"series"`
	Marks  []MarkSpec   `json:"marks,omitempty"`
	Groups []string     `json:"groups,omitempty"` // bar: the categories
	Points bool         `json:"points,omitempty"` // line: draw the data points
	Zoom   bool         `json:"zoom,omitempty"`   // drag to zoom a range of x
}

// AxisSpec is one axis.
type AxisSpec struct {
	Label string `json:"label"`
	Log   bool   `json:"log,omitempty"`
	// Switch offers a log/linear switch (latency axes).
	Switch bool `json:"switch,omitempty"`
}

// SeriesSpec is one line or one set of bars. Line data are [x, y] pairs,
// y null where the line breaks; bar data one value (or null) per group.
type SeriesSpec struct {
	Name    string     `json:"name"`
	Color   string     `json:"color"`
	Faded   bool       `json:"faded,omitempty"`
	Data    [][2]*jnum `json:"data,omitempty"`
	Values  []*jnum    `json:"values,omitempty"`
	Dashed  bool       `json:"dashed,omitempty"`
	Reading bool       `json:"reading,omitempty"` // a reference line (SLO), not data
}

// MarkSpec is a labelled vertical line: a workload start, the end of a
// warm-up, an event on the system under test, a found rate.
type MarkSpec struct {
	X     float64 `json:"x"`
	Label string  `json:"label,omitempty"`
	Kind  string  `json:"kind"` // start, warmup, event, found
}

// jnum is a float written in its shortest exact form.
type jnum float64

func (n jnum) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(n), 'g', -1, 64), nil
}

func num(v float64) *jnum {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	n := jnum(v)
	return &n
}

func (c lineChart) spec() *ChartSpec {
	s := &ChartSpec{Kind: "line", Points: c.points, Zoom: !c.points,
		X: AxisSpec{Label: c.xLabel, Log: c.logX}, Y: AxisSpec{Label: strings.TrimSuffix(c.yLabel, " (log)"), Log: c.logY, Switch: c.latency}}
	for i, se := range c.series {
		ci := se.color
		if ci < 0 {
			ci = i
		}
		ss := SeriesSpec{Name: se.label, Color: paletteHex(ci), Reading: se.reading, Dashed: se.dashed}
		parts := se.parts
		if se.raw != nil {
			parts = se.raw
		}
		for j, part := range parts {
			if j > 0 && len(part) > 0 {
				ss.Data = append(ss.Data, [2]*jnum{num(part[0].x), nil}) // break the line
			}
			for _, q := range part {
				ss.Data = append(ss.Data, [2]*jnum{num(q.x), num(q.y)})
			}
		}
		if len(ss.Data) > 0 {
			s.Series = append(s.Series, ss)
		}
	}
	for _, m := range c.marks {
		k := "start"
		switch {
		case m.event:
			k = "event"
		case m.dotted:
			k = "warmup"
		case m.found:
			k = "found"
		}
		s.Marks = append(s.Marks, MarkSpec{X: m.x, Label: m.label, Kind: k})
	}
	return s
}

func (c barChart) spec() *ChartSpec {
	s := &ChartSpec{Kind: "bar", Groups: c.groups, Y: AxisSpec{Label: c.yLabel}}
	for i, b := range c.bars {
		ci := b.color
		if ci < 0 {
			ci = i
		}
		ss := SeriesSpec{Name: b.label, Color: paletteHex(ci), Faded: b.faded}
		for _, v := range b.values {
			ss.Values = append(ss.Values, num(v))
		}
		s.Series = append(s.Series, ss)
	}
	return s
}

// SpecsJSON is every chart's spec by chart name, for the page's script.
func (m *Model) SpecsJSON() (template.JS, error) {
	specs := map[string]*ChartSpec{}
	for _, c := range m.Charts() {
		if c.Spec != nil {
			specs[c.Name] = c.Spec
		}
	}
	b, err := json.Marshal(specs) // escapes <, > and & for a script element
	if err != nil {
		return "", err
	}
	return template.JS(b), nil
}
