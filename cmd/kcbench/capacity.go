package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/stack"
)

// search binds the flags to the search they ask for, with progress on
// stderr and the dashboard.
func search(e *env, f *experiment.CapacityFlags, live *report.Live) *experiment.Search {
	s := f.Search(e.logf, e.stdout)
	if !f.Quiet && progress.IsTerminal(e.stderr) {
		s.Progress = func() (func(load.Progress), func()) {
			p := progress.NewLoad(e.stderr, false)
			return p.Update, p.Done
		}
	}
	if live != nil {
		term := s.Progress
		s.Progress = func() (func(load.Progress), func()) {
			update, done := func(load.Progress) {}, func() {}
			if term != nil {
				update, done = term()
			}
			live.SetStatus(report.LiveStatus{Phase: "capacity search " + f.Scen.Scenario})
			return func(p load.Progress) {
				update(p)
				live.Add(liveSample("capacity "+f.Scen.Scenario, 0, p))
			}, done
		}
		s.OnStep = func(i int, st capacity.Step) {
			live.SetStatus(report.LiveStatus{Phase: "capacity search " + f.Scen.Scenario,
				Step: fmt.Sprintf("step %d (%s): %g/s for %s", i, st.Phase, st.Rate, st.Duration), ETA: st.Duration})
		}
	}
	return s
}

func cmdCapacity(ctx context.Context, e *env, args []string) error {
	var f experiment.CapacityFlags
	var df report.DashboardFlags
	var w stack.Where
	var tf kc.TargetFlags
	var sf dataset.SpecFlags
	var mf metrics.Flags
	var af load.AgentFlags
	fs := newFlags(e, "capacity", experiment.CapacitySynopsis)
	f.RegisterFlags(fs)
	af.RegisterFlags(fs)
	df.RegisterFlags(fs)
	mf.RegisterFlags(fs)
	w.RegisterFlags(fs)
	tf.RegisterFlags(fs)
	sf.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	seg, startAt, err := af.Resolve(e.getenv, time.Now())
	if err != nil {
		return cliutil.Usage(err)
	}
	if af.Emit && seg.Whole() {
		return usagef("--emit-results applies to an agent (--segment, --segments): collect a search's --out folder as it is")
	}
	f.Segment, f.StartAt = seg, startAt
	if err := f.Validate(fs); err != nil {
		return err
	}
	if err := df.Check(); err != nil {
		return err
	}
	if err := mf.Check(); err != nil {
		return err
	}
	if err := f.CheckStack(fs, tf.Set()); err != nil {
		return err
	}
	if f.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.Procs))
	}
	live, err := df.Start(e.logf, "capacity "+f.Scen.Scenario)
	if err != nil {
		return err
	}
	if live != nil {
		defer func() {
			path, _ := report.BuildDir(context.WithoutCancel(ctx), f.Out) // no report: the page keeps its last state
			report.FinishLive(live, path)
		}()
	}
	if f.Versions != "" {
		return noRate(f.RunMatrix(ctx, search(e, &f, live), &w, &sf, e.getenv))
	}
	t, err := f.Target(&tf, &w, e.getenv, e.logf)
	if err != nil {
		return err
	}
	search := search(e, &f, live)
	hook, stopMetrics, err := mf.Start(e.logf, seg)
	if err != nil {
		return err
	}
	defer stopMetrics()
	search.IntervalHook = hook
	if !seg.Whole() {
		search.Local = t.Local
		load.AgentParams(t.Params, seg, startAt)
		if err := search.RunAgent(ctx, t.Target, t.Manifest, t.Params, f.Out, seg, startAt); err != nil || !af.Emit {
			return err
		}
		return load.EmitResults(e.stdout, f.Out, seg)
	}
	return noRate(search.RunRepeats(ctx, t, f.Out, f.Repeats, f.Restart))
}

// noRate gives a search that found no rate exit code 3.
func noRate(err error) error {
	if errors.Is(err, experiment.ErrNoRate) {
		return codedError{code: exitThresholds, err: err}
	}
	return err
}
