package sizing

import (
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

// Figures measured on MariaDB carry its CPU alone; the PostgreSQL
// statistics are said to be missing, not printed as zeros.
func TestDatabaseFiguresOnMariaDB(t *testing.T) {
	f := Figure{Workload: "cc"}
	ms := []Measurement{{Workload: "cc", Scenario: results.ScenarioClientCredentials,
		DB: &results.DBCost{Available: true, Engine: "mariadb", CPUMeasured: true, Ops: 200, CPUMsPerOp: 0.25}}}
	d, ok := dbFigure(OpClientCredentials, f, ms)
	if !ok || d.Engine != "mariadb" || d.CPUMsPerOp != 0.25 || d.OK != 200 {
		t.Fatalf("figure %+v, %v", d, ok)
	}
	var b strings.Builder
	c := Calibration{Database: []DBFigure{d}}
	if err := c.WriteDatabase(&b, Input{ClientCredentialsPerSec: 100}, Database{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "0.250 ms CPU on mariadb") || !strings.Contains(out, "not available on MariaDB") || strings.Contains(out, "0.00 transactions") {
		t.Errorf("output:\n%s", out)
	}
}
