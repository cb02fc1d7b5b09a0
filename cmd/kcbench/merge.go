package main

import (
	"context"
	"errors"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/merge"
	"github.com/kcbench/kcbench/internal/results"
)

func cmdMerge(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "merge", merge.Synopsis)
	out := fs.String("out", "", "`DIR` to write the merged results to (not one of the agents' folders)")
	partial := fs.Bool("partial", false, "merge a split load's agents with some segments missing, on purpose (the result says partial and which are missing)")
	dirs, err := cliutil.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usagef("merge: give the agents' folders")
	}
	if *out == "" {
		return usagef("merge: --out DIR is required")
	}
	if err := fileutil.CheckOutDir(*out); err != nil {
		return usagef("--out: %v", err)
	}
	start := time.Now()
	if split, err := merge.IsCapacity(dirs); err != nil {
		return cliutil.Usage(err)
	} else if split {
		if *partial {
			return usagef("--partial: a split capacity search's steps need every agent")
		}
		return noStep(merge.CapacityReadWrite(dirs, *out, e.stdout, e.logf))
	}
	res, err := merge.ReadWrite(dirs, *out, merge.Options{Partial: *partial}, e.logf)
	if err != nil {
		return err
	}
	e.logf("merge: %d agents (segments %s) in %s; results in %s", len(dirs), res.Params["segments"], time.Since(start).Round(time.Millisecond), *out)
	return res.WriteText(e.stdout)
}

// noStep gives a merged split capacity search in which no step passed
// exit code 3.
func noStep(r *results.CapacityResult, err error) error {
	if err == nil && r != nil && !r.Found {
		err = codedError{code: exitThresholds, err: errors.New("capacity: no rate met the SLOs: " + r.Conclusion)}
	}
	return err
}
