package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// hostileCase is one command run on hostile input: the exit code and the
// message it must give, within a few seconds.
type hostileCase struct {
	name string
	args []string
	code int
	want string
}

// runHostile runs each case with a deadline: a hang is a failure, not a
// test that never ends.
func runHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			done := make(chan struct{})
			var code int
			var stdout, stderr string
			go func() { code, stdout, stderr = runCLICtx(t, ctx, c.args...); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("kcbench %s still running after 30 s", strings.Join(c.args, " "))
			}
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			if msg := errorLine(stderr); !strings.Contains(msg, c.want) {
				t.Errorf("error %q lacks %q\nstderr: %s", msg, c.want, stderr)
			}
		})
	}
}

// hostileFiles makes a FIFO, a symbolic link loop, a folder and a sparse
// file of size bytes in dir.
func hostileFiles(t *testing.T, dir string, size int64) (fifo, loop, folder, big string) {
	t.Helper()
	fifo, loop, folder, big = filepath.Join(dir, "fifo"), filepath.Join(dir, "loop"), filepath.Join(dir, "folder"), filepath.Join(dir, "big")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return fifo, loop, folder, big
}

// Every file a user gives is read through one bounded, regular-file-only
// reader: a FIFO, a device, a folder, a symlink loop or an oversized file
// is an error at once, naming the file and what it is.
func TestHostileInputFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, loop, folder, big := hostileFiles(t, dir, fileutil.MaxConfigFile+1)
	status := func(pwFile string) []string {
		return []string{"status", "--target", "http://127.0.0.1:1", "--admin-password-file", pwFile}
	}
	// A results folder whose summary.json is a FIFO.
	res := filepath.Join(dir, "res")
	os.Mkdir(res, 0o755)
	if err := syscall.Mkfifo(filepath.Join(res, "summary.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	runHostile(t, []hostileCase{
		{"password file FIFO", status(fifo), exitUsage, "is a FIFO (named pipe), not a regular file"},
		{"password file /dev/zero", status("/dev/zero"), exitUsage, "/dev/zero is a character device"},
		{"password file too large", status(big), exitUsage, "larger than the 64 KiB limit"},
		{"password file symlink loop", status(loop), exitUsage, "a loop of symbolic links"},
		{"password file folder", status(folder), exitUsage, "is a directory"},
		{"experiment FIFO", []string{"experiment", "plan", fifo}, exitUsage, "is a FIFO"},
		{"experiment /dev/zero", []string{"experiment", "plan", "/dev/zero"}, exitUsage, "/dev/zero is a character device"},
		{"experiment too large", []string{"experiment", "plan", big}, exitUsage, "larger than the 16 MiB limit"},
		{"experiment symlink loop", []string{"experiment", "plan", loop}, exitUsage, "a loop of symbolic links"},
		{"run file FIFO", []string{"load", "--file", fifo}, exitUsage, "is a FIFO"},
		{"run file /dev/zero", []string{"load", "--file", "/dev/zero"}, exitUsage, "character device"},
		{"run file too large", []string{"load", "--file", big}, exitUsage, "larger than the 16 MiB limit"},
		{"report summary FIFO", []string{"report", res}, exitError, "is a FIFO"},
		{"gate summary FIFO", []string{"gate", "--baseline", res, "--current", res}, exitError, "is a FIFO"},
		{"compare summary FIFO", []string{"compare", res, res}, exitError, "is a FIFO"},
	})
}

