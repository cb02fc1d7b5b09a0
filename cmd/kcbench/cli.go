package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/buildinfo"
	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/scenario"
)

// Exit codes, the one documented list (also in the README and --help).
const (
	exitOK          = 0 // success
	exitError       = 1 // the command failed
	exitUsage       = 2 // bad flags or arguments
	exitThresholds  = 3 // an SLO or threshold failed (results still written)
	exitInterrupted = 4 // SIGINT/SIGTERM
	exitTargetDown  = 5 // the target died, was unreachable during a run or refused its setup check (results of what ran still written)
)

// env is what a command may touch of the process: its output streams and
// environment. Only main reads os.* directly.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	onHelp         func(h cliutil.Help, fs *flag.FlagSet, synopsis string) // tests: take help pages instead of printing them
}

// logf writes a timestamped progress line to stderr.
func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

type command struct {
	name string
	run  func(ctx context.Context, e *env, args []string) error
}

// commands are kcbench's commands; each one's summary, group, description
// and examples are its help page, help/NAME.txt.
func commands() []command {
	return []command{
		{"quickstart", cmdQuickstart}, {"up", cmdUp}, {"status", cmdStatus}, {"restart", cmdRestart},
		{"boot", cmdBoot}, {"logs", cmdLogs}, {"down", cmdDown}, {"seed", cmdSeed}, {"dataset", cmdDataset},
		{"snapshot", cmdSnapshot}, {"load", cmdLoad}, {"capacity", cmdCapacity}, {"experiment", cmdExperiment},
		{"scenarios", cmdScenarios}, {"report", cmdReport}, {"compare", cmdCompare}, {"gate", cmdGate},
		{"size", cmdSize}, {"merge", cmdMerge}, {"k8s", cmdK8s}, {"loadgen-bench", cmdLoadgenBench},
		{"version", cmdVersion},
	}
}

// groups orders the headings of `kcbench help`.
var groups = []string{"local stack", "data", "measure", "analyse", "scale out", "development"}

//go:embed help/*.txt
var helpFiles embed.FS

// helpFor is the help page of a command ("load", "dataset verify").
func helpFor(name string) cliutil.Help {
	b, err := helpFiles.ReadFile("help/" + strings.ReplaceAll(name, " ", "-") + ".txt")
	if err != nil {
		return cliutil.Help{Name: name}
	}
	h, err := cliutil.ParseHelp(name, string(b))
	if err != nil {
		return cliutil.Help{Name: name, Description: err.Error()}
	}
	return h
}

func usagef(format string, args ...any) error { return cliutil.Usagef(format, args...) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) > 1 && args[0] == "help" { // kcbench help CMD [SUB] is kcbench CMD [SUB] -h
		args = append(args[1:], "-h")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(ctx, e, c.run(ctx, e, args[1:]))
		}
	}
	fmt.Fprintf(stderr, "kcbench: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return exitUsage
}

func exitCode(ctx context.Context, e *env, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		fmt.Fprintln(e.stderr, "kcbench: interrupted")
		return exitInterrupted
	}
	fmt.Fprintf(e.stderr, "kcbench: %v\n", err)
	var xc interface{ ExitCode() int }
	if errors.As(err, &xc) {
		return xc.ExitCode()
	}
	var ue cliutil.UsageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	var setup *scenario.SetupError // load, capacity, experiment run
	if errors.As(err, &setup) {
		return exitTargetDown
	}
	return exitError
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "kcbench measures, compares and sizes Keycloak.\n\nUsage: kcbench <command> [flags]\n")
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", cliutil.UpperFirst(g))
		for _, c := range commands() {
			if h := helpFor(c.name); h.Group == g {
				fmt.Fprintf(w, "  %-14s %s\n", c.name, h.Summary)
			}
		}
	}
	fmt.Fprintf(w, `
Run 'kcbench help <command>' for a command's flags and examples.

Exit codes: 0 ok, 1 error, 2 usage, 3 threshold/SLO failed, 4 interrupted,
5 target down (died, unreachable, failed or completed no iteration during a load).
`)
}

// newFlags returns a FlagSet whose -h prints the command's help page to
// stdout.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { e.help(helpFor(name), fs, synopsis) }
	return fs
}

// help prints a help page, or hands it to the reference generator.
func (e *env) help(h cliutil.Help, fs *flag.FlagSet, synopsis string) {
	if e.onHelp != nil {
		e.onHelp(h, fs, synopsis)
		return
	}
	h.Write(e.stdout, fs, synopsis)
}

// subcommands runs the subcommand args[0] of command name, or prints the
// command's help page.
func subcommands(ctx context.Context, e *env, name string, args []string, subs []command) error {
	var names []string
	for _, s := range subs {
		if len(args) > 0 && s.name == args[0] {
			return s.run(ctx, e, args[1:])
		}
		names = append(names, s.name)
	}
	want := strings.Join(names, ", ")
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help"):
		e.help(helpFor(name), flag.NewFlagSet(name, flag.ContinueOnError), name+" "+strings.Join(names, "|")+" [flags]")
		return flag.ErrHelp
	case len(args) == 0:
		return usagef("%s: want a subcommand: %s (kcbench help %s)", name, want, name)
	}
	return usagef("%s: unknown subcommand %q: want %s", name, args[0], want)
}

func parse(fs *flag.FlagSet, args []string, maxArgs int) error {
	return cliutil.Parse(fs, args, maxArgs)
}

// progressBar returns the Update of a progress bar on stderr counting
// what (done/total, rate, ETA), or nil with --quiet.
func progressBar(e *env, quiet bool, what string) func(done, total int) {
	if quiet {
		return nil
	}
	return progress.New(e.stderr, what).Update
}

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "version")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "kcbench", buildinfo.Version())
	return nil
}
