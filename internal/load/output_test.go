package load

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func sampleStats(t *testing.T) Stats {
	t.Helper()
	s := Stats{
		Scenario:    "login",
		Executor:    NameConstantArrivalRate,
		Model:       ModelOpen,
		Start:       time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Duration:    30 * time.Second,
		Warmup:      10 * time.Second,
		Elapsed:     40*time.Second + 250*time.Millisecond,
		VUs:         57,
		Iterations:  6000,
		Dropped:     12,
		Interrupted: 1,
		Ops: []OpStats{
			{Name: IterationOp, Count: 6000, OK: 5970, Errors: 30, Rate: 200,
				ErrorClasses: map[string]int64{"http_401": 20, ClassTimeout: 10},
				Latency:      Dist{1200 * time.Microsecond, 23456 * time.Microsecond, 18 * time.Millisecond, 40 * time.Millisecond, 55 * time.Millisecond, 120 * time.Millisecond, 800 * time.Millisecond, 1500 * time.Millisecond},
				Service:      Dist{1100 * time.Microsecond, 21 * time.Millisecond, 17 * time.Millisecond, 38 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 700 * time.Millisecond, 1200 * time.Millisecond}},
			{Name: "token", Count: 6000, OK: 5970, Errors: 30, Rate: 200, OutOfRange: 1,
				ErrorClasses: map[string]int64{"http_401": 20, ClassTimeout: 10},
				Latency:      Dist{time.Millisecond, 20 * time.Millisecond, 15 * time.Millisecond, 35 * time.Millisecond, 50 * time.Millisecond, 110 * time.Millisecond, 750 * time.Millisecond, time.Minute},
				Service:      Dist{900 * time.Microsecond, 18 * time.Millisecond, 14 * time.Millisecond, 33 * time.Millisecond, 45 * time.Millisecond, 90 * time.Millisecond, 650 * time.Millisecond, time.Minute}},
		},
		Timeline: []TimelineRow{
			{Start: 0, End: time.Second, Warmup: true, VUs: 10, ActiveVUs: 3, Ops: []OpInterval{
				{Op: IterationOp, Count: 200, Errors: 1, P50: 18 * time.Millisecond, P95: 55 * time.Millisecond, P99: 120 * time.Millisecond, Max: 130 * time.Millisecond},
				{Op: "token", Count: 200, Errors: 1, P50: 15 * time.Millisecond, P95: 50 * time.Millisecond, P99: 110 * time.Millisecond, Max: 125500 * time.Microsecond},
			}},
			{Start: time.Second, End: 1500 * time.Millisecond, VUs: 12, ActiveVUs: 4, Dropped: 2, Ops: []OpInterval{
				{Op: IterationOp, Count: 100},
				{Op: "token", Count: 100},
			}},
		},
	}
	ths := []Threshold{}
	for _, e := range []string{"token:p95<100ms", "errors<0.1%", "rate>=150"} {
		th, err := ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		ths = append(ths, th)
	}
	s.Thresholds, _ = s.Check(ths)
	return s
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := WriteFile(path, func(w io.Writer) error { _, err := w.Write(got); return err }); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to accept):\n%s", path, got)
	}
}

func TestWriteSummary(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSummary(&buf, sampleStats(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.golden", buf.Bytes())

	closed := sampleStats(t)
	closed.Model, closed.Executor, closed.Warmup, closed.Thresholds, closed.Aborted = ModelClosed, NameConstantVUs, 0, nil, true
	buf.Reset()
	if err := WriteSummary(&buf, closed); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary_closed.golden", buf.Bytes())
}

func TestWriteSummaryError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk full")
	if err := WriteSummary(failingWriter{boom}, sampleStats(t)); !errors.Is(err, boom) {
		t.Errorf("WriteSummary = %v, want %v", err, boom)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestWriteJSON(t *testing.T) {
	t.Parallel()
	s := sampleStats(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.golden.json", buf.Bytes())

	var back Stats
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	s.Timeline = nil // the timeline goes to CSV
	if !reflect.DeepEqual(back, s) {
		t.Errorf("JSON round trip:\n got %+v\nwant %+v", back, s)
	}
}

func TestWriteTimelineCSV(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteTimelineCSV(&buf, sampleStats(t).Timeline); err != nil {
		t.Fatal(err)
	}
	golden(t, "timeline.golden.csv", buf.Bytes())
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][0] != "start_s" || recs[1][2] != "warmup" || recs[4][2] != "measure" || recs[4][9] != "200.000" {
		t.Errorf("timeline CSV = %q", recs)
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := WriteFile(path, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("render failed")
	err := WriteFile(path, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile = %v, want %v", err, boom)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("file holds %q after a failed write, want the previous %q", b, "first")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %s, want only summary.json", strings.Join(names, ", "))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), func(io.Writer) error { return nil }); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}
