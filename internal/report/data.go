package report

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// Parameter names with a meaning to the report.
const (
	ParamMode    = "mode"
	ParamTenants = "tenants"
	ParamRepeat  = "repeat"
	ParamVariant = results.ParamVariant
)

const mib = 1 << 20

// experiment is a results folder read back and grouped.
type experiment struct {
	dir     string
	name    string
	points  []*results.Point
	configs []*config
	sweep   bool                // every point has a mode and a numeric tenant count
	refs    []results.Reference // published figures to draw beside
}

// config is the set of points whose params differ only by "repeat".
type config struct {
	key     string            // params without repeat, "k=v,k=v" sorted
	label   string            // for people
	params  map[string]string // without repeat
	series  string            // sweep: params without tenants, the line a point belongs to
	tenants int               // sweep: the tenant count
	points  []*results.Point  // every repeat, by repeat
	done    []*results.Point  // the repeats whose status is done
}

// loadExperiment reads dir: an experiment folder of point folders, or one
// point folder.
func loadExperiment(dir string) (*experiment, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("results folder %s: %w", dir, os.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("results %s: not a folder", dir)
	}
	var ps []*results.Point
	if _, err := os.Stat(filepath.Join(dir, results.SummaryFile)); err == nil {
		p, err := results.ReadPoint(dir)
		if err != nil {
			return nil, fmt.Errorf("results %s: %w", dir, err)
		}
		ps = []*results.Point{p}
	} else {
		ps, err = results.ReadExperiment(dir)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("results %s: incomplete point: %w", dir, err)
			}
			return nil, fmt.Errorf("results %s: %w", dir, err)
		}
	}
	e := &experiment{dir: dir, points: ps}
	for _, p := range ps {
		if p.Manifest.Experiment != "" {
			e.name = p.Manifest.Experiment
			break
		}
	}
	if e.name == "" {
		e.name = filepath.Base(filepath.Clean(dir))
	}
	e.group()
	return e, nil
}

// wallSeconds is the wall time of every point run, summed (whole seconds).
func (e *experiment) wallSeconds() int64 {
	var s float64
	for _, p := range e.points {
		s += p.Summary.Seconds
	}
	return int64(math.Round(s))
}

// hasWorkloads reports whether any point ran a fixed workload (not only
// capacity searches).
func (e *experiment) hasWorkloads() bool {
	for _, p := range e.points {
		if len(p.Summary.Workloads) > 0 {
			return true
		}
	}
	return false
}

// params returns a point's parameters: the summary's, else the manifest's.
func params(p *results.Point) map[string]string {
	if len(p.Summary.Params) > 0 {
		return p.Summary.Params
	}
	return p.Manifest.Params
}

func (e *experiment) group() {
	e.sweep = true
	byKey := map[string]*config{}
	for _, p := range e.points {
		ps := params(p)
		n, err := strconv.Atoi(ps[ParamTenants])
		if ps[ParamMode] == "" || err != nil {
			e.sweep = false
		}
		base := maps.Clone(ps)
		if base == nil {
			base = map[string]string{}
		}
		delete(base, ParamRepeat)
		// a round trip measured at start differs between repeats
		maps.DeleteFunc(base, func(k, _ string) bool { return results.MeasuredParam(k) })
		key := paramKey(base)
		c := byKey[key]
		if c == nil {
			c = &config{key: key, params: base, tenants: n}
			byKey[key] = c
			e.configs = append(e.configs, c)
		}
		c.points = append(c.points, p)
		if p.Summary.Status == results.StatusDone || p.Summary.Status == "" {
			c.done = append(c.done, p)
		}
	}
	// Labels leave out what every configuration shares (e.g. the one
	// variant of a sweep).
	same := map[string]bool{}
	if len(e.configs) > 1 {
		for k, v := range e.configs[0].params {
			same[k] = true
			for _, c := range e.configs[1:] {
				if c.params[k] != v {
					same[k] = false
				}
			}
		}
	}
	varying := func(ps map[string]string) map[string]string {
		out := maps.Clone(ps)
		maps.DeleteFunc(out, func(k, _ string) bool { return same[k] })
		if out[ParamVariant] != "" {
			// the variant sets its caches' sizes and its latency: its
			// name says them
			maps.DeleteFunc(out, func(k, _ string) bool {
				return strings.HasPrefix(k, results.ParamCachePrefix) || strings.HasPrefix(k, results.ParamLatency)
			})
		}
		if len(out) == 0 {
			if m := ps[ParamMode]; m != "" {
				return map[string]string{ParamMode: m}
			}
			return ps
		}
		return out
	}
	for _, c := range e.configs {
		sort.SliceStable(c.points, func(i, j int) bool { return repeatOf(c.points[i]) < repeatOf(c.points[j]) })
		sort.SliceStable(c.done, func(i, j int) bool { return repeatOf(c.done[i]) < repeatOf(c.done[j]) })
		if e.sweep {
			s := maps.Clone(c.params)
			delete(s, ParamTenants)
			c.series = paramLabel(varying(s))
			c.label = fmt.Sprintf("%s N=%d", c.series, c.tenants)
		} else {
			c.label = paramLabel(varying(c.params))
		}
	}
	sort.SliceStable(e.configs, func(i, j int) bool {
		a, b := e.configs[i], e.configs[j]
		if e.sweep {
			if a.series != b.series {
				return a.series < b.series
			}
			return a.tenants < b.tenants
		}
		return a.label < b.label
	})
}