// Values that were accepted silently (an empty --target fell back to the
// local stack, --precision 0 became 1 %, --tenants 0 became 1, SLOs no
// server can meet) are refused before anything runs, naming the flag.
func TestHostileFlagValues(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	load := func(extra ...string) []string {
		return append([]string{"load", "--scenario", "jwks", "--realm", "r"}, extra...)
	}
	capa := func(extra ...string) []string { return append([]string{"capacity", "--scenario", "jwks"}, extra...) }
	runHostile(t, []hostileCase{
		{"target empty", load("--target", ""), exitUsage, `--target "": empty (an unset variable?)`},
		{"target empty, status", []string{"status", "--target=", "--admin-password-file", pw}, exitUsage, `--target "": empty`},
		{"target query", load("--target", "http://127.0.0.1:1/?a=b"), exitUsage, "a query (?…) cannot be part of a base URL"},
		{"target fragment", load("--target", "http://127.0.0.1:1/#x"), exitUsage, "a fragment (#…) cannot be part of a base URL"},
		{"target user info", load("--target", "http://u:p@127.0.0.1:1"), exitUsage, "user info in the URL"},
		{"target scheme", load("--target", "ftp://127.0.0.1:1"), exitUsage, `scheme "ftp"`},
		{"target no scheme", load("--target", "127.0.0.1:8080"), exitUsage, "want an http:// or https:// URL"},
		{"management url empty", load("--target", "http://127.0.0.1:1", "--management-url", ""), exitUsage, `--management-url "": empty`},
		{"precision 0", capa("--precision", "0"), exitUsage, "--precision 0: must be a percentage above 0 and at most 50 (1 for 1%)"},
		{"precision 60", capa("--precision", "60"), exitUsage, "--precision 60: must be a percentage"},
		{"precision NaN", capa("--precision", "NaN"), exitUsage, "--precision NaN: must be a percentage"},
		{"slo errors 200%", capa("--slo", "errors<200%"), exitUsage, "an error rate is at most 100%"},
		{"slo errors fraction 2", capa("--slo", "errors<2"), exitUsage, "an error rate is at most 100%"},
		{"slo p99.9<0ms", capa("--slo", "p99.9<0ms"), exitUsage, "can never pass"},
		{"slo max>5ms", capa("--slo", "max>5ms"), exitUsage, "max must be bounded from above"},
		{"slo errors>1%", capa("--slo", "errors>1%"), exitUsage, "errors must be bounded from above"},
		{"slo negative", capa("--slo", "p99<-5ms"), exitUsage, "negative"},
		{"threshold errors 200%", load("--threshold", "errors<200%"), exitUsage, "an error rate is at most 100%"},
		{"threshold p95<=0", load("--threshold", "p95<=0"), exitUsage, "can never pass"},
		{"tenants 0", []string{"seed", "--tenants", "0"}, exitUsage, "--tenants: 0: must be between 1 and"},
		{"users 0", []string{"seed", "--users", "0"}, exitUsage, "--users: 0: must be between 1 and"},
		{"sessions -1", []string{"seed", "--sessions", "-1"}, exitUsage, "--sessions: -1: must be between 0 and 10000000"},
		{"offline sessions 1e12", []string{"seed", "--offline-sessions", "1000000000000"}, exitUsage, "--offline-sessions: 1000000000000: must be between 0 and"},
		{"roles per user 0", []string{"seed", "--roles-per-user", "0"}, exitUsage, "--roles-per-user: 0: must be between 1 and"},
		{"roles per user beyond the roles", []string{"seed", "--roles-per-user", "9"}, exitUsage, "roles per user = 9: must be between 0 and the realm roles (5)"},
		{"composite explosion", []string{"seed", "--composite-depth", "5", "--composite-width", "30"}, exitUsage, "realm roles a tenant (at most 100000"},
		{"sessions from files", []string{"seed", "--sessions", "5", "--from-dir", "."}, exitUsage, "not with --from-dir"},
		{"vus not a number", load("--vus", "ten"), exitUsage, `--vus "ten": want a whole number`},
		{"duration without unit", load("--duration", "30"), exitUsage, `--duration "30": want a duration`},
	})
}

// writeLoadRun writes the folder of a `kcbench load --out` run of
// client-credentials at 100/s, 4 ms p95 and cpu CPU-ms per iteration,
// changed by edit, as the engine writes it.
func writeLoadRun(t *testing.T, dir string, cpu float64, edit func(*results.OpStats)) string {
	t.Helper()
	it := results.OpStats{Name: results.IterationOp, Count: 1000, OK: 1000, Rate: 100,
		Latency: results.Dist{Min: time.Millisecond, P50: 2 * time.Millisecond, P90: 3 * time.Millisecond, P95: 4 * time.Millisecond,
			P99: 5 * time.Millisecond, P999: 6 * time.Millisecond, Max: 7 * time.Millisecond}}
	it.Service = it.Latency
	if edit != nil {
		edit(&it)
	}
	st := results.Stats{Scenario: results.ScenarioClientCredentials, Executor: "constant-arrival-rate", Model: results.ModelOpen,
		Start: time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC), Duration: 10 * time.Second, Elapsed: 10 * time.Second,
		Iterations: it.Count, Ops: []results.OpStats{it}}
	var b bytes.Buffer
	if err := results.WriteStatsJSON(&b, st); err != nil {
		t.Fatal(err)
	}
	sum := strings.TrimSuffix(strings.TrimSpace(b.String()), "}") +
		fmt.Sprintf(`, "server_cpu": {"available": true, "source": "proc", "cpu_ms_per_iteration": %v}, "params": {"target": "local"}}`, cpu)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.SummaryFile), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	var tl bytes.Buffer
	results.WriteTimelineCSV(&tl, nil)
	os.WriteFile(filepath.Join(dir, results.TimelineFile), tl.Bytes(), 0o644)
	return dir
}

