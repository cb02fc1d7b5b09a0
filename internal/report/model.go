package report

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// Kind is the shape of an experiment.
type Kind string

const (
	// KindSweep: every point has a mode and a tenant count; charts are
	// drawn against the tenant count, one line per mode.
	KindSweep Kind = "sweep"
	// KindVariants: any other matrix (hash iterations, Keycloak
	// versions…); charts are bars per workload and variant.
	KindVariants Kind = "variants"
)

// Model is a report, built from result files by Build and rendered by
// WriteHTML, WriteMarkdown and Write.
type Model struct {
	Experiment string
	Kind       Kind
	Points     int    // point folders read (repeats included)
	Configs    int    // points that differ by more than their repeat
	Machine    string // where the points ran
	Versions   string // Keycloak, Java, PostgreSQL, kcbench
	LoadModel  string // open, closed, or both
	// Answer is the first screen: a few sentences and one table.
	Answer Answer
	// Verdict is what the data says in full, in sentences with figures
	// generated from it: one click below the answer.
	Verdict []Sentence
	// Sizing is a sizing estimate from the measured costs, as preformatted
	// text; the caller (which may import sizing) fills it before Write.
	Sizing string
	// Live marks the live dashboard's page: a status instead of the
	// verdict, charts fed from live.json.
	Live bool
	// IndexPage makes the page an index of the results folders in Index.
	IndexPage bool
	Index     []IndexEntry
	Notes     []string
	Sections  []Section // chart sections
	Tables    []Table
}

// Section is a group of charts.
type Section struct {
	Title    string
	PerPoint bool // the over-time charts of one point
	Charts   []Chart
}

// Chart is one PNG chart.
type Chart struct {
	Name    string // file stem: charts/<Name>.png
	Title   string
	Caption string // machine, versions and load model
	Width   int    // pixels
	Height  int
	PNG     []byte
	Spec    *ChartSpec // the interactive chart in report.html
}

// File is the chart's path relative to the report.
func (c Chart) File() string { return "charts/" + c.Name + ".png" }

// DataURI is the chart as a data: URI, for a self-contained HTML page.
func (c Chart) DataURI() string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(c.PNG)
}

// SrcAttr is the img src attribute holding DataURI. Base64 needs no
// escaping in an attribute; as a plain URL html/template would escape
// every "+" into "&#43;".
func (c Chart) SrcAttr() template.HTMLAttr {
	return template.HTMLAttr(`src="` + c.DataURI() + `"`)
}

// Table is one table of the report.
type Table struct {
	Title   string
	Caption string
	Header  []string
	Rows    [][]string
}

// Charts returns every chart, section by section.
func (m *Model) Charts() []Chart {
	var cs []Chart
	for _, s := range m.Sections {
		cs = append(cs, s.Charts...)
	}
	return cs
}

// Build reads the results in dir (an experiment folder of point folders,
// or one point folder) and builds the report: aggregates, tables and
// charts. Charts that lack data are left out with a note.
func Build(ctx context.Context, dir string) (*Model, error) {
	if m, err := buildCapacity(ctx, dir); m != nil || err != nil {
		return m, err // capacity searches (capacity.go)
	}
	e, err := loadExperiment(dir)
	if err != nil {
		return nil, err
	}
	b := &builder{ctx: ctx, e: e, m: &Model{
		Experiment: e.name,
		Kind:       KindVariants,
		Points:     len(e.points),
		Configs:    len(e.configs),
		Machine:    machineText(e.points),
		Versions:   versionsText(e.points),
		LoadModel:  experimentModels(e.points),
	}}
	if e.sweep {
		b.m.Kind = KindSweep
	}
	b.refsDrawn = map[int]bool{}
	if n := e.loadReferences(); n != "" {
		b.note("%s", n)
	}
	b.statusNotes()
	b.experimentVerdict()
	switch {
	case !e.hasWorkloads():
		// Capacity searches only: their sections below say it all.
		b.variantTables()
	case e.sweep && len(sortedTenants(e.configs)) >= 3:
		b.sweepCharts()
		b.sweepTables()
	case e.sweep:
		// fewer than three tenant counts draw no useful line over N:
		// compare the lines as grouped bars per workload (and, where
		// latency was injected, draw it against the round trip: an
		// experiment's points all have a mode and a tenant count)
		b.variantCharts()
		b.latencyCharts()
		b.sweepTables()
	default:
		b.variantCharts()
		b.latencyCharts()
		b.variantTables()
	}
	if e.hasWorkloads() {
		b.pointCharts()
	}
	if err := b.pointCapacity(); err != nil {
		return nil, err
	}
	b.experimentAnswer()
	b.referenceTable()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return b.m, nil
}

