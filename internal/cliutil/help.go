package cliutil

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Help is a command's help page: what `kcbench CMD -h` prints around its
// flags, and what docs/reference/commands is generated from.
//
// Its text form, one file per command:
//
//	summary: one line, also the command's line in `kcbench help`
//	group: the heading it is listed under in `kcbench help`
//
//	What the command does, in a paragraph or two.
//
//	Examples:
//	  # a comment line says what the next command does
//	  kcbench CMD --flag value
//
//	Flags:
//	  Heading: flag-name other-flag …
//	  Other heading: …
//
// Flags the Flags section does not name are listed under "Other flags".
type Help struct {
	Name        string // e.g. "load", "dataset verify"
	Summary     string
	Group       string
	Description string
	Examples    string
	Sections    []Section
}

// Section is a heading and the flags listed under it.
type Section struct {
	Title string
	Flags []string
}

// HelpWidth is the longest line a help page prints.
const HelpWidth = 120

// ParseHelp reads a help page's text form.
func ParseHelp(name, text string) (Help, error) {
	h := Help{Name: name}
	var desc, ex []string
	part := "header"
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t")
		switch {
		case line == "Examples:":
			part = "examples"
			continue
		case line == "Flags:":
			part = "flags"
			continue
		}
		switch part {
		case "header":
			if line == "" {
				part = "description"
				continue
			}
			k, v, ok := strings.Cut(line, ":")
			switch {
			case ok && k == "summary":
				h.Summary = strings.TrimSpace(v)
			case ok && k == "group":
				h.Group = strings.TrimSpace(v)
			default:
				return h, fmt.Errorf("help %s: header line %q: want summary: or group:", name, line)
			}
		case "description":
			desc = append(desc, line)
		case "examples":
			ex = append(ex, line)
		case "flags":
			if line == "" {
				continue
			}
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				return h, fmt.Errorf("help %s: flags line %q: want Heading: flag …", name, line)
			}
			h.Sections = append(h.Sections, Section{Title: k, Flags: strings.Fields(v)})
		}
	}
	h.Description = strings.TrimSpace(strings.Join(desc, "\n"))
	h.Examples = strings.Trim(strings.Join(ex, "\n"), "\n")
	if h.Summary == "" {
		return h, fmt.Errorf("help %s: no summary", name)
	}
	return h, nil
}

// Check reports what a help page lacks against its command's flags: a
// description, an example, flags it names that do not exist, flags named
// twice, lines longer than HelpWidth.
func (h Help) Check(fs *flag.FlagSet, synopsis string) error {
	var probs []string
	if h.Description == "" {
		probs = append(probs, "no description")
	}
	if !strings.Contains(h.Examples, "kcbench ") {
		probs = append(probs, "no example")
	}
	seen := map[string]bool{}
	for _, s := range h.Sections {
		for _, n := range s.Flags {
			switch fl := fs.Lookup(n); {
			case fl == nil:
				probs = append(probs, fmt.Sprintf("section %s names --%s, which is not a flag", s.Title, n))
			case Hidden(fl):
				probs = append(probs, fmt.Sprintf("section %s names --%s, a former name (%s)", s.Title, n, fl.Usage))
			}
			if seen[n] {
				probs = append(probs, fmt.Sprintf("--%s is in two sections", n))
			}
			seen[n] = true
		}
	}
	var b strings.Builder
	h.Write(&b, fs, synopsis)
	for i, l := range strings.Split(b.String(), "\n") {
		if n := len([]rune(l)); n > HelpWidth {
			probs = append(probs, fmt.Sprintf("line %d is %d characters: %.60s…", i+1, n, l))
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("help %s: %s", h.Name, strings.Join(probs, "; "))
	}
	return nil
}

// Write prints the help page: the summary, usage, description, the flags
// under their headings, and the examples.
func (h Help) Write(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(w, "kcbench %s: %s\n\nUsage: kcbench %s\n", h.Name, h.Summary, synopsis)
	if h.Description != "" {
		fmt.Fprintf(w, "\n%s\n", wrap(h.Description, "", HelpWidth))
	}
	for _, s := range h.flagSections(fs) {
		fmt.Fprintf(w, "\n%s:\n", s.Title)
		for _, n := range s.Flags {
			name, usage, def := describe(fs.Lookup(n))
			fmt.Fprintf(w, "  --%s\n%s\n", strings.TrimSpace(n+" "+name), wrap(usage+def, "      ", HelpWidth))
		}
	}
	if h.Examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", h.Examples)
	}
}

