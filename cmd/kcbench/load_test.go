package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadUsageErrors(t *testing.T) {
	tgt := []string{"--target", "http://127.0.0.1:1", "--realm", "r"}
	with := func(args ...string) []string { return append(append([]string{"load"}, tgt...), args...) }
	cases := []struct {
		name string
		args []string
		want []string // every one must appear
	}{
		{"no scenario", with(), []string{"scenario: required"}},
		{"unknown scenario", with("--scenario", "nope"), []string{`scenario: "nope": unknown`}},
		{"unknown executor", with("--scenario", "jwks", "--executor", "fast"), []string{`executor: "fast"`}},
		{"all problems at once", with("--scenario", "jwks", "--vus", "0", "--duration", "-1s", "--threshold", "p95<<1"),
			[]string{"vus: 0", "duration: -1s", "thresholds: threshold \"p95<<1\""}},
		{"rate without arrival rate", with("--scenario", "jwks", "--rate", "5"), []string{"rate: applies to constant-arrival-rate only"}},
		{"arrival rate without rate", with("--scenario", "jwks", "--executor", "constant-arrival-rate"), []string{"--rate: 0: must be > 0"}},
		{"stages without ramping", with("--scenario", "jwks", "--stages", "1s:2"), []string{"stages: apply to"}},
		{"ramping without stages", with("--scenario", "jwks", "--executor", "ramping-vus"), []string{"needs at least one stage"}},
		{"bad stage", with("--scenario", "jwks", "--executor", "ramping-vus", "--stages", "10s"), []string{"DURATION:TARGET"}},
		{"fractional VUs", with("--scenario", "jwks", "--executor", "ramping-vus", "--stages", "1s:2.5"), []string{"not a whole number"}},
		{"warm-up longer than stages", with("--scenario", "jwks", "--executor", "ramping-arrival-rate", "--stages", "1s:2", "--warmup", "2s"), []string{"warmup: 2s"}},
		{"iterations without per-vu", with("--scenario", "jwks", "--iterations", "3"), []string{"iterations: applies"}},
		{"max-vus below vus", with("--scenario", "jwks", "--executor", "constant-arrival-rate", "--rate", "1", "--vus", "5", "--max-vus", "2"), []string{"--max-vus: 2"}},
		{"skew", with("--scenario", "jwks", "--tenant-skew", "-1"), []string{"--tenant-skew: tenant skew -1"}},
		{"mix elsewhere", with("--scenario", "jwks", "--mix", "jwks=1"), []string{"mix: applies to the mix scenario only"}},
		{"bad mix", with("--scenario", "mix", "--mix", "jwks"), []string{"scenario=weight"}},
		{"mix of unknown", with("--scenario", "mix", "--mix", "nope=1"), []string{`unknown scenario "nope"`}},
		{"user flags without realm", []string{"load", "--scenario", "jwks", "--username", "u"}, []string{"need realm"}},
		{"target without data", []string{"load", "--scenario", "jwks", "--target", "http://127.0.0.1:1"}, []string{"--manifest or --realm"}},
		{"bad target URL", []string{"load", "--scenario", "jwks", "--target", "ftp://x", "--realm", "r"}, []string{"want an http"}},
		{"realm and manifest", with("--scenario", "jwks", "--manifest", "m.json"), []string{"exclude each other"}},
		{"scenario needs a user", with("--scenario", "password-grant", "--client-id", "c"), []string{"needs a username"}},
		{"admin-api needs admin", with("--scenario", "admin-api"), []string{"admin credentials"}},
		{"unknown event", with("--scenario", "jwks", "--event", "30s explode node=2"), []string{`--event: event "30s explode node=2": unknown action "explode"`}},
		{"bad event time", with("--scenario", "jwks", "--event", "soon kill"), []string{`time "soon"`}},
		{"events on an external target", with("--scenario", "jwks", "--event", "1s kill"), []string{"--event: fault events act on the local stack"}},
		{"negative recovery SLO", with("--scenario", "jwks", "--recovery-slo", "-1s"), []string{"--recovery-slo: -1s: must be positive"}},
		{"YAML events", []string{"load", "--file", writeFile(t, "f.yaml", "scenario: jwks\nevents: [\"5s kill node=x\"]\n")}, []string{`node "x"`}},
		{"missing file", []string{"load", "--file", "/nonexistent.yaml"}, []string{"nonexistent.yaml"}},
		{"unknown YAML key", []string{"load", "--file", writeFile(t, "a.yaml", "scenario: jwks\nvu: 3\n")}, []string{"field vu not found"}},
		{"bad YAML duration", []string{"load", "--file", writeFile(t, "b.yaml", "scenario: jwks\nduration: soon\n")}, []string{"soon", "time.Duration"}},
		{"bad YAML stage", []string{"load", "--file", writeFile(t, "c.yaml", "scenario: jwks\nexecutor: ramping-vus\nstages:\n  - {duration: 1s, vus: 3}\n")}, []string{"field vus not found in a stage"}},
		{"empty YAML", []string{"load", "--file", writeFile(t, "d.yaml", "")}, []string{"is empty"}},
		{"YAML problems are validated", append([]string{"load", "--file", writeFile(t, "e.yaml", "scenario: jwks\nexecutor: constant-arrival-rate\n")}, tgt...), []string{"--rate: 0: must be > 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, out, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q\nstderr: %s", w, errs)
				}
			}
		})
	}
}

