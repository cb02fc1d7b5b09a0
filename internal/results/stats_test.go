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
		Scenario: "password-grant", Model: ModelOpen, Duration: 60 * time.Second,
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
}
