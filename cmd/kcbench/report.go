package main

import (
	"context"
	"fmt"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/report"
)

// cmdReport rebuilds the report of a results folder from its files.
func cmdReport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "report", report.Synopsis)
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
	return report.Rebuild(ctx, e.stdout, e.stderr, dir, e.logf)
}

// cmdCompare compares two results folders scenario by scenario.
func cmdCompare(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "compare", report.CompareSynopsis)
	asJSON := fs.Bool("json", false, "write the comparison as JSON")
	htmlOut := fs.String("html", "", "also write the comparison as a report page to `FILE` (e.g. compare.html)")
	pos, err := cliutil.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("compare: want two results folders A and B, got %d argument(s)%s", len(pos), cliutil.Listed(pos))
	}
	return report.CompareDirs(ctx, e.stdout, pos[0], pos[1], *htmlOut, *asJSON, e.logf)
}
