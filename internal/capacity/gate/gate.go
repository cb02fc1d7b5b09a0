// Package gate compares two sets of results, a baseline and a current
// one, scenario by scenario, and says whether the current one regressed:
// the check a CI job runs after a benchmark (kcbench gate).
//
// It reads three kinds of result folders, each optionally holding repeats
// in subfolders: capacity searches (capacity.json, internal/capacity),
// experiment results (point folders, internal/results) and fixed-rate
// load runs (`kcbench load --out`: summary.json alone). A figure regresses
// when it moves in the bad direction by more than the allowed share AND
// by more than the run-to-run spread (max − min) of the repeats on either
// side; latencies must also move by more than a small absolute floor, as
// a few milliseconds of loopback jitter are not a regression.
//
// For capacity searches the figures are the max rate at SLO, p95 and p99
// at the highest ramp rate every search of both sides passed (the same
// asked rate, like for like), and CPU-ms per op at each search's best
// step (near saturation, where the server's idle work weighs least).
//
// gate imports capacity, results and load; it must not import the stages
// that drive a server (stack, kc, dataset, scenario, experiment).
package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/results"
)

// Defaults of Options.
const (
	// DefaultMaxRegressionPct is the share a figure may worsen by.
	DefaultMaxRegressionPct = 10.0
	// DefaultMinLatencyDeltaMs: latency changes smaller than this are
	// never regressions (loopback jitter of short steps on a shared box).
	DefaultMinLatencyDeltaMs = 2.0
)

// Verdicts of a row.
const (
	VerdictOK         = "ok"         // within the allowed change
	VerdictRegression = "REGRESSION" // worse beyond the threshold and the spread
	VerdictImproved   = "improved"   // better beyond the threshold and the spread
	VerdictNoise      = "noise"      // beyond the threshold but within the spread (or the latency floor)
)

// Source kinds.
const (
	SourceCapacity   = "capacity"
	SourceExperiment = "experiment"
	SourceLoad       = "load"
)

// Kinds of runs: a capacity search, or a run at a fixed rate or
// concurrency (experiment workloads and load runs).
const (
	kindCapacity = "capacity"
	kindFixed    = "fixed"
)

// Metric names.
const (
	MetricMaxRate    = "max rate at SLO /s"
	MetricThroughput = "throughput /s"
	MetricP95        = "p95 ms"
	MetricP99        = "p99 ms"
	MetricCPU        = "CPU-ms/op"
)

// Options tune Compare. Zero values are taken as given: 0 % lets no
// worsening beyond the spread pass; DefaultOptions has the defaults.
type Options struct {
	MaxRegressionPct  float64 // how much a figure may worsen, in percent
	MinLatencyDeltaMs float64 // latency changes up to this are never regressions
}

// Stat is one figure over the repeats of one side.
type Stat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	N    int     `json:"n"`
}

func newStat(vs []float64) Stat {
	if len(vs) == 0 {
		return Stat{}
	}
	s := Stat{Min: vs[0], Max: vs[0], N: len(vs)}
	var sum float64
	for _, v := range vs {
		sum += v
		s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	}
	s.Mean = sum / float64(len(vs))
	return s
}

// Range is max − min of the repeats.
func (s Stat) Range() float64 { return s.Max - s.Min }

// Row is one figure of one scenario, baseline against current.
type Row struct {
	Scenario     string  `json:"scenario"`
	Config       string  `json:"config,omitempty"` // what the scenario ran with, when it tells rows apart
	Metric       string  `json:"metric"`
	HigherBetter bool    `json:"higher_is_better"`
	Baseline     Stat    `json:"baseline"`
	Current      Stat    `json:"current"`
	Delta        float64 `json:"delta"`             // current − baseline (means)
	DeltaPct     float64 `json:"delta_pct"`         // relative to the baseline
	Spread       float64 `json:"spread"`            // the larger range of the repeats of either side
	SpreadKnown  bool    `json:"spread_known"`      // a side has at least two repeats
	Verdict      string  `json:"verdict"`           // VerdictOK, VerdictRegression…
	Note         string  `json:"note,omitempty"`    //
	Threshold    float64 `json:"threshold_pct"`     // the allowed change
	Floor        float64 `json:"floor,omitempty"`   // absolute change below which it is never a regression
	Source       string  `json:"source"`            // capacity, experiment or load
	AtRate       float64 `json:"at_rate,omitempty"` // capacity: the common rate latency and CPU are read at
}

