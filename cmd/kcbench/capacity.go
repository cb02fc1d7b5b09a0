package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
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
	fs := newFlags(e, "capacity", experiment.CapacitySynopsis)
	f.RegisterFlags(fs)
	df.RegisterFlags(fs)
	mf.RegisterFlags(fs)
	w.RegisterFlags(fs)
	tf.RegisterFlags(fs)
	sf.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
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
			path, _ := buildReport(context.WithoutCancel(ctx), f.Out) // no report: the page keeps its last state
			report.FinishLive(live, path)
		}()
	}
	if f.Versions != "" {
		return runMatrix(ctx, e, &f, &w, &sf, live)
	}
	lf := experiment.RunFile{Config: f.Scen, Manifest: f.Manifest}
	tg, _, manifestPath, err := loadTarget(e, &lf, &tf, &w)
	if err != nil {
		return err
	}
	var m *dataset.Manifest
	params := map[string]string{"machine_cores": fmt.Sprint(runtime.NumCPU())}
	if f.Scen.Realm == "" {
		if m, err = dataset.ReadManifest(manifestPath); err != nil {
			return err
		}
		experiment.AddSpecParams(params, m.Spec)
	}
	var local *stack.Stack
	if tf.Set() {
		params["target"] = "external"
	} else if s, err := w.Attach(e.getenv, e.logf); err == nil {
		params["target"] = "local"
		params["keycloak_version"] = s.State().Options.Version
		if h, err := s.Heap(); err == nil {
			params["heap"] = h.String()
		}
		for k, v := range s.State().Topology.Params() {
			params[k] = v
		}
		for k, v := range s.LatencyParams() {
			params[k] = v
		}
		local = s
	}
	if _, err := scenario.ByName(f.Scen.Scenario, scenario.ProbeEnv(tg, m, f.Scen)); err != nil {
		return cliutil.Usage(err)
	}
	search := search(e, &f, live)
	search.Local = local
	hook, stopMetrics, err := mf.Start(e.logf, load.Segment{})
	if err != nil {
		return err
	}
	defer stopMetrics()
	search.IntervalHook = hook
	var found []*results.CapacityResult
	var searchErr error
	for i := 1; i <= f.Repeats; i++ {
		dir := f.Out
		p := params
		if f.Repeats > 1 {
			dir = filepath.Join(f.Out, fmt.Sprintf("repeat-%d", i))
			p = experiment.WithParam(params, "repeat", fmt.Sprint(i))
			e.logf("capacity: repeat %d of %d", i, f.Repeats)
		}
		r, err := search.Run(ctx, tg, m, p, dir, nil)
		if r != nil {
			found = append(found, r)
		}
		if err != nil {
			searchErr = err
			break
		}
	}
	if searchErr != nil {
		return searchErr
	}
	for _, r := range found {
		if !r.Found {
			return codedError{code: exitThresholds, err: fmt.Errorf("capacity: no rate met the SLOs: %s", r.Conclusion)}
		}
	}
	return nil
}

// runMatrix searches each version on a fresh local stack seeded with the
// same dataset (experiment.RunMatrix).
func runMatrix(ctx context.Context, e *env, f *experiment.CapacityFlags, w *stack.Where, sf *dataset.SpecFlags, live *report.Live) error {
	spec, err := sf.Spec()
	if err != nil {
		return err
	}
	if f.Manifest != "" {
		m, err := dataset.ReadManifest(f.Manifest)
		if err != nil {
			return err
		}
		spec = m.Spec
	}
	dirs, err := w.Dirs(e.getenv)
	if err != nil {
		return err
	}
	mx, err := experiment.RunMatrix(ctx, experiment.MatrixOptions{Search: search(e, f, live), Versions: f.VersionList(), Dirs: dirs,
		Spec: spec, Heap: f.Heap, Topology: f.Top, PGVersion: f.PGVersion, Out: f.Out, SLOText: f.SLO})
	if mx == nil {
		return err
	}
	fmt.Fprintf(e.stdout, "results: %s (kcbench report %s draws the charts)\n", f.Out, f.Out)
	if err != nil {
		return err
	}
	failed, notFound := mx.Unmeasured()
	if len(failed) > 0 {
		return fmt.Errorf("matrix: %s could not be measured (see above)", strings.Join(failed, ", "))
	}
	if len(notFound) > 0 {
		return codedError{code: exitThresholds, err: fmt.Errorf("matrix: no rate met the SLOs on %s", strings.Join(notFound, ", "))}
	}
	return nil
}
