package main

import (
	"context"
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

func cmdLoad(ctx context.Context, e *env, args []string) error {
	cfg := experiment.DefaultRunFile()
	var file string
	var w stack.Where
	var tf kc.TargetFlags
	var af load.AgentFlags
	var df report.DashboardFlags
	var mf metrics.Flags
	var quiet, keepGoing bool
	newFS := func(f *experiment.RunFile) *flag.FlagSet {
		fs := newFlags(e, "load", experiment.LoadSynopsis)
		f.RegisterFlags(fs)
		fs.StringVar(&file, "file", file, "YAML `FILE` with the run's settings (keys: the flag names with _ for -)")
		fs.BoolVar(&quiet, "quiet", quiet, "no progress line on stderr")
		fs.BoolVar(&keepGoing, "keep-going", keepGoing, "when the target dies or refuses every connection, run on to the end and exit 0 (or 3), e.g. for a deliberate restart; without it the run stops and exits 5")
		w.RegisterFlags(fs)
		tf.RegisterFlags(fs)
		af.RegisterFlags(fs)
		af.RegisterSourceFlag(fs)
		df.RegisterFlags(fs)
		mf.RegisterFlags(fs)
		return fs
	}
	fs := newFS(&cfg)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if file != "" {
		fc, err := experiment.ReadRunFile(file)
		if err != nil {
			return usagef("--file: %v", err)
		}
		cfg = fc
		fs = newFS(&cfg)
		if err := parse(fs, args, 0); err != nil { // flags override the file
			return err
		}
	}
	if err := cfg.Validate(); err != nil {
		return cliutil.Usage(cliutil.FlagNames(fs, err))
	}
	if err := df.Check(); err != nil {
		return err
	}
	seg, startAt, err := af.Resolve(e.getenv, time.Now())
	if err != nil {
		return cliutil.Usage(err)
	}
	if _, err := cfg.Config.Split(seg); err != nil {
		return cliutil.Usage(err)
	}
	if err := mf.Check(); err != nil {
		return err
	}
	if err := cfg.CheckOut(af.Emit); err != nil {
		return err
	}
	r, err := cfg.PrepareLoad(&tf, &w, e.getenv, e.logf, seg, startAt, keepGoing)
	if err != nil {
		return err
	}
	in := &r.In
	in.LocalAddr = af.LocalAddr
	if cfg.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Procs))
	}
	hook, stopMetrics, err := mf.Start(e.logf, seg)
	if err != nil {
		return err
	}
	defer stopMetrics()
	in.IntervalHook = hook
	prog := progress.NewLoad(e.stderr, quiet)
	in.Progress = prog.Update
	live, err := df.Start(e.logf, "load "+cfg.Scenario)
	if err != nil {
		return err
	}
	if live != nil {
		total := cfg.Config.Total()
		in.Progress = func(p load.Progress) {
			prog.Update(p)
			live.Add(liveSample(cfg.Scenario, total, p))
		}
		defer func() { report.FinishLiveDir(context.WithoutCancel(ctx), live, cfg.Out) }()
	}
	e.logf("load: %s, against %s; %s", cfg.Describe(), in.Target.BaseURL, r.Desc)
	start := time.Now()
	res, runErr := scenario.Run(ctx, *in)
	prog.Done()
	if res == nil {
		return runErr // nothing ran (e.g. a VU could not log in)
	}
	e.logf("load: done in %s", time.Since(start).Round(time.Millisecond))
	if err := r.Write(e.stdout, res, cfg.Out, af.Emit, e.logf); err != nil {
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
