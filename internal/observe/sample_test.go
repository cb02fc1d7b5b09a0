package observe

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// same compares samples with NaN equal to NaN.
func same(a, b Sample) bool {
	if !a.T.Equal(b.T) || a.Phase != b.Phase {
		return false
	}
	for _, c := range columns {
		x, y := *c.get(&a), *c.get(&b)
		if x != y && !(math.IsNaN(x) && math.IsNaN(y)) {
			return false
		}
	}
	return true
}

func testRows() []Sample {
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))
	a := Blank(t0)
	a.Phase = "cold"
	a.KCRSSBytes = 512 << 20
	a.HeapUsed = 1.5e8
	a.PGDBSizeBytes = 13331603
	b := Blank(t0.Add(time.Second))
	b.Phase = `warm, "2"` // needs quoting
	b.KCCPUPct = 187.25
	b.GCPauseSeconds = 0.0123456789012345
	b.PGCommits = 0
	b.HTTPRequests = 1e-7
	c := Blank(t0.Add(2 * time.Second)) // nothing observed
	return []Sample{a, b, c}
}

func TestCSVRoundTrip(t *testing.T) {
	t.Parallel()
	rows := testRows()
	var buf bytes.Buffer
	if err := WriteCSV(&buf, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 || lines[0] != strings.Join(Columns(), ",") {
		t.Fatalf("csv:\n%s", buf.String())
	}
	if want := "2025-03-04T05:06:09.123456789+01:00," + strings.Repeat(",", len(columns)); lines[3] != want {
		t.Errorf("empty row: %q, want %q", lines[3], want)
	}
	if !strings.Contains(lines[1], ",536870912,") || !strings.Contains(lines[2], ",0.0000001,") {
		t.Errorf("numbers not plain: %q %q", lines[1], lines[2])
	}
	back, err := ReadCSV(&buf)
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

func TestReadCSVColumnsByName(t *testing.T) {
	t.Parallel()
	in := "phase,future_column,time,kc_rss_bytes\ncold,x,2025-01-01T00:00:00Z,42\n"
	rows, err := ReadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Blank(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	want.Phase, want.KCRSSBytes = "cold", 42
	if len(rows) != 1 || !same(rows[0], want) {
		t.Fatalf("got %+v", rows)
	}
}

func TestReadCSVErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		"phase,kc_rss_bytes\ncold,1\n",
		"time,kc_rss_bytes\nyesterday,1\n",
		"time,kc_rss_bytes\n2025-01-01T00:00:00Z,lots\n",
		"time,kc_rss_bytes\n2025-01-01T00:00:00Z\n",
	} {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	_, err := ReadCSV(strings.NewReader("time,kc_rss_bytes\n2025-01-01T00:00:00Z,1\n2025-01-01T00:00:01Z,x\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("error does not name line 3: %v", err)
	}
}

func TestSampleValue(t *testing.T) {
	t.Parallel()
	s := Blank(time.Time{})
	s.PGBlksHit = 9
	if v, ok := s.Value("pg_blks_hit_per_s"); !ok || v != 9 {
		t.Errorf("pg_blks_hit_per_s: %v %v", v, ok)
	}
	if _, ok := s.Value("nope"); ok {
		t.Error("unknown column found")
	}
	if len(Columns()) != 2+len(columns) {
		t.Error("header size")
	}
}

// SpanOf keeps the rows of its window: the largest RSS, the mean CPU and
// heap, and the GC pauses each rate times its interval.
func TestSpanOf(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(sec float64, rss, cpu, heap, gcs, paused float64) Sample {
		s := Blank(t0.Add(time.Duration(sec * float64(time.Second))))
		s.KCRSSBytes, s.KCCPUPct, s.HeapUsed, s.GCCount, s.GCPauseSeconds = rss, cpu, heap, gcs, paused
		return s
	}
	nan := math.NaN()
	rows := []Sample{
		row(0, 900, 10, 100, nan, nan),   // before the window
		row(1, 500, 50, 200, nan, nan),   // first of the window: no rate yet
		row(2, 700, 100, 300, 2, 0.008),  // 2 pauses of 4 ms
		row(4, 600, nan, nan, 0.5, 0.01), // over 2 s: 1 pause of 20 ms
		row(5, 2000, 90, 500, 3, 0.3),    // after the window
	}
	sp := SpanOf(rows, t0.Add(time.Second), t0.Add(4*time.Second))
	if sp.MaxRSSBytes != 700 || sp.MeanCPUPct != 75 || sp.MeanHeapBytes != 250 {
		t.Errorf("%+v", sp)
	}
	if !sp.HasGC || sp.GCPauses != 3 || math.Abs(sp.GCPauseSeconds-0.028) > 1e-12 || math.Abs(sp.MeanGCPauseMs()-28.0/3) > 1e-9 {
		t.Errorf("GC: %+v, mean %v ms", sp, sp.MeanGCPauseMs())
	}
	if sp := SpanOf(rows, t0.Add(10*time.Second), t0.Add(20*time.Second)); !math.IsNaN(sp.MaxRSSBytes) || !math.IsNaN(sp.MeanGCPauseMs()) || sp.HasGC {
		t.Errorf("empty window: %+v", sp)
	}
}
