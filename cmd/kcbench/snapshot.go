package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/kcbench/kcbench/internal/stack"
)

// cmdSnapshot dispatches kcbench snapshot save|restore|list|delete.
func cmdSnapshot(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, stack.SnapshotUsage)
		return usagef("snapshot: missing subcommand (save, restore, list or delete)")
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, stack.SnapshotUsage)
		return flag.ErrHelp
	case "save":
		return cmdSnapshotSave(ctx, e, args[1:])
	case "restore":
		return cmdSnapshotRestore(ctx, e, args[1:])
	case "list":
		return cmdSnapshotList(ctx, e, args[1:])
	case "delete":
		return cmdSnapshotDelete(ctx, e, args[1:])
	}
	return usagef("snapshot: unknown subcommand %q (save, restore, list or delete)", args[0])
}

// snapshotArgs parses the arguments of snapshot verb: the stack flags
// and one NAME.
func snapshotArgs(e *env, verb string, args []string) (string, *stack.Where, error) {
	fs := newFlags(e, "snapshot "+verb, "snapshot "+verb+" NAME [flags]")
	w := &stack.Where{}
	w.RegisterFlags(fs)
	name, err := stack.ParseSnapshotArgs(fs, args)
	return name, w, err
}

func cmdSnapshotSave(ctx context.Context, e *env, args []string) error {
	name, w, err := snapshotArgs(e, "save", args)
	if err != nil {
		return err
	}
	return w.SnapshotSave(ctx, e.stdout, name, e.getenv, e.logf)
}

func cmdSnapshotRestore(ctx context.Context, e *env, args []string) error {
	name, w, err := snapshotArgs(e, "restore", args)
	if err != nil {
		return err
	}
	return w.SnapshotRestore(ctx, e.stdout, name, e.getenv, e.logf)
}

func cmdSnapshotList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "snapshot list", "snapshot list [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return w.SnapshotList(e.stdout, *asJSON, e.getenv)
}

func cmdSnapshotDelete(ctx context.Context, e *env, args []string) error {
	name, w, err := snapshotArgs(e, "delete", args)
	if err != nil {
		return err
	}
	return w.SnapshotDelete(e.stdout, name, e.getenv)
}