type builder struct {
	ctx     context.Context
	e       *experiment
	m       *Model
	section *Section
	// published figures: which were drawn, and their comparison rows
	refsDrawn map[int]bool
	refRows   [][]string
	// the capacity searches the experiment's points ran
	pointRuns []*capacityRun
}

func (b *builder) note(format string, args ...any) {
	b.m.Notes = append(b.m.Notes, fmt.Sprintf(format, args...))
}

func (b *builder) startSection(title string, perPoint bool) {
	b.m.Sections = append(b.m.Sections, Section{Title: title, PerPoint: perPoint})
	b.section = &b.m.Sections[len(b.m.Sections)-1]
}

// caption is the subtitle every chart carries.
func (b *builder) caption(ps []*results.Point, models []string) []string {
	return []string{machineText(ps), versionsText(ps) + " · " + modelsText(models)}
}

// add renders a chart into the current section, or notes why not.
func (b *builder) add(name, title string, sub []string, r renderer) {
	if b.ctx.Err() != nil {
		return
	}
	if lc, ok := r.(lineChart); ok && b.e != nil && len(b.e.refs) > 0 {
		r = b.withReferences(name, title, lc)
	}
	png, err := r.render()
	if err != nil {
		if errors.Is(err, errNoData) {
			b.note("Chart %q left out: no data.", title)
		} else {
			b.note("Chart %q left out: %v.", title, err)
		}
		return
	}
	if len(b.m.Sections) == 0 {
		b.startSection("Charts", false)
	}
	b.section.Charts = append(b.section.Charts, Chart{
		Name: name, Title: title, Caption: strings.Join(sub, "; "),
		Width: ChartWidth, Height: ChartHeight, PNG: png, Spec: r.spec(),
	})
}

// renderer is a chart description that can draw itself as a PNG.
type renderer interface {
	render() ([]byte, error)
	spec() *ChartSpec
}

func (c lineChart) render() ([]byte, error) {
	p, err := c.plot()
	if err != nil {
		return nil, err
	}
	return renderPNG(p)
}

func (c barChart) render() ([]byte, error) {
	p, err := c.plot()
	if err != nil {
		return nil, err
	}
	return renderPNG(p)
}

func (b *builder) statusNotes() {
	var unobserved, unread []string
	for _, p := range b.e.points {
		for _, w := range p.Summary.Workloads {
			if w.Database == nil {
				continue
			}
			for _, u := range w.Database.Unread {
				if s := u.String(); !slices.Contains(unread, s) {
					unread = append(unread, s)
				}
			}
		}
		switch st := p.Summary.Status; st {
		case results.StatusDone, "":
		default:
			msg := fmt.Sprintf("Point %s is %s", p.Manifest.Point, st)
			if p.Summary.Reason != "" {
				msg += ": " + p.Summary.Reason
			}
			b.note("%s; it is listed in the tables but left out of the figures.", msg)
		}
		for _, u := range p.Summary.Unobserved {
			if !slices.Contains(unobserved, u) {
				unobserved = append(unobserved, u)
			}
		}
	}
	if len(unobserved) > 0 {
		b.note("Not observed: %s.", strings.Join(unobserved, "; "))
	}
	if len(unread) > 0 {
		b.note("Database figures missing (the database refused its statistics): %s.", strings.Join(unread, "; "))
	}
}

