package sizing

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

func quickPoints(policy string, tls bool, ccPolicy string) []*results.Point {
	conns := func(p string) *results.Connections {
		return &results.Connections{Policy: p, TLS: tls, Version: "TLS 1.3"}
	}
	return []*results.Point{{Summary: results.Summary{Params: map[string]string{"mode": "realms", "password_policy": policy},
		Workloads: []results.Workload{
			{Scenario: results.ScenarioPasswordGrant, Phase: results.PhaseWarm, ServerCPUMsPerOp: 60, Connections: conns(results.ConnReuse)},
			{Scenario: results.ScenarioClientCredentials, Phase: results.PhaseWarm, ServerCPUMsPerOp: 6, Connections: conns(ccPolicy)},
			{Scenario: results.ScenarioRefresh, Phase: results.PhaseWarm, ServerCPUMsPerOp: 4, Connections: conns(results.ConnReuse)},
		}}}}
}

// The estimate's first line says whether its costs were measured under
// the guide's conditions, and names each difference; a database figure
// that was not measured is printed as such.
func TestQuickSizingConditions(t *testing.T) {
	var b bytes.Buffer
	if err := WriteQuickSizing(&b, quickPoints("default", true, results.ConnPerIteration)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	first := strings.SplitN(strings.TrimSpace(out), "\n", 2)[0]
	if !strings.HasPrefix(first, "Sizing from costs measured under the sizing guide's conditions") {
		t.Errorf("production conditions: first line %q", first)
	}
	if !strings.Contains(out, "database write IOPS (IOPS)") || !strings.Contains(out, "not measured") {
		t.Errorf("database rows not marked as not measured:\n%s", out)
	}
	b.Reset()
	if err := WriteQuickSizing(&b, quickPoints("pbkdf2-sha256:1", false, results.ConnReuse)); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	first = strings.SplitN(strings.TrimSpace(out), "\n", 2)[0]
	for _, want := range []string{"NOT measured under", "login over plain HTTP", "client-credential grant with reuse connections, the guide's per-iteration", "hashed with pbkdf2-sha256:1"} {
		if !strings.Contains(first, want) {
			t.Errorf("lab conditions: first line %q lacks %q", first, want)
		}
	}
}
