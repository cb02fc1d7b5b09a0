package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

// TestReferences: published figures are drawn on the chart they name, in
// the colour of the line they compare with, and tabled beside kcbench's
// value at the same x; a reference to a chart the report lacks is a note.
func TestReferences(t *testing.T) {
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
