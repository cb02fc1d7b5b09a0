//go:build integration

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/stack"
)

// status reads `kcbench status --json` of stack name (stdout alone).
func (c *cli) status(name string) stack.Status {
	c.t.Helper()
	cmd := c.cmd("status", "--stack", name, "--json")
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("status %s: %v", name, err)
	}
	var st stack.Status
	if err := json.Unmarshal(out, &st); err != nil {
		c.t.Fatalf("status %s: %v\n%s", name, err, out)
	}
	return st
}

// A stack on the system's PostgreSQL (--pg-version system), and a second
// Keycloak on an external database (--db-url): a database of the first
// stack's PostgreSQL, which kcbench neither starts nor snapshots.
func TestSystemPostgresAndExternalDB(t *testing.T) {
	c := newCLI(t)
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	if len(bins) == 0 {
		t.Fatal("no system PostgreSQL in /usr/lib/postgresql (apt-get install postgresql; .ci/run installs it)")
	}
	out, err := exec.Command(bins[len(bins)-1], "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	var sysVersion string // postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)
	for _, x := range strings.Fields(string(out)) {
		if len(x) > 0 && x[0] >= '0' && x[0] <= '9' {
			sysVersion = x
			break
		}
	}

	c.mustRun("up", "--stack", "sys", "--pg-version", "system")
	t.Cleanup(func() { c.run("down", "--stack", "sys") })
	st := c.status("sys")
	if !st.Ready || st.Postgres == nil || !strings.HasPrefix(sysVersion, st.Postgres.Version) && !strings.HasPrefix(st.Postgres.Version, sysVersion) {
		t.Fatalf("--pg-version system: ready %v, postgres %+v, want the system's %s", st.Ready, st.Postgres, sysVersion)
	}

	s, err := stack.Attach(c.dirs, "sys")
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := s.DSN()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, string(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE ext"); err != nil {
		t.Fatal(err)
	}
	dbURL := fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/ext", s.State().PG.Port)
	c.mustRun("up", "--stack", "ext", "--db-url", dbURL, "--db-user", "keycloak", "--db-password-file", s.SecretPath("db-password"))
	t.Cleanup(func() { c.run("down", "--stack", "ext") }) // before sys's: cleanups run last first
	ext := c.status("ext")
	if !ext.Ready || ext.Postgres != nil || ext.DBURL != dbURL {
		t.Fatalf("--db-url: ready %v, postgres %+v, db %q, want %q and no PostgreSQL of its own", ext.Ready, ext.Postgres, ext.DBURL, dbURL)
	}
	u, err := url.Parse(string(dsn))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/ext"
	ec, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close(ctx)
	var realms int
	if err := ec.QueryRow(ctx, "SELECT count(*) FROM realm").Scan(&realms); err != nil || realms < 1 {
		t.Errorf("Keycloak's schema in the external database: %d realms, %v", realms, err)
	}
	if code, out := c.run("snapshot", "save", "x", "--stack", "ext"); code == 0 || !strings.Contains(out, "external database") {
		t.Errorf("snapshot of a stack on an external database: exit %d\n%s", code, out)
	}
	c.mustRun("down", "--stack", "ext")
	if _, err := os.Stat(s.State().Dir); err != nil {
		t.Errorf("the first stack's folder: %v", err)
	}
}
