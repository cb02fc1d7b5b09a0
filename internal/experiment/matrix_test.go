package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/dataset"
)

// The version table: a capped rate reads "≥", a version without a
// passing rate "none" and its conclusion, a failed one "failed" and its
// error; Unmeasured tells the two apart for the exit code.
func TestMatrixText(t *testing.T) {
	t.Parallel()
	mx := &Matrix{Scenario: "jwks", SLOs: "p99<500ms", Dataset: dataset.Spec{Mode: dataset.ModeRealms, Tenants: 1}, CommonRate: 40, Rows: []MatrixRow{
		{Version: "26.0.0", Found: true, Capped: true, MaxRate: 40, CPUMsPerOp: 1.5, OpsPerCPUSecond: 667, P99AtCommon: 12.3, BootSeconds: 9.5, RSSAtReady: 400 << 20},
		{Version: "26.1.0", Conclusion: "even the starting rate 20/s failed"},
		{Version: "26.2.0", Error: "stack: no such version"},
	}}
	var b strings.Builder
	if err := mx.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"version matrix: jwks, SLOs p99<500ms", "p99 @ 40/s ms", "≥ 40", "1.50", "667", "12.3", "none",
		"26.1.0: even the starting rate 20/s failed", "failed", "26.2.0: stack: no such version"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	failed, notFound := mx.Unmeasured()
	if !slices.Equal(failed, []string{"26.2.0"}) || !slices.Equal(notFound, []string{"26.1.0"}) {
		t.Errorf("Unmeasured = %v, %v", failed, notFound)
	}
}
