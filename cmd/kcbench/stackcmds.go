package main

import (
	"context"
	"fmt"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdUp(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "up", "up [flags]")
	var f stack.Flags
	f.RegisterFlags(fs)
	foreground := fs.Bool("foreground", false, "stay in the foreground; Ctrl-C stops the stack")
	showSecrets := fs.Bool("show-secrets", false, "print the admin password and client secret")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	cfg, err := f.Config(e.getenv, e.logf, !*foreground)
	if err != nil {
		return err
	}
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		return err
	}
	s.WriteSummary(e.stdout, *showSecrets)
	if !*foreground {
		return nil
	}
	e.logf("stack up in the foreground; Ctrl-C stops it")
	<-ctx.Done()
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	e.logf("stopping the stack")
	if err := s.Down(cctx); err != nil {
		return err
	}
	return ctx.Err()
}

func cmdStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status", "status [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var t kc.TargetFlags
	t.RegisterFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	wait := fs.Duration("wait", kc.DefaultStatusTimeout, "with --target: give up after this long")
	cliutil.Renamed(fs, "timeout", "wait")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *wait <= 0 || *wait > kc.MaxStatusTimeout {
		return usagef("--wait %v: must be positive and at most %v", *wait, kc.MaxStatusTimeout)
	}
	if tg, ext, err := t.External(); err != nil {
		return err
	} else if ext {
		return kc.Status(ctx, e.stdout, tg, *wait, *asJSON)
	}
	return w.PrintStatus(ctx, e.stdout, *asJSON, e.getenv, e.logf)
}

func cmdRestart(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "restart", "restart [--node N] [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	nodeN := fs.Int("node", 0, "restart only node N (1-based; default: every node)")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return w.RestartNodes(ctx, e.stdout, *nodeN, e.getenv, e.logf)
}

func cmdDown(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "down", "down [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	s, err := w.Attach(e.getenv, e.logf)
	if err != nil {
		return err
	}
	pids := s.Pids()
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if err := s.Down(cctx); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "stack %s down (%d processes stopped, none left)\n", w.Name, len(pids))
	return nil
}

func cmdLogs(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "logs", "logs [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var lf stack.LogFlags
	lf.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return w.ShowLog(ctx, e.stdout, lf, e.getenv, e.logf)
}
