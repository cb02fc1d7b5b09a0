package report

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// KindCapacity: capacity searches (capacity.json), one or several (repeats,
// or the versions of a matrix); charts are drawn against the asked rate.
const KindCapacity Kind = "capacity"

// capacityParamVersion is the parameter kcbench capacity records the
// Keycloak version under.
const capacityParamVersion = "keycloak_version"

// capacityRun is one capacity.json read back.
type capacityRun struct {
	dir   string
	label string // what tells it apart from the others
	res   *results.CapacityResult
}

// buildCapacity builds the report of dir when it holds capacity searches:
// a capacity.json, or subfolders with one and no experiment point among
// them. It returns nil, nil for any other folder.
func buildCapacity(ctx context.Context, dir string) (*Model, error) {
	if _, err := os.Stat(filepath.Join(dir, results.SummaryFile)); err == nil {
		return nil, nil
	}
	dirs, err := results.FindCapacityDirs(dir)
	if err != nil || len(dirs) == 0 {
		return nil, nil // not a capacity folder; Build says what it is
	}
	if points, _ := filepath.Glob(filepath.Join(dir, "*", results.SummaryFile)); len(points) > 0 {
		return nil, nil
	}
	var runs []*capacityRun
	for _, d := range dirs {
		r, err := results.ReadCapacityDir(d)
		if err != nil {
			return nil, fmt.Errorf("results %s: %w", dir, err)
		}
		runs = append(runs, &capacityRun{dir: d, res: r})
	}
	labelCapacityRuns(runs)
	rep, repErr := results.ReadCapacityRepeats(dir)
	m := &Model{
		Experiment: filepath.Base(filepath.Clean(dir)),
		Kind:       KindCapacity,
		Points:     len(runs),
		Configs:    len(runs),
		Machine:    capacityMachine(runs),
		Versions:   capacityVersions(runs),
		LoadModel:  "open (constant-arrival-rate steps; latency from each arrival's intended start)",
	}
	b := &builder{ctx: ctx, m: m}
	var repeats *results.CapacityRepeats // when the folder is one search's repeats
	switch {
	case repErr == nil && len(rep.Repeats) != len(runs):
		b.note("The spread of the repeats is left out: %s lists %d searches, the folder holds %d (a repeats.json of an earlier run?)",
			results.RepeatsFile, len(rep.Repeats), len(runs))
	case repErr == nil:
		// kcbench capacity --repeats: one configuration, searched again
		// and again; the spread first, then each search.
		m.Configs = 1
		repeats = rep
		b.capacityRepeatsVerdict(rep)
	case !errors.Is(repErr, os.ErrNotExist):
		b.note("The spread of the repeats is left out: %v", repErr)
	}
	b.capacityVerdict(runs)
	b.capacityAnswer(runs, repeats, true)
	b.capacityOverview(runs)
	for _, r := range runs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		b.capacityCharts(r)
	}
	b.capacityTables(runs)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// capacityRepeatsVerdict says the repeats' spread as kcbench capacity
// --repeats printed it: each repeat's rate, their mean and spread, and
// what the answers moved with.
func (b *builder) capacityRepeatsVerdict(rep *results.CapacityRepeats) {
	var buf strings.Builder
	if err := rep.WriteText(&buf); err != nil {
		return
	}
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		if line != "" {
			b.say(new(sentence).t("%s%s.", strings.ToUpper(line[:1]), line[1:]))
		}
	}
}

// pointCapacity adds the capacity searches the experiment's points ran
// (summary.json's capacity, each in its folder): the max rate at SLO of
// every search side by side, then each search's steps.
func (b *builder) pointCapacity() error {
	var runs []*capacityRun
	for _, p := range b.e.points {
		for _, c := range p.Summary.Capacity {
			d := filepath.Join(p.Dir, c.Dir)
			r, err := results.ReadCapacityDir(d)
			if err != nil {
				b.note("Point %s: capacity search %s unreadable: %v", p.Manifest.Point, c.Name, err)
				continue
			}
			runs = append(runs, &capacityRun{dir: d, res: r, label: p.Manifest.Point + " · " + c.Name})
		}
	}
	if len(runs) == 0 {
		return nil
	}
	b.pointRuns = runs
	b.capacityVerdict(runs)
	b.capacityOverview(runs)
	for _, r := range runs {
		if err := b.ctx.Err(); err != nil {
			return err
		}
		b.capacityCharts(r)
	}
	b.capacityTables(runs)
	return nil
}