// sweepMetric is a workload figure drawn against the tenant count.
type sweepMetric struct {
	name      string
	title     string
	yLabel    string
	scenarios []string
	phases    []string // preferred phases, first found wins
	stat      func(*wlAgg) Stat
	logY      bool
}

func (b *builder) sweepCharts() {
	b.startSection("Tenant sweep", false)
	thr := func(w *wlAgg) Stat { return w.throughput }
	p95 := func(w *wlAgg) Stat { return w.p95 }
	mx := func(w *wlAgg) Stat { return w.max }
	anyPhase := []string{results.PhaseWarm, "", results.PhaseCold}
	for _, sm := range []sweepMetric{
		{"sweep-admin-api-throughput", "Admin API throughput vs tenants", "iterations/s (log)", []string{results.ScenarioAdminAPI}, anyPhase, thr, true},
		{"sweep-admin-api-p95", "Admin API p95 latency vs tenants", "p95 ms", []string{results.ScenarioAdminAPI}, anyPhase, p95, false},
		{"sweep-token-throughput", "Token issuance throughput vs tenants", "tokens/s", []string{results.ScenarioPasswordGrant, results.ScenarioClientCredentials}, []string{results.PhaseWarm, ""}, thr, false},
		{"sweep-token-max-latency", "Token issuance max latency vs tenants", "max ms", []string{results.ScenarioPasswordGrant, results.ScenarioClientCredentials}, []string{results.PhaseCold}, mx, false},
		{"sweep-jwks-throughput", "JWKS throughput vs tenants", "requests/s", []string{results.ScenarioJWKS}, anyPhase, thr, false},
	} {
		b.sweepWorkloadChart(sm)
	}
	b.sweepPointChart("sweep-rss-at-ready", "Keycloak RSS at ready vs tenants", "MiB",
		func(c *config, _ map[string]map[int]float64) (float64, bool) {
			s := c.pointFigures().rssMiB
			return s.Mean, s.Known()
		})
	if b.e.adminAPISampled() {
		// The seed time is the clone's; what provisioning through the
		// admin API costs comes from each point's sample.
		b.sweepPointChart("sweep-admin-api-provisioning", "Provisioning through the admin API vs tenants (seconds per tenant, each point's sample)", "seconds per tenant",
			func(c *config, _ map[string]map[int]float64) (float64, bool) {
				s := c.pointFigures().sampleS
				return s.Mean, s.Known()
			})
		b.sweepPointChart("sweep-seed-time", "Provisioning time through the admin API vs tenants (from empty; estimated from the samples)", "seconds",
			b.adminAPIFromEmpty)
	} else {
		b.sweepPointChart("sweep-seed-time", "Seed time vs tenants (from empty; growth steps summed)", "seconds",
			b.seedFromEmpty)
	}
	b.sweepPointChart("sweep-boot-time", "Boot time vs tenants", "seconds",
		func(c *config, _ map[string]map[int]float64) (float64, bool) {
			s := c.pointFigures().bootS
			return s.Mean, s.Known()
		})
}

// seedFromEmpty is the time to seed a point's tenants from an empty
// database: its own seed time when it seeded them all, or the sum along
// its growth chain when it grew from a smaller point of the same line.
func (b *builder) seedFromEmpty(c *config, done map[string]map[int]float64) (float64, bool) {
	pa := c.pointFigures()
	if !pa.seedS.Known() {
		return 0, false
	}
	added := int(math.Round(pa.seedAdded.Mean))
	if added >= c.tenants {
		return pa.seedS.Mean, true
	}
	prev, ok := done[c.series][c.tenants-added]
	if !ok {
		b.note("Seed time of %s left out: it grew from %d tenants, whose seed time is unknown.", c.label, c.tenants-added)
		return 0, false
	}
	return prev + pa.seedS.Mean, true
}

