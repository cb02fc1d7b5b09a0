package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestStatsJSONRoundTripKeepsEvents(t *testing.T) {
	in := Stats{
		Scenario: "password-grant", Model: ModelOpen, Duration: 60 * time.Second, Timeout: 1500 * time.Millisecond,
		Events: []Event{
			{At: 30 * time.Second, Action: "kill", Args: "node=2"},
			{At: 60500 * time.Millisecond, Action: "start", Args: "node=2", Err: "port busy"},
		},
	}
	var buf bytes.Buffer
	if err := WriteStatsJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"at_s": 60.5`) {
		t.Errorf("event offset not in seconds:\n%s", buf.String())
	}
	var out Stats
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Events, in.Events) {
		t.Errorf("events = %+v, want %+v", out.Events, in.Events)
	}
	if out.Timeout != in.Timeout || !strings.Contains(buf.String(), `"http_timeout_s": 1.5`) {
		t.Errorf("time-out in force = %v, want %v:\n%s", out.Timeout, in.Timeout, buf.String())
	}
}

func TestTimelineCSVRoundTrip(t *testing.T) {
	rows := []TimelineRow{
		{Start: 0, End: time.Second, Warmup: true, VUs: 3, ActiveVUs: 2, Dropped: 1, Ops: []OpInterval{
			{Op: IterationOp, Count: 10, Errors: 1, P50: 1500 * time.Microsecond, P95: 2 * time.Millisecond, P99: 3 * time.Millisecond, Max: 4 * time.Millisecond},
			{Op: "token", Count: 10, Errors: 1, P50: time.Millisecond, P95: 2 * time.Millisecond, P99: 3 * time.Millisecond, Max: 4 * time.Millisecond}}},
		{Start: time.Second, End: 1500 * time.Millisecond, VUs: 3, Ops: []OpInterval{{Op: IterationOp}}},
		{Start: 1500 * time.Millisecond, End: 1503*time.Millisecond + 7*time.Microsecond, VUs: 3, Ops: []OpInterval{{Op: IterationOp, Count: 1}}},
	}
	var b bytes.Buffer
	if err := WriteTimelineCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTimelineCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, rows)
	}
	for _, bad := range []string{"", "a,b\n", "start_s,end_s,phase,vus,active_vus,dropped,op,count,errors,rate_per_s,p50_ms,p95_ms,p99_ms,max_ms\n0,1,x,1,1,0,iteration,1,0,1,1,1,1,1\n",
		"start_s,end_s,phase,vus,active_vus,dropped,op,count,errors,rate_per_s,p50_ms,p95_ms,p99_ms,max_ms\n0,1,measure,1,1,0,iteration,NaN,0,1,1,1,1,1\n"} {
		if _, err := ReadTimelineCSV(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Time-outs are a measured outcome: the error rate besides them leaves
// them out; a dead server's refusals still count.
func TestErrorRateBesidesTimeouts(t *testing.T) {
	o := OpStats{Count: 20, Errors: 20, ErrorClasses: map[string]int64{ErrorClassTimeout: 20}}
	if got := o.ErrorRateBesidesTimeouts(); got != 0 {
		t.Errorf("all time-outs: %v, want 0", got)
	}
	o = OpStats{Count: 100, Errors: 60, ErrorClasses: map[string]int64{ErrorClassTimeout: 10, "connection_refused": 50}}
	if got := o.ErrorRateBesidesTimeouts(); got != 0.5 || o.ErrorRate() != 0.6 {
		t.Errorf("besides time-outs %v, all %v; want 0.5 and 0.6", got, o.ErrorRate())
	}
	if (OpStats{}).ErrorRateBesidesTimeouts() != 0 {
		t.Error("no iterations: want 0")
	}
}