func repeatOf(p *results.Point) int {
	n, _ := strconv.Atoi(params(p)[ParamRepeat])
	return n
}

// paramKey is a canonical form of ps.
func paramKey(ps map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(ps)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + ps[k])
	}
	return b.String()
}

// paramLabel names a set of params for people: a lone mode or variant is
// shown as its value, several as "k=v, k=v" (mode first).
func paramLabel(ps map[string]string) string {
	switch {
	case len(ps) == 0:
		return "all"
	case len(ps) == 1 && ps[ParamMode] != "":
		return ps[ParamMode]
	case len(ps) == 1 && ps[ParamVariant] != "":
		return ps[ParamVariant]
	}
	keys := slices.Sorted(maps.Keys(ps))
	if i := slices.Index(keys, ParamMode); i > 0 {
		keys = append([]string{ParamMode}, slices.Delete(keys, i, i+1)...)
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + ps[k]
	}
	return strings.Join(parts, ", ")
}

// Stat summarises one figure over the repeats of a configuration.
type Stat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	N    int     `json:"runs"` // repeats that had the figure
}

func statOf(vs []float64) Stat {
	s := Stat{Min: math.Inf(1), Max: math.Inf(-1)}
	var sum float64
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		sum += v
		s.Min = min(s.Min, v)
		s.Max = max(s.Max, v)
		s.N++
	}
	if s.N == 0 {
		return Stat{}
	}
	s.Mean = sum / float64(s.N)
	return s
}

// Known says whether any repeat had the figure.
func (s Stat) Known() bool { return s.N > 0 }

// Spread is the range of the repeats (max − min); it is known only with
// at least two repeats.
func (s Stat) Spread() (float64, bool) {
	if s.N < 2 {
		return 0, false
	}
	return s.Max - s.Min, true
}

// wlKey identifies a workload inside a point: its name and phase.
type wlKey struct{ name, phase string }

func (k wlKey) String() string {
	if k.phase == "" {
		return k.name
	}
	return k.phase + " " + k.name
}

// wlAgg is one workload of a configuration, over its done repeats.
type wlAgg struct {
	key      wlKey
	scenario string
	models   []string
	// figures of the whole iteration
	throughput, p50, p95, p99, max, errPct, cpuMs, rssMiB Stat
	errors                                                int64 // summed over the repeats
	// iterations cut off by the request time-out, and the longest
	// time-out in force (0: not recorded)
	timeouts     Stat
	timeoutLimit time.Duration
	// the database's work per successful iteration (summary.json's
	// database block), unknown where it was not measured
	dbCPUMs, dbXacts, dbWALKiB, dbBlksRead Stat
	// the LDAP directory's CPU per successful iteration (users in LDAP)
	dirCPUMs Stat
	// Keycloak's mean heap in use and mean GC pause during the workload
	// (observe.csv), and the confidential clients its grants drew from
	heapMiB, gcPauseMs Stat
	clientsInUse       int
	// Keycloak's heap in use after a full GC once the workload ended, and
	// how long the workload ran before Keycloak served it at its warm
	// cost (summary.json's heap_after_gc_bytes, warm_after_s)
	liveMiB, warmS Stat
}

// hasTimeouts reports whether any workload of e had requests cut off by
// the request time-out.
func (e *experiment) hasTimeouts() bool {
	for _, c := range e.configs {
		for _, w := range c.workloads() {
			if w.timeouts.Known() && w.timeouts.Max > 0 {
				return true
			}
		}
	}
	return false
}

