package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/stack"
)

// cmdSnapshot dispatches kcbench snapshot save|restore|list|delete.
func cmdSnapshot(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		printSnapshotUsage(e.stderr)
		return usagef("snapshot: missing subcommand (save, restore, list or delete)")
	}
	switch args[0] {
	case "-h", "--help", "help":
		printSnapshotUsage(e.stdout)
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

func printSnapshotUsage(w io.Writer) {
	fmt.Fprint(w, `Usage: kcbench snapshot <subcommand> [flags]

Subcommands:
  save NAME      stop the local stack, copy its database (with its admin and
                 database secrets and dataset.json) to snapshot NAME, start it again
  restore NAME   replace the stack's database with a copy of snapshot NAME,
                 start it again and print how long that took
  list           list the snapshots
  delete NAME    delete snapshot NAME

Snapshots live in <state-dir>/snapshots; any local stack of the same Keycloak
version and PostgreSQL major can restore one. Names: letters, digits, - _ .
Run 'kcbench snapshot <subcommand> -h' for its flags.
`)
}

// snapshotArgs parses the arguments of snapshot verb: the stack flags
// and one NAME.
func snapshotArgs(e *env, verb string, args []string) (string, *stack.Where, error) {
	fs := newFlags(e, "snapshot "+verb, "snapshot "+verb+" NAME [flags]")
	w := &stack.Where{}
	w.RegisterFlags(fs)
	name, err := parseSnapshotName(fs, args)
	return name, w, err
}

// parseSnapshotName parses flags around one NAME argument (flags may come before or
// after it) and checks the name.
func parseSnapshotName(fs *flag.FlagSet, args []string) (string, error) {
	if err := parse(fs, args, len(args)); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", usagef("%s: missing snapshot NAME", fs.Name())
	}
	name := fs.Arg(0)
	if err := parse(fs, fs.Args()[1:], 0); err != nil {
		return "", err
	}
	if err := stack.ValidSnapshotName(name); err != nil {
		return "", cliutil.Usage(err)
	}
	return name, nil
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
	return printSnapshotTimings(e.stdout, info.Timings)
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
	if !hasSnapshot(infos, name) {
		return unknownSnapshot(name, infos)
	}
	s, err := attachForSnapshot(e, w)
	if err != nil {
		return err
	}
	info, err := s.RestoreSnapshot(ctx, name)
	if errors.Is(err, stack.ErrSnapshotNotFound) {
		infos, _ := stack.ListSnapshots(d)
		return unknownSnapshot(name, infos)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "snapshot %s restored into stack %s: %.1f MiB (saved %s from stack %s)\n",
		info.Name, s.State().Name, mib(info.Size), info.CreatedAt.Local().Format("2006-01-02 15:04"), info.Stack)
	return printSnapshotTimings(e.stdout, info.Timings)
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
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSAVED\tSTACK\tKEYCLOAK\tPOSTGRES\tSIZE\tFILES\tDATASET\tSAVE COPY\tSAVE TOTAL")
	for _, in := range infos {
		ds := "-"
		if in.Dataset {
			ds = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f MiB\t%d\t%s\t%s\t%s\n", in.Name, in.CreatedAt.Local().Format("2006-01-02 15:04"),
			in.Stack, in.KeycloakVersion, in.PGVersion, mib(in.Size), in.Files, ds, snapshotSecs(in.Timings.Copy), snapshotSecs(in.Timings.Total))
	}
	if err := tw.Flush(); err != nil {
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
			return unknownSnapshot(name, infos)
		}
		return err
	}
	fmt.Fprintf(e.stdout, "snapshot %s deleted\n", name)
	return nil
}

func hasSnapshot(infos []stack.SnapshotInfo, name string) bool {
	for _, in := range infos {
		if in.Name == name {
			return true
		}
	}
	return false
}

// unknownSnapshot is the error for a name that is not there; it lists the
// names that are.
func unknownSnapshot(name string, infos []stack.SnapshotInfo) error {
	if len(infos) == 0 {
		return fmt.Errorf("%w %q: there are none (kcbench snapshot save NAME makes one)", stack.ErrSnapshotNotFound, name)
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	return fmt.Errorf("%w %q; available: %s", stack.ErrSnapshotNotFound, name, strings.Join(names, ", "))
}

func printSnapshotTimings(w io.Writer, t stack.SnapshotTimings) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(label string, d time.Duration) { fmt.Fprintf(tw, "  %s\t%7.2f s\n", label, d.Seconds()) }
	row("stop Keycloak", t.StopKeycloak)
	row("stop PostgreSQL", t.StopPG)
	row("copy", t.Copy)
	row("start PostgreSQL", t.StartPG)
	row("Keycloak ready", t.KeycloakReady)
	if t.Cleanup > 0 {
		row("cleanup", t.Cleanup)
	}
	row("total", t.Total)
	return tw.Flush()
}

func snapshotSecs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
