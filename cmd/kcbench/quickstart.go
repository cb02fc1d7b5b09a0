package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/sizing"
	"github.com/kcbench/kcbench/internal/stack"
)

// cmdQuickstart is the main job (make run): the shipped quickstart
// experiment (a local stack, a small dataset in both modes, the standard
// scenarios cold and warm), its report, a summary and a sizing estimate
// calibrated with the measured server CPU per operation.
func cmdQuickstart(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "quickstart", "quickstart [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	resultsDir := fs.String("out", "results", "`DIR` of results: the run goes to DIR/quickstart/, replacing an earlier one")
	cliutil.Renamed(fs, "results", "out")
	scale := fs.Float64("scale", 1, "multiply every phase duration (e.g. 0.1 for a quick look)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr (the log of phases stays)")
	var tenants cliutil.Ints
	fs.Var(&tenants, "tenants", "tenant counts to measure in each mode, `LIST` ascending (default 1,10,50; 1 for a quick look)")
	var df report.DashboardFlags
	df.RegisterFlags(fs)
	var sf experiment.StackFlags
	sf.RegisterFlags(fs)
	var mf metrics.Flags
	mf.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := errors.Join(df.Check(), mf.Check()); err != nil {
		return err
	}
	if !(*scale > 0 && *scale <= maxScale) {
		return usagef("--scale: %g: must be > 0 and at most %d", *scale, maxScale)
	}
	f, err := experiment.LoadNamed("quickstart")
	if err != nil {
		return err
	}
	if err := sf.Apply(f); err != nil {
		return err
	}
	if len(tenants) > 0 {
		f.Dataset.Tenants = tenants
	}
	d, err := w.Dirs(e.getenv)
	if err != nil {
		return err
	}
	dir := filepath.Join(*resultsDir, f.Name)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	e.logf("quickstart: Keycloak %s + %s on 127.0.0.1, %v tenants in %v mode, %d workloads cold and warm; results in %s",
		f.Stack.KeycloakVersion, experiment.DBName(f), f.Dataset.Tenants, f.Dataset.Modes, len(f.Workload), dir)
	live, err := df.Start(e.logf, "quickstart")
	if err != nil {
		return err
	}
	reportPath := ""
	defer func() { report.FinishLive(live, reportPath) }()
	out, err := runExperiment(ctx, e, f, dir, d, "quickstart", *scale, *quiet, live, &mf)
	if err != nil {
		return err
	}
	if len(out.Failed) > 0 || len(out.Aborted) > 0 {
		return fmt.Errorf("quickstart: %d points failed and %d aborted (see %s)", len(out.Failed), len(out.Aborted), dir)
	}
	pts, err := results.ReadExperiment(dir)
	if err != nil {
		return err
	}
	var sz bytes.Buffer
	if err := sizing.WriteQuickSizing(&sz, pts); err != nil {
		e.logf("sizing: %v", err)
	}
	m, err := report.Build(ctx, dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	m.Sizing = sz.String()
	if err := m.Write(dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	reportPath = filepath.Join(dir, report.HTMLFile)
	report.WriteQuickSummary(e.stdout, pts)
	e.stdout.Write(sz.Bytes())
	fmt.Fprintf(e.stdout, "\nreport: %s\n", reportPath)
	return nil
}
