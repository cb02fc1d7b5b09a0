//go:build integration

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// The CLI tests run the real binary, because what they check (exit codes,
// signals, parent death) is about the process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kcbench-bin-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "kcbench")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build kcbench: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs the binary with a state folder and the user's cache.
type cli struct {
	t    *testing.T
	dirs stack.Dirs
	out  bytes.Buffer // everything any command printed
}

func newCLI(t *testing.T) *cli {
	if testing.Short() {
		t.Skip("integration test skipped in -short mode")
	}
	d, cleanup, err := stacktest.Dirs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return &cli{t: t, dirs: d}
}

func (c *cli) args(args ...string) []string {
	a := append([]string{}, args...)
	return append(a, "--state-dir", c.dirs.State, "--cache-dir", c.dirs.Cache)
}

func (c *cli) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, c.args(args...)...)
	cmd.Env = append(os.Environ(), "LANG=C")
	return cmd
}

// run runs a command to completion and returns its exit code and output.
func (c *cli) run(args ...string) (int, string) {
	c.t.Helper()
	cmd := c.cmd(args...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	c.out.Write(b.Bytes())
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), b.String()
		}
		c.t.Fatal(err)
	}
	return 0, b.String()
}

func (c *cli) mustRun(args ...string) string {
	c.t.Helper()
	code, out := c.run(args...)
	if code != 0 {
		c.t.Fatalf("kcbench %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// procs waits until the stack named name has recorded a JVM and returns the
// identities of its processes.
func (c *cli) procs(name string, timeout time.Duration) []stack.Proc {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s, err := stack.Attach(c.dirs, name); err == nil {
			ps := s.Procs()
			if len(ps) == 3 { // kc.sh, JVM, postmaster
				return ps
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("stack %s recorded no JVM within %s", name, timeout)
	return nil
}

// assertGone polls until none of ps is alive.
func assertGone(t *testing.T, ps []stack.Proc, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var alive []int
		for _, p := range ps {
			if p.Alive() {
				alive = append(alive, p.PID)
			}
			alive = append(alive, p.Members()...)
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still alive after %s: %v", timeout, alive)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The lifecycle of a stack whose sessions live in memory only
// (--persistent-sessions=false, a build of its own): a session made
// before the restarts of boot is gone after them. (The shared stacks keep
// Keycloak's default, persistent sessions: TestRestartMeasuresBoot.)
func TestLifecycle(t *testing.T) {
	c := newCLI(t)
	out := c.mustRun("up", "--persistent-sessions=false")
	if !strings.Contains(out, "https://127.0.0.1:") {
		t.Fatalf("up printed no URL:\n%s", out)
	}
	ps := c.procs(stack.DefaultStackName, time.Second)
	t.Cleanup(func() { c.run("down") })

	out = c.mustRun("status")
	for _, want := range []string{"ready         true", stack.DefaultKeycloakVersion, "keycloak pid", "postgres pid", "sessions      in memory only"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	s, err := stack.Attach(c.dirs, stack.DefaultStackName)
	if err != nil {
		t.Fatal(err)
	}
	tg := s.Target()
	adminCLI := kc.OAuthClient{ID: "admin-cli"}
	session, err := kc.NewFor(tg).PasswordGrant(t.Context(), "master", adminCLI, tg.Admin.Username, tg.Admin.Password.Reveal(), "")
	if err != nil {
		t.Fatal(err)
	}
	if code, out := c.run("up"); code != exitError || !strings.Contains(out, "already up") {
		t.Errorf("second up: exit %d\n%s", code, out)
	}

	out = c.mustRun("boot", "--repeats", "1", "--json")
	var rep stack.BootReport
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &rep); err != nil {
		t.Fatalf("boot --json: %v\n%s", err, out)
	}
	if len(rep.Boots) != 1 || rep.Restarts.N != 1 {
		t.Fatalf("boot report %+v", rep)
	}
	for _, b := range rep.Boots {
		if b.Duration < time.Second || b.RSS < 100<<20 {
			t.Errorf("implausible boot %+v", b)
		}
	}
	// The JVM of the first boot is gone: restarts replace it, and the
	// sessions it held in memory with it.
	if ps[1].Alive() {
		t.Error("the first JVM survived a restart")
	}
	_, err = kc.NewFor(tg).Refresh(t.Context(), "master", adminCLI, session.RefreshToken)
	var ae *kc.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || !strings.Contains(ae.Body, "invalid_grant") {
		t.Errorf("a session made before a restart: %v, want invalid_grant (sessions in memory only)", err)
	} else {
		t.Logf("a session made before the restart: %v", err)
	}
	if out := c.mustRun("logs", "-n", "5"); strings.Count(out, "\n") != 5 {
		t.Errorf("logs -n 5 printed:\n%s", out)
	}
	if out := c.mustRun("logs", "--log", "db", "-n", "1"); out == "" {
		t.Error("no postgres log")
	}

	// Online sessions cannot be seeded where they live in memory only:
	// refused before anything is written. Offline ones can.
	if code, out := c.run("seed", "--password-policy", "pbkdf2-sha256:1", "--sessions", "5"); code == 0 || !strings.Contains(out, "--persistent-sessions=false") {
		t.Errorf("seed --sessions on a stack keeping them in memory: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(s.DatasetManifest()); !os.IsNotExist(err) {
		t.Errorf("the refused seed left a manifest: %v", err)
	}
	if out := c.mustRun("seed", "--password-policy", "pbkdf2-sha256:1", "--offline-sessions", "5", "--quiet"); !strings.Contains(out, "0 and 5 written") {
		t.Errorf("seed --offline-sessions on a stack keeping online ones in memory:\n%s", out)
	}

	// The same Keycloak as an external target.
	if code, out := c.run("status", "--target", tg.BaseURL, "--admin-password-file", s.SecretPath("admin-password")); code == 0 || !strings.Contains(out, "--ca-file") {
		t.Errorf("https target without its CA: exit %d\n%s", code, out)
	}
	out = c.mustRun("status", "--target", tg.BaseURL, "--management-url", tg.ManagementURL, "--ca-file", tg.CAFile,
		"--admin-password-file", s.SecretPath("admin-password"))
	if !strings.Contains(out, "admin login  ok") || !strings.Contains(out, "ready        true") {
		t.Errorf("external status:\n%s", out)
	}
	if code, out := c.run("status", "--target", tg.BaseURL, "--ca-file", tg.CAFile, "--admin-password-file", s.SecretPath("admin-client-secret")); code != exitError || !strings.Contains(out, "wrong admin") {
		t.Errorf("wrong password: exit %d\n%s", code, out)
	}

	live := s.Procs()
	out = c.mustRun("down")
	if !strings.Contains(out, "none left") {
		t.Errorf("down: %s", out)
	}
	assertGone(t, append(ps, live...), time.Second)
	if _, err := os.Stat(filepath.Join(c.dirs.State, "stacks", stack.DefaultStackName)); !os.IsNotExist(err) {
		t.Errorf("down left the stack folder: %v", err)
	}
	if code, out := c.run("down"); code != exitError || !strings.Contains(out, "no stack is up") {
		t.Errorf("second down: exit %d\n%s", code, out)
	}
	// No command printed a secret.
	for _, sec := range []string{tg.Admin.Password.Reveal(), tg.Admin.ClientSecret.Reveal()} {
		if strings.Contains(c.out.String(), sec) {
			t.Error("a command printed an admin secret")
		}
	}
}

// startForeground starts `kcbench up --foreground` and waits until it
// printed the stack summary (Keycloak ready).
func startForeground(t *testing.T, c *cli, name string) (*exec.Cmd, []stack.Proc) {
	cmd := c.cmd("up", "--foreground", "--stack", name)
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		once := false
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "url") && !once {
				once = true
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(5 * time.Minute):
		t.Fatal("foreground stack not ready within 5 min")
	}
	return cmd, c.procs(name, time.Second)
}

func TestForegroundSIGINTLeavesNoOrphans(t *testing.T) {
	c := newCLI(t)
	cmd, ps := startForeground(t, c, "fg")
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit after SIGINT: %v, want %d", err, exitInterrupted)
	}
	assertGone(t, ps, time.Second)
	if _, err := stack.Attach(c.dirs, "fg"); err == nil {
		t.Error("state left behind after SIGINT")
	}
}

func TestKilledForegroundLeavesNoOrphans(t *testing.T) {
	c := newCLI(t)
	cmd := c.cmd("up", "--foreground", "--stack", "k9")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill kcbench while Keycloak boots: the parent-death signal must take
	// kc.sh, the JVM and PostgreSQL down.
	ps := c.procs("k9", 3*time.Minute)
	cmd.Process.Kill()
	cmd.Wait()
	assertGone(t, ps, time.Minute)
	// down cleans up the stale state without trusting the dead pids.
	out := c.mustRun("down", "--stack", "k9")
	if !strings.Contains(out, "down") {
		t.Errorf("down: %s", out)
	}
}

func TestDownAfterCrashedUp(t *testing.T) {
	c := newCLI(t)
	cmd := c.cmd("up", "--stack", "crash")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// A detached up killed mid-start leaves its children running...
	ps := c.procs("crash", 3*time.Minute)
	cmd.Process.Kill()
	cmd.Wait()
	for _, p := range ps {
		if !p.Alive() {
			t.Fatalf("pid %d of a detached stack died with kcbench", p.PID)
		}
	}
	// ...and down finds and stops them.
	c.mustRun("down", "--stack", "crash")
	assertGone(t, ps, time.Second)
}