// labelCapacityRuns labels each run by scenario and the params that differ
// between runs (e.g. the Keycloak version of a matrix, or the repeat).
func labelCapacityRuns(runs []*capacityRun) {
	varying := map[string]bool{}
	for _, r := range runs {
		for k, v := range r.res.Params {
			for _, o := range runs {
				if o.res.Params[k] != v {
					varying[k] = true
				}
			}
		}
	}
	scenarios := map[string]bool{}
	for _, r := range runs {
		scenarios[r.res.Scenario] = true
	}
	for _, r := range runs {
		var parts []string
		if len(scenarios) > 1 || len(varying) == 0 {
			parts = append(parts, r.res.Scenario)
		}
		for _, k := range slices.Sorted(maps.Keys(varying)) {
			if v := r.res.Params[k]; v != "" {
				if k == capacityParamVersion {
					parts = append(parts, "Keycloak "+v)
				} else {
					parts = append(parts, k+" "+v)
				}
			}
		}
		r.label = strings.Join(parts, " · ")
		if r.label == "" {
			r.label = filepath.Base(r.dir)
		}
	}
}

func capacityMachine(runs []*capacityRun) string {
	var cores []string
	for _, r := range runs {
		if c := r.res.Params["machine_cores"]; c != "" && !slices.Contains(cores, c) {
			cores = append(cores, c)
		}
	}
	if len(cores) == 0 {
		return "unknown machine"
	}
	return strings.Join(cores, ", ") + " cores (load generator and server on the same machine unless the target was external)"
}

func capacityVersions(runs []*capacityRun) string {
	var vs []string
	for _, r := range runs {
		if v := r.res.Params[capacityParamVersion]; v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "Keycloak version not recorded"
	}
	return "Keycloak " + strings.Join(vs, ", ")
}

// capacityOverview draws, for several runs, the max rate at SLO and the
// CPU per operation side by side.
func (b *builder) capacityOverview(runs []*capacityRun) {
	if len(runs) < 2 {
		return
	}
	b.startSection("Capacity at SLO", false)
	var scen []string
	for _, r := range runs {
		if !slices.Contains(scen, r.res.Scenario) {
			scen = append(scen, r.res.Scenario)
		}
	}
	sub := []string{b.m.Machine, b.m.Versions + " · " + capacitySLOText(runs)}
	for _, c := range []struct {
		name, title, yLabel string
		value               func(*results.CapacityResult) float64
	}{
		{"capacity-max-rate", "Highest rate meeting every SLO", "iterations/s", func(r *results.CapacityResult) float64 { return r.MaxRate }},
		{"capacity-cpu-ms-per-op", "Server CPU per operation at that rate", "server CPU-ms per iteration", func(r *results.CapacityResult) float64 { return r.CPUMsPerOp }},
		{"capacity-db-cpu-ms-per-op", "Database CPU per operation at that rate", "database CPU-ms per iteration", atMax(dbCPUMs)},
		{"capacity-dir-cpu-ms-per-op", "Directory (LDAP) CPU per operation at that rate", "directory CPU-ms per iteration", atMax(dirCPUMs)},
	} {
		if c.name != "capacity-max-rate" && c.name != "capacity-cpu-ms-per-op" && !slices.ContainsFunc(runs, func(r *capacityRun) bool { return c.value(r.res) > 0 }) {
			continue // no search measured it
		}
		var bars []barSeries
		for _, r := range runs {
			bs := barSeries{label: r.label, values: make([]float64, len(scen)), color: -1}
			for i := range bs.values {
				bs.values[i] = math.NaN()
			}
			if v := c.value(r.res); v > 0 {
				bs.values[slices.Index(scen, r.res.Scenario)] = v
			}
			bars = append(bars, bs)
		}
		b.add(c.name, c.title, sub, barChart{title: c.title, sub: sub, yLabel: c.yLabel, groups: scen, bars: bars})
	}
}

func capacitySLOText(runs []*capacityRun) string {
	var ss []string
	for _, r := range runs {
		if s := results.FormatSLOs(r.res.SLOs); !slices.Contains(ss, s) {
			ss = append(ss, s)
		}
	}
	return "SLOs " + strings.Join(ss, " / ")
}

