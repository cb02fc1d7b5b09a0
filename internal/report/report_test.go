package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/golden"
	"github.com/kcbench/kcbench/internal/results"
)

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update, "go test -update")
}

// pngData replaces embedded PNGs, whose bytes depend on the plotting
// library's version, in the HTML golden files.
var pngData = regexp.MustCompile(`data:image/png;base64,[A-Za-z0-9+/=]+`)

// stripScripts replaces the embedded chart library and chart code, which
// the golden files need not repeat.
func stripScripts(html []byte) []byte {
	html = bytes.Replace(html, []byte(echartsJS), []byte("/* echarts.common.min.js */"), 1)
	return bytes.Replace(html, []byte(kcbenchJS), []byte("/* kcbench.js */"), 1)
}

// builds caches the models of the fixtures: drawing the charts is the
// slow part of these tests, more so under -race. Tests only read them.
var builds sync.Map // name → func() (*Model, error)

func build(t *testing.T, name string) *Model {
	t.Helper()
	f, _ := builds.LoadOrStore(name, sync.OnceValues(func() (*Model, error) {
		return Build(context.Background(), filepath.Join(fixturesDir, name))
	}))
	m, err := f.(func() (*Model, error))()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func chartNames(m *Model) []string {
	var ns []string
	for _, c := range m.Charts() {
		ns = append(ns, c.Name)
	}
	return ns
}

func chartsByName(m *Model) map[string]Chart {
	cs := map[string]Chart{}
	for _, c := range m.Charts() {
		cs[c.Name] = c
	}
	return cs
}

func TestBuildGolden(t *testing.T) {
	for _, name := range []string{"sweep", "hashing"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := build(t, name)
			var md, html bytes.Buffer
			if err := m.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			if err := m.WriteHTML(&html); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, name+".golden.md", md.Bytes())
			checkGolden(t, name+".golden.html", stripScripts(pngData.ReplaceAll(html.Bytes(), []byte("data:image/png;base64,PNG"))))
		})
	}
}

