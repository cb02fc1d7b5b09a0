package main

// Tests of kcbench size's --from, --from-metrics and --tenants-from modes.
// Golden files live in internal/sizing/testdata/cli (rewrite them with
// go test ./cmd/kcbench -run TestSize -update-size); the real captures they
// read are described in internal/sizing/testdata/README.md.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/capacity/capacitytest"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/golden"
	"github.com/kcbench/kcbench/internal/observe"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/sizing"
)

var updateSize = flag.Bool("update-size", false, "rewrite kcbench size's golden files in internal/sizing/testdata/cli")

// sizingTestdata is the sizing package's testdata, which holds the real
// captures and results these tests read, and their golden files.
var sizingTestdata = filepath.Join("..", "..", "internal", "sizing", "testdata")

// quickstartResults is a real results folder: kcbench experiment run
// quickstart --scale 0.3 on a 2-core box (manifest.json and summary.json
// of each point).
var quickstartResults = filepath.Join(sizingTestdata, "results", "quickstart")

func goldenSize(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join(sizingTestdata, "cli", name), []byte(got), *updateSize, "go test ./cmd/kcbench -run TestSize -update-size")
}

// sizing classifies every operation kcbench records.
func TestSizeOpKinds(t *testing.T) {
	t.Parallel()
	for op, want := range map[string]string{
		results.OpPasswordGrant: sizing.OpKindToken, results.OpClientCredentials: sizing.OpKindToken,
		results.OpRefresh: sizing.OpKindToken, results.OpCodeExchange: sizing.OpKindToken,
		results.OpOfflineGrant: sizing.OpKindToken, results.OpOfflineRefresh: sizing.OpKindToken,
		results.OpSessionLogin:    sizing.OpKindToken,
		results.OpAdminListRealms: sizing.OpKindAdmin, results.OpAdminGetRealm: sizing.OpKindAdmin,
		results.OpAdminListUsers: sizing.OpKindAdmin, results.OpAdminListOrgs: sizing.OpKindAdmin,
		results.OpAdminFindOrg: sizing.OpKindAdmin, results.OpAdminGetOrg: sizing.OpKindAdmin,
		results.OpAdminListMembers: sizing.OpKindAdmin,
		results.OpJWKS:             "", results.OpLoginPage: "", results.OpLogout: "", results.IterationOp: "",
	} {
		if got := sizing.OpKind(op); got != want {
			t.Errorf("OpKind(%q) = %q, want %q", op, got, want)
		}
	}
}

// ---- synthetic result folders, written with the results types ----

type fakePoint struct {
	variant, mode, policy, status, reason string
	tenants, repeat                       int
	readyRSSMiB                           int64
	workloads                             []results.Workload
	capacity                              []fakeCapacity
}

// fakeCapacity is a capacity search run at a fake point.
type fakeCapacity struct {
	name, scenario string
	server         capacitytest.Server
}

// wl is a workload whose iterations are one operation of the scenario.
func wl(name, scen, phase string, cpuMs float64, ok int64, p95 time.Duration, ops ...string) results.Workload {
	if p95 == 0 && ok > 0 {
		p95 = time.Millisecond // operations that ran took some time (results refuse a p95 of 0)
	}
	it := results.OpStats{Name: results.IterationOp, Count: ok, OK: ok, Latency: results.Dist{P95: p95}, Service: results.Dist{P95: p95}}
	st := results.Stats{Scenario: scen, Executor: "constant-vus", Model: results.ModelClosed, Iterations: ok, Ops: []results.OpStats{it}}
	for _, op := range ops {
		o := it
		o.Name = op
		st.Ops = append(st.Ops, o)
	}
	return results.Workload{Name: name, Scenario: scen, Phase: phase, Stats: st, ServerCPUMsPerOp: cpuMs, ServerCPUSource: "test",
		MaxRSSBytes: 0}
}

