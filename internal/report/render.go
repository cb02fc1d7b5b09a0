package report

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// File names Write produces inside the results folder.
const (
	HTMLFile  = "report.html"
	MDFile    = "report.md"
	ChartsDir = "charts"
)

//go:embed templates/report.html.tmpl
var templatesFS embed.FS

// The chart library (Apache ECharts' released minified build, see
// assets/README.md) and kcbench's chart code, inlined into every page so
// that it opens from a file and makes no network request.
var (
	//go:embed assets/echarts.common.min.js
	echartsJS string
	//go:embed assets/kcbench.js
	kcbenchJS string
)

// htmlTemplate parses the embedded template; it is parsed per call so that
// the package keeps no mutable state.
func htmlTemplate() (*template.Template, error) {
	return template.New("report.html.tmpl").Funcs(template.FuncMap{
		"echartsJS": func() template.JS { return template.JS(echartsJS) },
		"kcbenchJS": func() template.JS { return template.JS(kcbenchJS) },
		"sectionAt": func(i int, s Section) struct {
			Index   int
			Section Section
		} {
			return struct {
				Index   int
				Section Section
			}{i, s}
		},
	}).ParseFS(templatesFS, "templates/report.html.tmpl")
}

// WriteHTML writes the report as one self-contained HTML page, the charts
// embedded as base64 PNG.
func (m *Model) WriteHTML(w io.Writer) error {
	t, err := htmlTemplate()
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	return t.Execute(w, m)
}

// WriteMarkdown writes the report as markdown: context, notes, the charts
// as links to charts/*.png, and the tables.
func (m *Model) WriteMarkdown(w io.Writer) error {
	ew := &errWriter{w: w}
	p := ew.printf
	p("# kcbench report: %s\n\n", m.Experiment)
	switch {
	case len(m.Answer.Sentences) > 0:
		// the first screen: a few sentences and one table; then the
		// verdict in full
		p("## Verdict\n\n")
		for _, s := range m.Answer.Sentences {
			p("%s\n\n", mdEscape(s.Text))
		}
		if t := m.Answer.Table; t != nil {
			writeMDTableAligned(ew, t.Header(), t.PlainRows(), t.textColumns())
			if t.Caption != "" {
				p("\n*%s*\n", mdEscape(t.Caption))
			}
			p("\n")
		}
		if d := m.VerdictDetail(); len(d) > 0 {
			p("### The verdict in full\n\n")
			for _, v := range d {
				p("- %s\n", mdEscape(v.Text))
			}
			p("\n")
		}
	case len(m.Verdict) > 0:
		p("## Verdict\n\n")
		for _, v := range m.Verdict {
			p("- %s\n", mdEscape(v.Text))
		}
		p("\n")
	}
	if m.Sizing != "" {
		p("## Sizing estimate\n\n```\n%s\n```\n\n", strings.TrimRight(m.Sizing, "\n"))
	}
	p("- Kind: %s: %s\n", m.Kind, m.Counts())
	p("- Machine: %s\n", mdEscape(m.Machine))
	p("- Versions: %s\n", mdEscape(m.Versions))
	p("- Load model: %s\n", m.LoadModel)
	if len(m.Notes) > 0 {
		p("\n## Notes\n\n")
		for _, n := range m.Notes {
			p("- %s\n", mdEscape(n))
		}
	}
	section := func(s Section) {
		p("\n## %s\n", mdEscape(s.Title))
		for _, c := range s.Charts {
			p("\n### %s\n\n![%s](%s)\n\n*%s*\n", mdEscape(c.Title), mdEscape(c.Title), c.File(), mdEscape(c.Caption))
		}
	}
	for _, s := range m.Sections {
		if len(s.Charts) > 0 && !s.PerPoint {
			section(s)
		}
	}
	p("\n## Tables\n")
	for _, t := range m.Tables {
		p("\n### %s\n\n", mdEscape(t.Title))
		if t.Caption != "" {
			p("%s\n\n", mdEscape(t.Caption))
		}
		writeMDTable(ew, t.Header, t.Rows)
	}
	for _, s := range m.Sections {
		if len(s.Charts) > 0 && s.PerPoint {
			section(s)
		}
	}
	return ew.err
}

func writeMDTable(ew *errWriter, header []string, rows [][]string) {
	writeMDTableAligned(ew, header, rows, nil)
}

// writeMDTableAligned writes a markdown table whose first column, and
// each column marked in text, is aligned left; the others right.
func writeMDTableAligned(ew *errWriter, header []string, rows [][]string, text []bool) {
	cell := func(s string) string { return strings.ReplaceAll(mdEscape(s), "|", `\|`) }
	var b strings.Builder
	b.WriteString("|")
	for _, h := range header {
		b.WriteString(" " + cell(h) + " |")
	}
	b.WriteString("\n|")
	for i := range header {
		if i == 0 || i < len(text) && text[i] {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n")
	}
	ew.printf("%s", b.String())
}

// mdEscape keeps text from turning into markup.
func mdEscape(s string) string {
	r := strings.NewReplacer(`*`, `\*`, `_`, `\_`, "`", "\\`", `<`, `&lt;`, `>`, `&gt;`)
	return r.Replace(s)
}

// Write writes report.html, report.md and charts/*.png into dir as one
// set: every file is written to a temporary file first and all are renamed
// into place only when all were written (report.html last), so that a full
// disk leaves no chart without its page.
func (m *Model) Write(dir string) error {
	cdir := filepath.Join(dir, ChartsDir)
	if err := os.MkdirAll(cdir, 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var set fileutil.Files
	if err := m.stage(&set, dir); err != nil {
		set.Abort()
		os.Remove(cdir) // when empty
		return fmt.Errorf("report: %w", err)
	}
	if err := set.Commit(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// stage writes the report's files into set.
func (m *Model) stage(set *fileutil.Files, dir string) error {
	for _, c := range m.Charts() {
		if err := set.Add(filepath.Join(dir, c.File()), 0o644, bytesWriter(c.PNG)); err != nil {
			return err
		}
	}
	if err := set.Add(filepath.Join(dir, MDFile), 0o644, m.WriteMarkdown); err != nil {
		return err
	}
	return set.Add(filepath.Join(dir, HTMLFile), 0o644, m.WriteHTML)
}

func bytesWriter(b []byte) func(io.Writer) error {
	return func(w io.Writer) error { _, err := w.Write(b); return err }
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