func TestCharts(t *testing.T) {
	points := func(ids ...string) []string {
		var ns []string
		for _, id := range ids {
			ns = append(ns, "point-"+id+"-latency", "point-"+id+"-throughput")
			if !strings.HasSuffix(id, "-r2") { // the second repeats have no observe.csv
				ns = append(ns, "point-"+id+"-server-cpu", "point-"+id+"-server-memory")
			}
		}
		return ns
	}
	tests := []struct {
		name string
		kind Kind
		want []string
	}{
		{"sweep", KindSweep, append([]string{
			"sweep-admin-api-throughput", "sweep-admin-api-p95", "sweep-token-throughput", "sweep-token-max-latency",
			"sweep-jwks-throughput", "sweep-rss-at-ready", "sweep-seed-time", "sweep-boot-time",
		}, points("orgs-n001", "orgs-n010", "orgs-n100", "realms-n001", "realms-n010", "realms-n100")...)},
		{"hashing", KindVariants, append([]string{"variants-throughput", "variants-p95", "variants-cpu-ms-per-op"},
			points("default-r1", "default-r2", "pbkdf2-1-r1", "pbkdf2-1-r2")...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := build(t, tt.name)
			if m.Kind != tt.kind {
				t.Errorf("kind %s, want %s", m.Kind, tt.kind)
			}
			if got := chartNames(m); !slices.Equal(got, tt.want) {
				t.Errorf("charts\n got %q\nwant %q", got, tt.want)
			}
			var html, md bytes.Buffer
			if err := m.WriteHTML(&html); err != nil {
				t.Fatal(err)
			}
			if err := m.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			for _, c := range m.Charts() {
				img, err := png.Decode(bytes.NewReader(c.PNG))
				if err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				if b := img.Bounds(); b.Dx() != ChartWidth || b.Dy() != ChartHeight {
					t.Errorf("%s: %dx%d, want %dx%d", c.Name, b.Dx(), b.Dy(), ChartWidth, ChartHeight)
				}
				if !strings.Contains(html.String(), `data-chart="`+c.Name+`"`) || !strings.Contains(html.String(), `id="chart-`+c.Name+`"`) {
					t.Errorf("report.html does not place chart %s", c.Name)
				}
				if c.Spec == nil || len(c.Spec.Series) == 0 {
					t.Errorf("%s: no interactive chart", c.Name)
				}
				if !strings.Contains(md.String(), "("+c.File()+")") {
					t.Errorf("report.md does not link chart %s", c.Name)
				}
				for _, s := range []string{"Test CPU", "Keycloak 26.4.7", "model"} {
					if !strings.Contains(c.Caption, s) {
						t.Errorf("%s: caption %q lacks %q", c.Name, c.Caption, s)
					}
				}
			}
		})
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	m := build(t, "hashing")
	dir := t.TempDir()
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{HTMLFile, MDFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, ChartsDir, "*.png"))
	if len(pngs) != len(m.Charts()) {
		t.Errorf("%d PNG files, want %d", len(pngs), len(m.Charts()))
	}
	for _, c := range m.Charts() {
		b, err := os.ReadFile(filepath.Join(dir, c.File()))
		if err != nil || !bytes.Equal(b, c.PNG) {
			t.Errorf("%s: %v", c.File(), err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestMissingData: charts whose data is missing are left out with a note.
func TestMissingData(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	for _, p := range sweepPoints() {
		if p.noTL {
			continue
		}
		var keep []wl
		for _, w := range p.wls {
			if w.scenario == results.ScenarioAdminAPI && w.phase == results.PhaseWarm {
				keep = append(keep, w)
			}
		}
		p.wls = keep
		p.boot = nil
		if p.id == "orgs-n010" {
			p.seed = nil // the next orgs point grew from it
		}
		writePoint(t, dir, "sweep", p)
	}
	// a point whose timeline does not match its summary
	if err := os.WriteFile(filepath.Join(dir, "orgs-n001", "timeline.csv"), []byte("start_s,end_s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// a point whose observe.csv is broken
	if err := os.WriteFile(filepath.Join(dir, "orgs-n100", "observe.csv"), []byte("time,phase\nyesterday,cold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	names := chartNames(m)
	for _, want := range []string{"sweep-admin-api-throughput", "sweep-admin-api-p95", "sweep-seed-time", "point-realms-n001-latency", "point-orgs-n001-server-cpu"} {
		if !slices.Contains(names, want) {
			t.Errorf("chart %s missing", want)
		}
	}
	for _, gone := range []string{"sweep-token-throughput", "sweep-token-max-latency", "sweep-jwks-throughput", "sweep-rss-at-ready", "sweep-boot-time", "point-orgs-n001-latency", "point-orgs-n100-server-cpu"} {
		if slices.Contains(names, gone) {
			t.Errorf("chart %s drawn without data", gone)
		}
	}
	notes := strings.Join(m.Notes, "\n")
	for _, want := range []string{
		`"Token issuance throughput vs tenants" left out: no password-grant or client-credentials workload`,
		`"JWKS throughput vs tenants" left out`,
		`"Keycloak RSS at ready vs tenants" left out: no data`,
		"Seed time of orgs N=100 left out: it grew from 10 tenants",
		`Point orgs-n001: over-time charts left out`,
		`Point orgs-n100: server charts left out: observe.csv: observe csv line 2: time`,
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	var html bytes.Buffer
	if err := m.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
}

func TestBuildErrors(t *testing.T) {
	empty := t.TempDir()
	unfinished := t.TempDir()
	if err := os.MkdirAll(filepath.Join(unfinished, "p1"), 0o755); err != nil {
		t.Fatal(err)
	}
	corrupt := t.TempDir()
	writePoint(t, corrupt, "x", hashingPoints(false)[0])
	if err := os.WriteFile(filepath.Join(corrupt, "default-r1", "summary.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, want string
		notExist        bool
	}{
		{"missing", filepath.Join(empty, "nope"), "does not exist", true},
		{"empty", empty, "no finished points", false},
		{"unfinished", unfinished, "no finished points", false},
		{"corrupt", corrupt, "summary.json", false},
		{"file", file, "not a folder", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(context.Background(), tt.dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if tt.notExist != errors.Is(err, os.ErrNotExist) {
				t.Errorf("errors.Is(err, os.ErrNotExist) = %v", !tt.notExist)
			}
		})
	}
}

// TestBuildPoint: one point folder is a report of its own.
func TestBuildPoint(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	m, err := Build(context.Background(), filepath.Join(fixturesDir, "sweep", "orgs-n010"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Points != 1 || m.Kind != KindSweep || len(m.Charts()) == 0 {
		t.Errorf("points %d, kind %s, %d charts", m.Points, m.Kind, len(m.Charts()))
	}
}

func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Build(ctx, filepath.Join(fixturesDir, "sweep")); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestLongTimeline: an hour-long point is downsampled and drawn.
func TestLongTimeline(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	p := hashingPoints(false)[0]
	for i := range p.wls {
		p.wls[i].rows = 1800
	}
	writePoint(t, dir, "long", p)
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if names := chartNames(m); !slices.Contains(names, "point-default-r1-latency") || !slices.Contains(names, "point-default-r1-server-memory") {
		t.Errorf("charts %q", names)
	}
}

// The cache study's report: per variant, the database's cost per
// operation beside Keycloak's heap, RSS and mean GC pause in the verdict,
// the memory columns and charts, and the guide's cache advice checked
// against the clients the workload used.
func TestCacheStudyVerdict(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	for i, v := range []struct {
		name          string
		size          int
		dbCPU, blks   float64
		heapMiB, gcMs float64
	}{{"cache-10k", 10000, 0.5, 2, 600, 4}, {"cache-20k", 20000, 0.4, 0.5, 650, 4.5}} {
		db := &results.DBCost{Available: true, Ops: 600, CPUMeasured: true, CPUMsPerOp: v.dbCPU, XactsPerOp: 2, WALBytesPerOp: 2048, BlksReadPerOp: v.blks}
		writePoint(t, dir, "caching", pt{
			id: fmt.Sprintf("p%d", i), status: results.StatusDone, db: db,
			// as experiments/caching.yaml runs it: one tenant count of one mode
			params: map[string]string{ParamVariant: v.name, ParamRepeat: "1", ParamMode: "realms", ParamTenants: "1",
				"cache_users": fmt.Sprint(v.size), "cache_realms": fmt.Sprint(v.size)},
			wls: []wl{{"clients", results.ScenarioClientCredentials, "", results.ModelOpen, 50, 10, 20, 30, 60, 0, 12, 600, 0, 4},
				{"login", results.ScenarioPasswordGrant, "", results.ModelOpen, 50, 10, 20, 30, 60, 0, 12, 600, 0, 4}},
			extra: func(w *results.Workload) {
				w.MeanHeapBytes, w.GCPauses, w.GCPauseMeanMs, w.ClientsInUse = int64(v.heapMiB*mib), 40, v.gcMs, 2600
				if w.Name == "login" {
					w.ClientsInUse = 1 // the advice does not bind
				}
			},
		})
	}
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var verdict []string
	for _, s := range m.Verdict {
		verdict = append(verdict, s.Text)
	}
	text := strings.Join(verdict, "\n")
	for _, want := range []string{
		"Does cache-20k spare the database, and what does it cost in memory?",
		"clients: database CPU cache-10k 0.500 ms/op, cache-20k 0.400 ms/op (−20%); blocks read cache-10k 2.00/op, cache-20k 0.50/op (−75%); Keycloak heap cache-10k 600 MiB, cache-20k 650 MiB (+8%)",
		"mean GC pause cache-10k 4.00 ms, cache-20k 4.50 ms (+12%)",
		"The guide's cache advice for clients (2,600 confidential clients in use: users cache ≥ 5,200, realms cache ≥ 10,400): cache-10k falls short (realms 10,000), database 0.500 ms/op 2.00 blocks read/op; cache-20k meets it, database 0.400 ms/op 0.50 blocks read/op.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("verdict lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "advice for login") {
		t.Errorf("the advice checked for one client:\n%s", text)
	}
	var md bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| cache-10k | 1 | 50.0 | 10.0 | 20.0 | 30.0 | 60.0 | 0.00 | 12.00 | 600 | 0.500 | 2.00 | 2.00 | 2.00 | 600 | 4.00 |") {
		t.Errorf("report.md lacks the memory columns:\n%s", md.String())
	}
	names := chartNames(m)
	for _, want := range []string{"variants-mem-heap", "variants-mem-gc-pause"} {
		if !slices.Contains(names, want) {
			t.Errorf("charts %v lack %s", names, want)
		}
	}
}

// The database's cost per operation (summary.json's database block) gets
// columns in the workload tables, two bar charts and compare rows; a
// report without it keeps none of them.
func TestDatabaseCost(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	for i, v := range []struct {
		name         string
		cpu, blks    float64
		cpuMeasured  bool
		xacts, walKB float64
	}{{"cache-2k", 1.5, 3.25, true, 4, 2}, {"cache-40k", 0.75, 0.5, true, 4, 2}, {"no-wal", 0.5, 0.25, true, 3, -1}} {
		db := &results.DBCost{Available: true, Ops: 600, CPUMeasured: v.cpuMeasured, CPUMsPerOp: v.cpu,
			XactsPerOp: v.xacts, WALBytesPerOp: v.walKB * 1024, BlksReadPerOp: v.blks}
		if v.walKB < 0 { // a role that may not read pg_stat_wal
			db.WALBytesPerOp = -1
			db.Unread = []results.DBUnread{results.NewDBUnread(results.DBViewWAL, "ERROR: permission denied for view pg_stat_wal (SQLSTATE 42501)")}
		}
		writePoint(t, dir, "caching", pt{
			id: fmt.Sprintf("p%d", i), params: map[string]string{ParamVariant: v.name, ParamRepeat: "1"}, status: results.StatusDone, db: db,
			wls: []wl{{"login", results.ScenarioPasswordGrant, "", results.ModelOpen, 50, 10, 20, 30, 60, 0, 12, 600, 0, 4}},
		})
	}
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"DB CPU-ms/op", "DB blocks read/op", "| cache-2k | 50.0 | 10.0 | 20.0 | 30.0 | 60.0 | 0.00 | 12.00 | 600 | 1.500 | 4.00 | 2.00 | 3.25 |",
		"| no-wal | 50.0 | 10.0 | 20.0 | 30.0 | 60.0 | 0.00 | 12.00 | 600 | 0.500 | 3.00 | - | 0.25 |",
		`Database figures missing (the database refused its statistics): WAL records and bytes, WAL syncs not read (pg\_stat\_wal: ERROR: permission denied for view pg\_stat\_wal (SQLSTATE 42501)).`} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md.String())
		}
	}
	names := chartNames(m)
	for _, want := range []string{"variants-db-cpu-ms-per-op", "variants-db-blocks-read-per-op"} {
		if !slices.Contains(names, want) {
			t.Errorf("charts %v lack %s", names, want)
		}
	}
	plain := build(t, "hashing")
	for _, n := range chartNames(plain) {
		if strings.Contains(n, "-db-") {
			t.Errorf("a report without database figures draws %s", n)
		}
	}
}

// Requests cut off by the request time-out are a measured outcome: the
// workload's table counts them with the limit in force (here a load
// run's folder, which reads as one point); a report without any has no
// such column.
func TestTimeoutsMeasured(t *testing.T) {
	dir := t.TempDir()
	st := results.Stats{Scenario: results.ScenarioAdminAPI, Executor: "constant-vus", Model: results.ModelClosed,
		Start: t0, Duration: 60 * time.Second, Elapsed: 61 * time.Second, Iterations: 40, Timeout: 30 * time.Second,
		Ops: []results.OpStats{{Name: results.IterationOp, Count: 40, OK: 4, Errors: 36, Rate: 0.67,
			ErrorClasses: map[string]int64{results.ErrorClassTimeout: 36},
			Latency:      results.Dist{P50: 30 * time.Second, P95: 30 * time.Second, Max: 30 * time.Second}}}}
	var b bytes.Buffer
	if err := results.WriteStatsJSON(&b, st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.SummaryFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| time-outs |") || !strings.Contains(md.String(), "| 36 (30s) |") {
		t.Errorf("report.md does not count the time-outs:\n%s", md.String())
	}
	var plain bytes.Buffer
	if err := build(t, "hashing").WriteMarkdown(&plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "time-outs") {
		t.Error("a report without time-outs has a time-outs column")
	}
}
