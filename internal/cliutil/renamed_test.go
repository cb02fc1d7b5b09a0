package cliutil

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func renamedFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("dataset export", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("out", "", "`DIR` to write into")
	fs.Int("secrets-seed", 1, "seed deriving secrets")
	Renamed(fs, "dir", "out")
	Renamed(fs, "seed", "secrets-seed")
	return fs
}

// A former name is refused however it is given, with a usage error that
// names the new flag, and before what follows it is read.
func TestRenamedRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--seed"}, {"--seed", "5"}, {"--seed=5"}, {"-seed", "x"}, {"--out", "d", "--seed", "5"}, {"--seed", "--out", "d"}} {
		err := Parse(renamedFlags(), args, 1)
		var ue UsageError
		if want := "--seed is now --secrets-seed (kcbench help dataset export)"; !errors.As(err, &ue) || err.Error() != want {
			t.Errorf("%v: %v, want the usage error %q", args, err, want)
		}
	}
	if err := Parse(renamedFlags(), []string{"--dir", "x"}, 1); err == nil || err.Error() != "--dir is now --out (kcbench help dataset export)" {
		t.Errorf("--dir x: %v", err)
	}
	if err := Parse(renamedFlags(), []string{"--out", "x", "--secrets-seed", "2"}, 0); err != nil {
		t.Errorf("the new names: %v", err)
	}
}

// Help pages, the reference and FlagNames leave former names out; a help
// page that names one fails its check.
func TestRenamedHidden(t *testing.T) {
	t.Parallel()
	fs := renamedFlags()
	h := Help{Name: "dataset export", Summary: "s", Description: "d", Examples: "  kcbench dataset export --out x"}
	var text, md bytes.Buffer
	h.Write(&text, fs, "dataset export")
	h.Markdown(&md, fs, "dataset export")
	for _, out := range []string{text.String(), md.String()} {
		if strings.Contains(out, "--dir") || strings.Contains(out, "--seed") || strings.Contains(out, "former") || !strings.Contains(out, "--secrets-seed") {
			t.Errorf("help lists a former name, or not the new one:\n%s", out)
		}
	}
	if err := h.Check(fs, "dataset export"); err != nil {
		t.Error(err)
	}
	h.Sections = []Section{{"Output", []string{"out", "dir"}}}
	if err := h.Check(fs, "dataset export"); err == nil || !strings.Contains(err.Error(), "names --dir, a former name (former name of --out)") {
		t.Errorf("Check with a former name = %v", err)
	}
	if got := FlagNames(fs, errors.New("seed: 0: must be positive")).Error(); got != "seed: 0: must be positive" {
		t.Errorf("FlagNames = %q: a former name is no flag", got)
	}
	if !Hidden(fs.Lookup("seed")) || Hidden(fs.Lookup("secrets-seed")) || Hidden(nil) {
		t.Error("Hidden")
	}
}
