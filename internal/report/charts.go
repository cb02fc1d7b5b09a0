package report

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Chart size and resolution.
const (
	ChartWidth  = 900 // pixels
	ChartHeight = 450 // pixels
	chartDPI    = 96
	// maxTimelinePoints bounds the points drawn per line of an over-time
	// chart; longer timelines are downsampled with LTTB.
	maxTimelinePoints = 1200
)

// errNoData marks a chart with nothing to draw.
var errNoData = errors.New("no data")

// lineSeries is one line of a chart, in parts that are not joined.
type lineSeries struct {
	label string
	parts [][]xy
	color int // palette index; -1 picks by position
	// raw is the full-resolution data for the interactive chart when parts
	// are downsampled for the PNG.
	raw     [][]xy
	reading bool // a reference line (an SLO), not data
	dashed  bool // a second workload of the same line
}

// vmark is a vertical marker line.
type vmark struct {
	x      float64
	label  string
	dotted bool
	event  bool // an action on the system under test
	found  bool // a result (the rate at SLO)
}

type lineChart struct {
	title      string
	sub        []string
	xLabel     string
	yLabel     string
	logX, logY bool
	xTicks     []float64 // constant ticks, e.g. the tenant counts
	points     bool      // draw glyphs at the data points
	series     []lineSeries
	marks      []vmark
	zeroY      bool // a linear y axis starts at 0
	headroom   bool // leave room above the data
	latency    bool // a latency axis: the page offers log/linear
}

type barSeries struct {
	label  string
	values []float64 // one per group; NaN when missing
	color  int       // palette index; -1 picks by position
	faded  bool      // a lighter shade of its colour (a second tenant count)
}

type barChart struct {
	title  string
	sub    []string
	yLabel string
	groups []string
	bars   []barSeries
}

func newPlot(title string, sub []string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	for _, s := range sub {
		p.Title.Text += "\n" + s
	}
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Title.Padding = vg.Points(6)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.TextStyle.Font.Size = vg.Points(10)
	return p
}

func (c lineChart) plot() (*plot.Plot, error) {
	clean, r := c.clean()
	if len(clean) == 0 {
		return nil, errNoData
	}
	for _, m := range c.marks {
		if !c.logX || m.x > 0 {
			r.xmin, r.xmax = min(r.xmin, m.x), max(r.xmax, m.x)
		}
	}
	p := newPlot(c.title, c.sub)
	p.X.Label.Text, p.Y.Label.Text = c.xLabel, c.yLabel
	p.Add(plotter.NewGrid())
	// axis ranges, set explicitly so that log axes never see zero
	c.yAxis(p, &r)
	c.xAxis(p, &r)
	if err := c.drawSeries(p, clean); err != nil {
		return nil, err
	}
	if err := c.drawMarks(p, r); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = r.xmin, r.xmax, r.ymin, r.ymax
	p.Legend.Top = true
	p.Legend.Left = legendLeft(clean, r.xmin, r.xmax, r.ymin, r.ymax, c.logX, c.logY)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-6), vg.Points(-14)
	if p.Legend.Left {
		p.Legend.XOffs = vg.Points(6)
	}
	return p, nil
}

// bounds is a chart's data range, then its axes' ranges.
type bounds struct{ xmin, xmax, ymin, ymax float64 }

// clean is the chart's series without the points its axes cannot show
// (NaN, infinite, not positive on a log axis), and their range.
func (c lineChart) clean() ([]lineSeries, bounds) {
	keep := func(q xy) bool {
		if math.IsNaN(q.x) || math.IsNaN(q.y) || math.IsInf(q.x, 0) || math.IsInf(q.y, 0) {
			return false
		}
		return (!c.logX || q.x > 0) && (!c.logY || q.y > 0)
	}
	r := bounds{math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)}
	var clean []lineSeries
	for _, s := range c.series {
		cs := lineSeries{label: s.label, color: s.color, dashed: s.dashed}
		for _, part := range s.parts {
			var cp []xy
			for _, q := range part {
				if !keep(q) {
					continue
				}
				cp = append(cp, q)
				r.xmin, r.xmax = min(r.xmin, q.x), max(r.xmax, q.x)
				r.ymin, r.ymax = min(r.ymin, q.y), max(r.ymax, q.y)
			}
			if len(cp) > 0 {
				cs.parts = append(cs.parts, cp)
			}
		}
		if len(cs.parts) > 0 {
			clean = append(clean, cs)
		}
	}
	return clean, r
}