// Report is the gate's outcome.
type Report struct {
	Baseline          string   `json:"baseline"`
	Current           string   `json:"current"`
	MaxRegressionPct  float64  `json:"max_regression_pct"`
	MinLatencyDeltaMs float64  `json:"min_latency_delta_ms"`
	Rows              []Row    `json:"rows"`
	Notes             []string `json:"notes,omitempty"`
	Regressions       []string `json:"regressions"` // one line per regressed row
	Pass              bool     `json:"pass"`
}

// run is one repeat of one scenario in one configuration.
type run struct {
	key      string // kind, scenario and configuration
	kind     string // kindCapacity or kindFixed: only runs of one kind compare
	scenario string
	config   string
	source   string
	res      *results.CapacityResult // capacity
	// fixed-rate runs
	throughput, p95, p99, cpu float64
}

// side is one folder's runs grouped by key, in first-seen order.
type side struct {
	dir   string
	keys  []string
	runs  map[string][]run
	notes []string
}

func (s *side) add(r run) {
	if _, ok := s.runs[r.key]; !ok {
		s.keys = append(s.keys, r.key)
	}
	s.runs[r.key] = append(s.runs[r.key], r)
}

// ErrNoResults means a folder holds nothing the gate reads.
var ErrNoResults = errors.New("no results")

// load reads dir: a result folder itself, or a folder of them.
func loadSide(dir string) (*side, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a folder", dir)
	}
	s := &side{dir: dir, runs: map[string][]run{}}
	found, err := s.read(dir)
	if err != nil {
		return nil, err
	}
	if !found {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			if _, err := s.read(filepath.Join(dir, e.Name())); err != nil {
				return nil, err
			}
		}
	}
	if len(s.keys) == 0 {
		return nil, fmt.Errorf("%s: %w (no capacity.json, no summary.json, no folders holding one)", dir, ErrNoResults)
	}
	return s, nil
}

// read reads one result folder, reporting whether it was one.
func (s *side) read(dir string) (bool, error) {
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	switch {
	case exists(results.CapacityFile):
		r, err := results.ReadCapacityDir(dir)
		if err != nil {
			return true, err
		}
		params := withoutRepeat(r.Params)
		s.add(run{key: kindCapacity + "|" + r.Scenario + "|" + paramKey(params), kind: kindCapacity, scenario: r.Scenario,
			config: paramKey(params), source: SourceCapacity, res: r})
		return true, nil
	case exists(results.SummaryFile) && exists(results.ManifestFile):
		p, err := results.ReadPoint(dir)
		if err != nil {
			return true, err
		}
		s.addPoint(p)
		return true, nil
	case exists(results.SummaryFile):
		return true, s.readLoad(dir)
	}
	return false, nil
}

func (s *side) addPoint(p *results.Point) {
	if st := p.Summary.Status; st != results.StatusDone && st != "" {
		s.notes = append(s.notes, fmt.Sprintf("%s: point %s is %s; left out", s.dir, p.Manifest.Point, st))
		return
	}
	params := p.Summary.Params
	if len(params) == 0 {
		params = p.Manifest.Params
	}
	cfg := paramKey(withoutRepeat(params))
	for _, w := range p.Summary.Workloads {
		it, ok := w.Stats.Op(results.IterationOp)
		if !ok || it.Count == 0 {
			continue
		}
		name := w.Name
		if w.Phase != "" {
			name += " (" + w.Phase + ")"
		}
		s.add(run{key: kindFixed + "|" + name + "|" + cfg, kind: kindFixed, scenario: name, config: cfg, source: SourceExperiment,
			throughput: it.Rate, p95: ms(it.Latency.P95), p99: ms(it.Latency.P99), cpu: w.ServerCPUMsPerOp})
	}
}

// readLoad reads a `kcbench load --out` folder: the engine's summary with
// the server CPU beside it.
func (s *side) readLoad(dir string) error {
	b, err := fileutil.ReadFile(filepath.Join(dir, results.SummaryFile), fileutil.MaxResultFile)
	if err != nil {
		return err
	}
	var sum results.LoadSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, results.SummaryFile), err)
	}
	st, srv := sum.Stats, sum.ServerCPU
	it, ok := st.Op(results.IterationOp)
	if st.Scenario == "" || !ok {
		return fmt.Errorf("%s: %s is not a load summary (no scenario or iterations)", dir, results.SummaryFile)
	}
	if it.OK == 0 {
		return fmt.Errorf("%s: no iteration succeeded (%d ran, %d failed): a run that measured nothing cannot be judged", filepath.Join(dir, results.SummaryFile), it.Count, it.Errors)
	}
	if srv.PerIteration < 0 {
		return fmt.Errorf("%s: server_cpu.cpu_ms_per_iteration %v: cannot be negative", filepath.Join(dir, results.SummaryFile), srv.PerIteration)
	}
	cfg := st.Executor
	s.add(run{key: kindFixed + "|" + st.Scenario + "|" + cfg, kind: kindFixed, scenario: st.Scenario, config: cfg, source: SourceLoad,
		throughput: it.Rate, p95: ms(it.Latency.P95), p99: ms(it.Latency.P99), cpu: srv.PerIteration})
	return nil
}

