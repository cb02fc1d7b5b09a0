package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/stack"
)

// fakeSnapshot writes a snapshot folder as SaveSnapshot leaves it (without
// data), enough for list, restore's name check and delete.
func fakeSnapshot(t *testing.T, state, name string) {
	t.Helper()
	dir := filepath.Join(state, "snapshots", name)
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	info := stack.SnapshotInfo{Schema: 1, Name: name, CreatedAt: time.Now(), Stack: "default", KeycloakVersion: "26.7.3", PGVersion: "17.5", Size: 48 << 20, Files: 1234,
		Timings: stack.SnapshotTimings{Copy: 400 * time.Millisecond, Total: 21 * time.Second}}
	b, _ := json.Marshal(info)
	if err := os.WriteFile(filepath.Join(dir, "snapshot.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeStackState writes a stack.json: a stack that is not running.
func fakeStackState(t *testing.T, state, name string, detached, privatePG bool) {
	t.Helper()
	dir := filepath.Join(state, "stacks", name)
	os.MkdirAll(dir, 0o755)
	st := map[string]any{"schema": 1, "name": name, "dir": dir, "detached": detached}
	if privatePG {
		st["postgres"] = map[string]any{"bin": "/nonexistent", "version": "17.5", "data": filepath.Join(dir, "postgres", "data"), "port": 1}
	}
	b, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, "stack.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotCLI(t *testing.T) {
	state := t.TempDir()
	fakeSnapshot(t, state, "tenants-100")
	fakeSnapshot(t, state, "base")
	fakeStackState(t, state, "fg", false, true)
	fakeStackState(t, state, "ext", true, false)
	empty := t.TempDir()
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no subcommand", []string{"snapshot"}, exitUsage, []string{"want a subcommand", "save, restore, list, delete"}},
		{"unknown subcommand", []string{"snapshot", "take", "x"}, exitUsage, []string{`unknown subcommand "take"`}},
		{"help", []string{"snapshot", "-h"}, exitOK, []string{"restore NAME"}},
		{"save help", []string{"snapshot", "save", "-h"}, exitOK, []string{"-state-dir", "-stack"}},
		{"save without name", []string{"snapshot", "save"}, exitUsage, []string{"missing snapshot NAME"}},
		{"restore without name", []string{"snapshot", "restore", "--stack", "x"}, exitUsage, []string{"missing snapshot NAME"}},
		{"delete without name", []string{"snapshot", "delete"}, exitUsage, []string{"missing snapshot NAME"}},
		{"bad name", []string{"snapshot", "save", "../etc"}, exitUsage, []string{"must start with a letter or digit"}},
		{"bad character", []string{"snapshot", "restore", "a/b"}, exitUsage, []string{"letters, digits"}},
		{"two names", []string{"snapshot", "save", "a", "b"}, exitUsage, []string{"unexpected arguments: b"}},
		{"unknown flag after name", []string{"snapshot", "save", "a", "--nope"}, exitUsage, []string{"nope"}},
		{"list takes no name", []string{"snapshot", "list", "x"}, exitUsage, []string{"unexpected arguments"}},
		{"save with nothing up", []string{"snapshot", "save", "a", "--state-dir", empty}, exitError, []string{"no stack is up"}},
		{"flags after the name", []string{"snapshot", "save", "a", "--state-dir", state, "--stack", "nostack"}, exitError, []string{`no stack is up (stack "nostack")`}},
		{"restore unknown", []string{"snapshot", "restore", "tenants-1000", "--state-dir", state}, exitError, []string{`no such snapshot "tenants-1000"`, "available: base, tenants-100"}},
		{"restore unknown, none saved", []string{"snapshot", "restore", "x", "--state-dir", empty}, exitError, []string{`no such snapshot "x"`, "there are none"}},
		{"delete unknown", []string{"snapshot", "delete", "x", "--state-dir", state}, exitError, []string{"available: base, tenants-100"}},
		{"foreground stack", []string{"snapshot", "save", "a", "--state-dir", state, "--stack", "fg"}, exitError, []string{"foreground", "kcbench up"}},
		{"restart a foreground stack", []string{"restart", "--state-dir", state, "--stack", "fg"}, exitError, []string{"foreground", "kcbench restart restarts"}},
		{"external database", []string{"snapshot", "restore", "base", "--state-dir", state, "--stack", "ext"}, exitError, []string{"external database"}},
		{"list", []string{"snapshot", "list", "--state-dir", state}, exitOK, []string{"NAME", "base", "tenants-100", "26.7.3", "48.0 MiB", "1234", "0.40 s", "21.00 s"}},
		{"list empty", []string{"snapshot", "list", "--state-dir", empty}, exitOK, []string{"no snapshots"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(out+errs, w) {
					t.Errorf("output lacks %q\nstdout: %s\nstderr: %s", w, out, errs)
				}
			}
		})
	}
}

func TestSnapshotListJSONAndDelete(t *testing.T) {
	state := t.TempDir()
	fakeSnapshot(t, state, "a")
	code, out, errs := runCLI(t, "snapshot", "list", "--json", "--state-dir", state)
	var infos []stack.SnapshotInfo
	if code != 0 || json.Unmarshal([]byte(out), &infos) != nil || len(infos) != 1 || infos[0].Name != "a" {
		t.Fatalf("list --json: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := runCLI(t, "snapshot", "delete", "a", "--state-dir", state); code != 0 || !strings.Contains(out, "snapshot a deleted") {
		t.Fatalf("delete: exit %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(state, "snapshots", "a")); !os.IsNotExist(err) {
		t.Fatalf("snapshot folder still there: %v", err)
	}
	if code, out, _ := runCLI(t, "snapshot", "list", "--json", "--state-dir", state); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("list --json after delete: %d %q", code, out)
	}
}