// Analysis refuses figures it cannot judge, naming the file and the field,
// instead of dropping or passing them.
func TestHostileResultFigures(t *testing.T) {
	dir := t.TempDir()
	good := writeLoadRun(t, filepath.Join(dir, "good"), 1.5, nil)
	bad := map[string]string{
		"negative p95":      writeLoadRun(t, filepath.Join(dir, "neg-p95"), 1.5, func(o *results.OpStats) { o.Latency.P95 = -3 * time.Millisecond }),
		"p95 0":             writeLoadRun(t, filepath.Join(dir, "zero-p95"), 1.5, func(o *results.OpStats) { o.Latency.P95 = 0 }),
		"errors > count":    writeLoadRun(t, filepath.Join(dir, "errors"), 1.5, func(o *results.OpStats) { o.Errors, o.OK = 1500, 0 }),
		"negative rate":     writeLoadRun(t, filepath.Join(dir, "neg-rate"), 1.5, func(o *results.OpStats) { o.Rate = -100 }),
		"negative cpu":      writeLoadRun(t, filepath.Join(dir, "neg-cpu"), -1.5, nil),
		"latency max int64": writeLoadRun(t, filepath.Join(dir, "huge"), 1.5, func(o *results.OpStats) { o.Latency.Max = 1<<63 - 1 }),
	}
	want := map[string]string{
		"negative p95":      `summary.json: op "iteration": latency: p95_ms -3: a latency cannot be negative`,
		"p95 0":             `summary.json: op "iteration": latency.p95_ms 0: 1000 operations ran, none takes no time`,
		"errors > count":    `summary.json: op "iteration": errors 1500: more than the 1000 operations (an error rate above 100%)`,
		"negative rate":     `summary.json: op "iteration": rate_per_s -100: a rate cannot be negative`,
		"negative cpu":      "summary.json: ",
		"latency max int64": `summary.json: op "iteration": latency: max_ms 9.223372036854775e+12: a latency above a day`,
	}
	var cases []hostileCase
	for name, d := range bad {
		w := filepath.Join(d, "summary.json") + ": " + strings.TrimPrefix(want[name], "summary.json: ")
		if name == "negative cpu" {
			w = "cannot be negative"
		}
		cases = append(cases,
			hostileCase{"gate " + name, []string{"gate", "--baseline", good, "--current", d}, exitError, w},
			hostileCase{"compare " + name, []string{"compare", good, d}, exitError, w},
			hostileCase{"report " + name, []string{"report", d}, exitError, w},
			hostileCase{"size " + name, []string{"size", "--from", d, "--logins", "10"}, exitError, w})
	}
	runHostile(t, cases)
}

// A run in which nothing ran has no latency: compare does not call
// 1.80 → 0.00 ms better, gate refuses to judge it.
func TestHostileEmptyRun(t *testing.T) {
	dir := t.TempDir()
	good := writeLoadRun(t, filepath.Join(dir, "good"), 1.5, nil)
	empty := writeLoadRun(t, filepath.Join(dir, "empty"), 0, func(o *results.OpStats) { *o = results.OpStats{Name: results.IterationOp} })
	failed := writeLoadRun(t, filepath.Join(dir, "failed"), 0, func(o *results.OpStats) { o.OK, o.Errors = 0, o.Count })
	code, out, errs := runCLI(t, "compare", good, empty)
	if code != exitOK {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errs)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " ms ") && strings.Contains(l, "better") {
			t.Errorf("compare calls a run with no operation's latency better:\n%s", l)
		}
	}
	runHostile(t, []hostileCase{
		{"gate, nothing ran", []string{"gate", "--baseline", good, "--current", empty}, exitError, "no iteration succeeded (0 ran, 0 failed)"},
		{"gate, all failed", []string{"gate", "--baseline", good, "--current", failed}, exitError, "no iteration succeeded (1000 ran, 1000 failed)"},
	})
}

