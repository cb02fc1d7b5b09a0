package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// Write holds kcbench's first client to the bars: at most 1.2× wrk's CPU
// per request; a skipped tool is listed, not judged.
func TestWriteBars(t *testing.T) {
	t.Parallel()
	run := func(kcbCPU time.Duration) (string, error) {
		rs := []Result{
			{Tool: "kcbench/h1", Requests: 1000, Wall: time.Second, CPU: kcbCPU},
			{Tool: "wrk", Requests: 1000, Wall: time.Second, CPU: time.Second},
			{Tool: "k6", Skipped: "not installed"},
		}
		var buf bytes.Buffer
		err := Write(&buf, "jwks", rs, 10, time.Second)
		return buf.String(), err
	}
	out, err := run(1150 * time.Millisecond)
	if err != nil || !strings.Contains(out, "kcbench / wrk  1.15×") || !strings.Contains(out, "skipped: not installed") {
		t.Errorf("within the bar: err %v, output:\n%s", err, out)
	}
	out, err = run(1300 * time.Millisecond)
	var missed BarsMissed
	if !errors.As(err, &missed) || len(missed) != 1 || !strings.Contains(missed[0], "1.30× wrk") || !strings.Contains(out, "MISSED") {
		t.Errorf("over the bar: err %v, output:\n%s", err, out)
	}
}
