package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestK8sManifestsCLI(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.yaml")
	if err := os.WriteFile(run, []byte("scenario: jwks\nrealm: r\nexecutor: constant-vus\nvus: 4\nduration: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"k8s", "manifests", "--file", run, "--image", "kcbench:test", "--target", "http://keycloak-service:8080"}
	code, stdout, stderr := runCLI(t, append(base, "--agents", "3")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: ConfigMap", "kind: Job", "completionMode: Indexed", "parallelism: 3", "- --segments\n", "JOB_COMPLETION_INDEX"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("manifests lack %q:\n%s", want, stdout)
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--agents", "0"}, "--agents 0"},
		{[]string{"--agents", "5"}, "cannot be split over 5 agents"}, // 4 VUs
		{[]string{"--agents", "2", "--start-at", "2020-01-01T00:00:00Z"}, "in the past"},
		{[]string{"--agents", "2", "--name", "Bad_Name"}, "DNS label"},
	} {
		code, stdout, stderr := runCLI(t, append(base, bad.args...)...)
		if code != exitUsage || !strings.Contains(stderr, bad.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %d bytes; want exit %d naming %q and nothing printed", bad.args, code, stderr, len(stdout), exitUsage, bad.want)
		}
	}
	// A split capacity search: its flags after -- capacity, checked as an
	// agent's would be.
	capBase := []string{"k8s", "manifests", "--agents", "3", "--image", "kcbench:test", "--target", "http://keycloak-service:8080", "--", "capacity",
		"--scenario", "client-credentials", "--realm", "r", "--client-id", "c", "--client-secret", "s"}
	code, stdout, stderr = runCLI(t, append(capBase, "--start-rate", "100", "--step", "100", "--max-rate", "1000")...)
	if code != 0 {
		t.Fatalf("capacity manifests: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: Job", "- capacity\n", "- --max-rate\n", "- --segments\n", "- --emit-results\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("capacity manifests lack %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "kind: ConfigMap") {
		t.Errorf("a capacity search's manifests carry a run file:\n%s", stdout)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{capBase, "--max-rate: a split search needs one"},
		{append(slices.Clone(capBase), "--max-rate", "100", "--search", "adaptive"), "--search adaptive with --segment"},
		{append(slices.Clone(capBase), "--max-rate", "100", "--out", "x"), "--out: set by kcbench k8s manifests"},
		{append(slices.Clone(capBase), "--max-rate", "100", "--segment", "0/3", "--target", "http://x"), "--segment, --target: set by kcbench k8s manifests"},
		{append(slices.Clone(capBase), "--max-rate", "100", "--kc-version", "26.4.7"), "--kc-version starts local stacks"},
		{append(slices.Clone(capBase), "--max-rate", "100", "--metrics-addr", "0.0.0.0:9464"), "not a loopback address"},
		{append(slices.Clone(capBase), "--max-rate", "100", "--dashboard"), "flag provided but not defined: -dashboard"},
		{append(slices.Clone(capBase), "--max-rate", "100", "--nodes", "2"), "--nodes"},
		{append(slices.Clone(capBase[:9]), "load"), "unexpected arguments load"},
		{append(append(slices.Clone(base), "--agents", "2", "--"), capBase[9:]...), "--file is a load's run file"},
	} {
		code, stdout, stderr := runCLI(t, bad.args...)
		if code != exitUsage || !strings.Contains(stderr, bad.want) || stdout != "" {
			t.Errorf("%v: exit %d, stderr %q; want exit %d naming %q and nothing printed", bad.args, code, stderr, exitUsage, bad.want)
		}
	}
	if code, _, stderr := runCLI(t, "k8s", "collect", "--out", filepath.Join(dir, "c"), run); code == 0 || !strings.Contains(stderr, "no kcbench results") {
		t.Errorf("collect of a log without results: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "k8s", "deploy"); code != exitUsage {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}
