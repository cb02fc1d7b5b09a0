package main

import (
	"context"
	"errors"
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

// attachForSnapshot finds the stack a save or restore works on.
func attachForSnapshot(e *env, w *stack.Where) (*stack.Stack, error) {
	return w.AttachToRestart(e.getenv, e.logf, "a snapshot")
}

func cmdSnapshotSave(ctx context.Context, e *env, args []string) error {
	name, w, err := snapshotArgs(e, "save", args)
	if err != nil {
		return err
	}
	s, err := attachForSnapshot(e, w)
	if err != nil {
		return err
	}
	info, err := s.SaveSnapshot(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "snapshot %s saved from stack %s: %.1f MiB in %d files (Keycloak %s, PostgreSQL %s)\n",
		info.Name, info.Stack, mib(info.Size), info.Files, info.KeycloakVersion, info.PGVersion)
	return info.Timings.WriteText(e.stdout)
}

func cmdSnapshotRestore(ctx context.Context, e *env, args []string) error {
	name, w, err := snapshotArgs(e, "restore", args)
	if err != nil {
		return err
	}
	d, err := w.Dirs(e.getenv)
	if err != nil {
		return err
	}
	// An unknown name is the likeliest mistake: answer it before anything
	// else, with the names there are.
	infos, _ := stack.ListSnapshots(d)
	if !stack.HasSnapshot(infos, name) {
		return stack.UnknownSnapshot(name, infos)
	}
	s, err := attachForSnapshot(e, w)
	if err != nil {
		return err
	}
	info, err := s.RestoreSnapshot(ctx, name)
	if errors.Is(err, stack.ErrSnapshotNotFound) {
		infos, _ := stack.ListSnapshots(d)
		return stack.UnknownSnapshot(name, infos)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "snapshot %s restored into stack %s: %.1f MiB (saved %s from stack %s)\n",
		info.Name, s.State().Name, mib(info.Size), info.CreatedAt.Local().Format("2006-01-02 15:04"), info.Stack)
	return info.Timings.WriteText(e.stdout)
}

func cmdSnapshotList(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "snapshot list", "snapshot list [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	d, err := w.Dirs(e.getenv)
	if err != nil {
		return err
	}
	infos, listErr := stack.ListSnapshots(d)
	if *asJSON {
		if infos == nil {
			infos = []stack.SnapshotInfo{}
		}
		if err := writeJSON(e.stdout, infos); err != nil {
			return err
		}
		return listErr
	}
	if len(infos) == 0 && listErr == nil {
		fmt.Fprintln(e.stdout, "no snapshots (kcbench snapshot save NAME makes one)")
		return nil
	}
	if err := stack.WriteSnapshotList(e.stdout, infos); err != nil {
		return err
	}
	return listErr
}

func cmdSnapshotDelete(ctx context.Context, e *env, args []string) error {
	name, w, err := snapshotArgs(e, "delete", args)
	if err != nil {
		return err
	}
	d, err := w.Dirs(e.getenv)
	if err != nil {
		return err
	}
	if err := stack.DeleteSnapshot(d, name); err != nil {
		if errors.Is(err, stack.ErrSnapshotNotFound) {
			infos, _ := stack.ListSnapshots(d)
			return stack.UnknownSnapshot(name, infos)
		}
		return err
	}
	fmt.Fprintf(e.stdout, "snapshot %s deleted\n", name)
	return nil
}
