package main

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
)

func TestDashboardFlags(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	out := filepath.Join(t.TempDir(), "out")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"load remote", []string{"load", "--scenario", "jwks", "--dashboard", "0.0.0.0:8090"}, exitUsage, "--dashboard-allow-remote"},
		{"experiment remote", []string{"experiment", "run", "quickstart", "--dashboard", "10.1.2.3:8090"}, exitUsage, "not a loopback address"},
		{"quickstart no port", []string{"quickstart", "--dashboard", "127.0.0.1"}, exitUsage, "HOST:PORT"},
		{"allow without dashboard", []string{"load", "--scenario", "jwks", "--dashboard-allow-remote"}, exitUsage, "needs --dashboard"},
		{"capacity remote", []string{"capacity", "--scenario", "jwks", "--dashboard", "192.168.0.9:80"}, exitUsage, "not a loopback address"},
		// a busy port is an error before the run starts: nothing written
		{"load busy", []string{"load", "--scenario", "jwks", "--realm", "x", "--target", "http://127.0.0.1:1", "--out", out,
			"--dashboard", busy.Addr().String()}, exitUsage, "address already in use"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, want %d and one line with %q\nstdout: %s\nstderr: %s", code, c.code, c.want, stdout, stderr)
			}
		})
	}
	if matches, _ := filepath.Glob(filepath.Join(out, "*")); len(matches) > 0 {
		t.Errorf("the load ran despite the busy dashboard port: %v", matches)
	}
}
