package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/capacity/capacitytest"
)

// writeSearch writes the capacity folder of a fake search whose server
// holds the SLO up to limit/s at cpu ms per operation.
func writeSearch(t *testing.T, dir string, limit, cpu float64) string {
	t.Helper()
	capacitytest.Write(t, dir, "password-grant", map[string]string{"keycloak_version": "26.7.3"},
		capacitytest.Server{Limit: limit, CPUMsPerOp: cpu, Cliff: true, Start: 10, Step: 10, Resolution: 1, NoWarmup: true})
	return dir
}

func TestGateCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := writeSearch(t, filepath.Join(dir, "base"), 100, 2)
	same := writeSearch(t, filepath.Join(dir, "same"), 100, 2.05)
	worse := writeSearch(t, filepath.Join(dir, "worse"), 80, 2)

	code, out, errs := runCLI(t, "gate", "--baseline", base, "--current", same)
	if code != exitOK || !strings.Contains(out, "gate: PASS") {
		t.Errorf("equal: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runCLI(t, "gate", "--baseline", base, "--current", worse)
	if code != exitThresholds || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "max rate at SLO") || !strings.Contains(errs, "1 regression(s) beyond 10%") {
		t.Errorf("worse: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := runCLI(t, "gate", "--baseline", base, "--current", worse, "--max-regression", "25%"); code != exitOK {
		t.Errorf("25%% allowed: exit %d\n%s", code, out)
	}
	jsonFile := filepath.Join(dir, "gate.json")
	code, out, _ = runCLI(t, "gate", "--baseline", base, "--current", worse, "--json", "--json-out", jsonFile)
	var rep struct {
		Pass        bool     `json:"pass"`
		Regressions []string `json:"regressions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitThresholds || rep.Pass || len(rep.Regressions) != 1 {
		t.Errorf("json: exit %d, %v\n%s", code, err, out)
	}
	if b, err := os.ReadFile(jsonFile); err != nil || !json.Valid(b) {
		t.Errorf("--json-out: %v", err)
	}
}

func TestGateUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"gate"}, exitUsage, "--baseline DIR and --current DIR"},
		{[]string{"gate", "--baseline", dir, "--current", dir, "--max-regression", "lots"}, exitUsage, "percentage"},
		{[]string{"gate", "--baseline", dir, "--current", dir, "--min-latency-delta", "-1ms"}, exitUsage, "negative"},
		{[]string{"gate", "--baseline", dir, "--current", dir}, exitError, "no results"},
		{[]string{"gate", "--baseline", filepath.Join(dir, "none"), "--current", dir}, exitError, "no such file"},
	}
	for _, c := range cases {
		code, out, errs := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("%v: exit %d, want %d and %q\n%s%s", c.args, code, c.code, c.want, out, errs)
		}
	}
}