func ms(d interface{ Microseconds() int64 }) float64 { return float64(d.Microseconds()) / 1000 }

func withoutRepeat(p map[string]string) map[string]string {
	out := maps.Clone(p)
	delete(out, "repeat")
	return out
}

func paramKey(p map[string]string) string {
	keys := slices.Sorted(maps.Keys(p))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + p[k]
	}
	return strings.Join(parts, ",")
}

// Compare reads the baseline and current folders and compares them
// scenario by scenario. Configurations match by scenario and parameters;
// a scenario with a single configuration on each side is compared across
// them (e.g. two Keycloak versions).
func Compare(baseline, current string, o Options) (*Report, error) {
	if o.MaxRegressionPct < 0 || o.MinLatencyDeltaMs < 0 {
		return nil, errors.New("gate: the allowed regression and the latency floor must not be negative")
	}
	a, err := loadSide(baseline)
	if err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	b, err := loadSide(current)
	if err != nil {
		return nil, fmt.Errorf("current: %w", err)
	}
	rep := &Report{Baseline: baseline, Current: current, MaxRegressionPct: o.MaxRegressionPct,
		MinLatencyDeltaMs: o.MinLatencyDeltaMs, Regressions: []string{}}
	rep.Notes = append(append(rep.Notes, a.notes...), b.notes...)

	matched := map[string]bool{}
	for _, k := range a.keys {
		if _, ok := b.runs[k]; ok {
			rep.comparePair(o, a.runs[k], b.runs[k], "")
			matched[k] = true
		}
	}
	// Per scenario, one unmatched configuration on each side: compare them.
	byScenario := func(s *side) map[string][]string {
		m := map[string][]string{}
		for _, k := range s.keys {
			if !matched[k] {
				r := s.runs[k][0]
				id := r.kind + "|" + r.scenario
				m[id] = append(m[id], k)
			}
		}
		return m
	}
	sa, sb := byScenario(a), byScenario(b)
	for _, id := range slices.Sorted(maps.Keys(sa)) {
		ka, kb := sa[id], sb[id]
		if len(ka) == 1 && len(kb) == 1 {
			ra, rb := a.runs[ka[0]], b.runs[kb[0]]
			rep.comparePair(o, ra, rb, configChange(ra[0].config, rb[0].config))
			matched[ka[0]], matched[kb[0]] = true, true
		}
	}
	for _, k := range a.keys {
		if !matched[k] {
			r := a.runs[k][0]
			rep.Notes = append(rep.Notes, fmt.Sprintf("only in the baseline: %s %s [%s]", r.source, r.scenario, r.config))
		}
	}
	for _, k := range b.keys {
		if !matched[k] {
			r := b.runs[k][0]
			rep.Notes = append(rep.Notes, fmt.Sprintf("only in the current results: %s %s [%s]", r.source, r.scenario, r.config))
		}
	}
	if len(rep.Rows) == 0 {
		return rep, fmt.Errorf("gate: nothing to compare between %s and %s: no scenario in common", baseline, current)
	}
	if slices.ContainsFunc(rep.Rows, func(r Row) bool { return !r.SpreadKnown }) {
		rep.Notes = append(rep.Notes, "some figures have a single run on each side: their run-to-run spread is unknown, so only the threshold applies (kcbench capacity --repeats N, or experiment repeats, give a spread)")
	}
	for _, r := range rep.Rows {
		if r.Verdict == VerdictRegression {
			rep.Regressions = append(rep.Regressions, fmt.Sprintf("%s: %s %s → %s (%+.1f%%)",
				r.Scenario, r.Metric, results.FormatMs(r.Baseline.Mean), results.FormatMs(r.Current.Mean), r.DeltaPct))
		}
	}
	rep.Pass = len(rep.Regressions) == 0
	return rep, nil
}

// configChange labels a comparison across configurations: the params
// that differ.
func configChange(a, b string) string {
	if a == b {
		return a
	}
	pa, pb := strings.Split(a, ","), strings.Split(b, ",")
	var diff []string
	for _, p := range pa {
		if !slices.Contains(pb, p) && p != "" {
			diff = append(diff, p)
		}
	}
	var to []string
	for _, p := range pb {
		if !slices.Contains(pa, p) && p != "" {
			to = append(to, p)
		}
	}
	return strings.Join(diff, ",") + " → " + strings.Join(to, ",")
}

