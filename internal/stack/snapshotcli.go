package stack

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// SnapshotUsage is kcbench snapshot's help.
const SnapshotUsage = `Usage: kcbench snapshot <subcommand> [flags]

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
`

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
