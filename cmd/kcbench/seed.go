package main

import (
	"context"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdSeed(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "seed", "seed [--mode realms|orgs] [--tenants N] [--preset P] [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var t kc.TargetFlags
	t.RegisterFlags(fs)
	var sf dataset.SpecFlags
	sf.RegisterFlags(fs)
	var mf metrics.Flags
	mf.RegisterFlags(fs)
	strategy := fs.String("strategy", "", "clone (one tenant through the admin API, the others copied inside Keycloak's database; local stack only), fast (one representation per realm or tenant, passwords hashed once) or rest (one admin call per entity); default clone on the local stack, fast on a --target")
	conc := fs.Int("concurrency", 0, "requests in parallel (default: 4 for clone and fast, 50 for rest)")
	manifest := fs.String("manifest", "", "dataset manifest file (default: dataset.json in the local stack's folder)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	sessions := dataset.RegisterSessionFlags(fs)
	fromDir := fs.String("from-dir", "", "seed from the realm JSON files in this folder (kcbench dataset export, kc.sh export, admin console exports); "+dataset.FilesPasswordRule)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := sessions.Usage(*fromDir != ""); err != nil {
		return err
	}
	col, stopMetrics, err := mf.Serve(e.logf, load.Segment{})
	if err != nil {
		return err
	}
	defer stopMetrics()
	col.SetPhase("seed", "")
	if *fromDir != "" {
		return seedFromDir(ctx, e, &w, &t, *fromDir, *manifest, sf.Seed, *conc, col.SeedProgress(progressBar(e, *quiet, "realms")))
	}
	spec, err := sf.Spec()
	if err != nil {
		return err
	}
	strat, err := dataset.ParseHow(*strategy, *conc) // "": clone on the local stack, else fast
	if err != nil {
		return err
	}
	d, err := stack.ResolveDatasetTarget(&t, &w, e.getenv, e.logf, *manifest)
	if err != nil {
		return err
	}
	tg, mpath, cpu, db := d.Target, d.Manifest, d.CPU, d.DB
	if strat, err = dataset.DefaultStrategy(strat, db != ""); err != nil {
		return err
	}
	adm := dataset.NewAdmin(tg)
	if _, err := adm.Token(ctx); err != nil {
		return err
	}
	dirs, err := w.Dirs(e.getenv)
	if err != nil {
		return err
	}
	keys, err := dataset.KeyPoolIn(dirs.Cache)
	if err != nil {
		return err
	}
	opts := dataset.SeedOptions{
		Strategy: strat, Concurrency: *conc, Progress: col.SeedProgress(progressBar(e, *quiet, "tenants")), Logf: e.logf,
		ManifestPath: mpath, Target: tg.BaseURL, ServerCPU: cpu, DB: db, Keys: keys,
		LDAP: tg.LDAP, LDAPLoad: w.LDAPBulkLoader(&t, e.getenv), MachineCPU: d.MachineCPU, DBKind: tg.DBKind,
		Sessions: *sessions, SessionsInMemory: d.SessionsInMemory, DBDir: d.DBDir, SessionProgress: progressBar(e, *quiet, "sessions"),
	}
	res, err := dataset.Seed(ctx, adm, spec, opts)
	if res != nil {
		res.WriteText(e.stdout, spec.Mode, cpu != nil, mpath)
	}
	return err
}

func seedFromDir(ctx context.Context, e *env, w *stack.Where, t *kc.TargetFlags, dir, manifest string, seed int64, conc int, progress func(done, total int)) error {
	files, err := dataset.ReadRealmDir(dir)
	if err != nil {
		return cliutil.Usage(err)
	}
	d, err := stack.ResolveDatasetTarget(t, w, e.getenv, e.logf, manifest)
	if err != nil {
		return err
	}
	tg, mpath, cpu := d.Target, d.Manifest, d.CPU
	adm := dataset.NewAdmin(tg)
	if _, err := adm.Token(ctx); err != nil {
		return err
	}
	res, err := dataset.SeedFiles(ctx, adm, files, seed, dataset.SeedOptions{Concurrency: conc, Progress: progress, Logf: e.logf,
		ManifestPath: mpath, Target: tg.BaseURL, ServerCPU: cpu})
	if res != nil && err == nil {
		res.WriteFilesText(e.stdout, len(files), dir, mpath)
	}
	return err
}
