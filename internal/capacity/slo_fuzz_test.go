package capacity

import (
	"slices"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

// FuzzParseSLOs: whatever ParseSLOs accepts, results.FormatSLOs writes back in a
// form that parses to the same SLOs.
func FuzzParseSLOs(f *testing.F) {
	for _, s := range []string{DefaultSLOs, "p95<200ms", "token:p99<1s, errors<1%", "rate>100,max<5s", ",,p50<1ms,", "p99<<5", "foo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ts, err := ParseSLOs(s)
		if err != nil {
			return
		}
		if len(ts) == 0 {
			t.Fatalf("%q: no SLO and no error", s)
		}
		canon := results.FormatSLOs(ts)
		again, err := ParseSLOs(canon)
		if err != nil || !slices.Equal(again, ts) {
			t.Fatalf("%q → %q → %v, %v", s, canon, again, err)
		}
		LatencyLimit(ts)
	})
}
