// Package cliutil holds the few pieces of a command line that kcbench's
// packages share with cmd/kcbench: the usage error (exit code 2), flag
// parsing that rejects stray arguments, repeatable flag values, and the
// naming of problems by their flag. It imports the standard library only,
// so that any package may register and check its own flags.
package cliutil

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// UsageError marks errors that deserve exit code 2.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// Parse parses flags and rejects positional arguments beyond maxArgs.
func Parse(fs *flag.FlagSet, args []string, maxArgs int) error {
	if err := parseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return Usage(err)
	}
	if fs.NArg() > maxArgs {
		return Usagef("%s: unexpected arguments: %s", fs.Name(), strings.Join(fs.Args()[maxArgs:], " "))
	}
	return nil
}

// ParseInterspersed parses flags that may come before, between or after
// the positional arguments (compare A B --json), and returns the
// positional ones.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, Usage(err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// FlagNames rewrites the problems in err, one per line as "key: …", so
// that a key that is also a flag of fs (with - for _ and space) is named as the
// flag: "vus: 0: …" becomes "--vus: 0: …". Former names (Renamed) are
// not flags here.
func FlagNames(fs *flag.FlagSet, err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		k, rest, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		if name := strings.NewReplacer("_", "-", " ", "-").Replace(k); fs.Lookup(name) != nil && !Hidden(fs.Lookup(name)) {
			lines[i] = "--" + name + ":" + rest
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// List is a repeatable string flag.
type List []string

func (l *List) String() string     { return strings.Join(*l, ",") }
func (l *List) Set(v string) error { *l = append(*l, v); return nil }

// Repeatable says a List takes its flag given several times.
func (l *List) Repeatable() {}

// Map is a repeatable name=int flag (also name=int,name=int).
type Map map[string]int

func (m Map) String() string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Repeatable says a Map takes its flag given several times.
func (m Map) Repeatable() {}

func (m Map) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q: want NAME=NUMBER", part)
		}
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || n < 0 {
			return fmt.Errorf("%q: want NAME=NUMBER, a whole number ≥ 0", part)
		}
		m[k] = n
	}
	return nil
}

// Usage marks err as a usage error.
func Usage(err error) error { return UsageError{Err: err} }

// WriteJSON writes v to w as indented JSON, the --json output of the
// commands.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Listed is ": a b c" for arguments in an error, "" for none.
func Listed(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ": " + strings.Join(ss, " ")
}

// Ints is a flag of whole numbers ≥ 1, comma-separated and ascending
// (e.g. tenant counts: 1,10,50).
type Ints []int

func (l *Ints) String() string {
	var parts []string
	for _, n := range *l {
		parts = append(parts, strconv.Itoa(n))
	}
	return strings.Join(parts, ",")
}

func (l *Ints) Set(v string) error {
	var out Ints
	for part := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return fmt.Errorf("%q: want whole numbers ≥ 1, comma-separated (e.g. 1,10,50)", part)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return fmt.Errorf("%q: want ascending numbers (e.g. 1,10,50)", v)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}
