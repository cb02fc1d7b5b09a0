//go:build integration

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

// kcbench load end to end: a stack, a seeded dataset, a run with results
// files and server CPU, a failed threshold's exit code, a run from a
// YAML file, and an external target without a manifest. (kcbench
// scenarios is covered by the unit tests.)
func TestLoadCommand(t *testing.T) {
	c := newCLI(t)
	// An extra JVM option reaches Keycloak's JVM, after a restart too,
	// and the results.
	const javaOpt = "-Dkcbench.test.javaopt=1"
	c.mustRun("up", "--java-opt", javaOpt)
	t.Cleanup(func() { c.run("down") })
	seedScraped(t, c, "--tenants", "2", "--password-policy", "pbkdf2-sha256:1")

	out := filepath.Join(t.TempDir(), "res")
	stdout := c.mustRun("load", "--scenario", "password-grant", "--vus", "2", "--duration", "3s", "--warmup", "1s",
		"--threshold", "password_grant:errors<1%", "--out", out)
	for _, want := range []string{"closed model", "✓ password_grant:errors<1%", "ms per successful password_grant", "/stat utime+stime"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st results.Stats
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		ServerCPU results.ServerCPU `json:"server_cpu"`
		Params    map[string]string `json:"params"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	// The heap in force is in the results and in status.
	if h := sum.Params["heap"]; !strings.Contains(h, "MaxRAMPercentage") && !strings.Contains(h, "-Xmx") || sum.Params["pg_durable"] != "false" || atoi(sum.Params["server_uptime_s"]) <= 0 ||
		sum.Params["java_opts"] != javaOpt {
		t.Errorf("params: %v", sum.Params)
	}
	if st := c.mustRun("status"); !strings.Contains(st, "heap ") || !regexp.MustCompile(`java options +`+regexp.QuoteMeta(javaOpt)).MatchString(st) {
		t.Errorf("status shows no heap:\n%s", st)
	}
	op, ok := st.Op(results.OpPasswordGrant)
	if !ok || op.OK < 1 || op.Errors != 0 { // 2 VUs for 3 s: a grant can take seconds on a busy box
		t.Fatalf("password grants: %+v", op)
	}
	if !sum.ServerCPU.Available || sum.ServerCPU.PerIteration < 1 || sum.ServerCPU.PerIteration > 5000 { // a sanity bound: a cold JVM on a busy box costs hundreds of ms a grant
		t.Errorf("server cpu: %+v", sum.ServerCPU)
	}
	for _, f := range []string{"timeline.csv", "iteration.hlog", "password_grant.hlog"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}

	// A failed threshold: exit 3, results written anyway.
	out2 := filepath.Join(t.TempDir(), "res2")
	code, text := c.run("load", "--scenario", "client-credentials", "--executor", "constant-arrival-rate", "--rate", "5",
		"--duration", "2s", "--threshold", "rate>1000", "--out", out2)
	if code != exitThresholds || !strings.Contains(text, "✗ rate>1000") {
		t.Errorf("failed threshold: exit %d\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(out2, "summary.json")); err != nil {
		t.Errorf("no results after a failed threshold: %v", err)
	}

	// A setup Keycloak refuses (a client it does not know): the setup
	// check before the clock names it, exit 5, nothing measured.
	outSetup := filepath.Join(t.TempDir(), "setup")
	code, text = c.run("load", "--scenario", "client-credentials", "--realm", "master", "--client-id", "no-such-client", "--client-secret", "x",
		"--duration", "2s", "--out", outSetup)
	if code != exitTargetDown || !strings.Contains(text, "setup: one client-credentials iteration before the clock failed on Keycloak 26.") ||
		!strings.Contains(text, "(http_401)") {
		t.Errorf("a refused setup: exit %d\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(outSetup, "summary.json")); err == nil {
		t.Errorf("a refused setup wrote a summary")
	}

	// The same from a YAML file: the login form.
	yml := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(yml, []byte("scenario: login-form\nexecutor: per-vu-iterations\nvus: 2\niterations: 3\nduration: 30s\n"), 0o644)
	text = c.mustRun("load", "--file", yml)
	if !strings.Contains(text, "iterations:   6 ") || !strings.Contains(text, "login_submit") {
		t.Errorf("from a file:\n%s", text)
	}

	// A capacity search on the local stack starts from no user sessions:
	// it ends those the runs above left (the password grants and the six
	// form logins), and the next finds none.
	capArgs := []string{"capacity", "--scenario", "jwks", "--start-rate", "20", "--step", "20", "--max-rate", "40", "--step-duration", "2s",
		"--warmup", "1s", "--min-ok", "10", "--slo", "p99<2s,errors<1%", "--quiet"}
	cap1 := filepath.Join(t.TempDir(), "cap1")
	text = c.mustRun(append(capArgs, "--out", cap1)...)
	if m := regexp.MustCompile(`ended (\d+) sessions earlier runs left`).FindStringSubmatch(text); m == nil || atoi(m[1]) < 7 {
		t.Errorf("the first search did not end the 7 sessions or more left before it:\n%s", text)
	}
	if strings.Contains(text, "not compacted") {
		t.Errorf("the session tables were not compacted:\n%s", text)
	}
	if r, err := results.ReadCapacityDir(cap1); err != nil || r.ServerUptime <= 0 {
		t.Errorf("the search does not say how long Keycloak had been up: %v, %+v", err, r)
	}
	// Twice, each on a freshly restarted Keycloak.
	jvm := func() int {
		s, err := stack.Attach(c.dirs, stack.DefaultStackName)
		if err != nil {
			t.Fatal(err)
		}
		return s.State().Nodes[0].Proc.JVM.PID
	}
	pid := jvm()
	cap2 := filepath.Join(t.TempDir(), "cap2")
	text = c.mustRun(append(capArgs, "--out", cap2, "--repeats", "2", "--restart")...)
	if strings.Contains(text, "sessions earlier runs left") {
		t.Errorf("the second search found sessions left:\n%s", text)
	}
	if after := jvm(); after == pid || !strings.Contains(text, "repeats, each on a freshly restarted Keycloak: ") {
		t.Errorf("Keycloak's JVM %d before the searches, %d after, want another:\n%s", pid, after, text)
	} else if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", after)); err != nil || !bytes.Contains(cmd, []byte(javaOpt+"\x00")) {
		t.Errorf("the restarted JVM's command line lacks %s: %v %q", javaOpt, err, cmd)
	}
	if rep, err := results.ReadCapacityRepeats(cap2); err != nil || !rep.Restarted || len(rep.Repeats) != 2 {
		t.Errorf("repeats.json: %v %+v", err, rep)
	}
	for i := 1; i <= 2; i++ {
		r, err := results.ReadCapacityDir(filepath.Join(cap2, fmt.Sprintf("repeat-%d", i)))
		if err != nil || r.BootSeconds <= 0 || r.RSSAtReadyBytes <= 0 || r.Params["restarted"] != "true" {
			t.Errorf("repeat %d does not record its boot: %v, %+v", i, err, r)
		} else if strings.Contains(r.Conclusion, "a repeat may find more") {
			t.Errorf("repeat %d, restarted on purpose, is told a repeat may find more: %s", i, r.Conclusion)
		} else if r.CPUMsPerOp <= 0 || r.MaxRSSBytes <= 0 {
			t.Errorf("repeat %d did not measure the restarted Keycloak (CPU %g ms/op, RSS %d): %+v", i, r.CPUMsPerOp, r.MaxRSSBytes, r.Steps)
		}
	}
	// A password-grant search ends them between its steps too; its last
	// step's are left for the next search to end.
	pwArgs := append([]string{"capacity", "--scenario", "password-grant"}, capArgs[3:]...)
	pwArgs[slices.Index(pwArgs, "--start-rate")+1], pwArgs[slices.Index(pwArgs, "--step")+1], pwArgs[slices.Index(pwArgs, "--max-rate")+1] = "5", "5", "10"
	text = c.mustRun(append(pwArgs, "--out", filepath.Join(t.TempDir(), "cap3"))...)
	if !strings.Contains(text, "each step starts from no user sessions too") {
		t.Errorf("the password-grant search does not end sessions between its steps:\n%s", text)
	}
	text = c.mustRun(append(capArgs, "--out", filepath.Join(t.TempDir(), "cap4"))...)
	if !strings.Contains(text, "sessions earlier runs left") {
		t.Errorf("the password-grant search's last step left no session:\n%s", text)
	}

	// An external target, no manifest: the realm's JWKS, server CPU from
	// the management interface's metrics.
	s, err := stack.Attach(c.dirs, stack.DefaultStackName)
	if err != nil {
		t.Fatal(err)
	}
	tg := s.Target()
	extOut := filepath.Join(t.TempDir(), "external")
	text = c.mustRun("load", "--target", tg.BaseURL, "--management-url", tg.ManagementURL, "--ca-file", tg.CAFile, "--realm", "master",
		"--admin-password-file", s.SecretPath("admin-password"), "--scenario", "jwks", "--vus", "2", "--duration", "2s", "--out", extOut)
	if !strings.Contains(text, "from "+tg.ManagementURL+"/metrics") {
		t.Errorf("external target:\n%s", text)
	}
	// The results name the Keycloak they measured, read from its admin API.
	if p, err := results.ReadPoint(extOut); err != nil || p.Manifest.Keycloak != s.State().Options.Version || !p.Manifest.External {
		t.Errorf("external target's params (%v): %+v", err, p)
	}

	// size --from-metrics reads what Keycloak counted while loads ran.
	checkSizeFromMetricsLive(t, c, s)

	// Three agents of a split run: their merge, and the disjoint users
	// Keycloak saw them log in.
	splitAgents(t, c, s)

	// A fault event: the only node restarted mid-run. The run goes on
	// while it is down (connections refused), finishes the restart after
	// its end, exits 0 and stamps the event with what it cost.
	out3 := filepath.Join(t.TempDir(), "restart")
	text = c.mustRun("load", "--scenario", "client-credentials", "--executor", "constant-arrival-rate", "--rate", "5",
		"--duration", "15s", "--event", "3s restart", "--out", out3)
	t.Logf("restart event:\n%s", text)
	st3, err := readStats(out3)
	if err != nil {
		t.Fatal(err)
	}
	if len(st3.Events) != 1 || st3.Events[0].Action != "restart" || st3.Events[0].Args != "node=1" || st3.Events[0].Err != "" || st3.Events[0].Took <= 0 {
		t.Fatalf("events: %+v", st3.Events)
	}
	if r := st3.Events[0].Recovery; r == nil || r.Errors == 0 || len(r.ErrorKinds) == 0 || r.BaselineRate <= 0 {
		t.Errorf("recovery after the restart: %+v", r)
	}
	if !strings.Contains(text, "events\n  3") || !strings.Contains(text, "restart node=1 (took ") {
		t.Errorf("the summary does not show the event:\n%s", text)
	}
	if s, err = stack.Attach(c.dirs, stack.DefaultStackName); err != nil || !s.Status(context.Background()).Ready {
		t.Fatalf("the stack after the restart event: %v", err)
	}

	// Last, as it kills the stack's Keycloak: killed mid-load, the run
	// ends by itself, says so, writes what ran and exits 5.
	killMidLoad(t, c, s)
}

// killMidLoad kills the stack's Keycloak while a 5-minute load runs
// against it: the run must end within seconds, name the death in one line
// on stderr and in the summary, write its results, exit with
// exitTargetDown, and leave no Keycloak process behind.
func killMidLoad(t *testing.T, c *cli, s *stack.Stack) {
	out := filepath.Join(t.TempDir(), "killed")
	cmd := c.cmd("load", "--scenario", "password-grant", "--vus", "2", "--duration", "5m", "--out", out)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first progress line with finished iterations says they run
	// (a Keycloak just restarted takes a while over its first grants).
	var errText strings.Builder
	sc := bufio.NewScanner(stderr)
	running := regexp.MustCompile(`iterations [1-9]`)
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
		if running.MatchString(sc.Text()) {
			break
		}
	}
	pid := s.Target().PID
	if pid == 0 {
		t.Fatal("no Keycloak pid")
	}
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		errText.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	took := time.Since(killed)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("ended %v after the kill, exit %d\nstdout:\n%s\nstderr:\n%s", took.Round(time.Millisecond), code, stdout.String(), errText.String())
	if code != exitTargetDown {
		t.Errorf("exit %d, want %d", code, exitTargetDown)
	}
	if took > 30*time.Second {
		t.Errorf("the run went on %v after Keycloak died", took)
	}
	if !regexp.MustCompile(`kcbench: target down \d+ s into the run: Keycloak exited \(log: `).MatchString(errText.String()) {
		t.Errorf("stderr does not say Keycloak exited")
	}
	if !regexp.MustCompile(`ended: +\d+ s into the run: Keycloak exited`).MatchString(stdout.String()) {
		t.Errorf("the summary does not say Keycloak exited")
	}
	st, err := readStats(out)
	if err != nil {
		t.Fatalf("no results of what ran: %v", err)
	}
	if !st.Aborted || !strings.Contains(st.EndReason, "Keycloak exited") {
		t.Errorf("summary.json: aborted %v, end reason %q", st.Aborted, st.EndReason)
	}
	if it, _ := st.Op(results.IterationOp); it.OK == 0 {
		t.Errorf("no successful iteration before the kill: %+v", it)
	}
	// No Keycloak process is left: kc.sh follows its JVM.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s2, err := stack.Attach(c.dirs, stack.DefaultStackName)
		if err != nil {
			t.Fatal(err)
		}
		left := 0
		for _, p := range s2.Procs()[:len(s2.Procs())-1] { // all but the postmaster
			if p.Alive() {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Keycloak processes left after the JVM was killed", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// seedScraped runs kcbench seed with --metrics-addr and scrapes /metrics
// while it seeds: some scrape in the middle must show the phase "seed"
// and the tenants planned (2), the tenants done never above them nor
// going back.
func seedScraped(t *testing.T, c *cli, args ...string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := c.cmd(append([]string{"seed", "--metrics-addr", addr, "--quiet"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	planned := regexp.MustCompile(`(?m)^kcbench_seed_tenants_planned (\S+)$`)
	done := regexp.MustCompile(`(?m)^kcbench_seed_tenants_done (\S+)$`)
	var seen []string // "done/planned" of each scrape that had them
	for running := true; running; {
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("seed: %v\n%s", err, out.String())
			}
			running = false
			continue
		default:
		}
		if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if p, d := planned.FindSubmatch(b), done.FindSubmatch(b); p != nil && d != nil {
				if !bytes.Contains(b, []byte(`kcbench_phase{phase="seed",point=""} 1`)) {
					t.Errorf("a scrape mid-seed lacks the phase:\n%s", b)
				}
				if v := string(d[1]) + "/" + string(p[1]); len(seen) == 0 || seen[len(seen)-1] != v {
					seen = append(seen, v)
				}
			}
		}
		time.Sleep(20 * time.Millisecond) // polling a running seed
	}
	if len(seen) == 0 {
		t.Fatalf("no scrape during the seed showed its progress\n%s", out.String())
	}
	for i, v := range seen {
		if !slices.Contains([]string{"0/2", "1/2", "2/2"}, v) || i > 0 && v < seen[i-1] {
			t.Errorf("seeding progress scraped: %v", seen)
			break
		}
	}
	t.Logf("seeding progress scraped mid-seed: %v", seen)
}

// atoi is s as a number, -1 when it is none.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}
