package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/kcbench/kcbench/internal/bench"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/kc"
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
	o, done, err := f.Resolve(&tf, &w, e.getenv, e.logf)
	defer done()
	if err != nil {
		return err
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
