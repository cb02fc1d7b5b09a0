package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

// runCLI runs kcbench in-process with its own state and cache folders.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLICtx(t, context.Background(), args...)
}

// runCLICtx is runCLI under ctx (cancel it to stand for Ctrl-C).
func runCLICtx(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CACHE_HOME": filepath.Join(dir, "cache")}
	code = run(ctx, args, &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("x\n"), 0o600)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, exitUsage, "Usage"},
		{"unknown command", []string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{"help", []string{"--help"}, exitOK, ""},
		{"command help", []string{"up", "-h"}, exitOK, "-kc-version"},
		{"unknown flag", []string{"up", "--no-such-flag"}, exitUsage, "no-such-flag"},
		{"stray argument", []string{"down", "extra"}, exitUsage, "unexpected arguments"},
		{"not 26.x", []string{"up", "--kc-version", "25.0.6"}, exitUsage, "26.x"},
		{"malformed version", []string{"up", "--kc-version", "latest"}, exitUsage, "MAJOR.MINOR.PATCH"},
		{"bad heap", []string{"up", "--heap", "lots"}, exitUsage, "heap"},
		{"bad cache", []string{"up", "--cache-size", "nope=3"}, exitUsage, `cache "nope"`},
		{"bad cache syntax", []string{"up", "--cache-size", "realms"}, exitUsage, "NAME=NUMBER"},
		{"bad kc option", []string{"up", "--kc-opt", "log-level=debug"}, exitUsage, "must start with --"},
		{"bad java option", []string{"up", "--java-opt", "-Xmx4g"}, exitUsage, "the heap is --heap's"},
		{"db url without password", []string{"up", "--db-url", "jdbc:postgresql://h/db", "--db-user", "u"}, exitUsage, "--db-password-file"},
		{"bad db url", []string{"up", "--db-url", "mysql://h/db", "--db-user", "u", "--db-password-file", pw}, exitUsage, "db url"},
		{"repeats zero", []string{"boot", "--repeats", "0"}, exitUsage, "--repeats: 0: must be between 1 and 1000"},
		{"no nodes", []string{"up", "--nodes", "0"}, exitUsage, "--nodes 0: want 1 to 4"},
		{"too many nodes", []string{"up", "--nodes", "9"}, exitUsage, "--nodes 9: want 1 to 4"},
		{"unknown balancer", []string{"up", "--nodes", "2", "--lb", "nginx"}, exitUsage, `lb "nginx"`},
		{"sticky without balancer", []string{"up", "--nodes", "2", "--lb", "none", "--lb-sticky"}, exitUsage, "sticky needs a balancer"},
		{"haproxy missing", []string{"up", "--nodes", "2", "--haproxy", "/nonexistent/haproxy"}, exitError, "haproxy not found"},
		{"negative node cpus", []string{"up", "--node-cpus", "-1"}, exitUsage, "node cpus -1"},
		{"negative latency", []string{"up", "--foreground", "--latency", "node-db=-2ms"}, exitUsage, "latency cannot be negative"},
		{"node-node latency on one node", []string{"up", "--foreground", "--latency", "node-node=5ms"}, exitUsage, "latency node-node: a single node has no node-node link (--nodes 2 or more)"},
		{"latency on a detached stack", []string{"up", "--latency", "node-db=2ms"}, exitUsage, "--latency: the latency proxies live in kcbench's process"},
		{"capacity latency without versions", []string{"capacity", "--scenario", "jwks", "--latency", "node-db=2ms"}, exitUsage, "--latency applies to the stacks --kc-version starts"},
		{"capacity latency with a target", []string{"capacity", "--scenario", "jwks", "--latency", "node-db=2ms", "--target", "http://127.0.0.1:1", "--realm", "r"}, exitUsage, "keeps the latency it was started with: kcbench up --latency …"},
		{"capacity heap without versions", []string{"capacity", "--scenario", "jwks", "--heap", "1g"}, exitUsage, "--heap applies to the stacks --kc-version starts"},
		{"capacity pg-version without versions", []string{"capacity", "--scenario", "jwks", "--pg-version", "17.5.0"}, exitUsage, "--pg-version applies"},
		{"capacity topology without versions", []string{"capacity", "--scenario", "jwks", "--nodes", "2", "--lb-sticky", "--node-cpus", "1"}, exitUsage, "--lb-sticky, --node-cpus and --nodes apply to the stacks --kc-version starts; without it the search runs on the running stack (or --target), which keeps the topology it was started with: kcbench up --lb-sticky --node-cpus … --nodes …"},
		{"restart bad node", []string{"restart", "--node", "-1"}, exitUsage, "--node -1"},
		{"target without credentials", []string{"status", "--target", "http://127.0.0.1:1"}, exitUsage, "--admin-password-file"},
		{"target bad url", []string{"status", "--target", "ftp://x", "--admin-password-file", pw}, exitUsage, "scheme"},
		{"down with nothing up", []string{"down"}, exitError, "no stack is up"},
		{"status with nothing up", []string{"status"}, exitError, "no stack is up"},
		{"restart with nothing up", []string{"restart"}, exitError, "no stack is up"},
		{"logs with nothing up", []string{"logs"}, exitError, "no stack is up"},
		{"logs of no such log", []string{"logs", "--log", "gc"}, exitUsage, `--log "gc": want keycloak, db or lb`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			if !strings.Contains(out+errs, c.want) {
				t.Errorf("output lacks %q\nstdout: %s\nstderr: %s", c.want, out, errs)
			}
		})
	}
}

func TestClusterPortInUse(t *testing.T) {
	// Node 2 of a cluster binds 127.0.0.3; a port taken there fails the
	// start before anything runs.
	l, err := net.Listen("tcp", "127.0.0.3:0")
	if err != nil {
		t.Skip("127.0.0.3 not bindable here:", err)
	}
	defer l.Close()
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	code, out, errs := runCLI(t, "up", "--nodes", "2", "--lb", "none", "--http-port", port)
	if code == exitOK || !strings.Contains(errs, "127.0.0.3:"+port) || !strings.Contains(errs, "port in use") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
}

func TestUnreachableTarget(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(pw, []byte("secret-password\n"), 0o600)
	code, out, errs := runCLI(t, "status", "--target", "http://127.0.0.1:1", "--admin-password-file", pw)
	if code != exitError || !strings.Contains(errs, "unreachable") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if strings.Contains(out+errs, "secret-password") {
		t.Fatal("the password was printed")
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(out, "kcbench ") {
		t.Fatalf("%d %q", code, out)
	}
}

// readStats reads the engine's Stats from a kcbench load --out folder's
// summary.json.
func readStats(dir string) (results.Stats, error) {
	var st results.Stats
	b, err := os.ReadFile(filepath.Join(dir, results.SummaryFile))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}
