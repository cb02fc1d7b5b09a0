package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/report"
)

// cmdReport rebuilds the report of a results folder from its files.
func cmdReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", "report DIR | report --index DIR\n\nRebuilds report.html (self-contained, interactive charts), report.md and charts/*.png\nin DIR (results/<experiment>, or one point folder) from the result files alone,\nand prints the path of report.html. With --index, writes DIR/index.html instead:\nevery results folder in DIR with its kind, date, Keycloak version, headline figure\nand a link to its report.")
	index := fs.Bool("index", false, "write DIR/index.html listing the results folders in DIR")
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("report: want one results folder, e.g. kcbench report results/<experiment>")
	}
	dir := fs.Arg(0)
	if *index {
		path, err := report.WriteIndex(dir)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, path)
		return nil
	}
	start := time.Now()
	e.logf("report: reading %s", dir)
	m, err := report.Build(ctx, dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := m.Write(dir); err != nil {
		return err
	}
	for _, n := range m.Notes {
		fmt.Fprintf(e.stderr, "  note: %s\n", n)
	}
	e.logf("report: %d points, %d charts, %d tables in %s", m.Points, len(m.Charts()), len(m.Tables), time.Since(start).Round(time.Millisecond))
	fmt.Fprintln(e.stdout, filepath.Join(dir, report.HTMLFile))
	return nil
}

// cmdCompare compares two results folders scenario by scenario.
func cmdCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "compare", "compare [--json] A B\n\nCompares results folder B against A per configuration and scenario (workload and phase):\nthroughput, p50/p95/p99, server CPU-ms per op, RSS. A delta within the spread of the\nrepeats (points that differ only by \"repeat\") is flagged as noise; with a single run\nper side the spread is unknown.")
	asJSON := fs.Bool("json", false, "write the comparison as JSON")
	htmlOut := fs.String("html", "", "also write the comparison as a report page to `FILE` (e.g. compare.html)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("compare: want two results folders A and B, got %d argument(s)%s", len(pos), listed(pos))
	}
	c, err := report.Compare(ctx, pos[0], pos[1])
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if *htmlOut != "" {
		var buf bytes.Buffer
		if err := c.WriteHTML(ctx, &buf); err != nil {
			return err
		}
		if err := fileutil.WriteAtomic(*htmlOut, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("compare: --html: %w", err)
		}
		e.logf("compare: %s", *htmlOut)
	}
	if *asJSON {
		return c.WriteJSON(e.stdout)
	}
	return c.WriteText(e.stdout)
}

func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	return cliutil.ParseInterspersed(fs, args)
}

func listed(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ": " + strings.Join(ss, " ")
}
