package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

// TestReferences: published figures are drawn on the chart they name, in
// the colour of the line they compare with, and tabled beside kcbench's
// value at the same x; a reference to a chart the report lacks is a note.
func TestReferences(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sweep")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(fixturesDir, "sweep"))); err != nil {
		t.Fatal(err)
	}
	refs := []results.Reference{
		{Chart: "sweep-seed-time", Label: "study, realms", Series: "realms", Source: "https://example.org/study",
			Note: "admin-client seeder", Points: [][2]float64{{1000, 3540}, {100, 157}}},
		{Chart: "sweep-rss-at-ready", Label: "study, orgs", Points: [][2]float64{{1500, 880}}},
		{Chart: "no-such-chart", Label: "lost", Points: [][2]float64{{1, 1}}},
	}
	if err := results.WriteReferences(dir, refs); err != nil {
		t.Fatal(err)
	}
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var seed *Chart
	for _, c := range m.Charts() {
		if c.Name == "sweep-seed-time" {
			seed = &c
		}
	}
	if seed == nil {
		t.Fatal("no chart sweep-seed-time")
	}
	var realms, study *SeriesSpec
	for i, s := range seed.Spec.Series {
		switch s.Name {
		case "realms":
			realms = &seed.Spec.Series[i]
		case "study, realms":
			study = &seed.Spec.Series[i]
		}
	}
	if realms == nil || study == nil {
		t.Fatalf("series %+v: want realms and the study's", seed.Spec.Series)
	}
	if !study.Dashed || study.Color != realms.Color || len(study.Data) != 2 || float64(*study.Data[0][0]) != 100 {
		t.Errorf("published line %+v: want dashed, realms' colour %s, 2 points sorted by x", study, realms.Color)
	}
	i := slices.IndexFunc(m.Tables, func(t Table) bool { return strings.HasPrefix(t.Title, "Published figures") })
	if i < 0 {
		t.Fatalf("no table of published figures in %d tables", len(m.Tables))
	}
	tab := m.Tables[i]
	// realms seeded 1 then grew to 10 (12 s) and 100 (300 s): 314 s from empty
	// in the order of the charts
	want := [][]string{
		{"Keycloak RSS at ready vs tenants", "study, orgs", "1500", "880", "(not compared)", "-"},
		{"Seed time vs tenants (from empty; growth steps summed)", "study, realms", "100", "157", "314 (realms)", "2.00×"},
		{"Seed time vs tenants (from empty; growth steps summed)", "study, realms", "1000", "3540", "-", "-"},
	}
	if !slices.EqualFunc(tab.Rows, want, slices.Equal) {
		t.Errorf("rows\n got %q\nwant %q", tab.Rows, want)
	}
	if !strings.Contains(tab.Caption, "https://example.org/study (admin-client seeder)") {
		t.Errorf("caption %q: want the source and its note", tab.Caption)
	}
	if !slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, `"lost"`) && strings.Contains(n, "no-such-chart") }) {
		t.Errorf("notes %q: want the reference to a missing chart named", m.Notes)
	}
	if i := slices.IndexFunc(m.Tables, func(t Table) bool { return t.Title == "Points" }); i < 0 || !strings.Contains(m.Tables[i].Caption, "All 7 point runs: ") {
		t.Errorf("no Points table saying the wall time of all 7 point runs")
	}
	var md bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "Published figures beside kcbench's") {
		t.Error("report.md lacks the table of published figures")
	}

	// a broken file is a note, the report still builds
	if err := os.WriteFile(filepath.Join(dir, results.ReferencesFile), []byte(`[{"chart":"x"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err = Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(m.Notes, func(n string) bool { return strings.Contains(n, "label: empty") }) {
		t.Errorf("notes %q: want the broken references file named", m.Notes)
	}
}

// TestLatencyCharts: a latency sweep (variants by injected round trip, two
// Keycloak versions) draws p50 and p99 against the round trip per link and
// workload, one factor at a time, and the study's curve beside the line
// its reference names; repeats that differ only in the measured round
// trip stay one configuration.
func TestLatencyCharts(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "latency")
	type v struct {
		name, kc string
		nn, db   float64
		p99      float64
	}
	for _, x := range []v{
		{"nn-0ms", "26.7.3", 0, 0, 40}, {"nn-10ms", "26.7.3", 10, 0, 90}, {"nn-20ms", "26.7.3", 20, 0, 130},
		{"db-5ms", "26.7.3", 0, 5, 70},
		{"old-nn-0ms", "26.3.5", 0, 0, 50}, {"old-nn-20ms", "26.3.5", 20, 0, 1000},
	} {
		for r := 1; r <= 2; r++ {
			// as the experiment runner writes them: every point has a mode
			// and a tenant count
			ps := map[string]string{ParamVariant: x.name, ParamRepeat: strconv.Itoa(r), "nodes": "2", ParamMode: "realms", ParamTenants: "5"}
			if x.nn > 0 {
				ps[results.ParamLatency] = "node-node=" + fmtG(x.nn) + "ms"
				ps[results.ParamLatencyNodeNodeMs] = fmtG(x.nn)
				ps[results.ParamLatencyNodeNodeMeasure] = fmtG(x.nn + 0.1*float64(r))
			}
			if x.db > 0 {
				ps[results.ParamLatency] = "node-db=" + fmtG(x.db) + "ms"
				ps[results.ParamLatencyNodeDBMs] = fmtG(x.db)
			}
			writePoint(t, dir, "latency", pt{
				id: fmt.Sprintf("%s-r%d", x.name, r), params: ps, status: results.StatusDone, keycloak: x.kc,
				wls: []wl{{"refresh", results.ScenarioRefresh, results.PhaseWarm, results.ModelOpen, 80, x.p99 / 3, x.p99 / 2, x.p99, x.p99 * 2, 0, 1, 600, 0, 5}},
			})
		}
	}
	if err := results.WriteReferences(dir, []results.Reference{
		{Chart: "latency-node-node-warm_refresh", Label: "study 26.4 p99", Series: "26.7.3 p99", Points: [][2]float64{{0, 47}, {10, 84}, {20, 130}}},
	}); err != nil {
		t.Fatal(err)
	}
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Configs != 6 {
		t.Errorf("%d configurations, want 6 (repeats differ only in the measured round trip)", m.Configs)
	}
	charts := chartsByName(m)
	nn, ok := charts["latency-node-node-warm_refresh"]
	if !ok {
		t.Fatalf("no node-node chart in %q", chartNames(m))
	}
	line := func(c Chart, name string) [][2]float64 {
		for _, s := range c.Spec.Series {
			if s.Name == name {
				var out [][2]float64
				for _, d := range s.Data {
					out = append(out, [2]float64{float64(*d[0]), float64(*d[1])})
				}
				return out
			}
		}
		t.Errorf("%s: no line %q", c.Name, name)
		return nil
	}
	if got, want := line(nn, "26.7.3 p99"), [][2]float64{{0, 40}, {10, 90}, {20, 130}}; !slices.Equal(got, want) {
		t.Errorf("26.7.3 p99 %v, want %v (the node-db point left out)", got, want)
	}
	if got, want := line(nn, "26.3.5 p99"), [][2]float64{{0, 50}, {20, 1000}}; !slices.Equal(got, want) {
		t.Errorf("26.3.5 p99 %v, want %v", got, want)
	}
	line(nn, "study 26.4 p99")
	db, ok := charts["latency-node-db-warm_refresh"]
	if !ok {
		t.Fatalf("no node-db chart in %q", chartNames(m))
	}
	if got, want := line(db, "26.7.3 p99"), [][2]float64{{0, 40}, {5, 70}}; !slices.Equal(got, want) {
		t.Errorf("node-db 26.7.3 p99 %v, want %v", got, want)
	}
	i := slices.IndexFunc(m.Tables, func(t Table) bool { return strings.HasPrefix(t.Title, "Published figures") })
	if i < 0 || len(m.Tables[i].Rows) != 3 || m.Tables[i].Rows[1][4] != "90 (26.7.3 p99)" || m.Tables[i].Rows[1][5] != "1.07×" {
		t.Errorf("published figures table %+v: want 3 rows, 10 ms: 90 beside 84 (1.07×)", m.Tables)
	}
	for _, c := range m.Charts() {
		if strings.HasPrefix(c.Name, "variants-") {
			continue
		}
		if strings.Contains(c.Title, "latency_node") {
			t.Errorf("chart %q: labels carry latency params", c.Title)
		}
	}
}

// A point whose whole dataset came back from a snapshot keeps the seed
// time of the run that made it (a resumed sweep): the seed chart sums it
// like any other, and the Points table says where it came from.
func TestRecordedSeedTime(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sweep")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(fixturesDir, "sweep"))); err != nil {
		t.Fatal(err)
	}
	p, err := results.ReadPoint(filepath.Join(dir, "realms-n100"))
	if err != nil {
		t.Fatal(err)
	}
	p.Summary.Seed.Restored, p.Summary.Seed.Recorded = "x-realms-n00100", true
	writeJSONFile(t, filepath.Join(dir, "realms-n100", results.SummaryFile), p.Summary)
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Tables, func(t Table) bool { return t.Title == "Points" })
	if i < 0 {
		t.Fatal("no Points table")
	}
	var cell string
	for _, r := range m.Tables[i].Rows {
		if r[0] == "realms" && r[1] == "100" {
			cell = r[4]
		}
	}
	if cell != "300.0 (restored; its seeding run's)" {
		t.Errorf("seed cell %q, want the recorded 300 s said to be restored", cell)
	}
}