// size refuses to size nothing (it printed cpu: "0" in its Kubernetes
// YAML) and a pod no machine holds (666,666.666 vCPU ÷ 1 pod).
func TestHostileSize(t *testing.T) {
	runHostile(t, []hostileCase{
		{"no rate", []string{"size"}, exitUsage, "size needs a rate: give --logins N, --client-credentials N or --refresh N"},
		{"all rates 0", []string{"size", "--logins", "0", "--client-credentials", "0", "--refresh", "0", "--k8s"}, exitUsage, "size needs a rate"},
		{"logouts only", []string{"size", "--logouts", "50"}, exitUsage, "size needs a rate"},
		{"10M logins on one pod", []string{"size", "--logins", "10000000", "--pods", "1"}, exitUsage,
			"--pods: 666,666.667 vCPU over 1 pod is 666,666.667 vCPU a pod, more than the 512 vCPU one pod can use: give 1,303 pods or more"},
	})
	code, out, errs := runCLI(t, "size", "--logins", "10000000", "--pods", "1303")
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	// 666,666.667 vCPU ÷ 1,303 pods = 511.6398…, rounded up to the millicore.
	if !strings.Contains(out, "= 511.64 vCPU") {
		t.Errorf("per-pod CPU not rounded up:\n%s", out)
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new folder (unmounted at
// the end of the test): a disk that fills up. Only root can; the test is
// skipped otherwise.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk needs a tmpfs: run as root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fill writes into dir until the disk is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.CreateTemp(dir, "filler")
	if err != nil {
		return // already full
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			return
		}
	}
}

// A full disk: --out is checked before the run (a full one is refused
// before a request is sent); a disk that fills during the run leaves no
// half-written folder and exits non-zero.
func TestHostileFullDisk(t *testing.T) {
	disk := mountTmpfs(t, 256<<10)
	var served atomic.Int64
	fillAt := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 20 {
			once.Do(func() { close(fillAt) })
		}
		io.WriteString(w, `{"keys":[]}`)
	}))
	defer srv.Close()
	loadTo := func(out string) []string {
		return []string{"load", "--target", srv.URL, "--realm", "r", "--scenario", "jwks", "--vus", "2", "--duration", "2s", "--out", out, "--quiet"}
	}

	out := filepath.Join(disk, "during", "res")
	go func() { <-fillAt; fill(t, disk) }()
	code, stdout, stderr := runCLI(t, loadTo(out)...)
	if code == exitOK || !strings.Contains(errorLine(stderr), "no space left on device") {
		t.Errorf("disk full during the run: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 0 {
		t.Errorf("a half-written result is left: %v", ents)
	}

	before := served.Load()
	code, _, stderr = runCLI(t, loadTo(filepath.Join(disk, "full", "res"))...)
	if code != exitUsage || !strings.Contains(errorLine(stderr), "--out: "+filepath.Join(disk, "full", "res")+": cannot") {
		t.Errorf("full disk before the run: exit %d\nstderr: %s", code, stderr)
	}
	if n := served.Load() - before; n != 0 {
		t.Errorf("the run started on a full disk: %d requests", n)
	}
	if _, err := os.Stat(filepath.Join(disk, "full")); err == nil {
		t.Errorf("the check left %s", filepath.Join(disk, "full"))
	}
}