// comparePair adds the rows of one scenario.
func (rep *Report) comparePair(o Options, a, b []run, config string) {
	first := a[0]
	if config == "" {
		config = first.config
	}
	add := func(metric string, higherBetter bool, va, vb []float64, floor, at float64, note string) {
		if len(va) == 0 || len(vb) == 0 {
			return
		}
		row := Row{Scenario: first.scenario, Config: config, Metric: metric, HigherBetter: higherBetter,
			Baseline: newStat(va), Current: newStat(vb), Threshold: o.MaxRegressionPct, Floor: floor,
			Source: first.source, AtRate: at, Note: note}
		row.judge()
		rep.Rows = append(rep.Rows, row)
	}
	latency := o.MinLatencyDeltaMs
	if first.kind != kindCapacity {
		get := func(rs []run, f func(run) float64) []float64 {
			var out []float64
			for _, r := range rs {
				if v := f(r); v > 0 {
					out = append(out, v)
				}
			}
			return out
		}
		add(MetricThroughput, true, get(a, func(r run) float64 { return r.throughput }), get(b, func(r run) float64 { return r.throughput }), 0, 0, "")
		add(MetricP95, false, get(a, func(r run) float64 { return r.p95 }), get(b, func(r run) float64 { return r.p95 }), latency, 0, "")
		add(MetricP99, false, get(a, func(r run) float64 { return r.p99 }), get(b, func(r run) float64 { return r.p99 }), latency, 0, "")
		add(MetricCPU, false, get(a, func(r run) float64 { return r.cpu }), get(b, func(r run) float64 { return r.cpu }), 0, 0, "")
		return
	}
	var ra, rb, all []*results.CapacityResult
	for _, r := range a {
		ra = append(ra, r.res)
	}
	for _, r := range b {
		rb = append(rb, r.res)
	}
	all = append(append(all, ra...), rb...)
	maxRates := func(rs []*results.CapacityResult) []float64 {
		var out []float64
		for _, r := range rs {
			out = append(out, r.MaxRate)
		}
		return out
	}
	note := ""
	if slices.ContainsFunc(all, func(r *results.CapacityResult) bool { return r.Capped }) {
		note = "capped: a search stopped at its maximum rate, so its figure is a lower bound"
	}
	if !slices.ContainsFunc(all, func(r *results.CapacityResult) bool { return r.Found }) {
		note = "no search met the SLOs at any rate, on either side"
	}
	add(MetricMaxRate, true, maxRates(ra), maxRates(rb), 0, 0, note)
	if !sameSLOs(all) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: the searches used different SLOs", first.scenario))
	}
	// CPU per operation at each search's best step: near saturation the
	// server's idle work is a small share of it, unlike at a low common
	// rate; it is the figure sizing uses.
	best := func(rs []*results.CapacityResult) []float64 {
		var out []float64
		for _, r := range rs {
			if r.CPUMsPerOp > 0 {
				out = append(out, r.CPUMsPerOp)
			}
		}
		return out
	}
	add(MetricCPU+" at max", false, best(ra), best(rb), 0, 0, "")
	rate, ok := results.CommonRate(all)
	at := func(rs []*results.CapacityResult, f func(*results.CapacityStep) float64) []float64 {
		var out []float64
		for _, r := range rs {
			if s := r.StepAt(rate); s != nil && f(s) > 0 {
				out = append(out, f(s))
			}
		}
		return out
	}
	if !ok {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: no ramp rate passed in every search (different start or step?); latency not compared", first.scenario))
		return
	}
	label := " @" + results.FormatMs(rate) + "/s"
	add(MetricP95+label, false, at(ra, func(s *results.CapacityStep) float64 { return s.P95 }), at(rb, func(s *results.CapacityStep) float64 { return s.P95 }), latency, rate, "")
	add(MetricP99+label, false, at(ra, func(s *results.CapacityStep) float64 { return s.P99 }), at(rb, func(s *results.CapacityStep) float64 { return s.P99 }), latency, rate, "")
}

func sameSLOs(rs []*results.CapacityResult) bool {
	for _, r := range rs[1:] {
		if results.FormatSLOs(r.SLOs) != results.FormatSLOs(rs[0].SLOs) {
			return false
		}
	}
	return true
}

