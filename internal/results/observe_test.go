package results

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// same compares samples with NaN equal to NaN.
func same(a, b ObserveSample) bool {
	if !a.T.Equal(b.T) || a.Phase != b.Phase {
		return false
	}
	for _, c := range observeColumns {
		x, y := *c.get(&a), *c.get(&b)
		if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			return false
		}
	}
	return true
}

func testRows() []ObserveSample {
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))
	a := BlankObserveSample(t0)
	a.Phase = "cold"
	a.KCRSSBytes = 512 << 20
	a.HeapUsed = 1.5e8
	a.PGDBSizeBytes = 13331603
	b := BlankObserveSample(t0.Add(time.Second))
	b.Phase = `warm, "2"` // needs quoting
	b.KCCPUPct = 187.25
	b.GCPauseSeconds = 0.0123456789012345
	b.PGCommits = 0
	b.HTTPRequests = 1e-7
	c := BlankObserveSample(t0.Add(2 * time.Second)) // nothing observed
	return []ObserveSample{a, b, c}
}

func TestObserveCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rows := testRows()
	var buf bytes.Buffer
	if err := WriteObserveCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != strings.Join(ObserveColumns(), ",") {
		t.Fatalf("csv:\n%s", buf.String())
	}
	if want := "2025-03-04T05:06:09.123456789+01:00," + strings.Repeat(",", len(observeColumns)); lines[3] != want {
		t.Errorf("empty row: %q, want %q", lines[3], want)
	}
	if !strings.Contains(lines[1], ",536870912,") || !strings.Contains(lines[2], ",0.0000001,") {
		t.Errorf("numbers not plain: %q %q", lines[1], lines[2])
	}
	back, err := ReadObserveCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rows) {
		t.Fatalf("%d rows back, want %d", len(back), len(rows))
	}
	for i := range rows {
		if !same(back[i], rows[i]) {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, back[i], rows[i])
		}
	}
}

func TestReadObserveCSVColumnsByName(t *testing.T) {
	t.Parallel()
	in := "phase,future_column,time,kc_rss_bytes\ncold,x,2025-01-01T00:00:00Z,42\n"
	rows, err := ReadObserveCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := BlankObserveSample(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	want.Phase, want.KCRSSBytes = "cold", 42
	if len(rows) != 1 || !same(rows[0], want) {
		t.Fatalf("got %+v", rows)
	}
}

func TestReadObserveCSVErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		"phase,kc_rss_bytes\ncold,1\n",
		"time,kc_rss_bytes\nyesterday,1\n",
		"time,kc_rss_bytes\n2025-01-01T00:00:00Z,lots\n",
		"time,kc_rss_bytes\n2025-01-01T00:00:00Z\n",
	} {
		if _, err := ReadObserveCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	_, err := ReadObserveCSV(strings.NewReader("time,kc_rss_bytes\n2025-01-01T00:00:00Z,1\n2025-01-01T00:00:01Z,x\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error does not name line 3: %v", err)
	}
}

func TestObserveSampleValue(t *testing.T) {
	t.Parallel()
	s := BlankObserveSample(time.Time{})
	s.PGBlksHit = 9
	if v, ok := s.Value("pg_blks_hit_per_s"); !ok || v != 9 {
		t.Errorf("pg_blks_hit_per_s: %v %v", v, ok)
	}
	if _, ok := s.Value("nope"); ok {
		t.Error("unknown column found")
	}
	if len(ObserveColumns()) != 2+len(observeColumns) {
		t.Error("header size")
	}
}
