package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// statusText summarises the statuses of a configuration's repeats.
func statusText(c *config) string {
	var names []string
	count := map[string]int{}
	for _, p := range c.points {
		st := p.Summary.Status
		if st == "" {
			st = results.StatusDone
		}
		if count[st] == 0 {
			names = append(names, st)
		}
		count[st]++
	}
	if len(names) == 1 {
		return names[0]
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s ×%d", n, count[n])
	}
	return strings.Join(parts, ", ")
}

func runsText(c *config) string {
	if len(c.done) == len(c.points) {
		return strconv.Itoa(len(c.points))
	}
	return fmt.Sprintf("%d/%d", len(c.done), len(c.points))
}

const spreadNote = "Figures are means over the repeats; ±x is half the range (max − min) of the repeats."

func (b *builder) sweepTables() {
	first := "mode"
	for _, s := range b.e.seriesNames() {
		if strings.Contains(s, "=") {
			first = "line"
		}
	}
	t := Table{
		Title:   "Points",
		Caption: "Seed: seconds to reach N tenants at this point (tenants added); boot: restart to ready; RSS of Keycloak at ready; point: wall time of the whole point. " + spreadNote,
		Header:  []string{first, "N", "runs", "status", "seed s", "added", "boot s", "RSS at ready MiB", "point s"},
	}
	if total := b.e.wallSeconds(); total > 0 {
		t.Caption += fmt.Sprintf(" All %d point runs: %s of wall time.", len(b.e.points), (time.Duration(total) * time.Second).String())
	}
	live := b.liveAtReadyColumn(&t)
	sampled := b.e.adminAPISampled()
	if sampled {
		t.Caption += " Admin API s/tenant: the point's last tenants (their count in brackets) were made through Keycloak's admin API, one REST call per tenant, and timed; the seed time holds them and the rest, made by the clone strategy."
		t.Header = append(t.Header, "admin API s/tenant")
	}
	for _, c := range b.e.configs {
		pa := c.pointFigures()
		seed := pa.seedCell()
		row := []string{
			c.series, strconv.Itoa(c.tenants), runsText(c), statusText(c),
			seed, fmtStat(pa.seedAdded, fmtFixed(0)), fmtStat(pa.bootS, fmtFixed(1)), fmtStat(pa.rssMiB, fmtFixed(0)),
			fmtStat(pa.wallS, fmtFixed(0)),
		}
		if live {
			row = append(row, fmtStat(pa.liveMiB, fmtFixed(0)))
		}
		if sampled {
			cell := "-"
			if pa.sampleS.Known() {
				cell = fmtStat(pa.sampleS, fmtFixed(2)) + " (" + fmtStat(pa.sampleN, fmtFixed(0)) + ")"
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	b.m.Tables = append(b.m.Tables, t)
	b.workloadTables([]string{first, "N"}, func(c *config) []string { return []string{c.series, strconv.Itoa(c.tenants)} })
}

func (b *builder) variantTables() {
	t := Table{
		Title:   "Points",
		Caption: "Seed: seconds to reach the dataset at this point (tenants added); boot: restart to ready; RSS of Keycloak at ready; point: wall time of the whole point. " + spreadNote,
		Header:  []string{"variant", "runs", "status", "seed s", "added", "boot s", "RSS at ready MiB", "point s"},
	}
	live := b.liveAtReadyColumn(&t)
	for _, c := range b.e.configs {
		pa := c.pointFigures()
		seed := pa.seedCell()
		row := []string{
			c.label, runsText(c), statusText(c),
			seed, fmtStat(pa.seedAdded, fmtFixed(0)), fmtStat(pa.bootS, fmtFixed(1)), fmtStat(pa.rssMiB, fmtFixed(0)),
			fmtStat(pa.wallS, fmtFixed(0)),
		}
		if live {
			row = append(row, fmtStat(pa.liveMiB, fmtFixed(0)))
		}
		t.Rows = append(t.Rows, row)
	}
	b.m.Tables = append(b.m.Tables, t)
	b.workloadTables([]string{"variant"}, func(c *config) []string { return []string{c.label} })
}

// workloadTables adds one table per workload (name and phase), one row per
// configuration that ran it.
func (b *builder) workloadTables(head []string, key func(*config) []string) {
	for _, k := range b.e.workloadOrder() {
		var scenario string
		var models []string
		t := Table{Header: append(slices.Clone(head),
			"throughput/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors %", "CPU-ms/op", "max RSS MiB")}
		to := b.e.hasTimeouts()
		if to {
			t.Header = append(t.Header, "time-outs")
		}
		db, mem := b.e.hasDB(), b.e.hasMemory()
		if db {
			t.Header = append(t.Header, "DB CPU-ms/op", "DB xacts/op", "WAL KiB/op", "DB blocks read/op")
		}
		if mem {
			t.Header = append(t.Header, "mean heap MiB", "mean GC pause ms")
		}
		live, warm := b.e.hasStat(func(w *wlAgg) Stat { return w.liveMiB }), b.e.hasStat(func(w *wlAgg) Stat { return w.warmS })
		if live {
			t.Header = append(t.Header, "heap after GC MiB")
		}
		if warm {
			t.Header = append(t.Header, "warm after s")
		}
		for _, c := range b.e.configs {
			for _, w := range c.workloads() {
				if w.key != k {
					continue
				}
				scenario = w.scenario
				for _, m := range w.models {
					models = appendModelName(models, m)
				}
				row := append(key(c),
					fmtStat(w.throughput, fmtFixed(1)), fmtStat(w.p50, results.FormatMs), fmtStat(w.p95, results.FormatMs),
					fmtStat(w.p99, results.FormatMs), fmtStat(w.max, results.FormatMs), fmtStat(w.errPct, fmtFixed(2)),
					fmtStat(w.cpuMs, fmtFixed(2)), fmtStat(w.rssMiB, fmtFixed(0)))
				if to {
					row = append(row, timeoutText(w))
				}
				if db {
					row = append(row, fmtStat(w.dbCPUMs, fmtFixed(3)), fmtStat(w.dbXacts, fmtFixed(2)),
						fmtStat(w.dbWALKiB, fmtFixed(2)), fmtStat(w.dbBlksRead, fmtFixed(2)))
				}
				if mem {
					row = append(row, fmtStat(w.heapMiB, fmtFixed(0)), fmtStat(w.gcPauseMs, fmtFixed(2)))
				}
				if live {
					row = append(row, fmtStat(w.liveMiB, fmtFixed(0)))
				}
				if warm {
					row = append(row, fmtStat(w.warmS, fmtFixed(0)))
				}
				t.Rows = append(t.Rows, row)
			}
		}
		if len(t.Rows) == 0 {
			continue // only in points that did not finish
		}
		t.Title = "Workload " + k.String()
		t.Caption = fmt.Sprintf("Scenario %s, %s. Whole iterations; CPU-ms/op is the Keycloak process's CPU time per successful iteration.", scenario, modelsText(models))
		if to {
			t.Caption += " Time-outs: iterations cut off by the request time-out (its limit in brackets; kcbench load --timeout, a workload's timeout), a measured outcome like the latency."
		}
		if db {
			t.Caption += " The DB columns are the database's work per successful iteration: its process tree's CPU, and on PostgreSQL transactions, WAL bytes and blocks read from disk or the OS cache (pg_stat_database, pg_stat_wal; not available on MariaDB)."
		}
		if mem {
			t.Caption += " Mean heap is the JVM heap in use on average over the workload, mean GC pause the garbage-collection pauses' mean length (Keycloak's jvm_memory_used_bytes and jvm_gc_pause_seconds)."
		}
		if live {
			t.Caption += " Heap after GC: Keycloak's heap in use right after a full garbage collection (jcmd GC.run) once the workload ended, what it holds live."
		}
		if warm {
			t.Caption += fmt.Sprintf(" Warm after: how long the workload ran, warm-up included, before its Keycloak CPU per successful iteration stayed within %.0f %% of its warm cost (the median over its last third of %s windows), each window judged by the median of itself and its neighbours (of a point's first workload after its restart: how long a restarted node takes to warm).",
				100*results.WarmTolerance, results.WarmWindow)
		}
		b.m.Tables = append(b.m.Tables, t)
	}
}

// liveAtReadyColumn adds a points table's column of the heap after GC
// at ready, with its caption, when any configuration has it; it reports
// whether it did.
func (b *builder) liveAtReadyColumn(t *Table) bool {
	if !b.e.hasLiveHeapAtReady() {
		return false
	}
	t.Caption += " Heap after GC at ready: Keycloak's heap in use right after a full garbage collection (jcmd GC.run) once it was ready, before any load: what it holds live."
	t.Header = append(t.Header, "heap after GC at ready MiB")
	return true
}

// timeoutText is a workload's time-outs and the limit in force.
func timeoutText(w *wlAgg) string {
	s := fmtStat(w.timeouts, fmtFixed(0))
	if w.timeoutLimit > 0 {
		s += " (" + w.timeoutLimit.String() + ")"
	}
	return s
}

// seedCell is the seed time as the Points tables show it.
func (pa pointAgg) seedCell() string {
	switch {
	case !pa.seedS.Known() && pa.restored:
		return "restored"
	case pa.recorded:
		return fmtStat(pa.seedS, fmtFixed(1)) + " (restored; its seeding run's)"
	}
	return fmtStat(pa.seedS, fmtFixed(1))
}