// capacityCharts draws one search: latency against the asked rate with
// the latency SLOs as horizontal lines, and the achieved rate against the
// asked one; the highest rate that met every SLO is marked.
func (b *builder) capacityCharts(r *capacityRun) {
	res := r.res
	b.startSection("Capacity search: "+r.label, false)
	steps := slices.Clone(res.Steps)
	steps = slices.DeleteFunc(steps, func(s results.CapacityStep) bool { return s.Phase == results.StepWarmup })
	slices.SortStableFunc(steps, func(a, c results.CapacityStep) int {
		switch {
		case a.Rate < c.Rate:
			return -1
		case a.Rate > c.Rate:
			return 1
		}
		return 0
	})
	var p50, p95, p99, achieved, asked, floor []xy
	var ticks []float64
	lo, hi := math.Inf(1), 0.0
	for _, s := range steps {
		p50 = append(p50, xy{s.Rate, s.P50})
		p95 = append(p95, xy{s.Rate, s.P95})
		p99 = append(p99, xy{s.Rate, s.P99})
		achieved = append(achieved, xy{s.Rate, s.Achieved})
		if !slices.Contains(ticks, s.Rate) {
			ticks = append(ticks, s.Rate)
		}
		for _, v := range []float64{s.P50, s.P99} {
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if len(steps) == 0 {
		b.note("Capacity search %s: no judged step; charts left out.", r.label)
		return
	}
	xmin, xmax := steps[0].Rate, steps[len(steps)-1].Rate
	asked = []xy{{xmin, xmin}, {xmax, xmax}}
	frac := results.DefaultMinAchieved
	if res.Settings.MinAchieved > 0 {
		frac = res.Settings.MinAchieved / 100
	}
	floor = []xy{{xmin, xmin * frac}, {xmax, xmax * frac}}
	series := []lineSeries{{label: "p50", parts: [][]xy{p50}, color: 0}, {label: "p95", parts: [][]xy{p95}, color: 1}, {label: "p99", parts: [][]xy{p99}, color: 2}}
	for i, t := range res.SLOs {
		if t.Unit() != results.UnitMillis || (t.Op != "" && t.Op != results.IterationOp) {
			continue
		}
		series = append(series, lineSeries{label: "SLO " + t.String(), parts: [][]xy{{{xmin, t.Limit}, {xmax, t.Limit}}}, color: 3 + i, reading: true})
		lo, hi = min(lo, t.Limit), max(hi, t.Limit)
	}
	var marks []vmark
	if res.Found {
		marks = append(marks, vmark{x: res.MaxRate, label: "max at SLO " + strconv.FormatFloat(res.MaxRate, 'g', -1, 64) + "/s", found: true})
	}
	logY := hi > 0 && hi/lo > 50
	yl := "latency ms"
	if logY {
		yl += " (log)"
	}
	if len(ticks) > 12 {
		ticks = nil
	}
	stem := "capacity-" + fileSafe(r.label)
	sub := []string{b.m.Machine, capacityVersionOf(res) + " · SLOs " + results.FormatSLOs(res.SLOs) + " · " + capacityFinding(res)}
	title := r.label + ": latency against the asked rate"
	b.add(stem+"-latency", title, sub, lineChart{title: title, sub: sub, xLabel: "asked rate (iterations/s)", yLabel: yl,
		logY: logY, latency: true, xTicks: ticks, points: true, zeroY: true, headroom: true, series: series, marks: marks})
	title = r.label + ": achieved against the asked rate"
	b.add(stem+"-rate", title, sub, lineChart{title: title, sub: sub, xLabel: "asked rate (iterations/s)", yLabel: "iterations/s",
		xTicks: ticks, points: true, zeroY: true, headroom: true, marks: marks, series: []lineSeries{
			{label: "achieved", parts: [][]xy{achieved}, color: 0},
			{label: "asked", parts: [][]xy{asked}, color: 2},
			{label: strconv.FormatFloat(100*frac, 'g', -1, 64) + "% of asked (pass floor)", parts: [][]xy{floor}, color: 4},
		}})
}

// capacityFinding is the result in a few words, for a chart's subtitle.
func capacityFinding(r *results.CapacityResult) string {
	switch {
	case !r.Found:
		return "no rate met the SLOs"
	case r.Capped:
		return fmt.Sprintf("≥ %g/s (capped)", r.MaxRate)
	case r.FirstFailedRate > 0:
		return fmt.Sprintf("max %g/s, %g/s failed", r.MaxRate, r.FirstFailedRate)
	}
	return fmt.Sprintf("max %g/s", r.MaxRate)
}

func capacityVersionOf(r *results.CapacityResult) string {
	if v := r.Params[capacityParamVersion]; v != "" {
		return "Keycloak " + v
	}
	return "Keycloak version not recorded"
}

// capacityTables lists the results (with p99 at the highest ramp rate
// they all passed) and every step of every search.
func (b *builder) capacityTables(runs []*capacityRun) {
	all := make([]*results.CapacityResult, len(runs))
	for i, r := range runs {
		all[i] = r.res
	}
	common, haveCommon := results.CommonRate(all)
	header := []string{"search", "scenario", "SLOs", "max rate at SLO /s", "first failed /s", "achieved /s", "p99 ms", "CPU-ms/op", "ops/s per vCPU"}
	if haveCommon && len(runs) > 1 {
		header = append(header, fmt.Sprintf("p99 @ %g/s ms", common))
	}
	db := slices.ContainsFunc(all, func(r *results.CapacityResult) bool { return atMax(dbCPUMs)(r) > 0 })
	dir := slices.ContainsFunc(all, func(r *results.CapacityResult) bool { return atMax(dirCPUMs)(r) > 0 })
	if db {
		header = append(header, "DB CPU-ms/op")
	}
	if dir {
		header = append(header, "directory CPU-ms/op")
	}
	header = append(header, "boot s", "RSS at ready MiB", "peak RSS MiB")
	t := Table{Title: "Capacity", Header: header,
		Caption: "The highest asked rate at which every SLO held and the step achieved ≥ 95% of it, dropped < 1% and completed the minimum successful iterations. CPU is the server process's own, at that rate."}
	for _, r := range runs {
		res := r.res
		rate := "none"
		if res.Found {
			rate = strconv.FormatFloat(res.MaxRate, 'g', -1, 64)
			if res.Capped {
				rate = "≥ " + rate
			}
		}
		row := []string{r.label, res.Scenario, results.FormatSLOs(res.SLOs), rate, optNum(res.FirstFailedRate, fmtG),
			optNum(res.Achieved, fmtFixed(1)), optNum(res.P99, results.FormatMs), optNum(res.CPUMsPerOp, fmtFixed(2)), optNum(res.OpsPerCPUSecond, fmtFixed(0))}
		if haveCommon && len(runs) > 1 {
			v := "-"
			if s := res.StepAt(common); s != nil {
				v = results.FormatMs(s.P99)
			}
			row = append(row, v)
		}
		if db {
			row = append(row, optNum(atMax(dbCPUMs)(res), fmtFixed(3)))
		}
		if dir {
			row = append(row, optNum(atMax(dirCPUMs)(res), fmtFixed(3)))
		}
		row = append(row, optNum(res.BootSeconds, fmtFixed(1)), optNum(float64(res.RSSAtReadyBytes)/mib, fmtFixed(0)), optNum(float64(res.MaxRSSBytes)/mib, fmtFixed(0)))
		t.Rows = append(t.Rows, row)
		if !res.Found || res.Capped {
			b.note("%s: %s", r.label, res.Conclusion)
		}
	}
	b.m.Tables = append(b.m.Tables, t)
	for _, r := range runs {
		st := Table{Title: "Steps: " + r.label, Caption: r.res.Conclusion,
			Header: []string{"step", "phase", "asked /s", "achieved /s", "dropped", "errors %", "p50 ms", "p95 ms", "p99 ms", "max ms", "CPU-ms/op", "RSS MiB", "verdict"}}
		for _, s := range r.res.Steps {
			v := s.Verdict()
			st.Rows = append(st.Rows, []string{strconv.Itoa(s.Index), s.Phase, fmtG(s.Rate), fmtFixed(1)(s.Achieved), strconv.FormatInt(s.Dropped, 10),
				fmtFixed(2)(s.ErrorPct), results.FormatMs(s.P50), results.FormatMs(s.P95), results.FormatMs(s.P99), results.FormatMs(s.Max), optNum(s.CPUMsPerOp, fmtFixed(2)),
				optNum(float64(s.RSSBytes)/mib, fmtFixed(0)), v})
		}
		b.m.Tables = append(b.m.Tables, st)
		nt, err := nodeTable(r.dir, r.label)
		if err != nil {
			b.note("%s: per-node figures unreadable: %v", r.label, err)
		} else if nt != nil {
			b.m.Tables = append(b.m.Tables, *nt)
		}
	}
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// atMax reads a figure of the step at a search's max rate at SLO (0 when
// none was found or the step lacks it): the cost per operation split by
// process that goes with the capacity.
func atMax(f func(*results.CapacityStep) float64) func(*results.CapacityResult) float64 {
	return func(r *results.CapacityResult) float64 {
		if !r.Found {
			return 0
		}
		if s := r.StepAt(r.MaxRate); s != nil {
			return f(s)
		}
		return 0
	}
}

// dbCPUMs is the database's CPU-ms per operation of a step (PostgreSQL's
// or MariaDB's process tree).
func dbCPUMs(s *results.CapacityStep) float64 {
	if d := s.Database; d != nil && d.Available && d.CPUMeasured {
		return d.CPUMsPerOp
	}
	return 0
}

// dirCPUMs is the LDAP directory's CPU-ms per operation of a step.
func dirCPUMs(s *results.CapacityStep) float64 {
	if d := s.Directory; d != nil && d.Available {
		return d.CPUMsPerOp
	}
	return 0
}

// optNum formats v, or "-" when it is not positive (unknown).
func optNum(v float64, f func(float64) string) string {
	if !(v > 0) {
		return "-"
	}
	return f(v)
}
