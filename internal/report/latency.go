package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/kcbench/kcbench/internal/results"
)

// latencyLinks are the links kcbench injects latency on, each with the
// param that gives its round trip in milliseconds.
var latencyLinks = []struct{ name, param string }{
	{"node-node", results.ParamLatencyNodeNodeMs},
	{"node-db", results.ParamLatencyNodeDBMs},
}

// injectedMs is the round trip injected on the link whose param is
// given, 0 when none.
func injectedMs(c *config, param string) float64 {
	v, err := strconv.ParseFloat(c.params[param], 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// latencyCharts draws, for each link with injected latency and each
// workload, the p50 and p99 against the injected round trip (the Keycloak
// study's figure): one factor at a time, so a link's chart leaves out the
// points with latency on another link; a line per Keycloak version.
// Charts are named latency-<link>-<workload>; an experiment's references
// name them to put published curves beside.
func (b *builder) latencyCharts() {
	started := false
	for _, link := range latencyLinks {
		var cs []*config
		injected := false
		for _, c := range b.e.configs {
			other := false
			for _, o := range latencyLinks {
				other = other || o.param != link.param && injectedMs(c, o.param) > 0
			}
			if len(c.done) == 0 || other {
				continue
			}
			injected = injected || injectedMs(c, link.param) > 0
			cs = append(cs, c)
		}
		if !injected {
			continue
		}
		if !started {
			b.startSection("Injected latency", false)
			started = true
		}
		version := func(c *config) string { return c.done[0].Manifest.Keycloak }
		var versions []string
		var ticks []float64
		for _, c := range cs {
			if v := version(c); !slices.Contains(versions, v) {
				versions = append(versions, v)
			}
			if x := injectedMs(c, link.param); !slices.Contains(ticks, x) {
				ticks = append(ticks, x)
			}
		}
		slices.Sort(ticks)
		for _, k := range b.e.workloadOrder() {
			var series []lineSeries
			var models []string
			var ps []*results.Point
			for vi, v := range versions {
				for si, st := range []struct {
					name string
					stat func(*wlAgg) Stat
				}{{"p50", func(w *wlAgg) Stat { return w.p50 }}, {"p99", func(w *wlAgg) Stat { return w.p99 }}} {
					var line []xy
					for _, c := range cs {
						if version(c) != v {
							continue
						}
						for _, w := range c.workloads() {
							if s := st.stat(w); w.key == k && s.Known() {
								line = append(line, xy{injectedMs(c, link.param), s.Mean})
								for _, m := range w.models {
									models = appendModelName(models, m)
								}
								ps = append(ps, c.done...)
							}
						}
					}
					if len(line) == 0 {
						continue
					}
					slices.SortFunc(line, func(a, b xy) int { return cmp.Compare(a.x, b.x) })
					label := st.name
					if len(versions) > 1 {
						label = v + " " + st.name
					}
					series = append(series, lineSeries{label: label, parts: [][]xy{line}, color: 2*vi + si})
				}
			}
			if len(series) == 0 {
				continue
			}
			title := fmt.Sprintf("%s: latency vs injected %s round trip", k, link.name)
			sub := b.caption(orAll(ps, b.e.points), models)
			b.add("latency-"+link.name+"-"+fileSafe(k.String()), title, sub, lineChart{
				title: title, sub: sub, xLabel: "injected " + link.name + " round trip (ms)", yLabel: "latency ms",
				latency: true, points: true, zeroY: true, xTicks: ticks, series: series,
			})
		}
	}
}
