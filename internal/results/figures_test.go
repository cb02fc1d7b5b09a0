package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// Figures no measurement can give are refused when a results file is
// read, naming the field.
func TestImpossibleFiguresRefused(t *testing.T) {
	t.Parallel()
	const lat = `"latency": {"min_ms": 1, "mean_ms": 2, "p50_ms": 2, "p90_ms": 3, "p95_ms": 4, "p99_ms": 5, "p99_9_ms": 6, "max_ms": 7}`
	op := func(fields string) string {
		return `{"scenario": "jwks", "iterations": 10, "ops": [{"name": "iteration", ` + fields + `}]}`
	}
	tests := []struct{ name, json, want string }{
		{"valid", op(`"count": 10, "ok": 10, "rate_per_s": 5, ` + lat), ""},
		{"nothing ran", op(`"count": 0, "ok": 0`), ""},
		{"negative p95", op(`"count": 10, "ok": 10, ` + strings.Replace(lat, `"p95_ms": 4`, `"p95_ms": -4`, 1)), `op "iteration": latency: p95_ms -4: a latency cannot be negative`},
		{"p95 0 over operations", op(`"count": 10, "ok": 10`), `op "iteration": latency.p95_ms 0: 10 operations ran`},
		{"error rate above 100%", op(`"count": 10, "errors": 11, ` + lat), "errors 11: more than the 10 operations (an error rate above 100%)"},
		{"negative count", op(`"count": -1`), "count -1: a count cannot be negative"},
		{"negative rate", op(`"count": 10, "ok": 10, "rate_per_s": -5, ` + lat), "rate_per_s -5: a rate cannot be negative"},
		{"latency above a day", op(`"count": 10, "ok": 10, ` + strings.Replace(lat, `"max_ms": 7`, `"max_ms": 1e300`, 1)), "max_ms 1e+300: a latency above a day"},
		{"negative iterations", `{"iterations": -3}`, "iterations -3: cannot be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var st Stats
			err := json.Unmarshal([]byte(tt.json), &st)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestReadTimelineRefusesNegatives(t *testing.T) {
	t.Parallel()
	head := "start_s,end_s,phase,vus,active_vus,dropped,op,count,errors,error_pct,p50_ms,p95_ms,p99_ms,max_ms\n"
	for _, row := range []string{
		"0,1,measure,2,2,0,iteration,-5,0,0,1,2,3,4\n",
		"0,1,measure,2,2,0,iteration,5,0,0,1,-2,3,4\n",
	} {
		if _, err := ReadTimelineCSV(strings.NewReader(head + row)); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ReadTimelineCSV(%q) = %v, want an error on line 2", row, err)
		}
	}
}
