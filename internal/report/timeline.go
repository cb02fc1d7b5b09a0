package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/results"
)

// tlRow is one interval of a workload's whole iteration, from
// timeline.csv.
type tlRow struct {
	start, end    float64 // seconds from the start of the workload's run
	warmup        bool
	count, errors int64
	p50, p95, p99 float64 // ms
}

// tlSegment is the timeline of one workload.
type tlSegment struct {
	workload string // from a "workload" column, when the file has one
	rows     []tlRow
}

// readTimeline reads a point's timeline.csv: the rows results.WriteTimelineCSV
// writes, for every workload of the point one after the other, in the
// order of summary.json's workloads. A workload starts where the file
// repeats its header, where the row offsets start again from an earlier
// time, or (when the file has a "workload" column) where that column
// changes. Only the whole-iteration rows are kept.
func readTimeline(path string) ([]tlSegment, error) {
	f, err := fileutil.Open(path, fileutil.MaxResultFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	segs, err := parseTimeline(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return segs, nil
}

func parseTimeline(r io.Reader) ([]tlSegment, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty timeline")
		}
		return nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"start_s", "end_s", "op", "count", "errors", "p50_ms", "p95_ms", "p99_ms"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("no %q column", need)
		}
	}
	wlCol, hasWl := col["workload"]
	var segs []tlSegment
	var cur *tlSegment
	newSeg := func(name string) {
		segs = append(segs, tlSegment{workload: name})
		cur = &segs[len(segs)-1]
	}
	headerSeen := true // the next data row opens a segment
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) > 0 && rec[0] == header[0] {
			headerSeen = true // a repeated header: the next workload
			continue
		}
		if len(rec) < len(header) {
			return nil, fmt.Errorf("line %d: %d fields, want %d", line, len(rec), len(header))
		}
		if rec[col["op"]] != results.IterationOp {
			continue
		}
		var row tlRow
		var errs []error
		pf := func(name string) float64 {
			v, err := strconv.ParseFloat(rec[col[name]], 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
			return v
		}
		pi := func(name string) int64 {
			v, err := strconv.ParseInt(rec[col[name]], 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
			}
			return v
		}
		row.start, row.end = pf("start_s"), pf("end_s")
		row.count, row.errors = pi("count"), pi("errors")
		row.p50, row.p95, row.p99 = pf("p50_ms"), pf("p95_ms"), pf("p99_ms")
		if i, ok := col["phase"]; ok {
			row.warmup = rec[i] == "warmup"
		}
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		name := ""
		if hasWl {
			name = rec[wlCol]
		}
		switch {
		case headerSeen, cur == nil:
			newSeg(name)
		case hasWl && name != cur.workload:
			newSeg(name)
		case len(cur.rows) > 0 && row.start < cur.rows[len(cur.rows)-1].start:
			newSeg(name)
		}
		headerSeen = false
		cur.rows = append(cur.rows, row)
	}
	return segs, nil
}

// placedSegment is a workload's timeline placed on the point's clock.
type placedSegment struct {
	w      *results.Workload
	offset float64 // seconds from the start of the point's first workload
	rows   []tlRow
}

// placeTimeline matches the segments of a point's timeline.csv to its
// workloads and places them on one clock: from the workloads' start times
// when known, else one after the other.
func placeTimeline(p *results.Point, segs []tlSegment) ([]placedSegment, error) {
	ws := p.Summary.Workloads
	if len(segs) != len(ws) {
		return nil, fmt.Errorf("%s has %d workload timelines for %d workloads in %s",
			results.TimelineFile, len(segs), len(ws), results.SummaryFile)
	}
	var t0 time.Time
	for i := range ws {
		if s := ws[i].Stats.Start; !s.IsZero() && (t0.IsZero() || s.Before(t0)) {
			t0 = s
		}
	}
	out := make([]placedSegment, len(ws))
	var next float64
	for i := range ws {
		w := &ws[i]
		if segs[i].workload != "" && segs[i].workload != w.Name {
			return nil, fmt.Errorf("%s: timeline %d is of workload %q, %s says %q",
				results.TimelineFile, i+1, segs[i].workload, results.SummaryFile, w.Name)
		}
		off := next
		if !t0.IsZero() && !w.Stats.Start.IsZero() {
			off = w.Stats.Start.Sub(t0).Seconds()
		}
		out[i] = placedSegment{w: w, offset: off, rows: segs[i].rows}
		end := off + w.Stats.Elapsed.Seconds()
		if n := len(segs[i].rows); n > 0 {
			end = max(end, off+segs[i].rows[n-1].end)
		}
		next = end
	}
	return out, nil
}
