package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// subcommandsOf are the commands whose first argument picks a subcommand.
var subcommandsOf = map[string][]string{
	"dataset":    {"verify", "export", "show", "delete"},
	"snapshot":   {"save", "restore", "list", "delete"},
	"experiment": {"run", "plan"},
	"k8s":        {"manifests", "collect"},
}

type helpPage struct {
	help     cliutil.Help
	fs       *flag.FlagSet
	synopsis string
}

// helpPages runs every command and subcommand with -h and takes its help
// page as the command would print it.
func helpPages(t *testing.T) []helpPage {
	t.Helper()
	var pages []helpPage
	take := func(args ...string) {
		var got *helpPage
		e := &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: func(string) string { return "" }}
		e.onHelp = func(h cliutil.Help, fs *flag.FlagSet, synopsis string) { got = &helpPage{h, fs, synopsis} }
		for _, c := range commands() {
			if c.name == args[0] {
				if err := c.run(context.Background(), e, append(args[1:], "-h")); err != nil && err != flag.ErrHelp {
					t.Fatalf("%s -h: %v", strings.Join(args, " "), err)
				}
			}
		}
		if got == nil {
			t.Fatalf("kcbench %s -h printed no help page", strings.Join(args, " "))
		}
		pages = append(pages, *got)
	}
	for _, c := range commands() {
		take(c.name)
		for _, s := range subcommandsOf[c.name] {
			take(c.name, s)
		}
	}
	return pages
}

// Every command's help has a summary, a group, a description and an
// example, names only flags that exist, and no line over 120 characters;
// every help file belongs to a command.
func TestHelpPages(t *testing.T) {
	pages := helpPages(t)
	used := map[string]bool{}
	for _, p := range pages {
		used[strings.ReplaceAll(p.help.Name, " ", "-")+".txt"] = true
		if p.help.Summary == "" || !slices.Contains(groups, p.help.Group) {
			t.Errorf("help %q: summary %q, group %q (want one of %v)", p.help.Name, p.help.Summary, p.help.Group, groups)
		}
		if err := p.help.Check(p.fs, p.synopsis); err != nil {
			t.Error(err)
		}
	}
	files, err := helpFiles.ReadDir("help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !used[f.Name()] {
			t.Errorf("help/%s belongs to no command", f.Name())
		}
	}
}

// Help goes to stdout, exit 0: `kcbench load -h | less` shows it, and
// `kcbench help load` is the same page.
func TestHelpToStdout(t *testing.T) {
	for _, args := range [][]string{{"load", "-h"}, {"help", "load"}, {"dataset", "-h"}, {"help", "dataset", "verify"}, {"--help"}} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb, func(string) string { return "" })
		if code != exitOK || errb.Len() != 0 || !strings.Contains(out.String(), "Usage: kcbench") {
			t.Errorf("kcbench %s: exit %d, stdout %d bytes, stderr %q", strings.Join(args, " "), code, out.Len(), errb.String())
		}
	}
	var a, b bytes.Buffer
	run(context.Background(), []string{"load", "-h"}, &a, &bytes.Buffer{}, func(string) string { return "" })
	run(context.Background(), []string{"help", "load"}, &b, &bytes.Buffer{}, func(string) string { return "" })
	if a.String() != b.String() || !strings.Contains(a.String(), "--scenario") {
		t.Errorf("kcbench help load differs from kcbench load -h")
	}
}

// docs/reference/commands is generated from the flag definitions and the
// help pages; it fails on any difference. KCBENCH_UPDATE_DOCS=1 rewrites it.
func TestReferenceDocs(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "reference", "commands")
	want := map[string]string{}
	var index strings.Builder
	index.WriteString("# Command reference\n\nGenerated from the flag definitions and `cmd/kcbench/help/` by\n" +
		"`KCBENCH_UPDATE_DOCS=1 go test -run TestReferenceDocs ./cmd/kcbench/`; a test fails when they differ.\n")
	group := ""
	pages := helpPages(t)
	for _, g := range groups {
		for _, p := range pages {
			if p.help.Group != g {
				continue
			}
			if g != group {
				fmt.Fprintf(&index, "\n## %s\n\n", cliutil.UpperFirst(g))
				group = g
			}
			name := strings.ReplaceAll(p.help.Name, " ", "-") + ".md"
			fmt.Fprintf(&index, "* [kcbench %s](%s): %s\n", p.help.Name, name, p.help.Summary)
			var b strings.Builder
			p.help.Markdown(&b, p.fs, p.synopsis)
			want[name] = b.String()
		}
	}
	want["README.md"] = index.String()
	if os.Getenv("KCBENCH_UPDATE_DOCS") == "1" {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range want {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (KCBENCH_UPDATE_DOCS=1 go test -run TestReferenceDocs ./cmd/kcbench/ writes it)", err)
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("%s/%s: no command has this page", dir, e.Name())
		}
	}
	for name, text := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != text {
			t.Errorf("%s/%s is not what the flags and help pages say; regenerate: KCBENCH_UPDATE_DOCS=1 go test -run TestReferenceDocs ./cmd/kcbench/", dir, name)
		}
	}
}

