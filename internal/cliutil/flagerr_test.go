package cliutil

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func TestParseNamesFlagValueAndType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--vus", "ten"}, `--vus "ten": want a whole number`},
		{[]string{"--vus", "99999999999999999999"}, `--vus "99999999999999999999": want a whole number in range`},
		{[]string{"--rate", "fast"}, `--rate "fast": want a number`},
		{[]string{"--duration", "5"}, `--duration "5": want a duration such as 500ms, 30s, 5m or 1h`},
		{[]string{"--quiet=maybe"}, `--quiet "maybe": want true or false`},
		{[]string{"--mix", "a"}, `--mix "a": "a": want NAME=NUMBER`},
		{[]string{"--nope"}, "flag provided but not defined: -nope (kcbench load -h lists the flags)"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("load", flag.ContinueOnError)
			var out bytes.Buffer
			fs.SetOutput(&out)
			fs.Int("vus", 1, "")
			fs.Float64("rate", 1, "")
			fs.Duration("duration", time.Second, "")
			fs.Bool("quiet", false, "")
			fs.Var(Map{}, "mix", "")
			err := Parse(fs, tt.args, 0)
			var ue UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("Parse = %v, want a usage error", err)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse = %q, want %q", err, tt.want)
			}
			if out.Len() > 0 {
				t.Errorf("Parse printed %q, want nothing (the caller prints the error)", out.String())
			}
		})
	}
}

func TestParseHelpPrintsDefaults(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.Int("vus", 1, "virtual users")
	fs.Bool("quiet", false, "no progress")
	if err := Parse(fs, []string{"-h"}, 0); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(-h) = %v", err)
	}
	if s := out.String(); !strings.Contains(s, "virtual users (default 1)") || strings.Contains(s, "panic") {
		t.Errorf("help:\n%s", s)
	}
	// The flags work after a parse: the values are the flag package's again.
	if err := Parse(fs, []string{"--vus", "3", "--quiet"}, 0); err != nil {
		t.Fatal(err)
	}
	if v := fs.Lookup("vus").Value.String(); v != "3" {
		t.Errorf("vus = %s", v)
	}
}