// yAxis sets the y scale and widens r's y range: room above the data
// (headroom: for the legend and the marker labels), whole decades on a
// log axis, zero at the bottom of a linear one when asked.
func (c lineChart) yAxis(p *plot.Plot, r *bounds) {
	if c.headroom {
		if c.logY {
			r.ymax *= 4
		} else {
			r.ymax += (r.ymax - min(r.ymin, 0)) * 0.2
		}
	}
	if c.logY {
		lo, hi := math.Pow10(int(math.Floor(math.Log10(r.ymin)))), math.Pow10(int(math.Ceil(math.Log10(r.ymax))))
		if hi <= lo {
			hi = lo * 10
		}
		r.ymin, r.ymax = lo, hi
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		return
	}
	if c.zeroY && r.ymin >= 0 {
		r.ymin = 0
	}
	if r.ymax <= r.ymin {
		r.ymax = r.ymin + 1
	}
	r.ymax += (r.ymax - r.ymin) * 0.08
}

// xAxis sets the x scale and ticks and pads r's x range.
func (c lineChart) xAxis(p *plot.Plot, r *bounds) {
	switch {
	case c.logX:
		if r.xmax <= r.xmin {
			r.xmin, r.xmax = r.xmin/2, r.xmax*2
		}
		r.xmin, r.xmax = r.xmin/1.25, r.xmax*1.25
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	case r.xmax <= r.xmin:
		r.xmin, r.xmax = r.xmin-1, r.xmax+1
	case len(c.xTicks) > 0:
		pad := (r.xmax - r.xmin) * 0.04
		r.xmin, r.xmax = r.xmin-pad, r.xmax+pad
	}
	if len(c.xTicks) > 0 {
		ticks := make(plot.ConstantTicks, 0, len(c.xTicks))
		for _, t := range c.xTicks {
			if !c.logX || t > 0 {
				ticks = append(ticks, plot.Tick{Value: t, Label: strconv.FormatFloat(t, 'f', -1, 64)})
			}
		}
		p.X.Tick.Marker = ticks
	}
}

// drawSeries adds the series' lines (and glyphs) and their legend entries.
func (c lineChart) drawSeries(p *plot.Plot, clean []lineSeries) error {
	for i, s := range clean {
		ci := s.color
		if ci < 0 {
			ci = i
		}
		style := draw.LineStyle{Color: paletteColor(ci), Width: vg.Points(1.5)}
		if s.dashed {
			style.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		for j, part := range s.parts {
			l, err := plotter.NewLine(toXYs(part))
			if err != nil {
				return err
			}
			l.LineStyle = style
			p.Add(l)
			var sc *plotter.Scatter
			if c.points {
				if sc, err = plotter.NewScatter(toXYs(part)); err != nil {
					return err
				}
				sc.GlyphStyle = draw.GlyphStyle{Color: paletteColor(ci), Shape: plotutil.Shape(ci), Radius: vg.Points(2.5)}
				p.Add(sc)
			}
			if j == 0 && s.label != "" {
				if sc != nil {
					p.Legend.Add(s.label, l, sc)
				} else {
					p.Legend.Add(s.label, l)
				}
			}
		}
	}
	return nil
}

// drawMarks adds the vertical markers across r's y range, labelled at
// the top.
func (c lineChart) drawMarks(p *plot.Plot, r bounds) error {
	var lbl plotter.XYLabels
	for _, m := range c.marks {
		if c.logX && m.x <= 0 {
			continue
		}
		l, err := plotter.NewLine(plotter.XYs{{X: m.x, Y: r.ymin}, {X: m.x, Y: r.ymax}})
		if err != nil {
			return err
		}
		l.LineStyle = draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
		if m.dotted {
			l.LineStyle.Color = color.Gray{Y: 160}
			l.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		}
		p.Add(l)
		if m.label != "" {
			lbl.XYs = append(lbl.XYs, plotter.XY{X: m.x, Y: r.ymax})
			lbl.Labels = append(lbl.Labels, " "+m.label)
		}
	}
	if len(lbl.Labels) == 0 {
		return nil
	}
	ls, err := plotter.NewLabels(lbl)
	if err != nil {
		return err
	}
	for i := range ls.TextStyle {
		ls.TextStyle[i].Font.Size = vg.Points(7)
		ls.TextStyle[i].YAlign = draw.YTop
		ls.TextStyle[i].XAlign = draw.XLeft
		ls.TextStyle[i].Color = color.Gray{Y: 60}
	}
	p.Add(ls)
	return nil
}

// legendLeft puts the legend in the top corner with fewer data points.
func legendLeft(ss []lineSeries, xmin, xmax, ymin, ymax float64, logX, logY bool) bool {
	norm := func(v, lo, hi float64, log bool) float64 {
		if log {
			v, lo, hi = math.Log10(v), math.Log10(lo), math.Log10(hi)
		}
		if hi == lo {
			return 0
		}
		return (v - lo) / (hi - lo)
	}
	var left, right int
	for _, s := range ss {
		for _, part := range s.parts {
			for _, q := range part {
				if norm(q.y, ymin, ymax, logY) < 0.6 {
					continue
				}
				switch x := norm(q.x, xmin, xmax, logX); {
				case x < 0.35:
					left++
				case x > 0.65:
					right++
				}
			}
		}
	}
	return left < right
}

func toXYs(pts []xy) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, q := range pts {
		out[i] = plotter.XY{X: q.x, Y: q.y}
	}
	return out
}