func TestScenariosCommand(t *testing.T) {
	code, out, _ := runCLI(t, "scenarios")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, name := range []string{"password-grant", "login-form", "client-credentials", "refresh", "introspect",
		"userinfo", "jwks", "discovery", "logout", "offline", "admin-api", "admin-console", "admin-search", "admin-sessions", "token-exchange", "uma", "user-journey", "mix"} {
		if !strings.Contains(out, "\n"+name+" ") && !strings.HasPrefix(out, name+" ") {
			t.Errorf("%s not listed:\n%s", name, out)
		}
	}
}

// fakeKC serves a realm's certs and a management /metrics whose CPU counter
// grows by 1 ms per request served, of a node in a cluster of 3.
func fakeKC(t *testing.T) (base, mgmt string, hits *atomic.Int64) {
	t.Helper()
	hits = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/realms/r/protocol/openid-connect/certs":
			hits.Add(1)
			io.WriteString(w, `{"keys":[{"kid":"k","kty":"RSA"}]}`)
		case "/metrics":
			fmt.Fprintf(w, "# TYPE process_cpu_time_ns counter\nprocess_cpu_time_ns_total %d\nprocess_uptime_seconds 5.5\nvendor_cluster_size{node=\"kc-0\"} 3.0\n", hits.Load()*int64(time.Millisecond))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, srv.URL, hits
}

