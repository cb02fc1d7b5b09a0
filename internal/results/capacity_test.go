package results

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
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

// A capacity result is written whole or not at all: a result that cannot
// be encoded (a NaN) leaves the folder's earlier steps.csv and
// capacity.json as they were, and no temporary folder beside it.
func TestCapacityWriteDirWhole(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "cap")
	good := &CapacityResult{Kind: CapacityKind, Schema: CapacitySchema, Steps: []CapacityStep{{Rate: 10, Pass: true}}}
	if err := good.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, f := range []string{StepsFile, CapacityFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = b
	}
	bad := &CapacityResult{Kind: CapacityKind, Schema: CapacitySchema, Steps: []CapacityStep{{Rate: 20}, {Rate: math.NaN()}}}
	if err := bad.WriteDir(dir); err == nil {
		t.Fatal("a NaN written without an error")
	}
	for f, b := range before {
		if now, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !bytes.Equal(now, b) {
			t.Errorf("%s changed by a failed write (%v)", f, err)
		}
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("beside the folder: %v", ents)
	}
}
