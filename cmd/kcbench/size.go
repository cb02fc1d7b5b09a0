package main

import (
	"context"
	"flag"

	"github.com/kcbench/kcbench/internal/sizing"
)

func cmdSize(ctx context.Context, e *env, args []string) error {
	return runSize(ctx, e, args, sizing.RealDeps(e.logf))
}

func runSize(ctx context.Context, e *env, args []string, d sizing.Deps) error {
	fs := newFlags(e, "size", "size [flags]")
	var f sizing.Flags
	f.Register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return f.Run(ctx, e.stdout, set, d)
}
