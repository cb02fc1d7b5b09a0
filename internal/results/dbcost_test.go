package results

import "testing"

func TestRecordDurable(t *testing.T) {
	p := map[string]string{}
	(*DBCost)(nil).RecordDurable(p)
	(&DBCost{Available: false, Durable: true}).RecordDurable(p)
	if len(p) != 0 {
		t.Fatalf("an unmeasured database set %v", p)
	}
	(&DBCost{Available: true}).RecordDurable(p)
	if p[ParamPGDurable] != "false" {
		t.Fatalf("params %v", p)
	}
	(&DBCost{Available: true, Durable: true}).RecordDurable(p)
	if p[ParamPGDurable] != "true" {
		t.Fatalf("params %v", p)
	}
}