// sameConcept are the flag names whose usage texts differ between
// commands (each says what the concept is for that command) but mean one
// concept, with that concept. A name is here only when it means one thing
// everywhere; a name meaning two things is renamed in one command.
var sameConcept = map[string]string{
	"ca-file":              "the CA that signed the certificate of the https URL the command reads (--target, or size's --from-metrics)",
	"db":                   "the database the Keycloak a command starts runs on (capacity: each stack of its version matrix)",
	"duration":             "how long the measured load runs",
	"file":                 "a run file, the YAML of kcbench load's settings",
	"dry-run":              "show what the command would do and change nothing",
	"graceful-stop":        "how long iterations running at the end of a run (capacity: a step) may finish",
	"heap":                 "the JVM heap of the Keycloak a command starts (capacity: each stack of its version matrix)",
	"insecure-skip-verify": "trust any certificate of the https URL the command reads (--target, or size's --from-metrics)",
	"json":                 "print the command's output as JSON instead of text",
	"kc-version":           "the Keycloak version a command starts (capacity: a list, one stack each)",
	"management-url":       "the management URL (health, metrics) of the Keycloak that --target names",
	"manifest":             "a dataset manifest file (dataset.json)",
	"max-vus":              "the most VUs a run (capacity: a step) allocates",
	"node":                 "a Keycloak node of the local stack, 1-based",
	"out":                  "the folder a command writes its results into",
	"pg-version":           "the PostgreSQL of the stack a command starts (capacity: each stack of its version matrix)",
	"procs":                "the cores (GOMAXPROCS) kcbench's load generator may use",
	"quiet":                "no progress output on stderr",
	"realm":                "the realm the load is made in, without a dataset manifest",
	"repeats":              "how many times the command repeats its measurement (boot: restarts; capacity: searches; loadgen-bench: runs per tool)",
	"scenario":             "the workload, by name (kcbench scenarios)",
	"start-at":             "the time at which agents started apart begin together",
	"start-rate":           "the first rate, in iterations per second, a run asks for",
	"target":               "the base URL of an external Keycloak to drive instead of the local stack",
	"tenants":              "the number of tenants of the dataset (quickstart: a list of such numbers, one measurement each)",
	"tls":                  "the stack a command starts serves HTTPS (--tls=false: plain HTTP)",
	"warmup":               "load before the measurement whose numbers are discarded",
}

// One flag name means one thing in every command: a name several commands
// take has the same usage text in each, or it is in sameConcept; and
// sameConcept names only flags whose texts differ. Former names
// (cliutil.Renamed) are not flags here.
func TestOneMeaningPerFlagName(t *testing.T) {
	usages := map[string]map[string][]string{} // name → usage text → commands
	for _, p := range helpPages(t) {
		p.fs.VisitAll(func(f *flag.Flag) {
			if cliutil.Hidden(f) {
				return
			}
			if usages[f.Name] == nil {
				usages[f.Name] = map[string][]string{}
			}
			usages[f.Name][f.Usage] = append(usages[f.Name][f.Usage], p.help.Name)
		})
	}
	for name, texts := range usages {
		if len(texts) < 2 || sameConcept[name] != "" {
			continue
		}
		var lines []string
		for u, cmds := range texts {
			lines = append(lines, fmt.Sprintf("  %s: %s", strings.Join(cmds, ", "), u))
		}
		slices.Sort(lines)
		t.Errorf("--%s has %d usage texts:\n%s\none name, one meaning: rename it where it means another thing; "+
			"if it is one concept, make the texts equal or add it to sameConcept with that concept", name, len(texts), strings.Join(lines, "\n"))
	}
	for name := range sameConcept {
		if len(usages[name]) < 2 {
			t.Errorf("sameConcept lists --%s, which has %d usage text(s): drop it from the table", name, len(usages[name]))
		}
	}
}
