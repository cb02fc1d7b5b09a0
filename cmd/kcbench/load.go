package main

import (
	"context"
	"errors"
	"flag"
	"runtime"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// loadFlags are kcbench load's flags, and the agent's part they give.
type loadFlags struct {
	cfg              experiment.RunFile
	file             string
	w                stack.Where
	tf               kc.TargetFlags
	af               load.AgentFlags
	df               report.DashboardFlags
	mf               metrics.Flags
	quiet, keepGoing bool
	seg              load.Segment
	startAt          time.Time
}

// parseLoad parses kcbench load's flags over --file's settings and checks
// them.
func parseLoad(e *env, args []string) (*loadFlags, error) {
	lf := &loadFlags{cfg: experiment.DefaultRunFile()}
	newFS := func() *flag.FlagSet {
		fs := newFlags(e, "load", experiment.LoadSynopsis)
		lf.cfg.RegisterFlags(fs)
		fs.StringVar(&lf.file, "file", lf.file, "YAML `FILE` with the run's settings (keys: the flag names with _ for -)")
		fs.BoolVar(&lf.quiet, "quiet", lf.quiet, "no progress line on stderr")
		fs.BoolVar(&lf.keepGoing, "keep-going", lf.keepGoing, "when the target dies or refuses every connection, run on to the end and exit 0 (or 3), e.g. for a deliberate restart; without it the run stops and exits 5")
		lf.w.RegisterFlags(fs)
		lf.tf.RegisterFlags(fs)
		lf.af.RegisterFlags(fs)
		lf.af.RegisterSourceFlag(fs)
		lf.df.RegisterFlags(fs)
		lf.mf.RegisterFlags(fs)
		return fs
	}
	fs := newFS()
	if err := parse(fs, args, 0); err != nil {
		return nil, err
	}
	if lf.file != "" {
		fc, err := experiment.ReadRunFile(lf.file)
		if err != nil {
			return nil, usagef("--file: %v", err)
		}
		lf.cfg = fc
		fs = newFS()
		if err := parse(fs, args, 0); err != nil { // flags override the file
			return nil, err
		}
	}
	if err := lf.cfg.Validate(); err != nil {
		return nil, cliutil.Usage(cliutil.FlagNames(fs, err))
	}
	var err error
	if lf.seg, lf.startAt, err = lf.af.Resolve(e.getenv, time.Now()); err != nil {
		return nil, cliutil.Usage(err)
	}
	if _, err := lf.cfg.Config.Split(lf.seg); err != nil {
		return nil, cliutil.Usage(err)
	}
	return lf, errors.Join(lf.df.Check(), lf.mf.Check(), lf.cfg.CheckOut(lf.af.Emit))
}

func cmdLoad(ctx context.Context, e *env, args []string) error {
	lf, err := parseLoad(e, args)
	if err != nil {
		return err
	}
	cfg := lf.cfg
	r, err := cfg.PrepareLoad(&lf.tf, &lf.w, e.getenv, e.logf, lf.seg, lf.startAt, lf.keepGoing)
	if err != nil {
		return err
	}
	in := &r.In
	in.LocalAddr = lf.af.LocalAddr
	if cfg.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Procs))
	}
	hook, stopMetrics, err := lf.mf.Start(e.logf, lf.seg)
	if err != nil {
		return err
	}
	defer stopMetrics()
	in.IntervalHook = hook
	prog := progress.NewLoad(e.stderr, lf.quiet)
	in.Progress = prog.Update
	live, err := lf.df.Start(e.logf, "load "+cfg.Scenario)
	if err != nil {
		return err
	}
	if live != nil {
		in.Progress = func(p load.Progress) { // about once a second
			prog.Update(p)
			live.Add(liveSample(cfg.Scenario, cfg.Config.Total(), p))
		}
		defer func() { report.FinishLiveDir(context.WithoutCancel(ctx), live, cfg.Out) }()
	}
	e.logf("load: %s, against %s; %s", cfg.Describe(), in.Target.BaseURL, r.Desc)
	start := time.Now()
	res, runErr := scenario.Run(ctx, *in)
	prog.Done()
	if res == nil {
		return runErr // nothing ran (e.g. a VU could not log in, or the setup check failed)
	}
	e.logf("load: done in %s", time.Since(start).Round(time.Millisecond))
	if err := r.Write(e.stdout, res, cfg.Out, lf.af.Emit, e.logf); err != nil {
		return err
	}
	if err := experiment.TargetDown(runErr); err != nil {
		return codedError{code: exitTargetDown, err: err}
	}
	if runErr != nil {
		return runErr
	}
	if res.ThresholdErr != nil {
		return codedError{code: exitThresholds, err: res.ThresholdErr}
	}
	return nil
}

// codedError gives an error its own exit code (cliutil.go exitCode reads it).
type codedError struct {
	code int
	err  error
}

func (x codedError) Error() string { return x.err.Error() }
func (x codedError) Unwrap() error { return x.err }
func (x codedError) ExitCode() int { return x.code }

func cmdScenarios(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "scenarios", "scenarios")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return scenario.WriteList(e.stdout)
}
