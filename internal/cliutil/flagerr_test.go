package cliutil

import (
	"bytes"
	"errors"
	"flag"
	"io"
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
		{[]string{"--vus", "2", "--rate", "1", "--vus", "3"}, `--vus given twice ("2", then "3"): give it once`},
		{[]string{"--quiet", "--quiet=false"}, `--quiet given twice ("true", then "false"): give it once`},
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

// A repeatable flag (List, Map) takes every value given; others refuse a
// second one (TestParseNamesFlagValueAndType).
func TestParseRepeatable(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	var opts List
	sizes := Map{}
	fs.Var(&opts, "kc-opt", "")
	fs.Var(sizes, "cache-size", "")
	if err := Parse(fs, []string{"--kc-opt", "a", "--cache-size", "users=1", "--kc-opt", "b", "--cache-size", "realms=2"}, 0); err != nil {
		t.Fatal(err)
	}
	if strings.Join(opts, ",") != "a,b" || sizes["users"] != 1 || sizes["realms"] != 2 {
		t.Errorf("kc-opt %v, cache-size %v: want every value given", opts, sizes)
	}
}

// The flag layer never panics, and every refusal is a usage error that
// names a flag or says what is wrong.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"--vus 2", "--vus 2 --vus 3", "--rate x", "--mix a=1,b", "--quiet=maybe", "-h", "--", "--kc-opt a --kc-opt b", "x y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		fs := flag.NewFlagSet("load", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Usage = func() {}
		fs.Int("vus", 1, "")
		fs.Float64("rate", 1, "")
		fs.Duration("duration", time.Second, "")
		fs.Bool("quiet", false, "")
		fs.Var(Map{}, "mix", "")
		var l List
		fs.Var(&l, "kc-opt", "")
		err := Parse(fs, strings.Fields(line), 1)
		var ue UsageError
		if err != nil && !errors.Is(err, flag.ErrHelp) && (!errors.As(err, &ue) || err.Error() == "") {
			t.Fatalf("Parse(%q) = %v, want a usage error", line, err)
		}
	})
}

func TestInts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
	}{{"1", "1"}, {"1,10,50", "1,10,50"}, {" 2, 3", "2,3"}, {"0", "error"}, {"", "error"}, {"3,2", "error"}, {"1,x", "error"}, {"1,,2", "error"}} {
		var l Ints
		got := "error"
		if err := l.Set(c.in); err == nil {
			got = l.String()
		}
		if got != c.want {
			t.Errorf("Ints.Set(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
