//go:build integration

package capacity_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/capacity/gate"
	"github.com/kcbench/kcbench/internal/dataset"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// These tests search a real Keycloak and PostgreSQL (one stack for the
// package) with short steps: they check that the search and the gate work
// end to end, not the figures, which depend on the box.

var shared stacktest.Shared

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, &shared)) }

type fixture struct {
	tg    kc.Target
	fast  *dataset.Manifest // pbkdf2-sha256 with 1 iteration
	argon *dataset.Manifest // Keycloak's default policy (argon2id)
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func setup(t *testing.T) *fixture {
	t.Helper()
	s := shared.Get(t)
	fixOnce.Do(func() {
		tg := s.Target()
		adm := kc.NewAdmin(kc.NewFor(tg), tg.Admin)
		db, err := s.DSN()
		if err != nil {
			fixErr = err
			return
		}
		seed := func(pol dataset.Policy, prefix string) *dataset.Manifest {
			if fixErr != nil {
				return nil
			}
			content := dataset.DefaultContent
			content.Users = 50
			spec := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 1, Content: content, Policy: pol, Prefix: prefix, Seed: 1}
			res, err := dataset.Seed(context.Background(), adm, spec, dataset.SeedOptions{Strategy: dataset.Clone, DB: db, Target: tg.BaseURL})
			if err != nil {
				fixErr = fmt.Errorf("seed %s: %w", pol, err)
				return nil
			}
			return res.Manifest
		}
		fix = &fixture{tg: tg,
			fast:  seed(dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, "capf"),
			argon: seed(dataset.Policy{}, "capa"),
		}
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

// steps binds a search to a scenario against the shared Keycloak, as
// kcbench capacity does; calls counts the steps run.
func (f *fixture) steps(name string, m *dataset.Manifest, calls *int) capacity.StepFunc {
	hc := &http.Client{Transport: scenario.LoadTransport(f.tg, 10*time.Second, 256, netip.Addr{})}
	return func(ctx context.Context, st capacity.Step) (capacity.StepResult, error) {
		rate, d := st.Rate, st.Duration
		*calls++
		cfg := scenario.Config{Scenario: name, Executor: load.NameConstantArrivalRate, Rate: rate, Duration: d,
			VUs: 10, MaxVUs: int(rate) + 20, GracefulStop: 5 * time.Second, Timeout: 10 * time.Second}
		rss := int64(0)
		res, err := scenario.Run(ctx, scenario.RunInput{Target: f.tg, Manifest: m, Config: cfg, HTTPClient: hc})
		if res == nil {
			return capacity.StepResult{}, err
		}
		if r, e := stack.RSS(f.tg.PID); e == nil {
			rss = r
		}
		return capacity.StepResult{Stats: res.Stats, CPUMsPerOp: res.CPU.PerIteration, ServerCores: res.CPU.Cores, RSSBytes: rss}, err
	}
}

func slos(t *testing.T) []results.Threshold {
	t.Helper()
	s, err := capacity.ParseSLOs("p99<500ms,errors<0.1%")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestClientCredentialsSearch(t *testing.T) {
	f := setup(t)
	calls := 0
	start := time.Now()
	r, err := capacity.Search(t.Context(), f.steps(results.ScenarioClientCredentials, f.fast, &calls), capacity.Options{
		SLOs: slos(t), Start: 20, Step: 80, Resolution: 40, MaxRate: 500,
		StepDuration: 3 * time.Second, Warmup: 3 * time.Second, Pause: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Steps {
		t.Logf("%-6s %5g/s achieved %6.1f p99 %7.1f ms cpu %5.2f ms/op rss %d MiB pass %v %v",
			s.Phase, s.Rate, s.Achieved, s.P99, s.CPUMsPerOp, s.RSSBytes>>20, s.Pass, s.Failures)
	}
	t.Logf("%s (in %s)", r.Conclusion, time.Since(start).Round(time.Second))
	if !r.Found || r.MaxRate <= 0 {
		t.Fatalf("no positive rate: %s", r.Conclusion)
	}
	if len(r.Steps) != calls || r.Steps[0].Phase != results.StepWarmup || len(r.Steps) < 2 {
		t.Errorf("%d steps recorded, %d run", len(r.Steps), calls)
	}
	for _, s := range r.Steps {
		if s.Iterations == 0 || s.RSSBytes == 0 || (s.Pass && s.CPUMsPerOp <= 0) {
			t.Errorf("step %d lacks figures: %+v", s.Index, s)
		}
	}
	if r.CPUMsPerOp <= 0 || r.OpsPerCPUSecond <= 0 {
		t.Errorf("no server CPU at the best step: %+v", r)
	}
	dir := t.TempDir()
	if err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	if back, err := results.ReadCapacityDir(dir); err != nil || back.MaxRate != r.MaxRate || len(back.Steps) != len(r.Steps) {
		t.Errorf("read back: %v", err)
	}
}

// TestGateFlagsHashingRegression searches password grants twice with
// 1-iteration PBKDF2 and once with Keycloak's default argon2id: the gate
// must pass the two equal configurations and flag argon2id, whose server
// CPU per login is many times higher. The allowed regression is wide
// because steps of a few seconds on a small shared box are noisy.
func TestGateFlagsHashingRegression(t *testing.T) {
	f := setup(t)
	// MinOK is lowered so that 3 s steps at 10/s count (30 logins).
	o := capacity.Options{SLOs: slos(t), Start: 10, Step: 20, Resolution: 10, MaxRate: 50, MinOK: 20,
		StepDuration: 3 * time.Second, Warmup: 2 * time.Second, Pause: time.Second}
	dir := t.TempDir()
	search := func(name string, m *dataset.Manifest) string {
		calls := 0
		r, err := capacity.Search(t.Context(), f.steps(results.ScenarioPasswordGrant, m, &calls), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s; cpu %.2f ms/op", name, r.Conclusion, r.CPUMsPerOp)
		if len(r.Steps) != calls {
			t.Errorf("%s: %d steps recorded, %d run", name, len(r.Steps), calls)
		}
		r.Scenario = results.ScenarioPasswordGrant
		r.Params = map[string]string{"password_policy": m.Spec.Policy.String()}
		out := filepath.Join(dir, name)
		if err := r.WriteDir(out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	base := search("pbkdf2-1", f.fast)
	again := search("pbkdf2-2", f.fast)
	argon := search("argon2", f.argon)

	opts := gate.Options{MaxRegressionPct: 50, MinLatencyDeltaMs: 100}
	same, err := gate.Compare(base, again, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !same.Pass {
		t.Errorf("two runs of the same configuration flagged: %v", same.Regressions)
	}
	worse, err := gate.Compare(base, argon, opts)
	if err != nil {
		t.Fatal(err)
	}
	if worse.Pass {
		t.Errorf("argon2id against 1-iteration PBKDF2 not flagged: %+v", worse.Rows)
	}
	for _, rep := range []*gate.Report{same, worse} {
		for _, r := range rep.Rows {
			t.Logf("%s %s: %.2f → %.2f (%+.0f%%) %s", r.Config, r.Metric, r.Baseline.Mean, r.Current.Mean, r.DeltaPct, r.Verdict)
		}
	}
}
