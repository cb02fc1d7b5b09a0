//go:build integration

package experiment_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

// A variant on MariaDB: the clone strategy (the default) falls back to
// fast with a note, snapshots are skipped (and none is saved), the dataset
// grows on the same stack, and every workload and capacity step carries
// mariadbd's CPU per operation; the points' params say db=mariadb.
func TestMariaDBVariant(t *testing.T) {
	const yml = `
name: maria
dataset:
  modes: [realms]
  tenants: [1, 2]
  password_policy: pbkdf2-sha256:1
phases: [warm]
warmup: 1s
workloads:
  - name: token
    scenario: client-credentials
    vus: 2
    duration: 3s
  - name: token-capacity
    scenario: client-credentials
    capacity: {start_rate: 30, step: 30, max_rate: 60, step_duration: 2s, warmup: 1s}
variants:
  - name: mariadb
    db: mariadb
`
	dir := filepath.Join(t.TempDir(), "maria")
	r, l := runner(t, yml, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	out, err := r.Run(ctx)
	if err != nil || len(out.Done) != 2 {
		t.Fatalf("run: %+v, %v", out, err)
	}
	joined := strings.Join(l.lines, "\n")
	for _, want := range []string{"not available on mariadb; seeding the fast way", "no snapshots (snapshots are PostgreSQL's, not available on MariaDB)"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if ss, _ := stack.ListSnapshots(r.Dirs); len(ss) != 0 {
		t.Errorf("snapshots saved on MariaDB: %v", ss)
	}
	pts, err := results.ReadExperiment(dir)
	if err != nil || len(pts) != 2 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	for _, p := range pts {
		s := p.Summary
		if s.Params["db"] != "mariadb" || p.Manifest.Params["db"] != "mariadb" {
			t.Errorf("%s: params %v", p.Manifest.Point, s.Params)
		}
		if _, ok := s.Params[results.ParamPGDurable]; ok {
			t.Errorf("%s: pg_durable recorded on MariaDB", p.Manifest.Point)
		}
		for _, w := range s.Workloads {
			it, _ := w.Stats.Op("iteration")
			if d := w.Database; it.OK == 0 || it.Errors > 0 || d == nil || d.Engine != "mariadb" || !d.CPUMeasured || !(d.CPUMsPerOp > 0) {
				t.Errorf("%s %s: ok %d errors %d database %+v", p.Manifest.Point, w.Name, it.OK, it.Errors, w.Database)
			}
		}
		if len(s.Capacity) != 1 || !s.Capacity[0].Found {
			t.Fatalf("%s: capacity %+v", p.Manifest.Point, s.Capacity)
		}
		cr, err := results.ReadCapacityDir(filepath.Join(p.Dir, s.Capacity[0].Dir))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(cr.Steps, func(st results.CapacityStep) bool {
			return st.Database != nil && st.Database.Engine == "mariadb" && st.Database.CPUMsPerOp > 0
		}) {
			t.Errorf("%s: no capacity step with mariadbd's CPU", p.Manifest.Point)
		}
	}
	if pts[1].Summary.Seed == nil || pts[1].Summary.Seed.Added != 1 || pts[1].Summary.Seed.Restored != "" {
		t.Errorf("point 2 did not grow the first's dataset: %+v", pts[1].Summary.Seed)
	}
}

// A variant with the users in a private slapd (import off): the stack
// runs slapd, the password grants bind there, and the workload carries
// slapd's CPU per operation beside Keycloak's; the params say so.
func TestLDAPVariant(t *testing.T) {
	const yml = `
name: dir
dataset:
  modes: [realms]
  tenants: [1]
  password_policy: pbkdf2-sha256:1
phases: [warm]
warmup: 1s
workloads:
  - name: login
    scenario: password-grant
    vus: 2
    duration: 3s
variants:
  - name: ldap
    ldap: slapd
    ldap_import: "off"
`
	dir := filepath.Join(t.TempDir(), "dir")
	r, l := runner(t, yml, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	out, err := r.Run(ctx)
	if err != nil || len(out.Done) != 1 {
		t.Fatalf("run: %+v, %v", out, err)
	}
	if joined := strings.Join(l.lines, "\n"); !strings.Contains(joined, "starting slapd") || !strings.Contains(joined, "which a snapshot does not copy") {
		t.Errorf("the log does not show slapd started and snapshots skipped:\n%s", joined)
	}
	pts, err := results.ReadExperiment(dir)
	if err != nil || len(pts) != 1 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	s := pts[0].Summary
	if s.Params["ldap"] != "slapd" || s.Params["ldap_import"] != "off" || s.Params["db"] != "" {
		t.Errorf("params %v", s.Params)
	}
	for _, w := range s.Workloads {
		it, _ := w.Stats.Op("iteration")
		if d := w.Directory; it.OK == 0 || it.Errors > 0 || d == nil || !d.Available || !(d.CPUMsPerOp > 0) || w.ServerCPUMsPerOp <= 0 {
			t.Errorf("%s: ok %d errors %d directory %+v keycloak %.2f ms", w.Name, it.OK, it.Errors, w.Directory, w.ServerCPUMsPerOp)
		}
	}
}
