package main

import (
	"context"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdDataset(ctx context.Context, e *env, args []string) error {
	admin := func(verb string) command {
		return command{verb, func(ctx context.Context, e *env, a []string) error { return datasetAdmin(ctx, e, verb, a) }}
	}
	return subcommands(ctx, e, "dataset", args, []command{admin("verify"), {"export", cmdDatasetExport}, {"show", cmdDatasetShow}, admin("delete")})
}

// datasetAdmin runs dataset verify or dataset delete: both read a
// manifest and work through the admin API.
func datasetAdmin(ctx context.Context, e *env, verb string, args []string) error {
	fs := newFlags(e, "dataset "+verb, "dataset "+verb+" [--manifest F] [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var t kc.TargetFlags
	t.RegisterFlags(fs)
	manifest := fs.String("manifest", "", "dataset manifest (default: dataset.json in the local stack's folder)")
	var asJSON, quiet, dry *bool
	if verb == "verify" {
		asJSON = fs.Bool("json", false, "print JSON")
		quiet = fs.Bool("quiet", false, "no progress on stderr")
	} else {
		dry = fs.Bool("dry-run", false, "list what would be deleted, delete nothing")
	}
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	d, err := stack.ResolveDatasetTarget(&t, &w, e.getenv, e.logf, *manifest)
	if err != nil {
		return err
	}
	tg, mpath := d.Target, d.Manifest
	m, err := dataset.ReadManifest(mpath)
	if err != nil {
		return err
	}
	adm := dataset.NewAdmin(tg)
	if verb == "delete" {
		return dataset.DeleteText(ctx, e.stdout, adm, m, mpath, *dry)
	}
	return dataset.VerifyText(ctx, e.stdout, adm, m, mpath, *asJSON, func(what string) func(done, total int) { return progressBar(e, *quiet, what) })
}

func cmdDatasetExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "dataset export", "dataset export --out DIR [--manifest F | dataset flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var sf dataset.SpecFlags
	sf.RegisterFlags(fs)
	dir := fs.String("out", "", "`DIR` to write realm JSON files into (required)")
	cliutil.Renamed(fs, "dir", "out")
	manifest := fs.String("manifest", "", "export the dataset of this manifest (default: the local stack's, else the dataset flags)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("dataset export: --out is required")
	}
	spec, err := sf.ExportSpec(*manifest, func() string {
		if s, err := w.Attach(e.getenv, e.logf); err == nil {
			return s.DatasetManifest()
		}
		return ""
	})
	if err != nil {
		return err
	}
	return dataset.ExportText(e.stdout, spec, *dir, progressBar(e, *quiet, "realm files"))
}

func cmdDatasetShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "dataset show", "dataset show [--manifest F]")
	var w stack.Where
	w.RegisterFlags(fs)
	manifest := fs.String("manifest", "", "dataset manifest (default: the local stack's)")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	mpath := *manifest
	if mpath == "" {
		s, err := w.Attach(e.getenv, e.logf)
		if err != nil {
			return err
		}
		mpath = s.DatasetManifest()
	}
	m, err := dataset.ReadManifest(mpath)
	if err != nil {
		return err
	}
	return m.WriteText(e.stdout, mpath)
}