func TestLoadRunAndOutputs(t *testing.T) {
	base, _, _ := fakeKC(t)
	out := filepath.Join(t.TempDir(), "res")
	code, stdout, stderr := runCLI(t, "load", "--target", base, "--realm", "r", "--scenario", "jwks",
		"--executor", "constant-arrival-rate", "--rate", "50", "--vus", "2", "--duration", "1s", "--warmup", "200ms",
		"--threshold", "jwks:p99<5s", "--threshold", "errors<1%", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"scenario:     jwks", "open model", "✓ jwks:p99<5000ms", "server cpu:   unavailable: the target is not a local stack and has no management URL"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, f := range []string{"summary.json", "timeline.csv", "iteration.hlog", "jwks.hlog", "jwks.service.hlog"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s results.Stats
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if op, ok := s.Op("jwks"); !ok || op.OK < 40 || op.Errors != 0 || len(s.Thresholds) != 2 {
		t.Fatalf("summary: %+v", s)
	}
	var extra struct {
		ServerCPU results.ServerCPU `json:"server_cpu"`
	}
	if err := json.Unmarshal(b, &extra); err != nil || extra.ServerCPU.Available || extra.ServerCPU.Reason == "" {
		t.Fatalf("server_cpu: %+v %v", extra.ServerCPU, err)
	}
}

func TestLoadServerCPUFromMetrics(t *testing.T) {
	base, mgmt, _ := fakeKC(t)
	code, stdout, stderr := runCLI(t, "load", "--target", base, "--management-url", mgmt, "--realm", "r",
		"--scenario", "jwks", "--vus", "1", "--duration", "1s", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	// The fake server's "CPU" is 1 ms per request.
	if !strings.Contains(stdout, "from "+mgmt+"/metrics") || !strings.Contains(stdout, "ms per successful jwks") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	// Its uptime metric says 5.5 s: a cold JVM, which the log says.
	if !strings.Contains(stderr, "Keycloak has been up only 6s") {
		t.Errorf("no cold-JVM warning:\n%s", stderr)
	}
	if strings.Contains(stderr, "iterations ") {
		t.Errorf("--quiet printed progress:\n%s", stderr)
	}
	// One management URL of a 3-node cluster: said before and after.
	const part = "counts 1 of the 3 pods' work"
	if !strings.Contains(stderr, part) || !strings.Contains(stdout, "warning: Keycloak's cluster has 3 nodes") {
		t.Errorf("no warning of a part of the cluster measured:\nstdout: %s\nstderr: %s", stdout, stderr)
	}
}

// --management-url once per pod: the server CPU is the sum over them, and
// the summary names every source. The load reaches pod 1 only, whose
// counter moves by 1 ms per request; pod 2's moves by 1 s per scrape.
func TestLoadServerCPUSummedOverPods(t *testing.T) {
	base, mgmt1, hits := fakeKC(t)
	var scrapes atomic.Int64
	pod2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "process_cpu_seconds_total %d\n", scrapes.Add(1))
	}))
	defer pod2.Close()
	out := filepath.Join(t.TempDir(), "res")
	code, stdout, stderr := runCLI(t, "load", "--target", base, "--management-url", mgmt1, "--management-url", pod2.URL, "--realm", "r",
		"--scenario", "jwks", "--vus", "1", "--duration", "1s", "--quiet", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		ServerCPU results.ServerCPU `json:"server_cpu"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	c := sum.ServerCPU
	pod1 := float64(hits.Load()) / 1000 // seconds, at most: the window is part of the run
	if !c.Available || !strings.Contains(c.Source, "sum over 2 pods") || !strings.Contains(c.Source, pod2.URL) || c.CPU < 1 || c.CPU > pod1+float64(scrapes.Load()) {
		t.Fatalf("server CPU %+v (pod 1 at most %.3f s, pod 2 scraped %d times)", c, pod1, scrapes.Load())
	}
	code, _, stderr = runCLI(t, "load", "--target", base, "--management-url", mgmt1, "--management-url", mgmt1, "--realm", "r", "--scenario", "jwks")
	if code != exitUsage || !strings.Contains(stderr, "given twice: one URL per pod") {
		t.Errorf("the same pod twice: exit %d, %s", code, stderr)
	}
}

func TestLoadThresholdExitCode(t *testing.T) {
	base, _, _ := fakeKC(t)
	out := filepath.Join(t.TempDir(), "res")
	file := writeFile(t, "run.yaml", `
scenario: jwks
executor: constant-vus
vus: 1
duration: 500ms
thresholds: ["rate>99999"]
out: `+out+`
`)
	code, stdout, stderr := runCLI(t, "load", "--file", file, "--target", base, "--realm", "r", "--threshold", "errors<1%")
	if code != exitThresholds {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitThresholds, stdout, stderr)
	}
	if !strings.Contains(stdout, "✗ rate>99999") || !strings.Contains(stdout, "✓ errors<1%") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
		t.Errorf("results not written before the exit code: %v", err)
	}
}
