package stack

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// ParseSnapshotArgs parses a snapshot command's flags around one NAME argument (flags may come before or
// after it) and checks the name.
func ParseSnapshotArgs(fs *flag.FlagSet, args []string) (string, error) {
	if err := cliutil.Parse(fs, args, len(args)); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		return "", cliutil.Usagef("%s: missing snapshot NAME", fs.Name())
	}
	name := fs.Arg(0)
	if err := cliutil.Parse(fs, fs.Args()[1:], 0); err != nil {
		return "", err
	}
	if err := ValidSnapshotName(name); err != nil {
		return "", cliutil.Usage(err)
	}
	return name, nil
}

// HasSnapshot tells whether infos hold snapshot name.
func HasSnapshot(infos []SnapshotInfo, name string) bool {
	for _, in := range infos {
		if in.Name == name {
			return true
		}
	}
	return false
}

// UnknownSnapshot is the error for a name that is not there; it lists the
// names that are.
func UnknownSnapshot(name string, infos []SnapshotInfo) error {
	if len(infos) == 0 {
		return fmt.Errorf("%w %q: there are none (kcbench snapshot save NAME makes one)", ErrSnapshotNotFound, name)
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	return fmt.Errorf("%w %q; available: %s", ErrSnapshotNotFound, name, strings.Join(names, ", "))
}

// WriteText writes the timings, one step a line.
func (t SnapshotTimings) WriteText(w io.Writer) error {
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

// WriteSnapshotList writes one snapshot a line, as a table.
func WriteSnapshotList(w io.Writer, infos []SnapshotInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
	return tw.Flush()
}

// SnapshotSave saves the stack's database as snapshot name (kcbench
// snapshot save) and prints what it saved and the timings to out.
func (w *Where) SnapshotSave(ctx context.Context, out io.Writer, name string, getenv func(string) string, logf func(string, ...any)) error {
	s, err := w.AttachToRestart(getenv, logf, "a snapshot")
	if err != nil {
		return err
	}
	info, err := s.SaveSnapshot(ctx, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "snapshot %s saved from stack %s: %.1f MiB in %d files (Keycloak %s, PostgreSQL %s)\n",
		info.Name, info.Stack, mib(info.Size), info.Files, info.KeycloakVersion, info.PGVersion)
	return info.Timings.WriteText(out)
}

// SnapshotRestore restores snapshot name into the stack (kcbench snapshot
// restore) and prints what it restored and the timings to out. An
// unknown name, the likeliest mistake, is answered first, with the names
// there are.
func (w *Where) SnapshotRestore(ctx context.Context, out io.Writer, name string, getenv func(string) string, logf func(string, ...any)) error {
	d, err := w.Dirs(getenv)
	if err != nil {
		return err
	}
	infos, _ := ListSnapshots(d)
	if !HasSnapshot(infos, name) {
		return UnknownSnapshot(name, infos)
	}
	s, err := w.AttachToRestart(getenv, logf, "a snapshot")
	if err != nil {
		return err
	}
	info, err := s.RestoreSnapshot(ctx, name)
	if errors.Is(err, ErrSnapshotNotFound) {
		infos, _ := ListSnapshots(d)
		return UnknownSnapshot(name, infos)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "snapshot %s restored into stack %s: %.1f MiB (saved %s from stack %s)\n",
		info.Name, s.State().Name, mib(info.Size), info.CreatedAt.Local().Format("2006-01-02 15:04"), info.Stack)
	return info.Timings.WriteText(out)
}

// SnapshotList prints the snapshots to out, as a table or JSON (kcbench
// snapshot list).
func (w *Where) SnapshotList(out io.Writer, asJSON bool, getenv func(string) string) error {
	d, err := w.Dirs(getenv)
	if err != nil {
		return err
	}
	infos, listErr := ListSnapshots(d)
	if asJSON {
		if infos == nil {
			infos = []SnapshotInfo{}
		}
		return cmp.Or(cliutil.WriteJSON(out, infos), listErr)
	}
	if len(infos) == 0 && listErr == nil {
		fmt.Fprintln(out, "no snapshots (kcbench snapshot save NAME makes one)")
		return nil
	}
	return cmp.Or(WriteSnapshotList(out, infos), listErr)
}

// SnapshotDelete deletes snapshot name (kcbench snapshot delete).
func (w *Where) SnapshotDelete(out io.Writer, name string, getenv func(string) string) error {
	d, err := w.Dirs(getenv)
	if err != nil {
		return err
	}
	if err := DeleteSnapshot(d, name); err != nil {
		if errors.Is(err, ErrSnapshotNotFound) {
			infos, _ := ListSnapshots(d)
			return UnknownSnapshot(name, infos)
		}
		return err
	}
	fmt.Fprintf(out, "snapshot %s deleted\n", name)
	return nil
}

// DatasetManifest is the path of the stack's dataset manifest, the
// default of every command's --manifest (a snapshot keeps it).
func (s *Stack) DatasetManifest() string { return filepath.Join(s.st.Dir, datasetFile) }
