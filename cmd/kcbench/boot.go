package main

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	d, err := f.Dirs(e.getenv)
	if err != nil {
		return err
	}
	rep := stack.BootReport{}
	s, err := stack.Attach(d, f.Name)
	switch {
	case err == nil && s.Running():
		s.SetLogf(e.logf)
		e.logf("measuring %d restarts of stack %q", *repeat, f.Name)
	case err == nil || errors.Is(err, stack.ErrNotUp):
		// No stack up: run a foreground one for the measurement only.
		f.Name = fmt.Sprintf("boot-%d", os.Getpid())
		cfg, err := f.Config(e.getenv, e.logf, false)
		if err != nil {
			return err
		}
		e.logf("no stack up: starting a temporary one (first boot creates the schema)")
		s, err = stack.Start(ctx, cfg)
		if err != nil {
			return err
		}
		defer func() {
			cctx, cancel := cleanupCtx(ctx)
			defer cancel()
			if err := s.Down(cctx); err != nil {
				e.logf("cleanup: %v", err)
			}
		}()
		if b := s.State().LastBoot; b != nil {
			rep.Boots = append(rep.Boots, *b)
		}
	default:
		return err
	}
	if err := rep.Measure(ctx, s, *repeat, e.logf); err != nil {
		return err
	}
	if *asJSON {
		return cliutil.WriteJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}