// report on a full disk leaves no chart without its page.
func TestHostileReportFullDisk(t *testing.T) {
	disk := mountTmpfs(t, 1<<20)
	dir := filepath.Join(disk, "res")
	src := writeLoadRun(t, filepath.Join(t.TempDir(), "res"), 1.5, nil)
	os.Mkdir(dir, 0o755)
	for _, n := range []string{results.SummaryFile, results.TimelineFile} {
		b, _ := os.ReadFile(filepath.Join(src, n))
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	fill(t, disk)
	code, stdout, stderr := runCLI(t, "report", dir)
	if code == exitOK || !strings.Contains(errorLine(stderr), "no space left on device") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p != dir {
			names = append(names, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	if !slices.Equal(names, []string{results.SummaryFile, results.TimelineFile}) {
		t.Errorf("the results folder holds %v, want only what was there", names)
	}
}

// --password-file and --client-secret-file keep secrets off the command
// line (ps shows it), read through the bounded reader.
func TestHostileSecretFiles(t *testing.T) {
	dir := t.TempDir()
	pw, secret := filepath.Join(dir, "pw"), filepath.Join(dir, "secret")
	os.WriteFile(pw, []byte(probeSecret+"\n"), 0o600)
	os.WriteFile(secret, []byte("client-"+probeSecret+"\n"), 0o600)
	fifo, _, _, big := hostileFiles(t, dir, fileutil.MaxSecretFile+1)
	var grants, wrong atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("password") != probeSecret || r.PostForm.Get("client_secret") != "client-"+probeSecret {
			wrong.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		grants.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"a.b.c","token_type":"Bearer","expires_in":300,"refresh_token":"r.s.t"}`)
	}))
	defer srv.Close()
	args := func(extra ...string) []string {
		return append([]string{"load", "--target", srv.URL, "--realm", "r", "--client-id", "c", "--username", "u",
			"--scenario", "password-grant", "--vus", "1", "--duration", "1s", "--quiet"}, extra...)
	}
	code, stdout, stderr := runCLI(t, args("--password-file", pw, "--client-secret-file", secret)...)
	if code != exitOK || grants.Load() == 0 || wrong.Load() != 0 {
		t.Errorf("exit %d, %d grants, %d refused\nstdout: %s\nstderr: %s", code, grants.Load(), wrong.Load(), stdout, stderr)
	}
	if strings.Contains(stdout+stderr, probeSecret) {
		t.Errorf("the output holds the secret")
	}
	runHostile(t, []hostileCase{
		{"password file FIFO", args("--password-file", fifo), exitUsage, `--password-file "` + fifo + `": read secret: ` + fifo + " is a FIFO"},
		{"password file /dev/zero", args("--password-file", "/dev/zero"), exitUsage, "/dev/zero is a character device"},
		{"client secret file too large", args("--client-secret-file", big), exitUsage, "larger than the 64 KiB limit"},
		{"password file missing", args("--password-file", filepath.Join(dir, "nope")), exitUsage, "no such file"},
	})
}

// A load against a server that accepts connections and never answers, in
// which every iteration is cut off by the graceful stop, measured nothing:
// exit 5, not 0.
func TestHostileNothingMeasured(t *testing.T) {
	tg := startBadTargets(t)
	out := filepath.Join(t.TempDir(), "res")
	start := time.Now()
	code, stdout, stderr := runCLI(t, "load", "--target", tg.hang, "--realm", "r", "--scenario", "jwks",
		"--vus", "2", "--duration", "1s", "--graceful-stop", "2s", "--out", out, "--quiet")
	if code != exitTargetDown || !strings.Contains(errorLine(stderr), "no iteration completed: 2 interrupted") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %s", d)
	}
	if st, err := readStats(out); err != nil || st.Interrupted != 2 {
		t.Errorf("summary.json: %v, interrupted %d", err, st.Interrupted)
	}
}

// A server whose Content-Length is shorter than its body: the fragment
// {"keys":[{ read from it is no answer, and the rest on the connection is
// no response. No iteration succeeds; every error is of the malformed
// class, and the summary says so.
func TestHostileShortContentLength(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					body := `{"keys":[{"kid":"k","kty":"RSA"}]}`
					if _, err := fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n%s", body); err != nil {
						return
					}
				}
			}()
		}
	}()
	out := filepath.Join(t.TempDir(), "res")
	code, stdout, stderr := runCLI(t, "load", "--target", "http://"+ln.Addr().String(), "--realm", "r", "--scenario", "jwks",
		"--vus", "1", "--duration", "1s", "--out", out, "--quiet")
	st, rerr := readStats(out)
	if code != exitTargetDown || rerr != nil {
		t.Fatalf("exit %d (%v)\nstdout: %s\nstderr: %s", code, rerr, stdout, stderr)
	}
	it, ok := st.Op(results.IterationOp)
	if !ok || it.OK != 0 || it.Errors == 0 || it.ErrorClasses[load.ClassMalformed] != it.Errors {
		t.Errorf("iterations %+v", it)
	}
	if !strings.Contains(stdout, "malformed") {
		t.Errorf("the summary does not name the class:\n%s", stdout)
	}
}
