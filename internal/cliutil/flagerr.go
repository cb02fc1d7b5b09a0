package cliutil

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"
)

// parseFlags parses args with fs and, for a value a flag refuses, returns
// an error naming the flag, the value and what the flag wants
// (`--vus "ten": want a whole number`) instead of the flag package's
// "parse error" followed by the whole help. -h still prints the help.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var bad error
	type saved struct {
		fl *flag.Flag
		v  flag.Value
	}
	var orig []saved
	fs.VisitAll(func(fl *flag.Flag) {
		orig = append(orig, saved{fl, fl.Value})
		fl.Value = &checkedValue{Value: fl.Value, name: fl.Name, bad: &bad}
	})
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	for _, s := range orig {
		s.fl.Value = s.v
	}
	fs.SetOutput(out)
	fs.Usage = usage
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	case err != nil && bad != nil:
		return bad
	case err != nil:
		return fmt.Errorf("%w (kcbench %s -h lists the flags)", err, fs.Name())
	}
	return nil
}

// checkedValue is a flag's Value during parsing: it records the first
// value refused, as an error in the words of the command line.
type checkedValue struct {
	flag.Value
	name  string
	bad   *error
	given bool   // the flag was given before in these arguments
	first string // with the value given first
}

func (v *checkedValue) String() string {
	if v == nil || v.Value == nil {
		return ""
	}
	return v.Value.String()
}

func (v *checkedValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (v *checkedValue) Set(s string) error {
	_, former := v.Value.(*renamed) // its error names the new flag: kept as it is
	if _, repeats := v.Value.(repeatable); v.given && !former && !repeats {
		return v.refuse(fmt.Errorf("--%s given twice (%q, then %q): give it once", v.name, v.first, s))
	}
	if !v.given {
		v.given, v.first = true, s
	}
	err := v.Value.Set(s)
	switch {
	case err != nil && former:
		v.refuse(err)
	case err != nil:
		v.refuse(valueError(v.name, s, v.Value, err))
	}
	return err
}

// refuse records err as the first value refused, and returns it.
func (v *checkedValue) refuse(err error) error {
	if *v.bad == nil {
		*v.bad = err
	}
	return err
}

// repeatable is a flag.Value that takes a flag given several times: each
// value adds to the others (List, Map).
type repeatable interface{ Repeatable() }

// valueError names the flag, the value and, for the standard typed flags,
// the type wanted; other flags' own errors are kept.
func valueError(name, value string, fv flag.Value, err error) error {
	g, ok := fv.(flag.Getter)
	if !ok {
		return fmt.Errorf("--%s %q: %w", name, value, err)
	}
	want := ""
	switch g.Get().(type) {
	case bool:
		want = "true or false"
	case int, int64, uint, uint64:
		want = "a whole number"
		if _, perr := strconv.ParseFloat(value, 64); perr == nil {
			want += " in range"
		}
	case float64:
		want = "a number"
	case time.Duration:
		want = "a duration such as 500ms, 30s, 5m or 1h"
	default:
		return fmt.Errorf("--%s %q: %w", name, value, err)
	}
	return fmt.Errorf("--%s %q: want %s", name, value, want)
}