// adminAPISampled reports whether any point timed an admin-API sample.
func (e *experiment) adminAPISampled() bool {
	for _, c := range e.configs {
		if c.pointFigures().sampleS.Known() {
			return true
		}
	}
	return false
}

// adminAPIFromEmpty estimates the time to provision a sampled point's
// tenants from empty through the admin API: the seconds per tenant that
// the sampled points of its line measured (each at its sample's middle
// tenant), joined by straight lines (flat before the first and after the
// last), summed over tenants 1..N.
func (b *builder) adminAPIFromEmpty(c *config, _ map[string]map[int]float64) (float64, bool) {
	if !c.pointFigures().sampleS.Known() {
		return 0, false
	}
	var xs, ys []float64
	for _, o := range b.e.configs {
		pa := o.pointFigures()
		if o.series != c.series || !pa.sampleS.Known() {
			continue
		}
		xs = append(xs, float64(o.tenants)-(pa.sampleN.Mean-1)/2)
		ys = append(ys, pa.sampleS.Mean)
	}
	return sumPiecewise(xs, ys, c.tenants), true
}

// sumPiecewise is Σ f(n) for n = 1..to, where f joins the points (xs[i],
// ys[i]) by straight lines and is flat beyond the first and the last.
func sumPiecewise(xs, ys []float64, to int) float64 {
	if len(xs) == 0 || len(xs) != len(ys) {
		return 0
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	f := func(x float64) float64 {
		if x <= xs[idx[0]] {
			return ys[idx[0]]
		}
		for k := 1; k < len(idx); k++ {
			x0, x1 := xs[idx[k-1]], xs[idx[k]]
			if x <= x1 {
				if x1 == x0 {
					return ys[idx[k]]
				}
				t := (x - x0) / (x1 - x0)
				return ys[idx[k-1]] + t*(ys[idx[k]]-ys[idx[k-1]])
			}
		}
		return ys[idx[len(idx)-1]]
	}
	var s float64
	for n := 1; n <= to; n++ {
		s += f(float64(n))
	}
	return s
}

func (b *builder) tenantTicks() ([]float64, bool) {
	var ts []float64
	for _, c := range b.e.configs {
		if t := float64(c.tenants); !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	logX := len(ts) > 1 && ts[0] >= 1 && ts[len(ts)-1]/ts[0] >= 20
	return ts, logX
}

func (b *builder) sweepWorkloadChart(sm sweepMetric) {
	matches := func(w *wlAgg, phase string) bool {
		return slices.Contains(sm.scenarios, w.scenario) && w.key.phase == phase
	}
	phase, found := "", false
	for _, ph := range sm.phases {
		for _, c := range b.e.configs {
			for _, w := range c.workloads() {
				if matches(w, ph) {
					phase, found = ph, true
				}
			}
		}
		if found {
			break
		}
	}
	title := sm.title
	if !found {
		b.note("Chart %q left out: no %s workload in phase %s.", title, strings.Join(sm.scenarios, " or "), strings.Join(quoteEmpty(sm.phases), " or "))
		return
	}
	if phase != "" {
		title += " (" + phase + ")"
	}
	type lineKey struct{ series, name string }
	var keys []lineKey
	pts := map[lineKey][]xy{}
	var models []string
	var ps []*results.Point
	for _, c := range b.e.configs {
		for _, w := range c.workloads() {
			if !matches(w, phase) {
				continue
			}
			s := sm.stat(w)
			if !s.Known() {
				continue
			}
			k := lineKey{c.series, w.key.name}
			if _, ok := pts[k]; !ok {
				keys = append(keys, k)
			}
			pts[k] = append(pts[k], xy{float64(c.tenants), s.Mean})
			for _, m := range w.models {
				models = appendModelName(models, m)
			}
			ps = append(ps, c.done...)
		}
	}
	names := map[string]bool{}
	var wlNames []string
	for _, k := range keys {
		names[k.name] = true
		if !slices.Contains(wlNames, k.name) {
			wlNames = append(wlNames, k.name)
		}
	}
	var series []lineSeries
	for _, k := range keys {
		label := k.series
		if len(names) > 1 {
			label += " · " + k.name
		}
		// a line keeps its mode's colour; a second workload on the same
		// chart is dashed
		ni := slices.Index(wlNames, k.name)
		series = append(series, lineSeries{label: label, parts: [][]xy{pts[k]}, color: slices.Index(b.e.seriesNames(), k.series), dashed: ni > 0})
	}
	ticks, logX := b.tenantTicks()
	sub := b.caption(orAll(ps, b.e.points), models)
	b.add(sm.name, title, sub, lineChart{
		title: title, sub: sub, xLabel: "tenants (N)", yLabel: sm.yLabel,
		logX: logX, logY: sm.logY, xTicks: ticks, points: true, zeroY: true, series: series,
	})
}

func orAll(ps, all []*results.Point) []*results.Point {
	if len(ps) == 0 {
		return all
	}
	return ps
}

func quoteEmpty(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if s == "" {
			s = `"" (phases off)`
		}
		out[i] = s
	}
	return out
}

// sweepPointChart draws a point-level figure (seed, boot, RSS) against the
// tenant count. value gets the values already found per line and tenant
// count.
func (b *builder) sweepPointChart(name, title, yLabel string, value func(*config, map[string]map[int]float64) (float64, bool)) {
	found := map[string]map[int]float64{}
	var series []lineSeries
	var ps []*results.Point
	for _, sname := range b.e.seriesNames() {
		found[sname] = map[int]float64{}
		var line []xy
		for _, c := range b.e.configs {
			if c.series != sname {
				continue
			}
			v, ok := value(c, found)
			if !ok {
				continue
			}
			found[sname][c.tenants] = v
			line = append(line, xy{float64(c.tenants), v})
			ps = append(ps, c.done...)
		}
		if len(line) > 0 {
			series = append(series, lineSeries{label: sname, parts: [][]xy{line}, color: slices.Index(b.e.seriesNames(), sname)})
		}
	}
	ticks, logX := b.tenantTicks()
	sub := b.caption(orAll(ps, b.e.points), nil)
	b.add(name, title, sub, lineChart{
		title: title, sub: sub, xLabel: "tenants (N)", yLabel: yLabel,
		logX: logX, xTicks: ticks, points: true, zeroY: true, series: series,
	})
}

func (b *builder) variantCharts() {
	title := "Variants"
	if b.e.sweep {
		title = "Modes compared"
		if ns := sortedTenants(b.e.configs); len(ns) == 1 {
			title += fmt.Sprintf(" at N=%d", ns[0])
		}
	}
	b.startSection(title, false)
	by := "variant"
	if b.e.sweep {
		by = "mode"
	}
	keys := b.e.workloadOrder()
	groups := make([]string, len(keys))
	for i, k := range keys {
		groups[i] = k.String()
	}
	for _, vm := range []struct {
		name, title, yLabel string
		stat                func(*wlAgg) Stat
	}{
		{"variants-throughput", "Throughput per workload and " + by, "iterations/s", func(w *wlAgg) Stat { return w.throughput }},
		{"variants-p95", "p95 latency per workload and " + by, "p95 ms", func(w *wlAgg) Stat { return w.p95 }},
		{"variants-cpu-ms-per-op", "Server CPU per operation, per workload and " + by, "server CPU-ms per iteration", func(w *wlAgg) Stat { return w.cpuMs }},
		{"variants-db-cpu-ms-per-op", "Database CPU per operation, per workload and " + by, "database CPU-ms per iteration", func(w *wlAgg) Stat { return w.dbCPUMs }},
		{"variants-db-blocks-read-per-op", "Database blocks read per operation (cache misses), per workload and " + by, "blocks read per iteration", func(w *wlAgg) Stat { return w.dbBlksRead }},
		{"variants-dir-cpu-ms-per-op", "Directory (LDAP) CPU per operation, per workload and " + by, "directory CPU-ms per iteration", func(w *wlAgg) Stat { return w.dirCPUMs }},
		{"variants-mem-heap", "Keycloak's mean heap in use, per workload and " + by, "MiB", func(w *wlAgg) Stat { return w.heapMiB }},
		{"variants-mem-gc-pause", "Mean GC pause, per workload and " + by, "ms", func(w *wlAgg) Stat { return w.gcPauseMs }},
	} {
		if strings.HasPrefix(vm.name, "variants-db-") && !b.e.hasDB() || !b.e.hasStat(vm.stat) {
			continue
		}
		var bars []barSeries
		var models []string
		var ps []*results.Point
		ns := sortedTenants(b.e.configs)
		for ci, c := range b.e.configs {
			bs := barSeries{label: c.label, values: make([]float64, len(keys)), color: ci}
			if b.e.sweep {
				// a line keeps its colour; the smaller tenant count is faded
				bs.color = slices.Index(b.e.seriesNames(), c.series)
				bs.faded = len(ns) > 1 && c.tenants != ns[len(ns)-1]
				if len(ns) == 1 {
					bs.label = c.series
				}
			}
			for i := range bs.values {
				bs.values[i] = math.NaN()
			}
			for _, w := range c.workloads() {
				if s := vm.stat(w); s.Known() {
					bs.values[slices.Index(keys, w.key)] = s.Mean
					for _, m := range w.models {
						models = appendModelName(models, m)
					}
					ps = append(ps, c.done...)
				}
			}
			bars = append(bars, bs)
		}
		sub := b.caption(orAll(ps, b.e.points), models)
		if runs := b.maxRepeats(); runs > 1 {
			sub[1] += fmt.Sprintf(" · mean of up to %d repeats", runs)
		}
		b.add(vm.name, vm.title, sub, barChart{title: vm.title, sub: sub, yLabel: vm.yLabel, groups: groups, bars: bars})
	}
}

func (b *builder) maxRepeats() int {
	n := 0
	for _, c := range b.e.configs {
		n = max(n, len(c.done))
	}
	return n
}

// Counts is "3 points, 1 configuration": the point folders read and the
// configurations among them.
func (m *Model) Counts() string {
	n := func(k int, what string) string {
		if k == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", k, what)
	}
	return n(m.Points, "point") + ", " + n(m.Configs, "configuration")
}

// pointCharts draws, for every point, latency and throughput over time
// with the workloads (and phases) marked, and what the observer saw on
// the server.
func (b *builder) pointCharts() {
	var noObserve, noTimeline []string
	for _, c := range b.e.configs {
		for _, p := range c.points {
			if b.ctx.Err() != nil {
				return
			}
			id := p.Manifest.Point
			if id == "" {
				id = filepath.Base(p.Dir)
			}
			title := "Point " + id
			if label := c.label; label != "" && label != id {
				title += " (" + label
				if r := params(p)[ParamRepeat]; r != "" && len(c.points) > 1 {
					title += ", repeat " + r
				}
				title += ")"
			}
			b.startSection(title, true)
			stem := "point-" + fileSafe(id)
			var models []string
			for _, w := range p.Summary.Workloads {
				models = appendModelName(models, string(w.Stats.Model))
			}
			sub := append(b.caption([]*results.Point{p}, models), "dashed: workload start; dotted: end of the discarded warm-up")
			if !b.timelineCharts(p, id, title, stem, sub) {
				noTimeline = append(noTimeline, id)
			}
			b.percentileChart(p, id, title, stem, sub[:2])
			if b.observeCharts(p, id, title, stem, sub[:2]) {
				noObserve = append(noObserve, id)
			}
		}
	}
	if len(noTimeline) > 0 {
		b.note("No %s in point(s) %s: their latency and throughput over time are left out.", results.TimelineFile, strings.Join(noTimeline, ", "))
	}
	if len(noObserve) > 0 {
		b.note("No %s (server CPU and memory) in point(s) %s.", results.ObserveFile, strings.Join(noObserve, ", "))
	}
}

// timelineCharts draws a point's over-time charts; false when it has no
// timeline file.
func (b *builder) timelineCharts(p *results.Point, id, title, stem string, sub []string) bool {
	path := filepath.Join(p.Dir, results.TimelineFile)
	segs, err := readTimeline(path)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		b.note("Point %s: over-time charts left out: %v.", id, err)
		return true
	}
	placed, err := placeTimeline(p, segs)
	if err != nil {
		b.note("Point %s: over-time charts left out: %v.", id, err)
		return true
	}

	budget := max(60, maxTimelinePoints/max(1, len(placed)))
	p50 := lineSeries{label: "p50", color: 0}
	p95 := lineSeries{label: "p95", color: 1}
	p99 := lineSeries{label: "p99", color: 2}
	thr := lineSeries{label: "iterations/s", color: 0}
	errs := lineSeries{label: "errors/s", color: 1}
	var marks []vmark
	for _, s := range placed {
		marks = append(marks, vmark{x: s.offset, label: wlKey{s.w.Name, s.w.Phase}.String()})
		var l50, l95, l99, lt, le []xy
		warm := false
		for _, r := range s.rows {
			x := s.offset + r.end
			if r.warmup {
				warm = true
			} else if warm {
				marks = append(marks, vmark{x: s.offset + r.start, dotted: true})
				warm = false
			}
			if length := r.end - r.start; length > 0 {
				lt = append(lt, xy{x, float64(r.count) / length})
				le = append(le, xy{x, float64(r.errors) / length})
			}
			if r.count > 0 {
				l50 = append(l50, xy{x, r.p50})
				l95 = append(l95, xy{x, r.p95})
				l99 = append(l99, xy{x, r.p99})
			}
		}
		p50.raw, p95.raw, p99.raw = append(p50.raw, l50), append(p95.raw, l95), append(p99.raw, l99)
		thr.raw, errs.raw = append(thr.raw, lt), append(errs.raw, le)
		for _, ev := range s.w.Stats.Events {
			label := ev.Action
			if ev.Args != "" {
				label += " " + ev.Args
			}
			if ev.Err != "" {
				label += " (failed)"
			}
			marks = append(marks, vmark{x: s.offset + ev.At.Seconds(), label: label, event: true})
		}
		p50.parts = append(p50.parts, lttb(l50, budget))
		p95.parts = append(p95.parts, lttb(l95, budget))
		p99.parts = append(p99.parts, lttb(l99, budget))
		thr.parts = append(thr.parts, lttb(lt, budget))
		errs.parts = append(errs.parts, lttb(le, budget))
	}

	// latency on a log axis when the workloads differ by orders of magnitude
	lo, hi := math.Inf(1), 0.0
	for _, ss := range []lineSeries{p50, p99} {
		for _, part := range ss.parts {
			for _, q := range part {
				if q.y > 0 {
					lo, hi = min(lo, q.y), max(hi, q.y)
				}
			}
		}
	}
	logY := hi > 0 && hi/lo > 50
	yl := "latency ms"
	if logY {
		yl += " (log)"
	}
	const x = "seconds since the first workload started"
	lt := title + ": latency over time"
	b.add(stem+"-latency", lt, sub, lineChart{title: lt, sub: sub, xLabel: x, yLabel: yl,
		logY: logY, latency: true, series: []lineSeries{p50, p95, p99}, marks: marks, zeroY: true, headroom: true})
	tt := title + ": throughput over time"
	b.add(stem+"-throughput", tt, sub, lineChart{title: tt, sub: sub, xLabel: x, yLabel: "per second",
		series: []lineSeries{thr, errs}, marks: marks, zeroY: true, headroom: true})
	return true
}

// fileSafe turns a point id into a file name stem.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Number formats for tables.

func fmtStat(s Stat, f func(float64) string) string {
	if !s.Known() {
		return "-"
	}
	out := f(s.Mean)
	if sp, ok := s.Spread(); ok {
		out += " ±" + f(sp/2)
	}
	return out
}

func fmtFixed(prec int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', prec, 64) }
}