// hasDB reports whether any workload of e has the database's cost.
func (e *experiment) hasDB() bool {
	for _, c := range e.configs {
		for _, w := range c.workloads() {
			if w.dbXacts.Known() || w.dbCPUMs.Known() || w.dbWALKiB.Known() {
				return true
			}
		}
	}
	return false
}

// hasMemory reports whether any workload of e has Keycloak's heap or GC
// pauses.
func (e *experiment) hasMemory() bool {
	return e.hasStat(func(w *wlAgg) Stat { return w.heapMiB }) || e.hasStat(func(w *wlAgg) Stat { return w.gcPauseMs })
}

// hasLiveHeapAtReady reports whether any configuration of e has Keycloak's
// heap after a full GC at ready.
func (e *experiment) hasLiveHeapAtReady() bool {
	for _, c := range e.configs {
		if c.pointFigures().liveMiB.Known() {
			return true
		}
	}
	return false
}

// hasStat reports whether any workload of e has stat.
func (e *experiment) hasStat(stat func(*wlAgg) Stat) bool {
	for _, c := range e.configs {
		for _, w := range c.workloads() {
			if stat(w).Known() {
				return true
			}
		}
	}
	return false
}

// iterationOp returns the whole-iteration figures of a workload.
func iterationOp(w *results.Workload) (results.OpStats, bool) {
	if o, ok := w.Stats.Op(results.IterationOp); ok {
		return o, true
	}
	if len(w.Stats.Ops) > 0 {
		return w.Stats.Ops[0], true
	}
	return results.OpStats{}, false
}

func msOf(d interface{ Microseconds() int64 }) float64 { return float64(d.Microseconds()) / 1000 }

// workloads aggregates the workloads of c's done repeats, in the order
// they first appear.
func (c *config) workloads() []*wlAgg {
	type acc struct {
		agg                                      *wlAgg
		thr, p50, p95, p99, mx, errPct, cpu, rss []float64
		timeouts                                 []float64
		dbCPU, dbXacts, dbWAL, dbBlks, dir       []float64
		heap, gcPause                            []float64
		live, warm                               []float64
	}
	var order []wlKey
	accs := map[wlKey]*acc{}
	for _, p := range c.done {
		for i := range p.Summary.Workloads {
			w := &p.Summary.Workloads[i]
			k := wlKey{w.Name, w.Phase}
			a := accs[k]
			if a == nil {
				sc := w.Scenario
				if sc == "" {
					sc = w.Stats.Scenario
				}
				a = &acc{agg: &wlAgg{key: k, scenario: sc}}
				accs[k] = a
				order = append(order, k)
			}
			a.agg.models = appendModelName(a.agg.models, string(w.Stats.Model))
			o, ok := iterationOp(w)
			if !ok {
				continue
			}
			a.thr = append(a.thr, o.Rate)
			if o.Count > 0 { // no operation, no latency: not a latency of 0
				a.p50 = append(a.p50, msOf(o.Latency.P50))
				a.p95 = append(a.p95, msOf(o.Latency.P95))
				a.p99 = append(a.p99, msOf(o.Latency.P99))
				a.mx = append(a.mx, msOf(o.Latency.Max))
				a.errPct = append(a.errPct, 100*o.ErrorRate())
			}
			a.agg.errors += o.Errors
			a.timeouts = append(a.timeouts, float64(w.Stats.Timeouts()))
			a.agg.timeoutLimit = max(a.agg.timeoutLimit, w.Stats.Timeout)
			if w.ServerCPUMsPerOp > 0 {
				a.cpu = append(a.cpu, w.ServerCPUMsPerOp)
			}
			if w.MaxRSSBytes > 0 {
				a.rss = append(a.rss, float64(w.MaxRSSBytes)/mib)
			}
			if w.MeanHeapBytes > 0 {
				a.heap = append(a.heap, float64(w.MeanHeapBytes)/mib)
			}
			if w.GCPauses > 0 {
				a.gcPause = append(a.gcPause, w.GCPauseMeanMs)
			}
			if w.HeapAfterGCBytes > 0 {
				a.live = append(a.live, float64(w.HeapAfterGCBytes)/mib)
			}
			if w.WarmAfterSeconds != nil {
				a.warm = append(a.warm, *w.WarmAfterSeconds)
			}
			a.agg.clientsInUse = max(a.agg.clientsInUse, w.ClientsInUse)
			if d := w.Database; d != nil && d.Available && d.Ops > 0 {
				if d.CPUMeasured {
					a.dbCPU = append(a.dbCPU, d.CPUMsPerOp)
				}
				if d.Has(results.DBViewDatabase) {
					a.dbXacts = append(a.dbXacts, d.XactsPerOp)
					a.dbBlks = append(a.dbBlks, d.BlksReadPerOp)
				}
				if d.Has(results.DBViewWAL) {
					a.dbWAL = append(a.dbWAL, d.WALBytesPerOp/1024)
				}
			}
			if d := w.Directory; d != nil && d.Available && d.Ops > 0 {
				a.dir = append(a.dir, d.CPUMsPerOp)
			}
		}
	}
	out := make([]*wlAgg, 0, len(order))
	for _, k := range order {
		a := accs[k]
		g := a.agg
		g.throughput, g.p50, g.p95, g.p99, g.max = statOf(a.thr), statOf(a.p50), statOf(a.p95), statOf(a.p99), statOf(a.mx)
		g.errPct, g.cpuMs, g.rssMiB = statOf(a.errPct), statOf(a.cpu), statOf(a.rss)
		g.timeouts = statOf(a.timeouts)
		g.dbCPUMs, g.dbXacts, g.dbWALKiB, g.dbBlksRead = statOf(a.dbCPU), statOf(a.dbXacts), statOf(a.dbWAL), statOf(a.dbBlks)
		g.dirCPUMs = statOf(a.dir)
		g.heapMiB, g.gcPauseMs = statOf(a.heap), statOf(a.gcPause)
		g.liveMiB, g.warmS = statOf(a.live), statOf(a.warm)
		out = append(out, g)
	}
	return out
}

