package main

import (
	"fmt"
	"time"

	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/report"
)

// liveSample converts the load engine's progress for the dashboard.
func liveSample(label string, total time.Duration, p load.Progress) report.LiveSample {
	return report.LiveSample{Label: label, Elapsed: p.Elapsed, Total: total, Warmup: p.Warmup, Rate: p.Rate,
		Iterations: p.Iterations, Errors: p.Errors, ActiveVUs: p.ActiveVUs, VUs: p.VUs}
}

// liveExperiment returns the feed of an experiment's progress into the
// dashboard: the point (k of n), workload and phase, and an ETA from the
// plan's estimate.
func liveExperiment(l *report.Live, f *experiment.File, scale float64) func(point, wl string, p load.Progress) {
	if l == nil {
		return func(string, string, load.Progress) {}
	}
	pts, _ := experiment.Plan(f)
	estimate := experiment.Estimate(f, pts, scale)
	start := time.Now()
	return func(point, wl string, p load.Progress) {
		step := ""
		for i, pt := range pts {
			if pt.ID == point {
				step = fmt.Sprintf("point %d of %d", i+1, len(pts))
			}
		}
		l.SetStatus(report.LiveStatus{Point: point, Phase: wl, Step: step, ETA: max(0, estimate-time.Since(start))})
		l.Add(liveSample(point+" "+wl, 0, p))
	}
}
