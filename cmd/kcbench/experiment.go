package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdExperiment(ctx context.Context, e *env, args []string) error {
	sub := func(verb string) command {
		return command{verb, func(ctx context.Context, e *env, a []string) error { return experimentRun(ctx, e, verb, a) }}
	}
	return subcommands(ctx, e, "experiment", args, []command{sub("run"), sub("plan")})
}

func experimentRun(ctx context.Context, e *env, sub string, args []string) error {
	fs := newFlags(e, "experiment "+sub, "experiment "+sub+" FILE|NAME [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	resultsDir := fs.String("out", "results", "`DIR` of results: the experiment writes DIR/<name>/<point>/")
	cliutil.Renamed(fs, "results", "out")
	scale := fs.Float64("scale", 1, "multiply every phase duration (e.g. 0.1 for a quick look)")
	quiet := fs.Bool("quiet", false, "run: no progress lines on stderr (the log of phases stays)")
	dry := fs.Bool("dry-run", false, "print the plan and its estimated duration, run nothing")
	noReport := fs.Bool("no-report", false, "do not build the report at the end")
	var df report.DashboardFlags
	df.RegisterFlags(fs)
	var mf metrics.Flags
	mf.RegisterFlags(fs)
	calibrate := fs.String("calibrate", "", "plan: estimate with the seed, boot and overhead times fitted to the finished points of results `DIR` (e.g. a shorter run of the same study)")
	// Accept the file before or after the flags.
	var file string
	rest := args
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		file, rest = rest[0], rest[1:]
	}
	if err := parse(fs, rest, 1); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	}
	if file == "" {
		return usagef("experiment %s: which experiment? (a file, or quickstart, multitenancy, hashing, versions)", sub)
	}
	if err := errors.Join(df.Check(), mf.Check()); err != nil {
		return err
	}
	if !(*scale > 0 && *scale <= maxScale) {
		return usagef("--scale: %g: must be > 0 and at most %d", *scale, maxScale)
	}
	f, err := experiment.LoadNamed(file)
	if err != nil {
		return err
	}
	pts, err := experiment.Plan(f)
	if err != nil {
		return cliutil.Usage(err)
	}
	if *calibrate != "" && sub != "plan" && !*dry {
		return usagef("--calibrate applies to plan and --dry-run")
	}
	if sub == "plan" || *dry {
		var costs *experiment.Costs
		if *calibrate != "" {
			done, err := results.ReadDir("calibrate", *calibrate)
			if err != nil {
				return err
			}
			c, err := experiment.CalibrateCosts(done)
			if err != nil {
				return fmt.Errorf("--calibrate %s: %w", *calibrate, err)
			}
			costs = &c
		}
		return experiment.WritePlan(e.stdout, f, pts, *scale, costs)
	}
	d, err := w.Dirs(e.getenv)
	if err != nil {
		return err
	}
	dir := filepath.Join(*resultsDir, f.Name)
	live, err := df.Start(e.logf, "experiment "+f.Name)
	if err != nil {
		return err
	}
	reportPath := ""
	defer func() { report.FinishLive(live, reportPath) }()
	out, err := runExperiment(ctx, e, f, dir, d, w.Name, *scale, *quiet, live, &mf)
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Fprintf(e.stdout, "experiment %s: %d done, %d skipped, %d aborted, %d failed; results in %s\n",
		f.Name, len(out.Done), len(out.Skipped), len(out.Aborted), len(out.Failed), dir)
	if err != nil {
		return err
	}
	if !*noReport {
		if path, rerr := report.BuildDir(ctx, dir); rerr != nil {
			e.logf("report: %v", rerr)
		} else {
			reportPath = path
			fmt.Fprintf(e.stdout, "report: %s\n", path)
		}
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("%d points failed: %s", len(out.Failed), strings.Join(out.Failed, ", "))
	}
	return nil
}

// maxScale bounds --scale.
const maxScale = 100

func runExperiment(ctx context.Context, e *env, f *experiment.File, dir string, d stack.Dirs, name string, scale float64, quiet bool, live *report.Live, mf *metrics.Flags) (experiment.Outcome, error) {
	col, stopMetrics, err := mf.Serve(e.logf, load.Segment{})
	if err != nil {
		return experiment.Outcome{}, err
	}
	defer stopMetrics()
	line, done := experiment.ProgressLine(e.stderr, progress.IsTerminal(e.stderr), quiet)
	feed := liveExperiment(live, f, scale)
	r := &experiment.Runner{File: f, Dir: dir, Dirs: d, StackName: experiment.StackName(name, f.Name), Scale: scale, Logf: e.logf, Metrics: col,
		Progress: func(point, wl string, p load.Progress) {
			feed(point, wl, p)
			line(point, wl, p)
		}}
	start := time.Now()
	out, err := r.Run(ctx)
	done()
	e.logf("experiment %s finished in %s", f.Name, time.Since(start).Round(time.Second))
	return out, err
}