// judge sets the row's delta and verdict (see Judge).
func (r *Row) judge() {
	a, b := r.Baseline, r.Current
	r.Spread = max(a.Range(), b.Range())
	r.SpreadKnown = a.N > 1 || b.N > 1
	r.Delta = b.Mean - a.Mean
	r.DeltaPct = deltaPct(a.Mean, r.Delta)
	r.Verdict = map[Verdict]string{Within: VerdictOK, Noise: VerdictNoise, Worse: VerdictRegression, Better: VerdictImproved}[Judge(a.Mean, b.Mean, r.Spread, r.Threshold, r.Floor, r.HigherBetter)]
}

// deltaPct is delta relative to base, in percent; ±Inf when base is 0.
func deltaPct(base, delta float64) float64 {
	switch {
	case base != 0:
		return 100 * delta / math.Abs(base)
	case delta != 0:
		return math.Copysign(math.Inf(1), delta)
	}
	return 0
}

// Verdict is Judge's classification of a change.
type Verdict int

// Verdicts of Judge.
const (
	Within Verdict = iota // moved by no more than the allowed share
	Noise                 // beyond the share, but within the spread of the repeats or the floor
	Worse                 // beyond the share, the spread and the floor, in the bad direction
	Better                // beyond the share, the spread and the floor, in the good direction
)

// Judge is kcbench's one regression judge: it classifies the change of a
// figure from a (the baseline's mean) to b (the current one's). The change
// is Within when it moves by no more than thresholdPct percent of a; Noise
// when it moves by no more than spread (the larger max − min of the
// repeats of either side; 0 without repeats) or floor (an absolute change
// too small to matter); else Worse or Better, as higherBetter says.
// report.Compare calls it with no threshold and no floor.
func Judge(a, b, spread, thresholdPct, floor float64, higherBetter bool) Verdict {
	delta := b - a
	// a relative epsilon absorbs floating-point residue of equal means
	beyondSpread := math.Abs(delta) > spread*(1+1e-9)+1e-12
	switch {
	case !(math.Abs(deltaPct(a, delta)) > thresholdPct):
		return Within
	case !beyondSpread || !(math.Abs(delta) > floor):
		return Noise
	case (delta < 0) == higherBetter:
		return Worse
	}
	return Better
}

// MarshalJSON writes infinite percentages (a baseline of 0) as null.
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row
	p := struct {
		plain
		DeltaPct *float64 `json:"delta_pct"`
	}{plain: plain(r)}
	if !math.IsInf(r.DeltaPct, 0) && !math.IsNaN(r.DeltaPct) {
		v := r.DeltaPct
		p.DeltaPct = &v
	}
	return json.Marshal(p)
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// WriteText writes the report as an aligned table and a verdict line.
func (rep *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "baseline: %s\ncurrent:  %s\n", rep.Baseline, rep.Current)
	fmt.Fprintf(w, "A figure regresses when it worsens by more than %g%%, by more than the spread (max − min) of the\n", rep.MaxRegressionPct)
	fmt.Fprintf(w, "repeats on either side, and (latencies) by more than %g ms. n: repeats per side.\n\n", rep.MinLatencyDeltaMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmetric\tbaseline\tcurrent\tΔ%\tspread\tn\tverdict")
	rows := slices.Clone(rep.Rows)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Scenario < rows[j].Scenario })
	for _, r := range rows {
		scen := r.Scenario
		if r.Config != "" && strings.Contains(r.Config, "→") {
			scen += " [" + r.Config + "]"
		}
		spread := "?"
		if r.SpreadKnown {
			spread = results.FormatMs(r.Spread)
		}
		pct := "-"
		if !math.IsInf(r.DeltaPct, 0) {
			pct = fmt.Sprintf("%+.1f%%", r.DeltaPct)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\n", scen, r.Metric, results.FormatMs(r.Baseline.Mean), results.FormatMs(r.Current.Mean),
			pct, spread, r.Baseline.N, r.Current.N, r.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	notes := slices.Clone(rep.Notes)
	for _, r := range rep.Rows {
		if r.Note != "" {
			notes = appendOnce(notes, r.Scenario+": "+r.Note)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if rep.Pass {
		_, err := fmt.Fprintf(w, "\ngate: PASS (%d figures compared, no regression beyond %g%%)\n", len(rep.Rows), rep.MaxRegressionPct)
		return err
	}
	_, err := fmt.Fprintf(w, "\ngate: FAIL: %d regression(s):\n  %s\n", len(rep.Regressions), strings.Join(rep.Regressions, "\n  "))
	return err
}

func appendOnce(ss []string, s string) []string {
	if slices.Contains(ss, s) {
		return ss
	}
	return append(ss, s)
}