// pointAgg is the point-level figures of a configuration.
type pointAgg struct {
	seedS, seedAdded, bootS, rssMiB, wallS Stat
	// liveMiB is Keycloak's heap in use after a full GC at ready.
	liveMiB Stat
	// sampleS is the seconds per tenant of the admin-API sample,
	// sampleN its tenants (results.Seed.AdminAPISample).
	sampleS, sampleN Stat
	restored         bool
	recorded         bool // the seed figures are a restored dataset's record
}

func (c *config) pointFigures() pointAgg {
	var seed, added, boot, rss, live, wall, sample, sampleN []float64
	var restored, recorded bool
	for _, p := range c.done {
		if p.Summary.Seconds > 0 {
			wall = append(wall, p.Summary.Seconds)
		}
		if s := p.Summary.Seed; s != nil {
			if s.Restored != "" {
				restored = true
			}
			recorded = recorded || s.Recorded
			if s.Added > 0 {
				seed = append(seed, s.Seconds)
				added = append(added, float64(s.Added))
			}
			if sm := s.AdminAPISample; sm.PerTenant() > 0 {
				sample = append(sample, sm.PerTenant())
				sampleN = append(sampleN, float64(sm.Tenants))
			}
		}
		if b := p.Summary.Boot; b != nil {
			if b.Seconds > 0 {
				boot = append(boot, b.Seconds)
			}
			if b.RSSBytes > 0 {
				rss = append(rss, float64(b.RSSBytes)/mib)
			}
			if b.HeapAfterGCBytes > 0 {
				live = append(live, float64(b.HeapAfterGCBytes)/mib)
			}
		}
	}
	return pointAgg{seedS: statOf(seed), seedAdded: statOf(added), bootS: statOf(boot), rssMiB: statOf(rss), liveMiB: statOf(live),
		wallS: statOf(wall), sampleS: statOf(sample), sampleN: statOf(sampleN), restored: restored, recorded: recorded}
}

// workloadOrder lists every workload key of the experiment in the order
// they first appear.
func (e *experiment) workloadOrder() []wlKey {
	var ks []wlKey
	for _, p := range e.points {
		for _, w := range p.Summary.Workloads {
			k := wlKey{w.Name, w.Phase}
			if !slices.Contains(ks, k) {
				ks = append(ks, k)
			}
		}
	}
	return ks
}

// seriesNames lists the sweep's lines in order.
func (e *experiment) seriesNames() []string {
	var ss []string
	for _, c := range e.configs {
		if !slices.Contains(ss, c.series) {
			ss = append(ss, c.series)
		}
	}
	return ss
}
