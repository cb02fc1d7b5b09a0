package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/capacity/capacitytest"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// search runs a capacity search against a fake server that holds the SLO
// up to limit/s and costs cpu ms per operation, whose p99 at low load is
// base.
func search(t *testing.T, limit, cpu float64, base time.Duration, params map[string]string) *results.CapacityResult {
	t.Helper()
	return capacitytest.Search(t, "password-grant", params, capacitytest.Server{Limit: limit, CPUMsPerOp: cpu, Latency: base,
		Cliff: true, Start: 10, Step: 10, Resolution: 1, NoWarmup: true})
}

func writeCapacity(t *testing.T, dir string, rs ...*results.CapacityResult) string {
	t.Helper()
	if len(rs) == 1 {
		if err := rs[0].WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for i, r := range rs {
		if err := r.WriteDir(filepath.Join(dir, fmt.Sprintf("repeat-%d", i+1))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeLoad writes a `kcbench load --out` folder.
func writeLoad(t *testing.T, dir, scenario string, rate float64, p99 time.Duration, cpu float64) string {
	t.Helper()
	st := results.Stats{Scenario: scenario, Executor: load.NameConstantArrivalRate, Model: results.ModelOpen, Duration: 30 * time.Second,
		Ops: []results.OpStats{{Name: results.IterationOp, Count: int64(rate * 30), OK: int64(rate * 30), Rate: rate,
			Latency: results.Dist{P95: p99 * 8 / 10, P99: p99}}}}
	var buf bytes.Buffer
	if err := results.WriteStatsJSON(&buf, st); err != nil {
		t.Fatal(err)
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	b = bytes.TrimRight(b[:len(b)-1], "\n ") // the closing brace, to add server_cpu as kcbench load does
	b = append(b, []byte(fmt.Sprintf(",\n  \"server_cpu\": {\"available\": true, \"cpu_ms_per_iteration\": %g}\n}\n", cpu))...)
	var check map[string]any
	if err := json.Unmarshal(b, &check); err != nil {
		t.Fatalf("fixture: %v\n%s", err, b)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.SummaryFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writePoint writes an experiment point folder with one workload.
func writePoint(t *testing.T, dir, repeat string, rate float64, p99 time.Duration, cpu float64) {
	t.Helper()
	params := map[string]string{"variant": "pbkdf2", "repeat": repeat}
	man := results.Manifest{Schema: results.Schema, Experiment: "hashing", Point: filepath.Base(dir), Params: params}
	sum := results.Summary{Schema: results.Schema, Point: filepath.Base(dir), Params: params, Status: results.StatusDone,
		Workloads: []results.Workload{{Name: "login", Scenario: "password-grant", Phase: "warm", ServerCPUMsPerOp: cpu,
			Stats: results.Stats{Scenario: "password-grant", Duration: 30 * time.Second, Ops: []results.OpStats{{Name: results.IterationOp,
				Count: 100, OK: 100, Rate: rate, Latency: results.Dist{P95: p99 / 2, P99: p99}}}}}}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{results.ManifestFile: man, results.SummaryFile: sum} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func row(t *testing.T, rep *Report, metric string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if strings.HasPrefix(r.Metric, metric) {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", metric, rep.Rows)
	return Row{}
}

func TestCapacityRegression(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := map[string]string{"keycloak_version": "26.7.3"}
	base := writeCapacity(t, filepath.Join(dir, "base"), search(t, 100, 2, 20*time.Millisecond, p))
	same := writeCapacity(t, filepath.Join(dir, "same"), search(t, 100, 2, 20*time.Millisecond, p))
	slow := writeCapacity(t, filepath.Join(dir, "slow"), search(t, 70, 3, 20*time.Millisecond, p))

	rep, err := Compare(base, same, defaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Pass || len(rep.Regressions) != 0 {
		t.Errorf("equal runs flagged: %+v", rep.Regressions)
	}
	rep, err = Compare(base, slow, defaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pass || row(t, rep, MetricMaxRate).Verdict != VerdictRegression || row(t, rep, MetricCPU).Verdict != VerdictRegression {
		t.Errorf("regression not flagged: %+v", rep.Rows)
	}
	if r := row(t, rep, MetricP99); r.AtRate != 70 || r.Verdict != VerdictOK {
		t.Errorf("p99 row %+v: want read at the common rate 70/s, unchanged", r)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"max rate at SLO /s", "REGRESSION", "gate: FAIL: 2 regression(s)", "-30.0%"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
	// The other way round it is an improvement, and a loose gate passes.
	if rep, _ := Compare(slow, base, defaultOptions); !rep.Pass || row(t, rep, MetricMaxRate).Verdict != VerdictImproved {
		t.Errorf("improvement: %+v", rep.Rows)
	}
	if rep, _ := Compare(base, slow, Options{MaxRegressionPct: 60, MinLatencyDeltaMs: 2}); !rep.Pass {
		t.Errorf("60%% allowed: %+v", rep.Regressions)
	}
}

func TestSpreadOfRepeats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := map[string]string{"keycloak_version": "26.7.3"}
	// baseline repeats 100 and 80 (spread 20); current 78: −13 % of the
	// mean 90, beyond 10 % but within the spread.
	base := writeCapacity(t, filepath.Join(dir, "base"), search(t, 100, 2, 20*time.Millisecond, p), search(t, 80, 2, 20*time.Millisecond, p))
	cur := writeCapacity(t, filepath.Join(dir, "cur"), search(t, 78, 2, 20*time.Millisecond, p))
	rep, err := Compare(base, cur, defaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	r := row(t, rep, MetricMaxRate)
	if r.Verdict != VerdictNoise || r.Baseline.N != 2 || r.Spread != 20 || !r.SpreadKnown || !rep.Pass {
		t.Errorf("row %+v pass %v", r, rep.Pass)
	}
	cur2 := writeCapacity(t, filepath.Join(dir, "cur2"), search(t, 60, 2, 20*time.Millisecond, p))
	if rep, _ := Compare(base, cur2, defaultOptions); rep.Pass {
		t.Errorf("−33%% beyond the spread passed: %+v", rep.Rows)
	}
}

func TestFixedRateRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := writeLoad(t, filepath.Join(dir, "base"), "client-credentials", 100, 20*time.Millisecond, 2.0)
	same := writeLoad(t, filepath.Join(dir, "same"), "client-credentials", 100, 21*time.Millisecond, 2.1)
	worse := writeLoad(t, filepath.Join(dir, "worse"), "client-credentials", 99, 40*time.Millisecond, 2.0)
	jitter := writeLoad(t, filepath.Join(dir, "jitter"), "client-credentials", 100, 21500*time.Microsecond, 2.0)

	rep, err := Compare(base, same, defaultOptions)
	if err != nil || !rep.Pass {
		t.Fatalf("err %v, rows %+v", err, rep.Rows)
	}
	if r := row(t, rep, MetricCPU); r.Baseline.Mean != 2 || r.Current.Mean != 2.1 || r.Source != SourceLoad {
		t.Errorf("cpu row %+v", r)
	}
	rep, _ = Compare(base, worse, defaultOptions)
	if rep.Pass || row(t, rep, MetricP99).Verdict != VerdictRegression || row(t, rep, MetricThroughput).Verdict != VerdictOK {
		t.Errorf("rows %+v", rep.Rows)
	}
	// +7.5 % with a floor of 1 ms is within the threshold; with 5 % allowed
	// it is beyond it, and beyond the floor too.
	if rep, _ := Compare(base, jitter, Options{MaxRegressionPct: 5, MinLatencyDeltaMs: 1}); rep.Pass {
		t.Errorf("1.5 ms beyond a 1 ms floor passed: %+v", rep.Rows)
	}
	if rep, _ := Compare(base, jitter, Options{MaxRegressionPct: 5, MinLatencyDeltaMs: 2}); !rep.Pass || row(t, rep, MetricP99).Verdict != VerdictNoise {
		t.Errorf("1.5 ms under a 2 ms floor flagged: %+v", rep.Rows)
	}
}

func TestExperimentFolders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writePoint(t, filepath.Join(dir, "base", "p-r1"), "1", 50, 100*time.Millisecond, 5)
	writePoint(t, filepath.Join(dir, "base", "p-r2"), "2", 50, 140*time.Millisecond, 5.5)
	writePoint(t, filepath.Join(dir, "cur", "p-r1"), "1", 50, 130*time.Millisecond, 8.5)
	writePoint(t, filepath.Join(dir, "cur", "p-r2"), "2", 50, 150*time.Millisecond, 9)
	rep, err := Compare(filepath.Join(dir, "base"), filepath.Join(dir, "cur"), defaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	p99 := row(t, rep, MetricP99) // 120 → 140 ms: +16.7 %, spread 40: noise
	cpu := row(t, rep, MetricCPU) // 5.25 → 8.75: +67 %, spread 0.5: regression
	if p99.Verdict != VerdictNoise || p99.Scenario != "login (warm)" || p99.Baseline.N != 2 || cpu.Verdict != VerdictRegression || rep.Pass {
		t.Errorf("p99 %+v\ncpu %+v", p99, cpu)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Pass        bool
		Regressions []string
		Rows        []struct {
			Metric   string
			DeltaPct *float64 `json:"delta_pct"`
			Verdict  string
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Pass || len(back.Regressions) != 1 || len(back.Rows) != 4 || back.Rows[0].DeltaPct == nil {
		t.Errorf("json: %s", js.String())
	}
}

func TestAcrossConfigurations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeCapacity(t, filepath.Join(dir, "a"), search(t, 100, 2, 20*time.Millisecond, map[string]string{"keycloak_version": "26.4.7"}))
	b := writeCapacity(t, filepath.Join(dir, "b"), search(t, 100, 2, 20*time.Millisecond, map[string]string{"keycloak_version": "26.7.3"}))
	rep, err := Compare(a, b, defaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.Config != "keycloak_version=26.4.7 → keycloak_version=26.7.3" || !rep.Pass {
		t.Errorf("row %+v", r)
	}
	// A capacity search and a load run share nothing.
	l := writeLoad(t, filepath.Join(dir, "l"), "password-grant", 10, time.Millisecond, 1)
	if _, err := Compare(a, l, defaultOptions); err == nil || !strings.Contains(err.Error(), "nothing to compare") {
		t.Errorf("err %v", err)
	}
	if _, err := Compare(a, t.TempDir(), defaultOptions); !errors.Is(err, ErrNoResults) {
		t.Errorf("empty folder: %v", err)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	st := func(vs ...float64) Stat { return newStat(vs) }
	cases := []struct {
		name         string
		higherBetter bool
		a, b         Stat
		floor        float64
		want         string
	}{
		{"same", true, st(100), st(100), 0, VerdictOK},
		{"small drop", true, st(100), st(91), 0, VerdictOK},
		{"drop", true, st(100), st(89), 0, VerdictRegression},
		{"rise of a cost", false, st(2), st(2.3), 0, VerdictRegression},
		{"fall of a cost", false, st(2), st(1.5), 0, VerdictImproved},
		{"within spread", true, st(100, 70), st(75), 0, VerdictNoise},
		{"under the floor", false, st(3), st(4), 2, VerdictNoise},
		{"from nothing", true, st(0), st(50), 0, VerdictImproved},
		{"to nothing", true, st(50), st(0), 0, VerdictRegression},
	}
	for _, c := range cases {
		r := Row{HigherBetter: c.higherBetter, Baseline: c.a, Current: c.b, Threshold: 10, Floor: c.floor}
		r.judge()
		if r.Verdict != c.want {
			t.Errorf("%s: %s (Δ %g, %g%%), want %s", c.name, r.Verdict, r.Delta, r.DeltaPct, c.want)
		}
		if _, err := json.Marshal(r); err != nil || math.IsNaN(r.DeltaPct) {
			t.Errorf("%s: json %v", c.name, err)
		}
	}
}

// defaultOptions are the thresholds the CLI's flags default to.
var defaultOptions = Options{MaxRegressionPct: DefaultMaxRegressionPct, MinLatencyDeltaMs: DefaultMinLatencyDeltaMs}