func writeFakeResults(t *testing.T, dir string, pts ...fakePoint) {
	t.Helper()
	for _, p := range pts {
		if p.variant == "" {
			p.variant = "default"
		}
		if p.repeat == 0 {
			p.repeat = 1
		}
		if p.status == "" {
			p.status = results.StatusDone
		}
		id := fmt.Sprintf("%s-%s-n%05d-r%d", p.variant, p.mode, p.tenants, p.repeat)
		params := map[string]string{"mode": p.mode, "tenants": fmt.Sprint(p.tenants), "variant": p.variant, "repeat": fmt.Sprint(p.repeat)}
		ds, _ := json.Marshal(map[string]any{"mode": p.mode, "tenants": p.tenants, "password_policy": p.policy})
		man := results.Manifest{Schema: results.Schema, Experiment: "fake", Point: id, Params: params, Keycloak: "26.7.3", Dataset: ds}
		sum := results.Summary{Schema: results.Schema, Point: id, Params: params, Status: p.status, Reason: p.reason, Workloads: p.workloads}
		if p.readyRSSMiB > 0 {
			sum.Boot = &results.Boot{Seconds: 20, RSSBytes: p.readyRSSMiB << 20}
		}
		pdir := filepath.Join(dir, id)
		for _, c := range p.capacity {
			cp := experiment.WithParam(params, "point", id)
			cp["workload"], cp["keycloak_version"], cp["password_policy"] = c.name, "26.7.3", p.policy
			r := capacitytest.Write(t, filepath.Join(pdir, "capacity-"+c.name), c.scenario, cp, c.server)
			sum.Capacity = append(sum.Capacity, results.Capacity{Name: c.name, Scenario: c.scenario, Dir: "capacity-" + c.name,
				Found: r.Found, MaxRate: r.MaxRate, CPUMsPerOp: r.CPUMsPerOp})
		}
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]any{results.ManifestFile: man, results.SummaryFile: sum} {
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pdir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// hashingResults is a folder shaped like experiments/hashing.yaml's results:
// three variants (password policies), two repeats, logins only.
func hashingResults(t *testing.T) string {
	dir := t.TempDir()
	login := func(ms float64) []results.Workload {
		return []results.Workload{wl("login", "password-grant", "warm", ms, 1000, 80*time.Millisecond, "password_grant")}
	}
	writeFakeResults(t, dir,
		fakePoint{variant: "default", policy: "default", mode: "realms", tenants: 1, repeat: 1, workloads: login(140)},
		fakePoint{variant: "default", policy: "default", mode: "realms", tenants: 1, repeat: 2, workloads: login(150)},
		fakePoint{variant: "pbkdf2-27500", policy: "pbkdf2-sha512:27500", mode: "realms", tenants: 1, repeat: 1, workloads: login(38)},
		fakePoint{variant: "pbkdf2-27500", policy: "pbkdf2-sha512:27500", mode: "realms", tenants: 1, repeat: 2, workloads: login(42)},
		fakePoint{variant: "pbkdf2-1", policy: "pbkdf2-sha512:1", mode: "realms", tenants: 1, repeat: 1, workloads: login(9)},
		fakePoint{variant: "pbkdf2-1", policy: "pbkdf2-sha512:1", mode: "realms", tenants: 1, repeat: 2, workloads: login(11)},
	)
	return dir
}

// ---- --from ----

func TestSizeFromRealResults(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, "size", "--from", quickstartResults)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	goldenSize(t, "from-quickstart.txt", out)
	// The figures are the warm realms-mode ones of the real run, as summary.json has them.
	p, err := results.ReadPoint(filepath.Join(quickstartResults, "default-realms-n00005-r1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"login", "token", "refresh"} {
		w := p.Summary.Workload(name, "warm")
		if w == nil || w.ServerCPUMsPerOp <= 0 {
			t.Fatalf("real results lack warm %s CPU-ms: %+v", name, w)
		}
	}
	mustContain(t, out,
		"Load: the sizing guide's example load",
		"point default-realms-n00005-r1",
		" "+trim3(p.Summary.Workload("login", "warm").ServerCPUMsPerOp)+" ",
		"Keycloak 26 sizing guide  measured: default  ratio",
	)

	// --json carries the calibration and both sizings per variant.
	code, out, errs = runCLI(t, "size", "--from", quickstartResults, "--json", "--logins", "10")
	if code != exitOK {
		t.Fatalf("--json: exit %d\nstderr: %s", code, errs)
	}
	var o sizing.Output
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(o.Variants) != 1 || o.Results != quickstartResults || o.Load != "" {
		t.Fatalf("output %+v", o)
	}
	v := o.Variants[0]
	if v.Guide.Input.LoginsPerSec != 10 || v.Measured.Input.ClientCredentialsPerSec != 0 {
		t.Errorf("load: %+v", v.Measured.Input)
	}
	if f := v.Calibration.Figure(sizing.OpLogin); f.CPUMs != p.Summary.Workload("login", "warm").ServerCPUMsPerOp || f.Mode != "realms" {
		t.Errorf("login figure %+v", f)
	}
	if v.Calibration.Policy != "pbkdf2-sha256:1" || v.Calibration.Keycloak != "26.7.3" {
		t.Errorf("calibration %+v", v.Calibration)
	}

	// --k8s writes the measured sizing.
	code, out, _ = runCLI(t, "size", "--from", quickstartResults, "--k8s")
	if code != exitOK || !strings.Contains(out, "# Rates:") || !strings.Contains(out, "variant default") {
		t.Errorf("--k8s: exit %d\n%s", code, out)
	}
}

func trim3(x float64) string {
	s := fmt.Sprintf("%.3f", x)
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}

func TestSizeFromVariants(t *testing.T) {
	t.Parallel()
	dir := hashingResults(t)
	code, out, errs := runCLI(t, "size", "--from", dir, "--logins", "100", "--pods", "2")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	goldenSize(t, "from-variants.txt", strings.ReplaceAll(out, dir, "RESULTS"))
	mustContain(t, out,
		"3 variants, each sized below",
		"variant default, Keycloak 26.7.3, password policy default",
		"mean of 2 repeats (140–150 ms)",
		"mean of 2 repeats (38–42 ms)",
		"No client-credential grant was measured; the guide's 120 per vCPU is used for it.",
	)

	code, out, errs = runCLI(t, "size", "--from", dir, "--variant", "pbkdf2-1", "--json")
	if code != exitOK {
		t.Fatalf("--variant: exit %d\nstderr: %s", code, errs)
	}
	var o sizing.Output
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Variants) != 1 || o.Variants[0].Calibration.Variant != "pbkdf2-1" || o.Variants[0].Calibration.Figure(sizing.OpLogin).CPUMs != 10 {
		t.Errorf("variants %+v", o.Variants)
	}
	if r := o.Variants[0].Measured.Input.Rates; r.LoginsPerVCPU != 100 || r.RefreshesPerVCPU != sizing.GuideRefreshesPerVCPU {
		t.Errorf("rates %+v", r)
	}

	code, _, errs = runCLI(t, "size", "--from", dir, "--variant", "argon2")
	if code != exitUsage || !strings.Contains(errs, "--variant argon2: not in") || !strings.Contains(errs, "default, pbkdf2-1, pbkdf2-27500") {
		t.Errorf("unknown variant: exit %d, stderr %s", code, errs)
	}
}

func TestSizeFromOnePointAndSkips(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	warm := []results.Workload{
		wl("login", "login-form", "warm", 30, 100, 0), wl("token", "client-credentials", "warm", 5, 100, 0),
		wl("refresh", "refresh", "warm", 6, 100, 0),
	}
	writeFakeResults(t, dir,
		fakePoint{mode: "realms", tenants: 1, policy: "default", workloads: warm},
		fakePoint{mode: "realms", tenants: 10, policy: "default", status: results.StatusAborted, reason: "watchdog", workloads: warm},
	)
	code, out, errs := runCLI(t, "size", "--from", dir, "--logins", "1")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out, "Points that did not finish, not used: default-realms-n00010-r1 (aborted).")

	// One point's folder works too.
	code, out, errs = runCLI(t, "size", "--from", filepath.Join(dir, "default-realms-n00001-r1"), "--logins", "1")
	if code != exitOK || !strings.Contains(out, `warm, login-form "login", realms mode, 1 tenant; point default-realms-n00001-r1`) {
		t.Errorf("one point: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestSizeFromCapacity(t *testing.T) {
	t.Parallel()
	// A capacity search run by an experiment's point: its cost at the best
	// step calibrates the operation the point's workloads did not measure.
	dir := t.TempDir()
	writeFakeResults(t, dir, fakePoint{mode: "realms", tenants: 1, policy: "default",
		workloads: []results.Workload{wl("login", "password-grant", "warm", 40, 100, 0)},
		capacity:  []fakeCapacity{{"cc", "client-credentials", capacitytest.Server{Limit: 97, CPUMsPerOp: 4}}}})
	code, out, errs := runCLI(t, "size", "--from", dir, "--logins", "1", "--client-credentials", "1")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out, "capacity search: capacity, client-credentials \"cc\"", "250")

	// The folders kcbench capacity writes: one search, or a version matrix.
	one := t.TempDir()
	capacitytest.Write(t, one, "client-credentials", map[string]string{"keycloak_version": "26.7.3"}, capacitytest.Server{Limit: 97, CPUMsPerOp: 2})
	code, out, errs = runCLI(t, "size", "--from", one, "--client-credentials", "500")
	if code != exitOK {
		t.Fatalf("one search: exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out, "500")
	mx := t.TempDir()
	capacitytest.Write(t, filepath.Join(mx, "26.4.7"), "client-credentials", map[string]string{"keycloak_version": "26.4.7"}, capacitytest.Server{Limit: 97, CPUMsPerOp: 2})
	capacitytest.Write(t, filepath.Join(mx, "26.7.3"), "client-credentials", map[string]string{"keycloak_version": "26.7.3"}, capacitytest.Server{Limit: 97, CPUMsPerOp: 4})
	code, out, errs = runCLI(t, "size", "--from", mx, "--client-credentials", "500", "--json")
	if code != exitOK {
		t.Fatalf("matrix: exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out, "keycloak-26.4.7", "keycloak-26.7.3")

	// A search that found no rate is named, not used.
	none := t.TempDir()
	capacitytest.Write(t, none, "client-credentials", nil, capacitytest.Server{Limit: 5, CPUMsPerOp: 2})
	if code, _, errs := runCLI(t, "size", "--from", none); code == exitOK || !strings.Contains(errs, "found no rate that met the SLOs") {
		t.Errorf("a failed search: exit %d, stderr %s", code, errs)
	}
}

func TestSizeBadResults(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o644)
	empty := t.TempDir()
	onlyJWKS := t.TempDir()
	writeFakeResults(t, onlyJWKS, fakePoint{mode: "realms", tenants: 1, workloads: []results.Workload{
		wl("jwks", "jwks", "warm", 0.7, 1000, 0), wl("admin", "admin-api", "warm", 30, 100, 0),
	}})
	noCPU := t.TempDir()
	writeFakeResults(t, noCPU, fakePoint{mode: "realms", tenants: 1, workloads: []results.Workload{wl("login", "password-grant", "warm", 0, 100, 0)}})
	broken := t.TempDir()
	os.MkdirAll(filepath.Join(broken, "p1"), 0o755)
	os.WriteFile(filepath.Join(broken, "p1", results.ManifestFile), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(broken, "p1", results.SummaryFile), []byte("{not json"), 0o644)

	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"missing folder", []string{"--from", filepath.Join(empty, "nope")}, exitUsage, []string{"no such folder"}},
		{"a file", []string{"--from", file}, exitUsage, []string{"not a folder"}},
		{"no finished points", []string{"--from", empty}, exitError, []string{"no finished points"}},
		{"no usable workloads", []string{"--from", onlyJWKS}, exitError, []string{"no usable measurement", "password-grant"}},
		{"no server CPU", []string{"--from", noCPU}, exitError, []string{"no usable measurement"}},
		{"unreadable summary", []string{"--from", broken}, exitError, []string{"summary.json"}},
		{"tenants: missing folder", []string{"--tenants-from", filepath.Join(empty, "nope")}, exitUsage, []string{"--tenants-from", "no such folder"}},
		{"tenants: no finished points", []string{"--tenants-from", empty}, exitError, []string{"no finished points"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := runCLI(t, append([]string{"size"}, c.args...)...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			mustContain(t, errs, c.want...)
		})
	}
}

// ---- --from-metrics ----

// metricsServer serves the given /metrics bodies in turn (the last one
// again once they run out) and counts the requests.
type metricsServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	n      int
}

func newMetricsServer(t *testing.T, bodies ...[]byte) *metricsServer {
	s := &metricsServer{bodies: bodies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		b := s.bodies[min(s.n, len(s.bodies)-1)]
		s.n++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func capture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sizingTestdata, "metrics", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withoutLines drops the lines that contain any of the strings: a capture
// of a Keycloak that does not expose those metrics.
func withoutLines(b []byte, drop ...string) []byte {
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
lines:
	for sc.Scan() {
		for _, d := range drop {
			if strings.Contains(sc.Text(), d) {
				continue lines
			}
		}
		out.WriteString(sc.Text() + "\n")
	}
	return out.Bytes()
}

// runSizeFake runs kcbench size with a fake clock: sleeping advances it.
func runSizeFake(t *testing.T, hc *http.Client, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	d := sizing.Deps{
		Now:   func() time.Time { return now },
		Sleep: func(_ context.Context, dd time.Duration) error { now = now.Add(dd); return nil },
		HC:    hc,
		Logf:  e.logf,
	}
	ctx := context.Background()
	if len(args) > 0 && args[0] == "size" {
		args = args[1:]
	}
	code = exitCode(ctx, e, runSize(ctx, e, args, d))
	return code, out.String(), errb.String()
}

// The real captures: before, then after kcbench load --scenario mix
// --duration 10s --vus 4 (client_credentials 239, refresh 239,
// code_exchange 23 sent) and --scenario logout --duration 3s --vus 2
// (password_grant 85, logout 85), on a realms-mode tenant with
// pbkdf2-sha256:1. See internal/sizing/testdata/README.md.
func TestParseRealCaptures(t *testing.T) {
	t.Parallel()
	before, err := parseSnapshot(t, bytes.NewReader(capture(t, "kc26.7.3-before.txt")))
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseSnapshot(t, bytes.NewReader(capture(t, "kc26.7.3-after-mix-logout.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := before[sizing.MetricHashValidations]; ok {
		t.Errorf("before any password login, Keycloak has no hashing series: %+v", before[sizing.MetricHashValidations])
	}
	if len(before[sizing.MetricUserEvents]) != 1 || len(after[sizing.MetricUserEvents]) != 6 {
		t.Errorf("user event series: %d before, %d after", len(before[sizing.MetricUserEvents]), len(after[sizing.MetricUserEvents]))
	}
	l, err := sizing.LiveRates(before, after, 10*time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, e := range l.Events {
		got[e.Event] = e.Count
	}
	// What kcbench load sent: the mix's grants and refreshes, the logout
	// scenario's logins and logouts, the login form's logins, and the 8
	// sessions the refresh VUs (4 × 2) log in when they start.
	want := map[string]float64{"client_login": 239, "refresh_token": 239, "logout": 85, "login": 85 + 23 + 8}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("event counts %v, want %v", got, want)
	}
	if len(l.Hashing) != 1 || l.Hashing[0].Algorithm != "pbkdf2-sha256" || l.Hashing[0].Strength != "1" || l.Hashing[0].Count != want["login"] {
		t.Errorf("hashing %+v: one validation per password login expected", l.Hashing)
	}
	if l.Observed.LoginsPerSec != 11.6 || l.Observed.ClientCredentialsPerSec != 23.9 || l.Observed.LogoutsPerSec != 8.5 {
		t.Errorf("observed %+v", l.Observed)
	}

	// Failed logins: error≠"" is counted apart, and the hash outcome says invalid.
	failed, err := parseSnapshot(t, bytes.NewReader(capture(t, "kc26.7.3-after-failed-logins.txt")))
	if err != nil {
		t.Fatal(err)
	}
	l, err = sizing.LiveRates(after, failed, time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	if e := l.Events[0]; e.Event != "login" || e.Count != 1 || e.ErrorCount != 7 {
		t.Errorf("login after 7 bad passwords and 1 good one: %+v", e)
	}
	if h := l.Hashing[0]; h.Outcomes["invalid"] != 7 || h.Outcomes["valid"] != 1 {
		t.Errorf("hash outcomes %+v", h.Outcomes)
	}
}

func TestSizeFromMetrics(t *testing.T) {
	t.Parallel()
	srv := newMetricsServer(t, capture(t, "kc26.7.3-before.txt"), capture(t, "kc26.7.3-after-mix-logout.txt"))
	code, out, errs := runSizeFake(t, srv.Client(), "size", "--from-metrics", srv.URL, "--interval", "10s", "--peak", "3", "--pods", "2")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	goldenSize(t, "from-metrics.txt", strings.ReplaceAll(out, srv.URL, "URL"))
	mustContain(t, out,
		"over 10s",
		"login            116   11.6",
		"Load to size: observed × peak factor 3",
		"Keycloak sizing for 34.8 logins/s, 71.7 client-credential grants/s, 71.7 refresh-token requests/s, 25.5 logouts/s",
	)
	mustContain(t, errs, "size: reading "+srv.URL+"/metrics, again in 10s")

	// --json: the observed load and the guide's sizing for it.
	srv = newMetricsServer(t, capture(t, "kc26.7.3-before.txt"), capture(t, "kc26.7.3-after-mix-logout.txt"))
	code, out, errs = runSizeFake(t, srv.Client(), "size", "--from-metrics", srv.URL+"/metrics", "--interval", "10s", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d\nstderr: %s", code, errs)
	}
	var o sizing.Output
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if o.Observed == nil || o.Sizing == nil || o.Observed.IntervalSeconds != 10 || o.Sizing.Input.RefreshesPerSec != 23.9 {
		t.Errorf("output %+v", o)
	}
}

// Two pods: their rates add up. With --from, the observed load is sized
// with the measured costs.
func TestSizeFromMetricsTwoPodsCalibrated(t *testing.T) {
	t.Parallel()
	a := newMetricsServer(t, capture(t, "kc26.7.3-before.txt"), capture(t, "kc26.7.3-after-mix-logout.txt"))
	b := newMetricsServer(t, capture(t, "kc26.7.3-before.txt"), capture(t, "kc26.7.3-after-mix-logout.txt"))
	code, out, errs := runSizeFake(t, http.DefaultClient, "size", "--from-metrics", a.URL, "--from-metrics", b.URL,
		"--interval", "10s", "--from", quickstartResults, "--json")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	var o sizing.Output
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if o.Observed == nil || o.Observed.Observed.LoginsPerSec != 23.2 || len(o.Variants) != 1 {
		t.Fatalf("output %+v", o)
	}
	v := o.Variants[0]
	if v.Measured.Input.ClientCredentialsPerSec != 47.8 || v.Measured.Input.Rates.Source == sizing.GuideSource {
		t.Errorf("measured input %+v", v.Measured.Input)
	}
	if !strings.Contains(o.Load, a.URL) || !strings.Contains(o.Load, b.URL) {
		t.Errorf("load %q", o.Load)
	}
}

func TestSizeFromMetricsProblems(t *testing.T) {
	t.Parallel()
	noEvents := withoutLines(capture(t, "kc26.7.3-after-mix-logout.txt"), sizing.MetricUserEvents)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	cases := []struct {
		name string
		srv  func(t *testing.T) string
		args []string
		code int
		want []string
	}{
		{"no event metrics", func(t *testing.T) string { return newMetricsServer(t, noEvents).URL }, nil, exitError,
			[]string{"keycloak_user_events_total is not exposed", "--metrics-enabled=true", "--event-metrics-user-enabled=true"}},
		{"unreachable", func(*testing.T) string { return deadURL }, nil, exitError,
			[]string{"cannot read " + deadURL + "/metrics", "management URL, port 9000"}},
		{"no /metrics", func(t *testing.T) string {
			s := httptest.NewServer(http.NotFoundHandler())
			t.Cleanup(s.Close)
			return s.URL
		}, nil, exitError, []string{"HTTP 404", "--metrics-enabled=true"}},
		{"not prometheus text", func(t *testing.T) string { return newMetricsServer(t, []byte("<html>\n")).URL }, nil, exitError,
			[]string{"--from-metrics"}},
		{"restarted between reads", func(t *testing.T) string {
			return newMetricsServer(t, capture(t, "kc26.7.3-after-mix-logout.txt"), capture(t, "kc26.7.3-before.txt")).URL
		}, nil, exitError, []string{"counter went down", "restarted"}},
		{"zero peak", nil, []string{"--peak", "0"}, exitUsage, []string{"--peak: must be a factor > 0"}},
		{"negative peak", nil, []string{"--peak", "-2"}, exitUsage, []string{"--peak"}},
		{"zero interval", nil, []string{"--interval", "0s"}, exitUsage, []string{"--interval: must be > 0"}},
		{"load flags too", nil, []string{"--logins", "5"}, exitUsage, []string{"both give the load"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := "http://127.0.0.1:1"
			if c.srv != nil {
				url = c.srv(t)
			}
			args := []string{"size", "--from-metrics", url}
			if !slices.Contains(c.args, "--interval") {
				args = append(args, "--interval", "1s")
			}
			args = append(args, c.args...)
			code, out, errs := runSizeFake(t, &http.Client{Timeout: 5 * time.Second}, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			mustContain(t, errs, c.want...)
		})
	}
}

func TestSizeFromMetricsInterrupted(t *testing.T) {
	t.Parallel()
	srv := newMetricsServer(t, capture(t, "kc26.7.3-before.txt"))
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	d := sizing.Deps{Now: time.Now, Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); <-ctx.Done(); return ctx.Err() },
		HC: srv.Client(), Logf: e.logf}
	if code := exitCode(ctx, e, runSize(ctx, e, []string{"--from-metrics", srv.URL}, d)); code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr %s", code, exitInterrupted, errb.String())
	}
}

// ---- --tenants-from ----

// mt7Results is a real multi-tenancy results folder: a small study (1, 10
// and 40 tenants per mode, client-credentials 8 VUs and admin API 4 VUs,
// 6 s cold and warm; experiment.yaml) run on a loaded 2-core box. Its orgs
// point at 10 tenants was aborted by the watchdog (cold token errors).
var mt7Results = filepath.Join(sizingTestdata, "results", "mt7")

func TestSizeTenantsRealResults(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, "size", "--tenants-from", mt7Results)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	goldenSize(t, "tenants-mt7.txt", out)
	mustContain(t, out, "variant default, orgs mode", "variant default, realms mode", "broke first at", "point aborted")

	// Its client-credentials workloads calibrate the grant's cost; the
	// other operations keep the guide's rates.
	code, out, errs = runCLI(t, "size", "--from", mt7Results, "--client-credentials", "360")
	if code != exitOK {
		t.Fatalf("--from: exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out, `warm, client-credentials "token", realms mode, 1 tenant; point default-realms-n00001-r1`,
		"No login was measured", "Points that did not finish, not used: default-orgs-n00010-r1 (aborted).")
}

// tenantsResults is a multi-tenancy experiment: realms mode breaks on the
// admin API at 500 tenants and on memory at 1000; orgs mode holds.
func tenantsResults(t *testing.T) string {
	dir := t.TempDir()
	ms := time.Millisecond
	point := func(mode string, n int, rss int64, tokenP95, adminP95 time.Duration) fakePoint {
		tok := wl("token", "client-credentials", "warm", 5, 5000, tokenP95, "client_credentials")
		adm := wl("admin", "admin-api", "warm", 30, 500, adminP95, "admin_list_realms", "admin_get_realm", "admin_list_users")
		cold := wl("admin", "admin-api", "cold", 90, 50, 10*adminP95, "admin_list_realms")
		tok.MaxRSSBytes, adm.MaxRSSBytes = (rss+80)<<20, (rss+120)<<20
		return fakePoint{mode: mode, tenants: n, readyRSSMiB: rss, workloads: []results.Workload{cold, tok, adm}}
	}
	aborted := point("realms", 1500, 3900, 0, 0)
	aborted.status, aborted.reason, aborted.workloads = results.StatusAborted, "Keycloak RSS 4200 MiB above the limit 4GiB", nil
	writeFakeResults(t, dir,
		point("realms", 1, 520, 40*ms, 80*ms), point("realms", 100, 900, 45*ms, 250*ms), point("realms", 500, 1900, 60*ms, 1400*ms),
		point("realms", 1000, 3100, 90*ms, 2800*ms), aborted,
		point("orgs", 1, 510, 40*ms, 70*ms), point("orgs", 100, 540, 42*ms, 90*ms), point("orgs", 500, 600, 44*ms, 120*ms),
		point("orgs", 1000, 660, 47*ms, 150*ms), point("orgs", 1500, 720, 50*ms, 180*ms),
	)
	return dir
}

func TestSizeTenants(t *testing.T) {
	t.Parallel()
	dir := tenantsResults(t)
	code, out, errs := runCLI(t, "size", "--tenants-from", dir, "--memory-limit-mib", "4096")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	goldenSize(t, "tenants.txt", strings.ReplaceAll(out, dir, "RESULTS"))
	mustContain(t, out,
		"variant default, orgs mode",
		"held up to 1500 tenants, the most tested",
		"variant default, realms mode",
		"held up to 100 tenants",
		"broke first at 500 tenants:",
		"admin API p95: warm admin admin_list_realms: 1.4 s > 1 s (default-realms-n00500-r1)",
		"point aborted or failed at 1500",
	)

	// The default memory limit is the guide's pod limit, 1360 MiB: realms
	// break on RSS at 500 as well. --slo-phase cold checks the cold workloads.
	code, out, errs = runCLI(t, "size", "--tenants-from", dir, "--slo-phase", "cold", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d\nstderr: %s", code, errs)
	}
	var o sizing.TenantsOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if o.SLO.MemoryLimitMiB != 1360 || o.SLO.Phase != "cold" || len(o.Capacities) != 2 {
		t.Fatalf("output %+v", o)
	}
	orgs, realms := o.Capacities[0], o.Capacities[1]
	if orgs.MaxHeld != 100 || orgs.FirstBroken != 500 { // cold admin p95 900 ms at 100 tenants, 1.2 s at 500
		t.Errorf("orgs %+v", orgs)
	}
	if realms.MaxHeld != 1 || realms.FirstBreak[sizing.SLOReadyRSS] != 500 {
		t.Errorf("realms %+v", realms)
	}

	// --memory-request-mib moves the default limit with it.
	code, out, _ = runCLI(t, "size", "--tenants-from", dir, "--memory-request-mib", "2000", "--json", "--variant", "default")
	if code != exitOK || json.Unmarshal([]byte(out), &o) != nil || o.SLO.MemoryLimitMiB != 2430 {
		t.Errorf("memory limit from --memory-request-mib 2000: exit %d, %+v", code, o.SLO)
	}
}

func TestSizeModeUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"from and cpu-ms", []string{"--from", dir, "--login-cpu-ms", "1", "--cc-cpu-ms", "1", "--refresh-cpu-ms", "1"}, []string{"--from and --login-cpu-ms, --cc-cpu-ms, --refresh-cpu-ms: both give the cost"}},
		{"empty from", []string{"--from", ""}, []string{"--from: want a results folder"}},
		{"variant alone", []string{"--variant", "x", "--logins", "1"}, []string{"--variant: only with --from or --tenants-from"}},
		{"peak without metrics", []string{"--peak", "2"}, []string{"--peak: only with --from-metrics"}},
		{"interval without metrics", []string{"--interval", "5s"}, []string{"--interval: only with --from-metrics"}},
		{"slo without tenants", []string{"--slo-admin-p95", "2s", "--memory-limit-mib", "4096"}, []string{"--slo-admin-p95, --memory-limit-mib: only with --tenants-from"}},
		{"tenants and load", []string{"--tenants-from", dir, "--logins", "5", "--k8s"}, []string{"drop --k8s, --logins"}},
		{"tenants and from", []string{"--tenants-from", dir, "--from", dir}, []string{"drop --from"}},
		{"bad slo phase", []string{"--tenants-from", dir, "--slo-phase", "hot"}, []string{"--slo-phase: want warm, cold or all"}},
		{"negative slo", []string{"--tenants-from", dir, "--slo-token-p95", "-1s"}, []string{"--slo-token-p95: must be ≥ 0"}},
		{"error rate over 100", []string{"--tenants-from", dir, "--slo-error-rate", "101"}, []string{"--slo-error-rate"}},
		{"zero memory limit", []string{"--tenants-from", dir, "--memory-limit-mib", "0"}, []string{"--memory-limit-mib: must be"}},
		{"not a URL", []string{"--from-metrics", "kc:9000"}, []string{"want Keycloak's management URL"}},
		{"every problem at once", []string{"--from-metrics", "http://x", "--peak", "0", "--interval", "-1s", "--logins", "1"},
			[]string{"3 problems", "--peak", "--interval", "both give the load"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := runCLI(t, append([]string{"size"}, c.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, out, errs)
			}
			if out != "" {
				t.Errorf("stdout not empty: %s", out)
			}
			mustContain(t, errs, c.want...)
		})
	}
}

// parseSnapshot reads a /metrics capture as scrapeSnapshot reads a live one.
func parseSnapshot(t *testing.T, r io.Reader) (sizing.Snapshot, error) {
	t.Helper()
	fams, err := observe.ParseText(r)
	return sizing.SnapshotOf(fams), err
}
