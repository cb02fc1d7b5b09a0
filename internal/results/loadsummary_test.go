package results

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// summary.json: the engine's fields first, kcbench's beside them at the
// same level (server_cpu always, the others when set), and read back whole;
// results.Stats reads the same file.
func TestLoadSummaryJSON(t *testing.T) {
	in := LoadSummary{
		Stats:     Stats{Scenario: "password-grant", Model: ModelOpen, Duration: 60 * time.Second, Iterations: 10},
		ServerCPU: ServerCPU{Available: true, Source: "/proc", CPU: 1.5, Window: 60, PerIteration: 150},
		Database:  &DBCost{},
		Params:    map[string]string{"tls": "rsa-2048"},
	}
	var buf bytes.Buffer
	if err := WriteLoadSummary(&buf, in); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	i, j, k := strings.Index(s, `"scenario"`), strings.Index(s, `"server_cpu"`), strings.Index(s, `"params"`)
	if i < 0 || j < i || k < j || strings.Contains(s, `"directory"`) || strings.Contains(s, `"connections"`) || !strings.HasSuffix(s, "}\n") {
		t.Errorf("layout:\n%s", s)
	}
	var out LoadSummary
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.ServerCPU, in.ServerCPU) || !reflect.DeepEqual(out.Params, in.Params) || out.Database == nil ||
		out.Stats.Scenario != in.Stats.Scenario || out.Stats.Duration != in.Stats.Duration {
		t.Errorf("read back %+v", out)
	}
	var st Stats
	if err := json.Unmarshal(buf.Bytes(), &st); err != nil || st.Iterations != 10 {
		t.Errorf("as Stats: %+v, %v", st, err)
	}
	if err := json.Unmarshal([]byte(`{"scenario":"x","duration_s":-1}`), &out); err == nil {
		t.Error("a negative duration read without an error")
	}
}
