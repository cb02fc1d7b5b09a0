package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/merge"
)

const mergeSynopsis = `merge DIR... --out DIR

Joins the --out folders of the agents of a split load run (kcbench load
--segment i/n, or --segments n in a Kubernetes Indexed Job) into the folder
one run at the full load would have written: summary.json, timeline.csv
and the HDR logs. The agents' HDR histograms are added, never their
percentiles averaged, so the merged percentiles are those of all the
agents' samples; counts, errors and dropped iterations are summed, and
timeline rows summed on wall time. report, compare, gate and size --from
read the merged folder. The same segment given twice is an error.`

func cmdMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "merge", mergeSynopsis)
	out := fs.String("out", "", "`DIR` to write the merged results to (not one of the agents' folders)")
	dirs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usagef("merge: give the agents' folders")
	}
	if *out == "" {
		return usagef("merge: --out DIR is required")
	}
	if err := fileutil.CheckWritableDir(*out); err != nil {
		return usagef("--out: %v", err)
	}
	start := time.Now()
	res, err := merge.Read(dirs)
	if err != nil {
		return err
	}
	if err := res.WriteDir(*out); err != nil {
		return err
	}
	for _, n := range res.Notes {
		e.logf("merge: note: %s", n)
	}
	e.logf("merge: %d agents (segments %s) in %s; results in %s", len(dirs), res.Params["segments"], time.Since(start).Round(time.Millisecond), *out)
	if err := load.WriteSummary(e.stdout, res.Stats); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	return res.CPU.Write(e.stdout)
}
