package main

import (
	"context"

	"github.com/kcbench/kcbench/internal/stack"
)

// cmdSnapshot dispatches kcbench snapshot save|restore|list|delete.
func cmdSnapshot(ctx context.Context, e *env, args []string) error {
	return subcommands(ctx, e, "snapshot", args, []command{
		{"save", cmdSnapshotSave}, {"restore", cmdSnapshotRestore}, {"list", cmdSnapshotList}, {"delete", cmdSnapshotDelete}})
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
