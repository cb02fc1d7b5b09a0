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
