package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// fakeTokenServer answers token requests one per 1/rate seconds, in
// arrival order (a queue above rate), or always with 503 when rate is 0.
func fakeTokenServer(t *testing.T, rate float64) *httptest.Server {
	t.Helper()
	var (
		mu   sync.Mutex
		next time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if !strings.HasSuffix(r.URL.Path, "/protocol/openid-connect/token") {
			http.NotFound(w, r)
			return
		}
		if rate == 0 {
			http.Error(w, `{"error":"unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		mu.Lock()
		at := time.Now()
		if next.After(at) {
			at = next
		}
		next = at.Add(time.Duration(float64(time.Second) / rate))
		mu.Unlock()
		time.Sleep(time.Until(at))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"x","token_type":"Bearer","expires_in":300}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCapacityCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 10 s")
	}
	t.Parallel()
	srv := fakeTokenServer(t, 100)
	out := filepath.Join(t.TempDir(), "cap")
	code, stdout, stderr := runCLI(t, "capacity", "--target", srv.URL, "--realm", "r", "--client-id", "c", "--client-secret", "s",
		"--scenario", "client-credentials", "--slo", "p99<100ms,errors<1%", "--start", "50", "--step", "50", "--step-duration", "1s",
		"--warmup", "500ms", "--resolution", "10", "--pause", "100ms", "--out", out, "--quiet", "--procs", "0")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r, err := results.ReadCapacityDir(out)
	if err != nil {
		t.Fatal(err)
	}
	// Above 100/s the wait at the end of a 1 s step is (r−100)/100 s:
	// p99 < 100 ms holds up to about 110/s.
	if !r.Found || r.MaxRate < 80 || r.MaxRate > 120 || r.Scenario != "client-credentials" || r.Params["target"] != "external" {
		t.Errorf("max rate %g (found %v), want about 100; scenario %q params %v", r.MaxRate, r.Found, r.Scenario, r.Params)
	}
	if _, err := os.Stat(filepath.Join(out, results.StepsFile)); err != nil {
		t.Error(err)
	}
	for _, w := range []string{"warmup", "ramp", "search", "max rate at SLO: ", "results: " + out} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
}

func TestCapacityAdaptiveCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 30 s")
	}
	t.Parallel()
	srv := fakeTokenServer(t, 100)
	out := filepath.Join(t.TempDir(), "cap")
	// no tuning flags but short steps, so that the test is quick
	code, stdout, stderr := runCLI(t, "capacity", "--target", srv.URL, "--realm", "r", "--client-id", "c", "--client-secret", "s",
		"--scenario", "client-credentials", "--slo", "p99<100ms,errors<1%", "--step-duration", "1s", "--pause", "100ms",
		"--out", out, "--quiet", "--procs", "0")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r, err := results.ReadCapacityDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Settings.Mode != results.ModeAdaptive || r.Settings.PrecisionPct != 1 || r.Estimate <= 0 || r.Elapsed <= 0 {
		t.Errorf("settings %+v, estimate %g, elapsed %g", r.Settings, r.Estimate, r.Elapsed)
	}
	// 1 s steps cannot see a small overload: the answer is at most about
	// 100/s; a busy machine delays the load generator and fails steps
	// below it (the search's precision is tested on a model, and against a
	// real queue with the integration tests)
	if !r.Found || r.MaxRate > 130 || r.FirstFailedRate <= r.MaxRate {
		t.Errorf("max rate %g, first failed %g, want about 100: %s", r.MaxRate, r.FirstFailedRate, r.Conclusion)
	}
	if b := r.Best(); b == nil || b.Phase != results.StepConfirm {
		t.Errorf("best step %+v, want a confirm step", b)
	}
	for _, w := range []string{"probe", "confirm", "bracket: ", "elapsed: ", "estimate: ", "max rate at SLO: "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
}

func TestCapacityStartFails(t *testing.T) {
	t.Parallel()
	srv := fakeTokenServer(t, 0)
	out := filepath.Join(t.TempDir(), "cap")
	code, stdout, stderr := runCLI(t, "capacity", "--target", srv.URL, "--realm", "r", "--client-id", "c", "--client-secret", "s",
		"--scenario", "client-credentials", "--start", "60", "--step-duration", "1s", "--warmup", "0", "--out", out, "--quiet", "--procs", "0")
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitThresholds, stdout, stderr)
	}
	if !strings.Contains(stdout, "even the starting rate 60/s failed") || !strings.Contains(stderr, "no rate met the SLOs") {
		t.Errorf("stdout: %s\nstderr: %s", stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, results.CapacityFile))
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Found bool `json:"found"`
		Steps []struct {
			Failures []string `json:"failures"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Found || len(r.Steps) != 1 || !strings.Contains(strings.Join(r.Steps[0].Failures, ";"), "every iteration failed") {
		t.Errorf("capacity.json: %s", b)
	}
}

func TestCapacityUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no scenario", []string{"capacity"}, "scenario: required"},
		{"unknown scenario", []string{"capacity", "--scenario", "nope"}, `"nope": unknown`},
		{"bad slo", []string{"capacity", "--scenario", "jwks", "--slo", "p99<fast"}, "--slo"},
		{"no slo", []string{"capacity", "--scenario", "jwks", "--slo", ""}, "no SLO"},
		{"bad start", []string{"capacity", "--scenario", "jwks", "--start", "0"}, "--start 0: must be positive"},
		{"bad search", []string{"capacity", "--scenario", "jwks", "--search", "fast"}, `--search "fast"`},
		{"step with adaptive", []string{"capacity", "--scenario", "jwks", "--search", "adaptive", "--step", "5"}, "apply to --search linear"},
		{"precision with linear", []string{"capacity", "--scenario", "jwks", "--step", "5", "--precision", "2"}, "apply to the adaptive search"},
		{"bad precision", []string{"capacity", "--scenario", "jwks", "--precision", "80"}, "precision"},
		{"max below start", []string{"capacity", "--scenario", "jwks", "--start", "50", "--max-rate", "10"}, "--max-rate"},
		{"repeats", []string{"capacity", "--scenario", "jwks", "--repeats", "0"}, "--repeats"},
		{"dataset flags", []string{"capacity", "--scenario", "jwks", "--tenants", "5"}, "apply with --kc-version only"},
		{"old version", []string{"capacity", "--scenario", "jwks", "--kc-version", "26.4.7,25.0.6"}, "26.x line only"},
		{"matrix and target", []string{"capacity", "--scenario", "jwks", "--kc-version", "26.4.7", "--target", "http://127.0.0.1:1"}, "--target does not apply"},
		{"matrix and repeats", []string{"capacity", "--scenario", "jwks", "--kc-version", "26.4.7", "--repeats", "2"}, "--repeats applies"},
		{"bad percent", []string{"capacity", "--scenario", "jwks", "--min-achieved", "120"}, "--min-achieved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != exitUsage || !strings.Contains(out+errs, c.want) {
				t.Errorf("exit %d, want %d; output lacks %q?\nstdout: %s\nstderr: %s", code, exitUsage, c.want, out, errs)
			}
		})
	}
	if code, _, errs := runCLI(t, "capacity", "--scenario", "jwks"); code != exitError || !strings.Contains(errs, "no stack is up") {
		t.Errorf("without a stack: exit %d: %s", code, errs)
	}
}