func (c barChart) plot() (*plot.Plot, error) {
	// drop the groups without any value
	var groups []string
	var keepIdx []int
	for g, name := range c.groups {
		for _, b := range c.bars {
			if g < len(b.values) && !math.IsNaN(b.values[g]) {
				groups = append(groups, name)
				keepIdx = append(keepIdx, g)
				break
			}
		}
	}
	if len(groups) == 0 || len(c.bars) == 0 {
		return nil, errNoData
	}
	p := newPlot(c.title, c.sub)
	p.Y.Label.Text = c.yLabel
	p.Add(plotter.NewGrid())
	// the data area is roughly the chart less the y axis; each group gets
	// one unit of the x axis, from -0.5 to len(groups)-0.5
	plotW := vg.Length(ChartWidth-90) * vg.Inch / chartDPI
	groupW := plotW / vg.Length(len(groups))
	barW := groupW * 0.75 / vg.Length(len(c.bars))
	ymax := 0.0
	for i, b := range c.bars {
		vs := make(plotter.Values, len(keepIdx))
		for j, g := range keepIdx {
			v := math.NaN()
			if g < len(b.values) {
				v = b.values[g]
			}
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				v = 0
			}
			vs[j] = v
			ymax = max(ymax, v)
		}
		bc, err := plotter.NewBarChart(vs, barW)
		if err != nil {
			return nil, err
		}
		ci := b.color
		if ci < 0 {
			ci = i
		}
		bc.Color = paletteColor(ci)
		if b.faded {
			c := paletteColor(ci).(color.RGBA)
			bc.Color = color.RGBA{uint8((int(c.R) + 2*255) / 3), uint8((int(c.G) + 2*255) / 3), uint8((int(c.B) + 2*255) / 3), 0xff}
		}
		bc.LineStyle.Width = 0
		bc.Offset = barW * (vg.Length(i) - vg.Length(len(c.bars)-1)/2)
		p.Add(bc)
		p.Legend.Add(b.label, bc)
	}
	p.NominalX(groups...)
	if len(groups) > 4 {
		p.X.Tick.Label.Rotation = math.Pi / 10
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	if ymax <= 0 {
		ymax = 1
	}
	p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
	p.Y.Min, p.Y.Max = 0, ymax*1.25
	p.Legend.Top = true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-6), vg.Points(-2)
	return p, nil
}

// renderPNG draws p at the chart size. A panic inside the plotting
// library becomes an error, so a strange chart is skipped, not fatal.
func renderPNG(p *plot.Plot) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: %v", r)
		}
	}()
	c := vgimg.NewWith(
		vgimg.UseWH(vg.Length(ChartWidth)*vg.Inch/chartDPI, vg.Length(ChartHeight)*vg.Inch/chartDPI),
		vgimg.UseDPI(chartDPI),
	)
	dc := draw.New(c)
	// The legend gets its own column right of the plot, so that it never
	// covers data.
	leg := p.Legend
	lr := leg.Rectangle(dc)
	if w := lr.Max.X - lr.Min.X; w > 0 && w < dc.Max.X/3 {
		p.Legend = plot.NewLegend()
		gap := vg.Points(8)
		p.Draw(draw.Crop(dc, 0, -(w + 2*gap), 0, 0))
		leg.Top, leg.Left = true, false
		leg.XOffs, leg.YOffs = -gap, -p.Title.TextStyle.Height(p.Title.Text)-p.Title.Padding-vg.Points(4)
		leg.Draw(dc)
	} else {
		p.Draw(dc)
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
