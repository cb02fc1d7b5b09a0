package main

import (
	"context"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdBoot(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "boot", "boot [--repeats N] [--json] [stack flags]")
	var f stack.Flags
	f.RegisterFlags(fs)
	repeats := fs.Int("repeats", 3, "`N` restarts to measure")
	cliutil.Renamed(fs, "repeat", "repeats")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *repeats < 1 || *repeats > 1000 {
		return usagef("--repeats: %d: must be between 1 and 1000", *repeats)
	}
	rep, err := f.MeasureBoots(ctx, *repeats, e.getenv, e.logf)
	if err != nil {
		return err
	}
	if *asJSON {
		return cliutil.WriteJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}
