package main

import (
	"context"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdBoot(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "boot", "boot [--repeat N] [--json] [stack flags]")
	var f stack.Flags
	f.RegisterFlags(fs)
	repeat := fs.Int("repeat", 3, "number of restarts to measure")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *repeat < 1 || *repeat > 1000 {
		return usagef("--repeat: %d: must be between 1 and 1000", *repeat)
	}
	rep, err := f.MeasureBoots(ctx, *repeat, e.getenv, e.logf)
	if err != nil {
		return err
	}
	if *asJSON {
		return cliutil.WriteJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}