// Markdown prints the help page as a reference page: a table of flags per
// heading.
func (h Help) Markdown(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(w, "# kcbench %s\n\n%s.\n\n```text\nkcbench %s\n```\n", h.Name, UpperFirst(h.Summary), synopsis)
	if h.Description != "" {
		fmt.Fprintf(w, "\n%s\n", h.Description)
	}
	for _, s := range h.flagSections(fs) {
		fmt.Fprintf(w, "\n## %s\n\n| flag | default | meaning |\n|---|---|---|\n", s.Title)
		for _, n := range s.Flags {
			name, usage, _ := describe(fs.Lookup(n))
			def := fs.Lookup(n).DefValue
			if isZero(def) {
				def = ""
			}
			cell := strings.NewReplacer("|", `\|`, "\n", " ").Replace
			fmt.Fprintf(w, "| `--%s` | %s | %s |\n", strings.TrimSpace(n+" "+name), code(cell(def)), cell(usage))
		}
	}
	if h.Examples != "" {
		fmt.Fprintf(w, "\n## Examples\n\n```sh\n%s\n```\n", dedent(h.Examples))
	}
}

// flagSections is the page's sections with their flags sorted as the page
// names them, then every other flag under "Other flags"; former names
// (Renamed) are left out.
func (h Help) flagSections(fs *flag.FlagSet) []Section {
	named := map[string]bool{}
	var out []Section
	for _, s := range h.Sections {
		var fl []string
		for _, n := range s.Flags {
			if f := fs.Lookup(n); f != nil && !Hidden(f) {
				fl = append(fl, n)
				named[n] = true
			}
		}
		if len(fl) > 0 {
			out = append(out, Section{s.Title, fl})
		}
	}
	var rest []string
	fs.VisitAll(func(f *flag.Flag) {
		if !named[f.Name] && !Hidden(f) {
			rest = append(rest, f.Name)
		}
	})
	if len(rest) > 0 {
		title := "Other flags"
		if len(out) == 0 {
			title = "Flags"
		}
		out = append(out, Section{title, rest})
	}
	return out
}

// describe is a flag's value name, usage and " (default …)" suffix.
func describe(f *flag.Flag) (name, usage, def string) {
	name, usage = flag.UnquoteUsage(f)
	if !isZero(f.DefValue) {
		if name == "string" || name == "value" {
			def = fmt.Sprintf(" (default %q)", f.DefValue)
		} else {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
	}
	if name == "value" || name == "string" {
		name = "VALUE"
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		name = ""
	}
	return name, usage, def
}

func isZero(v string) bool {
	switch v {
	case "", "0", "false", "0s", "[]", "map[]", "<nil>":
		return true
	}
	return false
}

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// UpperFirst capitalises s's first letter.
func UpperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

func dedent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}

// wrap folds text at width, each line starting with indent; blank lines
// and lines that start with a space (lists, commands) are kept as they are.
func wrap(text, indent string, width int) string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		if para == "" || strings.HasPrefix(para, " ") {
			out = append(out, strings.TrimRight(indent+para, " "))
			continue
		}
		line := indent
		for _, word := range strings.Fields(para) {
			if line != indent && len([]rune(line))+1+len([]rune(word)) > width {
				out = append(out, line)
				line = indent
			}
			if line != indent {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}
