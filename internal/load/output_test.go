package load

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/golden"
	"github.com/kcbench/kcbench/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func sampleStats(t *testing.T) results.Stats {
	t.Helper()
	s := results.Stats{
		Scenario:    "login",
		Executor:    NameConstantArrivalRate,
		Model:       results.ModelOpen,
		Start:       time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Duration:    30 * time.Second,
		Warmup:      10 * time.Second,
		Elapsed:     40*time.Second + 250*time.Millisecond,
		VUs:         57,
		Iterations:  6000,
		Dropped:     12,
		Interrupted: 1,
		Timeout:     30 * time.Second,
		Ops: []results.OpStats{
			{Name: results.IterationOp, Count: 6000, OK: 5970, Errors: 30, Rate: 200,
				ErrorClasses: map[string]int64{"http_401": 20, ClassTimeout: 10},
				Latency:      results.Dist{Min: 1200 * time.Microsecond, Mean: 23456 * time.Microsecond, P50: 18 * time.Millisecond, P90: 40 * time.Millisecond, P95: 55 * time.Millisecond, P99: 120 * time.Millisecond, P999: 800 * time.Millisecond, Max: 1500 * time.Millisecond},
				Service:      results.Dist{Min: 1100 * time.Microsecond, Mean: 21 * time.Millisecond, P50: 17 * time.Millisecond, P90: 38 * time.Millisecond, P95: 50 * time.Millisecond, P99: 100 * time.Millisecond, P999: 700 * time.Millisecond, Max: 1200 * time.Millisecond}},
			{Name: "token", Count: 6000, OK: 5970, Errors: 30, Rate: 200, OutOfRange: 1,
				ErrorClasses: map[string]int64{"http_401": 20, ClassTimeout: 10},
				Latency:      results.Dist{Min: time.Millisecond, Mean: 20 * time.Millisecond, P50: 15 * time.Millisecond, P90: 35 * time.Millisecond, P95: 50 * time.Millisecond, P99: 110 * time.Millisecond, P999: 750 * time.Millisecond, Max: time.Minute},
				Service:      results.Dist{Min: 900 * time.Microsecond, Mean: 18 * time.Millisecond, P50: 14 * time.Millisecond, P90: 33 * time.Millisecond, P95: 45 * time.Millisecond, P99: 90 * time.Millisecond, P999: 650 * time.Millisecond, Max: time.Minute}},
		},
		Timeline: []results.TimelineRow{
			{Start: 0, End: time.Second, Warmup: true, VUs: 10, ActiveVUs: 3, Ops: []results.OpInterval{
				{Op: results.IterationOp, Count: 200, Errors: 1, P50: 18 * time.Millisecond, P95: 55 * time.Millisecond, P99: 120 * time.Millisecond, Max: 130 * time.Millisecond},
				{Op: "token", Count: 200, Errors: 1, P50: 15 * time.Millisecond, P95: 50 * time.Millisecond, P99: 110 * time.Millisecond, Max: 125500 * time.Microsecond},
			}},
			{Start: time.Second, End: 1500 * time.Millisecond, VUs: 12, ActiveVUs: 4, Dropped: 2, Ops: []results.OpInterval{
				{Op: results.IterationOp, Count: 100},
				{Op: "token", Count: 100},
			}},
		},
	}
	ths := []results.Threshold{}
	for _, e := range []string{"token:p95<100ms", "errors<0.1%", "rate>=150"} {
		th, err := results.ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		ths = append(ths, th)
	}
	s.Thresholds, _ = s.Check(ths)
	return s
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got, *update, "go test -update")
}

func TestWriteSummary(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSummary(&buf, sampleStats(t)); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "summary.golden", buf.Bytes())

	closed := sampleStats(t)
	closed.Model, closed.Executor, closed.Warmup, closed.Thresholds, closed.Aborted = results.ModelClosed, NameConstantVUs, 0, nil, true
	buf.Reset()
	if err := WriteSummary(&buf, closed); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "summary_closed.golden", buf.Bytes())
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
	if err := results.WriteStatsJSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "summary.golden.json", buf.Bytes())

	var back results.Stats
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
	if err := results.WriteTimelineCSV(&buf, sampleStats(t).Timeline); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "timeline.golden.csv", buf.Bytes())
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][0] != "start_s" || recs[1][2] != "warmup" || recs[4][2] != "measure" || recs[4][9] != "200.000" {
		t.Errorf("timeline CSV = %q", recs)
	}
}
