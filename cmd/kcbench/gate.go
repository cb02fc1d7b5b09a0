package main

import (
	"context"
	"fmt"

	"github.com/kcbench/kcbench/internal/capacity/gate"
	"github.com/kcbench/kcbench/internal/fileutil"
)

func cmdGate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "gate", gate.Synopsis)
	var f gate.Flags
	f.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	o, err := f.Options()
	if err != nil {
		return err
	}
	rep, err := gate.Compare(f.Baseline, f.Current, o)
	if err != nil {
		return err
	}
	if f.JSONOut != "" {
		if err := fileutil.WriteFile(f.JSONOut, 0o644, rep.WriteJSON); err != nil {
			return err
		}
	}
	if f.JSON {
		err = rep.WriteJSON(e.stdout)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	if !rep.Pass {
		return codedError{code: exitThresholds, err: fmt.Errorf("gate: %d regression(s) beyond %g%%", len(rep.Regressions), o.MaxRegressionPct)}
	}
	return nil
}
