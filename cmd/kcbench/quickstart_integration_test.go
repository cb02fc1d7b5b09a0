//go:build integration

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

// make run's quickstart, end to end and scaled down (phases a tenth as
// long, one tenant count): both modes done, the report written, the summary table and the
// sizing of the guide's example load with the measured CPU printed.
func TestQuickstartScaledDown(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	out := c.mustRun("quickstart", "--scale", "0.1", "--tenants", "1", "--out", dir, "--quiet")
	exp := filepath.Join(dir, "quickstart")
	pts, err := results.ReadExperiment(exp)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	modes := map[string]bool{}
	for _, p := range pts {
		modes[p.Summary.Params["mode"]] = true
		if p.Summary.Status != results.StatusDone || len(p.Summary.Workloads) != 10 { // 5 workloads, cold and warm
			t.Errorf("point %s: %s %q, %d workloads", p.Manifest.Point, p.Summary.Status, p.Summary.Reason, len(p.Summary.Workloads))
		}
	}
	if !modes["realms"] || !modes["orgs"] {
		t.Errorf("modes %v, want realms and orgs", modes)
	}
	if st, err := os.Stat(filepath.Join(exp, "report.html")); err != nil || st.Size() == 0 {
		t.Errorf("report.html: %v", err)
	}
	// Measured as the sizing guide measures: TLS, a new connection per
	// grant, default hashing.
	for _, p := range pts {
		for _, wl := range p.Summary.Workloads {
			c := wl.Connections
			// (an iteration the end of a 0.4 s run cuts off before its
			// request makes no handshake)
			if c == nil || !c.TLS || (wl.Scenario == results.ScenarioClientCredentials && (c.Policy != results.ConnPerIteration || c.PerIteration() < 0.9 || c.PerIteration() > 1)) {
				t.Errorf("point %s, %s %s: connections %+v", p.Manifest.Point, wl.Phase, wl.Name, c)
			}
		}
		if pol := p.Summary.Params["password_policy"]; pol != "default" {
			t.Errorf("point %s: password policy %q, want the default (argon2)", p.Manifest.Point, pol)
		}
	}
	for _, want := range []string{"server CPU-ms/op", "Sizing from costs measured under the sizing guide's conditions", "For the guide's example load", "report: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
