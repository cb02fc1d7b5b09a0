package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/report"
)

// dashboardFlags are --dashboard and --dashboard-allow-remote (load,
// capacity, experiment run, quickstart).
type dashboardFlags struct {
	addr   string
	remote bool
}

func (d *dashboardFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.addr, "dashboard", "", "serve a live view of the run at `HOST:PORT` (e.g. 127.0.0.1:8090): the report's page and charts, fed while the run goes, the final report at the end")
	fs.BoolVar(&d.remote, "dashboard-allow-remote", false, "allow --dashboard on an address other than loopback")
}

// check checks the flags alone, right after parsing.
func (d *dashboardFlags) check() error {
	if d.addr == "" {
		if d.remote {
			return usagef("--dashboard-allow-remote needs --dashboard")
		}
		return nil
	}
	if err := report.CheckDashboardAddr(d.addr, d.remote); err != nil {
		return cliutil.Usage(err)
	}
	return nil
}

// start listens (a busy port or a non-loopback address is an error before
// the run starts); nil when --dashboard is not set.
func (d *dashboardFlags) start(e *env, title string) (*report.Live, error) {
	if err := d.check(); err != nil || d.addr == "" {
		return nil, err
	}
	l, err := report.ListenLive(d.addr, d.remote, title)
	if err != nil {
		return nil, cliutil.Usage(err)
	}
	e.logf("dashboard: %s", l.URL())
	return l, nil
}

// finishDashboard shows the report at reportPath (none when empty) to an
// open page, then stops the dashboard.
func finishDashboard(l *report.Live, reportPath string) {
	if l == nil {
		return
	}
	var html []byte
	if reportPath != "" {
		html, _ = os.ReadFile(reportPath) // unreadable: the page shows its last state
	}
	l.Finish(html, 3*time.Second)
	l.Close() //nolint:errcheck // the run's outcome matters, not the dashboard's
}

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
