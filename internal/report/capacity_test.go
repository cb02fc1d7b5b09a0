package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/capacity/capacitytest"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/results"
)

// writeCapacityResult writes a fake search's folder: the server holds the
// SLO up to limit/s.
func writeCapacityResult(t *testing.T, dir, version string, limit float64) {
	t.Helper()
	r := capacitytest.Write(t, dir, "client-credentials", map[string]string{"keycloak_version": version, "machine_cores": "2"},
		capacitytest.Server{Limit: limit, CPUMsPerOp: 3})
	r.BootSeconds, r.RSSAtReadyBytes = 12.5, 500<<20
	if err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
}

func TestCapacityReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeCapacityResult(t, dir, "26.7.3", 97)
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindCapacity || m.Points != 1 || len(m.Charts()) != 2 || len(m.Tables) != 2 {
		t.Fatalf("kind %s, %d points, %d charts, %d tables, notes %v", m.Kind, m.Points, len(m.Charts()), len(m.Tables), m.Notes)
	}
	for _, c := range m.Charts() {
		img, err := png.Decode(bytes.NewReader(c.PNG))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if b := img.Bounds(); b.Dx() != ChartWidth || b.Dy() != ChartHeight {
			t.Errorf("%s: %v", c.Name, b)
		}
	}
	if got := m.Tables[0].Rows[0]; got[3] != "100" || got[4] != "102" || got[7] != "3.00" {
		t.Errorf("capacity row %v: want max 100, first failed 102, 3.00 CPU-ms/op", got)
	}
	var md bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Kind: capacity", "latency against the asked rate", "achieved against the asked rate", "discarded", "Keycloak 26.7.3"} {
		if !strings.Contains(md.String(), w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
}

func TestCapacityMatrixReport(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	writeCapacityResult(t, filepath.Join(dir, "26.4.7"), "26.4.7", 70)
	writeCapacityResult(t, filepath.Join(dir, "26.7.3"), "26.7.3", 97)
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// two overview bar charts, then two charts per version
	if m.Points != 2 || len(m.Charts()) != 6 || m.Sections[0].Title != "Capacity at SLO" {
		t.Fatalf("%d points, %d charts, sections %v", m.Points, len(m.Charts()), m.Sections)
	}
	hdr := m.Tables[0].Header
	if !strings.Contains(strings.Join(hdr, "|"), "p99 @ 60/s ms") || m.Tables[0].Rows[0][0] != "Keycloak 26.4.7" {
		t.Errorf("matrix table %v %v", hdr, m.Tables[0].Rows)
	}
}

func TestCapacityRepeatsReport(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	var rs []*results.CapacityResult
	for i, limit := range []float64{97, 60} {
		d := filepath.Join(dir, "repeat-"+string(rune('1'+i)))
		writeCapacityResult(t, d, "26.7.3", limit)
		r, err := results.ReadCapacityDir(d)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	rep := results.NewCapacityRepeats(rs)
	if err := fileutil.WriteJSON(filepath.Join(dir, results.RepeatsFile), rep, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Points != 2 || m.Configs != 1 || len(m.Verdict) < 3 {
		t.Fatalf("%d points, %d configurations, verdict %v", m.Points, m.Configs, m.Verdict)
	}
	var want strings.Builder
	rep.WriteText(&want)
	if got, w := m.Verdict[0].Text, strings.SplitN(want.String(), "\n", 2)[0]; got != "R"+strings.TrimPrefix(w, "r")+"." {
		t.Errorf("the verdict opens with %q, want the repeats' line %q", got, w)
	}
	// A repeats.json of other searches (an earlier run into the same
	// folder): said, and left out.
	rep.Repeats = append(rep.Repeats, rep.Repeats[0])
	if err := fileutil.WriteJSON(filepath.Join(dir, results.RepeatsFile), rep, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err = Build(t.Context(), dir)
	if err != nil || m.Configs != 2 || !slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, "lists 3 searches, the folder holds 2") }) {
		t.Errorf("a repeats.json of 3 searches beside 2: %v, %d configurations, notes %v", err, m.Configs, m.Notes)
	}
	// A repeats.json that is not one: said, and the searches reported.
	os.WriteFile(filepath.Join(dir, results.RepeatsFile), []byte(`{"kind":"capacity"}`), 0o644)
	m, err = Build(t.Context(), dir)
	if err != nil || m.Points != 2 || !slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, "spread of the repeats is left out") }) {
		t.Errorf("a bad repeats.json: %v, notes %v", err, m.Notes)
	}
}

func TestCapacityNodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeCapacityResult(t, dir, "26.7.3", 97)
	nodes := `{"at":"2025-06-01T10:00:00Z","nodes":[` +
		`{"node":1,"cpu_ns":30000000000,"rss_bytes":734003200,"throttling":{"nr_periods":1000,"nr_throttled":250,"throttled_ns":4000000000},"lb_requests":7500},` +
		`{"node":2,"cpu_ns":10000000000,"rss_bytes":629145600,"lb_requests":2500}],"balancer_cpu_ns":2000000000}`
	if err := os.WriteFile(filepath.Join(dir, "nodes.json"), []byte(nodes), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var nt *Table
	for i := range m.Tables {
		if strings.HasPrefix(m.Tables[i].Title, "Nodes: ") {
			nt = &m.Tables[i]
		}
	}
	if nt == nil {
		t.Fatalf("no per-node table in %d tables", len(m.Tables))
	}
	want := [][]string{
		{"1", "7500", "75.0", "30.0", "75.0", "25.0", "4.0", "700"},
		{"2", "2500", "25.0", "10.0", "25.0", "-", "-", "600"},
	}
	if !slices.EqualFunc(nt.Rows, want, slices.Equal[[]string]) {
		t.Errorf("rows %q, want %q", nt.Rows, want)
	}
	if !strings.Contains(nt.Caption, "HAProxy used 2.0 s") {
		t.Errorf("caption %q lacks the balancer's CPU", nt.Caption)
	}
}

// Variants' searches show, at each max rate, the server CPU per operation
// split by process: Keycloak, the database (PostgreSQL or MariaDB) and
// the LDAP directory, where measured.
func TestCapacityCostByProcess(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	for _, v := range []struct {
		name       string
		db, dirCPU float64
	}{{"postgres", 0.5, 0}, {"ldap", 0.4, 1.25}} {
		d := filepath.Join(dir, v.name)
		r := capacitytest.Write(t, d, "password-grant", map[string]string{"variant": v.name, "machine_cores": "2"}, capacitytest.Server{Limit: 97, CPUMsPerOp: 3})
		for i := range r.Steps {
			r.Steps[i].Database = &results.DBCost{Available: true, CPUMeasured: true, Ops: 100, CPUMsPerOp: v.db}
			if v.dirCPU > 0 {
				r.Steps[i].Directory = &results.DirectoryCost{Available: true, Ops: 100, CPUMsPerOp: v.dirCPU}
			}
		}
		if err := r.WriteDir(d); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range m.Charts() {
		names = append(names, c.Name)
	}
	for _, want := range []string{"capacity-db-cpu-ms-per-op", "capacity-dir-cpu-ms-per-op"} {
		if !slices.Contains(names, want) {
			t.Errorf("charts %v lack %s", names, want)
		}
	}
	tb := m.Tables[0]
	db, dirCol := slices.Index(tb.Header, "DB CPU-ms/op"), slices.Index(tb.Header, "directory CPU-ms/op")
	if db < 0 || dirCol < 0 {
		t.Fatalf("header %v", tb.Header)
	}
	rows := map[string][]string{}
	for _, r := range tb.Rows {
		rows[r[0]] = r
	}
	if r := rows["variant ldap"]; r == nil || r[db] != "0.400" || r[dirCol] != "1.250" {
		t.Errorf("ldap row %v (rows %v)", r, tb.Rows)
	}
	if r := rows["variant postgres"]; r == nil || r[db] != "0.500" || r[dirCol] != "-" {
		t.Errorf("postgres row %v", r)
	}
}

// A cold server's first probe fails at any rate: the verdict's first
// failure is the lowest judged step that failed, not the probe.
func TestCapacityVerdictSkipsProbes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeCapacityResult(t, dir, "26.7.3", 97)
	r, err := results.ReadCapacityDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Steps = append([]results.CapacityStep{{Index: 0, Phase: results.StepProbe, Rate: 20, Failures: []string{"cold"}}}, r.Steps...)
	if err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Verdict) != 1 || strings.Contains(m.Verdict[0].Text, "cold") || !strings.Contains(m.Verdict[0].Text, "at 102/s it failed first") {
		t.Errorf("verdict %v: want the failure at 102/s, not the probe's", m.Verdict)
	}
}
