//go:build integration

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

// Keycloak on the private MariaDB (--db mariadb): one stack for the whole
// test. The dataset (both modes) verifies as on PostgreSQL, the password
// grant, client-credentials and refresh scenarios run without errors and
// their summaries carry mariadbd's CPU per operation, snapshots and the
// clone strategy say they are PostgreSQL-only, and down leaves no
// process. Without mariadbd, up fails at once saying how to install it.
func TestMariaDB(t *testing.T) {
	c := newCLI(t)

	// No mariadbd: a clear error before anything is built or started.
	start := time.Now()
	code, out := c.run("up", "--stack", "nomaria", "--db", "mariadb", "--mariadbd", filepath.Join(t.TempDir(), "mariadbd"))
	if code == 0 || !strings.Contains(out, "mariadbd not found") || !strings.Contains(out, "apt-get install mariadb-server") {
		t.Errorf("up without mariadbd: exit %d\n%s", code, out)
	}
	if el := time.Since(start); el > 20*time.Second || strings.Contains(out, "building Keycloak") {
		t.Errorf("up without mariadbd took %s (it must fail before building):\n%s", el, out)
	}
	if _, err := os.Stat(filepath.Join(c.dirs.State, "stacks", "nomaria")); err == nil {
		t.Error("a failed up left a stack folder")
	}

	c.mustRun("up", "--stack", "maria", "--db", "mariadb")
	t.Cleanup(func() { c.run("down", "--stack", "maria") })
	st := c.status("maria")
	if !st.Ready || st.MariaDB == nil || !st.MariaDB.Alive || st.Postgres != nil || !strings.HasPrefix(st.DBURL, "jdbc:mariadb://127.0.0.1:") {
		t.Fatalf("status: ready %v, mariadb %+v, postgres %+v, db %s", st.Ready, st.MariaDB, st.Postgres, st.DBURL)
	}
	for _, l := range st.Listeners {
		if !strings.HasPrefix(l.Addr, "127.0.0.1:") {
			t.Errorf("listens on %s, not loopback", l.Addr)
		}
	}
	if fi, err := os.Stat(filepath.Join(st.Dir, "db-password")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("db-password: %v, %v", fi, err)
	}
	if text := c.mustRun("status", "--stack", "maria"); !strings.Contains(text, "mariadb pid") {
		t.Errorf("status text:\n%s", text)
	}
	if text := c.mustRun("logs", "--stack", "maria", "--log", "db", "-n", "50"); !strings.Contains(text, "ready for connections") {
		t.Errorf("logs --log db:\n%s", text)
	}
	s, err := stack.Attach(c.dirs, "maria")
	if err != nil {
		t.Fatal(err)
	}
	procs := s.Procs() // kc.sh, the JVM, mariadbd

	// Seeding: the default on MariaDB is fast; clone is refused clearly.
	if code, out := c.run("seed", "--stack", "maria", "--strategy", "clone", "--tenants", "1"); code != exitUsage || !strings.Contains(out, "MariaDB") {
		t.Errorf("seed --strategy clone: exit %d\n%s", code, out)
	}
	mo := filepath.Join(t.TempDir(), "orgs.json")
	for _, args := range [][]string{
		{"seed", "--stack", "maria", "--tenants", "2", "--password-policy", "pbkdf2-sha256:1"},
		{"seed", "--stack", "maria", "--mode", "orgs", "--prefix", "org", "--tenants", "2", "--password-policy", "pbkdf2-sha256:1", "--manifest", mo},
	} {
		if out := c.mustRun(args...); !strings.Contains(out, "2 tenants complete") || !strings.Contains(out, "strategy fast") {
			t.Fatalf("%v:\n%s", args, out)
		}
	}
	c.mustRun("dataset", "verify", "--stack", "maria") // exit ≠ 0 when counts differ
	c.mustRun("dataset", "verify", "--stack", "maria", "--manifest", mo)

	// The scenarios, each with mariadbd's CPU per operation.
	for _, sc := range []string{"password-grant", "client-credentials", "refresh"} {
		dir := filepath.Join(t.TempDir(), sc)
		text := c.mustRun("load", "--stack", "maria", "--scenario", sc, "--vus", "2", "--duration", "4s", "--warmup", "1s",
			"--threshold", "errors<1%", "--out", dir)
		if !strings.Contains(text, "database:     mariadb:") {
			t.Errorf("%s: no MariaDB line in the summary:\n%s", sc, text)
		}
		b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sum struct {
			Database *results.DBCost `json:"database"`
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		if d := sum.Database; d == nil || !d.Available || d.Engine != "mariadb" || !d.CPUMeasured || d.Ops < 1 || !(d.CPUMsPerOp > 0) {
			t.Errorf("%s: database cost %+v", sc, d)
		}
	}

	// PostgreSQL-only features say so.
	if code, out := c.run("snapshot", "save", "--stack", "maria", "s1"); code == 0 || !strings.Contains(out, "not available on MariaDB") {
		t.Errorf("snapshot save: exit %d\n%s", code, out)
	}

	c.mustRun("down", "--stack", "maria")
	assertGone(t, procs, 30*time.Second)
	if len(procs) != 3 {
		t.Errorf("recorded processes %v, want kc.sh, the JVM and mariadbd", procs)
	}
}

// kcbench killed while a foreground stack on MariaDB boots: the
// parent-death signal takes kc.sh, the JVM and mariadbd down.
func TestKilledForegroundMariaDBLeavesNoOrphans(t *testing.T) {
	c := newCLI(t)
	cmd := c.cmd("up", "--foreground", "--stack", "k9m", "--db", "mariadb")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ps := c.procs("k9m", 3*time.Minute) // kc.sh, the JVM, mariadbd
	cmd.Process.Kill()
	cmd.Wait()
	assertGone(t, ps, time.Minute)
	c.mustRun("down", "--stack", "k9m")
}
