package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/buildinfo"
	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/progress"
)

// Exit codes, the one documented list (also in the README and --help).
const (
	exitOK          = 0 // success
	exitError       = 1 // the command failed
	exitUsage       = 2 // bad flags or arguments
	exitThresholds  = 3 // an SLO or threshold failed (results still written)
	exitInterrupted = 4 // SIGINT/SIGTERM
	exitTargetDown  = 5 // the target died or was unreachable during a run (results of what ran still written)
)

// env is what a command may touch of the process: its output streams and
// environment. Only main reads os.* directly.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

// logf writes a timestamped progress line to stderr.
func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

func commands() []command {
	return []command{
		{"quickstart", "the main job: a local stack, a small dataset in both modes, the standard scenarios cold and warm, a report, a summary and a sizing estimate", cmdQuickstart},
		{"up", "start the local stack (PostgreSQL or MariaDB + Keycloak) and leave it running", cmdUp},
		{"status", "show the local stack (or an external --target): versions, URLs, pids, RSS, readiness", cmdStatus},
		{"restart", "restart Keycloak of the local stack and print the boot time", cmdRestart},
		{"boot", "measure Keycloak boot time and RSS at ready over N restarts", cmdBoot},
		{"logs", "print (or follow) the Keycloak or database log of the local stack", cmdLogs},
		{"seed", "seed tenants (realms or organizations) into the local stack or a --target; grows and resumes", cmdSeed},
		{"dataset", "dataset verify (count through the admin API vs the manifest), export (realm files), show", cmdDataset},
		{"down", "stop everything the local stack started and remove it", cmdDown},
		{"snapshot", "save, restore, list or delete snapshots of the local stack's database", cmdSnapshot},
		{"load", "run a workload (scenario × executor) against the stack; summary, thresholds, server CPU per operation", cmdLoad},
		{"capacity", "find the highest rate that meets the SLOs (per scenario, or per Keycloak version with --kc-version)", cmdCapacity},
		{"merge", "join the result folders of a load split over agents (--segment) into one, HDR histograms added exactly", cmdMerge},
		{"k8s", "run a load as N agent pods of a Kubernetes Indexed Job (manifests) and merge their results from the pods' logs (collect)", cmdK8s},
		{"scenarios", "list the workloads kcbench load can run", cmdScenarios},
		{"loadgen-bench", "measure kcbench's own CPU per request against wrk and k6 (JWKS of the local stack)", cmdLoadgenBench},
		{"report", "rebuild report.html, report.md and charts from a results folder's files", cmdReport},
		{"compare", "compare two results folders per scenario; deltas within the spread of repeats are noise", cmdCompare},
		{"gate", "fail (exit 3) when current results regressed against a baseline beyond a threshold and the spread of repeats", cmdGate},
		{"experiment", "run (or plan) an experiment file: a matrix of points, each seeded, booted, loaded cold and warm, observed; resumable", cmdExperiment},
		{"size", "size Keycloak pods, database and caches for a target load (sizing guide rules or measured CPU-ms)", cmdSize},
		{"version", "print kcbench's version", cmdVersion},
	}
}

func usagef(format string, args ...any) error { return cliutil.Usagef(format, args...) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		return exitCode(ctx, e, err)
	}
	fmt.Fprintf(stderr, "kcbench: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return exitUsage
}

func exitCode(ctx context.Context, e *env, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
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
	return exitError
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, `kcbench measures, compares and sizes Keycloak.

Usage: kcbench <command> [flags]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprintf(w, `
Run 'kcbench <command> -h' for a command's flags.

Exit codes: 0 ok, 1 error, 2 usage, 3 threshold/SLO failed, 4 interrupted,
5 target down (died, unreachable, failed or completed no iteration during a load).
`)
}

// newFlags returns a FlagSet whose usage prints the command's summary.
func newFlags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: kcbench %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
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
