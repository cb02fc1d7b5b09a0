package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// Synopsis is the usage line of kcbench report (its help page is cmd/kcbench/help).
const Synopsis = `report DIR | report --index DIR`

// CompareSynopsis is the usage line of kcbench compare (its help page is cmd/kcbench/help).
const CompareSynopsis = `compare [--json] A B`

// BuildDir builds the report of dir and writes it there; it returns the
// path of report.html.
func BuildDir(ctx context.Context, dir string) (string, error) {
	m, err := Build(ctx, dir)
	if err != nil {
		return "", err
	}
	if err := m.Write(dir); err != nil {
		return "", err
	}
	return filepath.Join(dir, HTMLFile), nil
}

// Rebuild rebuilds the report of dir from its files (kcbench report):
// it logs what it read and built, writes the notes to notes and the path
// of report.html to out.
func Rebuild(ctx context.Context, out, notes io.Writer, dir string, logf func(string, ...any)) error {
	start := time.Now()
	logf("report: reading %s", dir)
	m, err := Build(ctx, dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := m.Write(dir); err != nil {
		return err
	}
	for _, n := range m.Notes {
		fmt.Fprintf(notes, "  note: %s\n", n)
	}
	logf("report: %d points, %d charts, %d tables in %s", m.Points, len(m.Charts()), len(m.Tables), time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(out, filepath.Join(dir, HTMLFile))
	return nil
}

// CompareDirs compares results folder b against a (kcbench compare),
// writes the comparison to out as text or JSON and, when htmlPath is
// set, as a report page to htmlPath.
func CompareDirs(ctx context.Context, out io.Writer, a, b, htmlPath string, asJSON bool, logf func(string, ...any)) error {
	c, err := Compare(ctx, a, b)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if htmlPath != "" {
		var buf bytes.Buffer
		if err := c.WriteHTML(ctx, &buf); err != nil {
			return err
		}
		if err := fileutil.WriteAtomic(htmlPath, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("compare: --html: %w", err)
		}
		logf("compare: %s", htmlPath)
	}
	if asJSON {
		return c.WriteJSON(out)
	}
	return c.WriteText(out)
}
