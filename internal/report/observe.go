package report

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/results"
)

// readObserve reads a point's observe.csv; ok is false when the point has
// none.
func readObserve(p *results.Point) (rows []results.ObserveSample, ok bool, err error) {
	f, err := fileutil.Open(filepath.Join(p.Dir, results.ObserveFile), fileutil.MaxResultFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	rows, err = results.ReadObserveCSV(f)
	if err != nil {
		return nil, true, fmt.Errorf("%s: %w", results.ObserveFile, err)
	}
	return rows, true, nil
}

// pointClock is the start of a point's first workload (the zero of its
// over-time charts) and the workload start marks.
func pointClock(p *results.Point) (t0 time.Time, marks []vmark) {
	ws := p.Summary.Workloads
	for i := range ws {
		if s := ws[i].Stats.Start; !s.IsZero() && (t0.IsZero() || s.Before(t0)) {
			t0 = s
		}
	}
	for i := range ws {
		if s := ws[i].Stats.Start; !s.IsZero() {
			marks = append(marks, vmark{x: s.Sub(t0).Seconds(), label: wlKey{ws[i].Name, ws[i].Phase}.String()})
		}
	}
	return t0, marks
}

// observeCharts draws what the observer saw on the server during a point:
// CPU of Keycloak and PostgreSQL, and their memory.
func (b *builder) observeCharts(p *results.Point, id, title, stem string, sub []string) (missing bool) {
	rows, ok, err := readObserve(p)
	if !ok && err == nil {
		return true
	}
	if err != nil {
		b.note("Point %s: server charts left out: %v.", id, err)
		return false
	}
	if len(rows) == 0 {
		b.note("Point %s: %s has no samples.", id, results.ObserveFile)
		return false
	}
	t0, marks := pointClock(p)
	if t0.IsZero() {
		t0 = rows[0].T
		// no workload start times: mark the phase changes instead
		last := ""
		for _, r := range rows {
			if r.Phase != last && r.Phase != "" {
				marks = append(marks, vmark{x: r.T.Sub(t0).Seconds(), label: r.Phase})
			}
			last = r.Phase
		}
	}
	series := func(label string, color int, scale float64, get func(*results.ObserveSample) float64) lineSeries {
		var pts []xy
		for i := range rows {
			if v := get(&rows[i]); !math.IsNaN(v) {
				pts = append(pts, xy{rows[i].T.Sub(t0).Seconds(), v * scale})
			}
		}
		s := lineSeries{label: label, color: color}
		if len(pts) > 0 {
			s.parts = [][]xy{lttb(pts, maxTimelinePoints)}
		}
		return s
	}
	const x = "seconds since the first workload started"
	db := "PostgreSQL" // the database's columns hold mariadbd's on MariaDB
	if p.Manifest.Params["db"] == "mariadb" {
		db = "MariaDB"
	}
	ct := title + ": server CPU over time"
	b.add(stem+"-server-cpu", ct, sub, lineChart{
		title: ct, sub: sub, xLabel: x, yLabel: "% of one core", zeroY: true, headroom: true, marks: marks,
		series: []lineSeries{
			series("Keycloak", 0, 1, func(s *results.ObserveSample) float64 { return s.KCCPUPct }),
			series(db, 1, 1, func(s *results.ObserveSample) float64 { return s.PGCPUPct }),
		},
	})
	mt := title + ": server memory over time"
	b.add(stem+"-server-memory", mt, sub, lineChart{
		title: mt, sub: sub, xLabel: x, yLabel: "MiB", zeroY: true, headroom: true, marks: marks,
		series: []lineSeries{
			series("Keycloak RSS", 0, 1.0/mib, func(s *results.ObserveSample) float64 { return s.KCRSSBytes }),
			series("JVM heap used", 2, 1.0/mib, func(s *results.ObserveSample) float64 { return s.HeapUsed }),
			series("JVM heap committed", 3, 1.0/mib, func(s *results.ObserveSample) float64 { return s.HeapCommitted }),
			series(db+" RSS", 1, 1.0/mib, func(s *results.ObserveSample) float64 { return s.PGRSSBytes }),
		},
	})
	return false
}
