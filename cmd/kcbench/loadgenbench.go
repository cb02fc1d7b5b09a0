package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/kcbench/kcbench/internal/bench"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdLoadgenBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "loadgen-bench", bench.Synopsis)
	var f bench.Flags
	f.RegisterFlags(fs)
	procs := fs.Int("procs", experiment.DefaultProcs, "`N` cores for kcbench's engine (GOMAXPROCS), as kcbench load --procs")
	var w stack.Where
	w.RegisterFlags(fs)
	var tf kc.TargetFlags
	tf.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	}
	if err := f.Check(); err != nil {
		return err
	}
	base := tf.URL
	newPool := func() (*scenario.Pool, error) { return scenario.NewSinglePool(scenario.Single{Realm: f.Realm}) }
	if !tf.Set() {
		s, err := w.Attach(e.getenv, e.logf)
		if err != nil {
			return err
		}
		base = s.Target().BaseURL
		if f.Scenario != results.ScenarioJWKS {
			m, err := dataset.ReadManifest(s.DatasetManifest())
			if err != nil {
				return fmt.Errorf("--scenario %s needs the local stack's dataset (kcbench seed): %w", f.Scenario, err)
			}
			newPool = func() (*scenario.Pool, error) { return scenario.NewManifestPool(m, 0) }
		}
	} else if f.Scenario != results.ScenarioJWKS {
		return usagef("--scenario other than jwks needs the local stack (its dataset)")
	}
	o := f.Options
	o.Base, o.NewPool, o.Logf = base, newPool, e.logf
	if f.CPUProfile != "" {
		pf, err := os.Create(f.CPUProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		o.CPUProfile = pf
	}
	rs, err := bench.Run(ctx, o)
	if err != nil {
		return err
	}
	var missed bench.BarsMissed
	if err := bench.Write(e.stdout, f.Scenario, rs, f.Conns, f.Duration); errors.As(err, &missed) {
		return codedError{code: exitThresholds, err: fmt.Errorf("loadgen-bench: %w", err)}
	} else if err != nil {
		return err
	}
	return nil
}
