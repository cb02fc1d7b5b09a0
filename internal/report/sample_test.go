package report

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

func TestSumPiecewise(t *testing.T) {
	for _, c := range []struct {
		name   string
		xs, ys []float64
		to     int
		want   float64
	}{
		{"none", nil, nil, 10, 0},
		{"flat", []float64{5}, []float64{2}, 10, 20},
		// 1 s at tenant 1, 3 s at tenant 3: 1 + 2 + 3, then flat at 3
		{"line", []float64{1, 3}, []float64{1, 3}, 5, 1 + 2 + 3 + 3 + 3},
		{"unsorted", []float64{3, 1}, []float64{3, 1}, 3, 6},
		{"before the first", []float64{10, 20}, []float64{4, 8}, 3, 12},
	} {
		if got := sumPiecewise(c.xs, c.ys, c.to); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %g, want %g", c.name, got, c.want)
		}
	}
}

// TestAdminAPISample: points that timed a sample of their tenants through
// the admin API get a per-tenant chart, a Points column, and the seed-time
// chart becomes the estimate from the samples (the clone's seconds are
// not what a user's provisioning costs).
func TestAdminAPISample(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	sample := map[string]map[int]float64{ // seconds per tenant
		"realms": {1: 0.5, 10: 0.5, 100: 1.5},
		"orgs":   {1: 0.2, 10: 0.2, 100: 0.2},
	}
	for _, p := range sweepPoints() {
		if p.seed != nil && p.status == results.StatusDone {
			n := p.seed.Tenants
			k := min(p.seed.Added, 10)
			s := sample[p.params[ParamMode]][n]
			p.seed.Strategy = "clone"
			p.seed.AdminAPISample = &results.SeedSample{Tenants: k, Seconds: s * float64(k)}
		}
		writePoint(t, dir, "sweep", p)
	}
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	byName := chartsByName(m)
	per, ok := byName["sweep-admin-api-provisioning"]
	if !ok {
		t.Fatalf("no per-tenant chart in %v", chartNames(m))
	}
	seed := byName["sweep-seed-time"]
	if !strings.Contains(seed.Title, "admin API") {
		t.Errorf("seed-time chart %q: want the admin-API estimate", seed.Title)
	}
	value := func(c Chart, series string, x float64) float64 {
		for _, s := range c.Spec.Series {
			if s.Name != series {
				continue
			}
			for _, d := range s.Data {
				if d[0] != nil && float64(*d[0]) == x && d[1] != nil {
					return float64(*d[1])
				}
			}
		}
		t.Fatalf("chart %s: no %s point at %g", c.Name, series, x)
		return 0
	}
	if got := value(per, "realms", 100); got != 1.5 {
		t.Errorf("realms at 100: %g s per tenant, want 1.5", got)
	}
	// orgs: 0.2 s per tenant throughout: 20 s for 100
	if got := value(seed, "orgs", 100); math.Abs(got-20) > 1e-6 {
		t.Errorf("orgs from empty to 100: %g s, want 20", got)
	}
	// realms: 0.5 s to tenant 5.5 (point 10's sample middle), rising to
	// 1.5 s at tenant 95.5: more than 0.5 × 100, less than 1.5 × 100
	if got := value(seed, "realms", 100); got <= 50 || got >= 150 {
		t.Errorf("realms from empty to 100: %g s", got)
	}
	i := slices.IndexFunc(m.Tables, func(t Table) bool { return t.Title == "Points" })
	if i < 0 {
		t.Fatal("no Points table")
	}
	tab := m.Tables[i]
	if tab.Header[len(tab.Header)-1] != "admin API s/tenant" {
		t.Fatalf("header %q", tab.Header)
	}
	for _, r := range tab.Rows {
		if r[0] == "realms" && r[1] == "100" && r[len(r)-1] != "1.50 (10)" {
			t.Errorf("realms 100: %q, want 1.50 (10)", r[len(r)-1])
		}
		if r[3] != "done" && r[len(r)-1] != "-" {
			t.Errorf("%s %s (%s): %q, want -", r[0], r[1], r[3], r[len(r)-1])
		}
	}
}
