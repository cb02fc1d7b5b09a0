package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func compareFixtures(t *testing.T, a, b string) *Comparison {
	t.Helper()
	c, err := Compare(context.Background(), filepath.Join(fixturesDir, a), filepath.Join(fixturesDir, b))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func findDelta(t *testing.T, c *Comparison, config, workload, metric string) Delta {
	t.Helper()
	for _, d := range c.Rows {
		if d.Config == config && d.Workload == workload && d.Metric == metric {
			return d
		}
	}
	t.Fatalf("no row %s/%s/%s", config, workload, metric)
	return Delta{}
}

func TestCompareGolden(t *testing.T) {
	c := compareFixtures(t, "hashing", "hashing-rerun")
	var txt, js bytes.Buffer
	if err := c.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "compare.golden.txt", txt.Bytes())
	checkGolden(t, "compare.golden.json", js.Bytes())
	var back Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rows) != len(c.Rows) {
		t.Errorf("JSON does not read back: %v", err)
	}
}

// TestCompareNoise: with repeats on both sides, a delta within their
// spread is noise and one beyond it is better or worse.
func TestCompareNoise(t *testing.T) {
	c := compareFixtures(t, "hashing", "hashing-rerun")
	tests := []struct {
		config, workload, metric, verdict string
	}{
		{"default", "login", "p95 ms", VerdictNoise},         // +1 %, repeats differ by 4 %
		{"default", "login", "CPU-ms/op", VerdictWorse},      // +50 %
		{"default", "grants", "throughput/s", VerdictBetter}, // +20 %
		{"default", "grants", "p95 ms", VerdictNoise},        // unchanged, spread 0
		{"pbkdf2-1", "login", "p95 ms", VerdictNoise},        // unchanged
		{"pbkdf2-1", pointScenario, "RSS at ready MiB", VerdictNoise},
	}
	for _, tt := range tests {
		d := findDelta(t, c, tt.config, tt.workload, tt.metric)
		if d.Verdict != tt.verdict {
			t.Errorf("%s %s %s: verdict %q (Δ %.3f, spread %.3f), want %q", tt.config, tt.workload, tt.metric, d.Verdict, d.Delta, d.Spread, tt.verdict)
		}
		if !d.SpreadKnown || d.A.N != 2 || d.B.N != 2 {
			t.Errorf("%s %s %s: spread known %v, runs %d/%d", tt.config, tt.workload, tt.metric, d.SpreadKnown, d.A.N, d.B.N)
		}
	}
}

// TestCompareSingleRuns: one run per side, different params: the two
// points are compared and the spread is unknown.
func TestCompareSingleRuns(t *testing.T) {
	c := compareFixtures(t, "hashing/default-r1", "hashing/pbkdf2-1-r1")
	d := findDelta(t, c, "default → pbkdf2-1", "login", "CPU-ms/op")
	if d.SpreadKnown || d.Verdict != VerdictBetter+unknownSpread {
		t.Errorf("verdict %q, spread known %v", d.Verdict, d.SpreadKnown)
	}
	var txt bytes.Buffer
	if err := c.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "spread unknown") {
		t.Errorf("text lacks 'spread unknown':\n%s", txt.String())
	}
}

// TestCompareSweep: the same sweep on both sides; unmatched
// configurations are noted, and aborted points are not compared.
func TestCompareSweep(t *testing.T) {
	c := compareFixtures(t, "sweep", "sweep")
	for _, d := range c.Rows {
		if d.Delta != 0 || d.Verdict != VerdictSame+unknownSpread && d.Verdict != VerdictSame {
			t.Errorf("%+v", d)
		}
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "realms N=250: no finished point") {
		t.Errorf("notes %q", c.Notes)
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		delta, spread       float64
		known, higherBetter bool
		want                string
	}{
		{1, 2, true, true, VerdictNoise},
		{-2, 2, true, true, VerdictNoise},
		{3, 2, true, true, VerdictBetter},
		{3, 2, true, false, VerdictWorse},
		{-3, 2, true, false, VerdictBetter},
		{0, 0, false, true, VerdictSame},
		{0, 0, true, true, VerdictNoise},
		{1, 0, false, true, VerdictBetter + unknownSpread},
		{1, 0, false, false, VerdictWorse + unknownSpread},
	}
	for _, tt := range tests {
		if got := verdict(10, 10+tt.delta, tt.spread, tt.known, tt.higherBetter); got != tt.want {
			t.Errorf("verdict(%v, %v, %v, %v) = %q, want %q", tt.delta, tt.spread, tt.known, tt.higherBetter, got, tt.want)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	empty := t.TempDir()
	ok := filepath.Join(fixturesDir, "hashing")
	tests := []struct {
		name, a, b, want string
	}{
		{"missing A", missing, ok, "does not exist"},
		{"missing B", ok, missing, "does not exist"},
		{"empty", ok, empty, "no finished points"},
		{"nothing in common", filepath.Join(fixturesDir, "sweep"), ok, "no configuration in common"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(context.Background(), tt.a, tt.b)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("missing folder exists")
	}
}
