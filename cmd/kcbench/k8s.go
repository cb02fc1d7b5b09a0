package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/k8s"
	"github.com/kcbench/kcbench/internal/merge"
)

func cmdK8s(ctx context.Context, e *env, args []string) error {
	return subcommands(ctx, e, "k8s", args, []command{
		{"manifests", func(_ context.Context, e *env, a []string) error { return cmdK8sManifests(e, a) }},
		{"collect", func(_ context.Context, e *env, a []string) error { return cmdK8sCollect(e, a) }}})
}

func cmdK8sManifests(e *env, args []string) error {
	fs := newFlags(e, "k8s manifests", k8s.Synopsis)
	var f experiment.K8sFlags
	f.RegisterFlags(fs)
	if err := parse(fs, args, len(args)); err != nil { // after --: a capacity search's flags
		return err
	}
	b, err := f.Manifests(fs, time.Now(), e.getenv)
	if err != nil {
		return err
	}
	e.logf("k8s: %d agents start at %s: apply before then", f.O.Agents, f.O.StartAt.UTC().Format(time.RFC3339))
	_, err = e.stdout.Write(b)
	return err
}

func cmdK8sCollect(e *env, args []string) error {
	fs := newFlags(e, "k8s collect", k8s.Synopsis)
	out := fs.String("out", "", "`DIR` for agent-<i>/ and merged/")
	logs, err := cliutil.ParseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("k8s collect: --out DIR is required")
	}
	if err := fileutil.CheckOutDir(*out); err != nil {
		return usagef("--out: %v", err)
	}
	var r io.Reader = os.Stdin
	if len(logs) > 0 {
		var rs []io.Reader
		for _, l := range logs {
			f, err := fileutil.Open(l, fileutil.MaxResultFile)
			if err != nil {
				return cliutil.Usage(err)
			}
			defer f.Close()
			rs = append(rs, f)
		}
		r = io.MultiReader(rs...)
	}
	return noStep(merge.Collect(e.stdout, r, *out, e.logf))
}
