package main

import (
	"os"
	"path/filepath"
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
	if code, _, stderr := runCLI(t, "k8s", "collect", "--out", filepath.Join(dir, "c"), run); code == 0 || !strings.Contains(stderr, "no kcbench results") {
		t.Errorf("collect of a log without results: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "k8s", "deploy"); code != exitUsage {
		t.Errorf("unknown subcommand: exit %d", code)
	}
}
