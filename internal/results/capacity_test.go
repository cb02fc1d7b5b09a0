package results

import (
	"encoding/json"
	"strings"
	"testing"
)

// cpu_bound is true or false in JSON, absent when unknown, and the "yes"
// and "no" of older files read back.
func TestCPUBoundJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want CPUBound
	}{{`true`, CPUBoundYes}, {`false`, CPUBoundNo}, {`"yes"`, CPUBoundYes}, {`"no"`, CPUBoundNo}, {`null`, CPUBoundUnknown}} {
		var r CapacityResult
		if err := json.Unmarshal([]byte(`{"cpu_bound":`+c.in+`}`), &r); err != nil || r.CPUBound != c.want {
			t.Errorf("%s: %v, %v", c.in, r.CPUBound, err)
		}
	}
	var r CapacityResult
	if err := json.Unmarshal([]byte(`{"cpu_bound":"maybe"}`), &r); err == nil {
		t.Error(`"maybe" read without an error`)
	}
	for c, want := range map[CPUBound]string{CPUBoundYes: `"cpu_bound":true`, CPUBoundNo: `"cpu_bound":false`} {
		b, _ := json.Marshal(CapacityResult{CPUBound: c})
		if !strings.Contains(string(b), want) {
			t.Errorf("%v: %s", c, b)
		}
	}
	if b, _ := json.Marshal(CapacityResult{}); strings.Contains(string(b), "cpu_bound") {
		t.Errorf("unknown written: %s", b)
	}
}
