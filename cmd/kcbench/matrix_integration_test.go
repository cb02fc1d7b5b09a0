//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/results"
)

// capacity --kc-version: each version on a fresh stack seeded with the
// same dataset (the default clone strategy), a measured restart, the same
// search; one table and matrix.json compare them. Scaled down: one tenant,
// the login form (so the oldest supported line, 26.0.0, boots, takes a
// cloned dataset and serves the form), two steps capped at 20/s.
func TestCapacityVersionMatrix(t *testing.T) {
	c := newCLI(t)
	versions := []string{"26.0.0", "26.7.3"}
	out := filepath.Join(t.TempDir(), "matrix")
	text := c.mustRun("capacity", "--scenario", "login-form", "--kc-version", strings.Join(versions, ","),
		"--tenants", "1", "--users", "5", "--password-policy", "pbkdf2-sha256:1",
		"--start-rate", "10", "--step", "10", "--max-rate", "20", "--step-duration", "2s", "--warmup", "1s",
		"--min-ok", "10", "--slo", "p99<5s,errors<1%", "--quiet", "--out", out)
	b, err := os.ReadFile(filepath.Join(out, experiment.MatrixFile))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	var mx experiment.Matrix
	if err := json.Unmarshal(b, &mx); err != nil {
		t.Fatal(err)
	}
	if len(mx.Rows) != len(versions) || mx.CommonRate <= 0 || mx.Dataset.Tenants != 1 {
		t.Fatalf("matrix %+v\n%s", mx, text)
	}
	for i, r := range mx.Rows {
		if r.Version != versions[i] || r.Error != "" || !r.Found || !r.Capped || r.MaxRate != 20 || r.BootSeconds <= 0 || r.RSSAtReady <= 0 {
			t.Errorf("row %+v", r)
		}
		res, err := results.ReadCapacityDir(filepath.Join(out, r.Version))
		if err != nil || res.Params["keycloak_version"] != r.Version || res.Params["tenants"] != "1" || res.Params["pg_durable"] != "false" {
			t.Errorf("%s: %v, params %v", r.Version, err, res.Params)
		}
	}
	if !strings.Contains(text, "version matrix: login-form") || !strings.Contains(text, "26.0.0") {
		t.Errorf("table:\n%s", text)
	}
	// Each version's stack is down.
	for _, v := range versions {
		if code, _ := c.run("status", "--stack", "capacity-"+strings.ReplaceAll(v, ".", "-")); code == 0 {
			t.Errorf("the stack of %s is still up", v)
		}
	}
}
