//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// kcbench load end to end: a stack, a seeded dataset, a run with results
// files and server CPU, a failed threshold's exit code, a run from a
// YAML file, and an external target without a manifest. (kcbench
// scenarios is covered by the unit tests.)
func TestLoadCommand(t *testing.T) {
	c := newCLI(t)
	c.mustRun("up")
	t.Cleanup(func() { c.run("down") })
	c.mustRun("seed", "--tenants", "2", "--password-policy", "pbkdf2-sha256:1")

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
		ServerCPU scenario.ServerCPU `json:"server_cpu"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	op, ok := st.Op(results.OpPasswordGrant)
	if !ok || op.OK < 10 || op.Errors != 0 {
		t.Fatalf("password grants: %+v", op)
	}
	if !sum.ServerCPU.Available || sum.ServerCPU.PerIteration < 1 || sum.ServerCPU.PerIteration > 500 {
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

	// The same from a YAML file: the login form.
	yml := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(yml, []byte("scenario: login-form\nexecutor: per-vu-iterations\nvus: 2\niterations: 3\nduration: 30s\n"), 0o644)
	text = c.mustRun("load", "--file", yml)
	if !strings.Contains(text, "iterations:   6 ") || !strings.Contains(text, "login_submit") {
		t.Errorf("from a file:\n%s", text)
	}

	// An external target, no manifest: the realm's JWKS, server CPU from
	// the management interface's metrics.
	s, err := stack.Attach(c.dirs, stack.DefaultStackName)
	if err != nil {
		t.Fatal(err)
	}
	tg := s.Target()
	text = c.mustRun("load", "--target", tg.BaseURL, "--management-url", tg.ManagementURL, "--realm", "master",
		"--scenario", "jwks", "--vus", "2", "--duration", "2s")
	if !strings.Contains(text, "from "+tg.ManagementURL+"/metrics") {
		t.Errorf("external target:\n%s", text)
	}
}

// The oldest supported Keycloak: its build has no user event metrics
// option and its kc.sh execs java (no child process); it boots, takes a
// cloned dataset in both modes and serves the login form.
func TestOldestVersion(t *testing.T) {
	c := newCLI(t)
	c.mustRun("up", "--kc-version", "26.0.0")
	t.Cleanup(func() { c.run("down") })
	mo := filepath.Join(t.TempDir(), "orgs.json")
	for _, args := range [][]string{
		{"seed", "--tenants", "3", "--password-policy", "pbkdf2-sha256:1"},
		{"seed", "--mode", "orgs", "--prefix", "old", "--tenants", "3", "--password-policy", "pbkdf2-sha256:1", "--manifest", mo},
	} {
		if out := c.mustRun(args...); !strings.Contains(out, "3 tenants complete") || !strings.Contains(out, "strategy clone") {
			t.Fatalf("%v:\n%s", args, out)
		}
	}
	for _, m := range [][]string{nil, {"--manifest", mo}} {
		c.mustRun(append([]string{"dataset", "verify"}, m...)...) // exit ≠ 0 when counts differ
		out := c.mustRun(append([]string{"load", "--scenario", "login-form", "--executor", "per-vu-iterations", "--vus", "3", "--iterations", "2",
			"--threshold", "errors<1%"}, m...)...)
		if !strings.Contains(out, "iterations:   6 ") {
			t.Errorf("login form %v:\n%s", m, out)
		}
	}
}
