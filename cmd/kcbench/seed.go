package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
)

// specFlags describe a dataset.
type specFlags struct {
	mode, preset, policy, prefix  string
	tenants                       int
	users, clients, roles, groups int
	clientRoles                   int
	seed                          int64
	uniqueSalts                   bool
}

func (f *specFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.mode, "mode", "realms", "tenant mode: realms (a realm per tenant) or orgs (organizations in one realm)")
	fs.IntVar(&f.tenants, "tenants", 0, "number of tenants (default 1, or the preset's)")
	fs.StringVar(&f.preset, "preset", "", "dataset preset: small (1 realm, 100 users, 10 clients), baseline (5 realms, 5,000 users, 500 clients), large (10 realms, 100,000 users, 10,000 clients)")
	fs.IntVar(&f.users, "users", 0, "users per tenant (default 10, or the preset's)")
	fs.IntVar(&f.clients, "clients", 0, "clients per tenant, >= 2: one public web client, the rest confidential backends (default 2)")
	fs.IntVar(&f.roles, "roles", 0, "realm roles per tenant (default 5)")
	fs.IntVar(&f.groups, "groups", 0, "groups per tenant (default 2)")
	fs.IntVar(&f.clientRoles, "client-roles", -1, "roles per client (default 2)")
	fs.StringVar(&f.policy, "password-policy", "default", "password hashing: default (argon2), argon2, pbkdf2-sha512:27500, pbkdf2-sha256:1, …")
	fs.StringVar(&f.prefix, "prefix", "kcb", "prefix of every realm the dataset creates")
	fs.Int64Var(&f.seed, "seed", 1, "seed deriving passwords and client secrets")
	fs.BoolVar(&f.uniqueSalts, "unique-salts", false, "give every user its own password salt and hash, computed by kcbench in parallel (default: one salt and hash shared by all users, computed once; a login costs the same either way, see README)")
}

// Bounds of the dataset flags (dataset.Content.Validate checks the
// totals too).
const (
	maxSeedUsers   = 10_000_000
	maxSeedClients = 1_000_000
	maxSeedCount   = 100_000
	maxConcurrency = 1_000
)

func (f *specFlags) spec() (dataset.Spec, error) {
	var errs []error
	mode, err := dataset.ParseMode(f.mode)
	if err != nil {
		errs = append(errs, err)
	}
	pol, err := dataset.ParsePolicy(f.policy)
	if err != nil {
		errs = append(errs, err)
	}
	s := dataset.Spec{Mode: mode, Tenants: 1, Content: dataset.DefaultContent, Policy: pol, Prefix: f.prefix, Seed: f.seed, UniqueSalts: f.uniqueSalts}
	if f.preset != "" {
		p, err := dataset.LookupPreset(f.preset)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.Tenants, s.Content = p.Tenants, p.Content
		}
	}
	set := func(dst *int, v, unset int) {
		if v != unset {
			*dst = v
		}
	}
	set(&s.Tenants, f.tenants, 0)
	set(&s.Content.Users, f.users, 0)
	set(&s.Content.Clients, f.clients, 0)
	set(&s.Content.RealmRoles, f.roles, 0)
	set(&s.Content.Groups, f.groups, 0)
	set(&s.Content.ClientRolesPerClient, f.clientRoles, -1)
	for _, c := range []struct {
		flag     string
		v, unset int
		lo, hi   int
	}{
		{"tenants", f.tenants, 0, 1, dataset.MaxTenants},
		{"users", f.users, 0, 1, maxSeedUsers},
		{"clients", f.clients, 0, 2, maxSeedClients},
		{"roles", f.roles, 0, 1, maxSeedCount},
		{"groups", f.groups, 0, 1, maxSeedCount},
		{"client-roles", f.clientRoles, -1, 0, maxSeedCount},
	} {
		if c.v != c.unset && (c.v < c.lo || c.v > c.hi) {
			errs = append(errs, fmt.Errorf("--%s: %d: must be between %d and %d", c.flag, c.v, c.lo, c.hi))
		}
	}
	if len(errs) == 0 {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return s, cliutil.Usage(err)
	}
	return s, nil
}

// datasetTarget resolves the Target, the manifest path, (local stack) a
// server CPU reader and the database URL.
func datasetTarget(e *env, t *kc.TargetFlags, w *stack.Where, manifest string) (kc.Target, string, func() (time.Duration, error), kc.Secret, error) {
	tg, s, err := stack.ResolveTarget(t, w, e.getenv, e.logf)
	if err != nil {
		return tg, "", nil, "", err
	}
	var cpu func() (time.Duration, error)
	var db kc.Secret
	if s != nil {
		db, _ = s.DSN()
		if manifest == "" {
			manifest = filepath.Join(s.State().Dir, "dataset.json")
		}
		if tg.Local() {
			cpu = func() (time.Duration, error) { return stack.TargetCPU(tg) }
		}
	}
	if manifest == "" {
		return tg, "", nil, "", usagef("an external --target needs --manifest FILE (where the dataset manifest is kept)")
	}
	return tg, manifest, cpu, db, nil
}

func cmdSeed(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "seed", "seed [--mode realms|orgs] [--tenants N] [--preset P] [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var t kc.TargetFlags
	t.RegisterFlags(fs)
	var sf specFlags
	sf.register(fs)
	strategy := fs.String("strategy", "", "clone (one tenant through the admin API, the others copied inside Keycloak's database; local stack only), fast (one representation per realm or tenant, passwords hashed once) or rest (one admin call per entity); default clone on the local stack, fast on a --target")
	conc := fs.Int("concurrency", 0, "requests in parallel (default: 4 for clone and fast, 50 for rest)")
	manifest := fs.String("manifest", "", "dataset manifest file (default: dataset.json in the local stack's folder)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	fromDir := fs.String("from-dir", "", "seed from the realm JSON files in this folder (kcbench dataset export, kc.sh export, admin console exports); "+dataset.FilesPasswordRule)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *fromDir != "" {
		return seedFromDir(ctx, e, &w, &t, *fromDir, *manifest, sf.seed, *conc, *quiet)
	}
	spec, err := sf.spec()
	if err != nil {
		return err
	}
	var strat dataset.Strategy // "": clone on the local stack, else fast
	if *strategy != "" {
		if strat, err = dataset.ParseStrategy(*strategy); err != nil {
			return cliutil.Usage(err)
		}
	}
	if *conc < 0 || *conc > maxConcurrency {
		return usagef("--concurrency: %d: must be between 0 and %d", *conc, maxConcurrency)
	}
	tg, mpath, cpu, db, err := datasetTarget(e, &t, &w, *manifest)
	if err != nil {
		return err
	}
	if strat == "" {
		strat = dataset.Fast
		if db != "" {
			strat = dataset.Clone
		}
	}
	if strat == dataset.Clone && db == "" {
		return usagef("--strategy clone writes into Keycloak's database: only on the local stack (use fast against a --target)")
	}
	adm := kc.NewAdmin(kc.New(tg.BaseURL, seedHTTPClient()), tg.Admin)
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
	res, err := dataset.Seed(ctx, adm, spec, dataset.SeedOptions{
		Strategy: strat, Concurrency: *conc, Progress: progressBar(e, *quiet, "tenants"), Logf: e.logf,
		ManifestPath: mpath, Target: tg.BaseURL, ServerCPU: cpu, DB: db, Keys: keys,
	})
	if res != nil {
		cpuNote := "server CPU unknown (external target)"
		if cpu != nil {
			cpuNote = fmt.Sprintf("server CPU %.1f s", res.ServerCPU.Seconds())
			if res.Added > 0 && res.Duration > 0 {
				cores := runtime.NumCPU()
				cpuNote += fmt.Sprintf(" (%.2f s per tenant added; Keycloak busy %.0f%% of the %d cores over the seed)", res.ServerCPU.Seconds()/float64(res.Added),
					100*res.ServerCPU.Seconds()/res.Duration.Seconds()/float64(cores), cores)
			}
		}
		fmt.Fprintf(e.stdout, "%s mode: %d tenants complete (%d were there, %d added, %d redone) in %.1f s, %.2f tenants/s, %s; strategy %s\nmanifest: %s\n",
			spec.Mode, res.Tenants, res.Existing, res.Added, res.Redone, res.Duration.Seconds(), res.TenantsPerSecond(), cpuNote, res.Strategy, mpath)
	}
	return err
}

// seedHTTPClient allows the long requests of seeding (a realm with
// thousands of users inline).
func seedHTTPClient() *httpClient { return newHTTPClient(30 * time.Minute) }

func seedFromDir(ctx context.Context, e *env, w *stack.Where, t *kc.TargetFlags, dir, manifest string, seed int64, conc int, quiet bool) error {
	files, err := dataset.ReadRealmDir(dir)
	if err != nil {
		return cliutil.Usage(err)
	}
	tg, mpath, cpu, _, err := datasetTarget(e, t, w, manifest)
	if err != nil {
		return err
	}
	adm := kc.NewAdmin(kc.New(tg.BaseURL, seedHTTPClient()), tg.Admin)
	if _, err := adm.Token(ctx); err != nil {
		return err
	}
	res, err := dataset.SeedFiles(ctx, adm, files, seed, dataset.SeedOptions{Concurrency: conc, Progress: progressBar(e, quiet, "realms"), Logf: e.logf,
		ManifestPath: mpath, Target: tg.BaseURL, ServerCPU: cpu})
	if res != nil && err == nil {
		fmt.Fprintf(e.stdout, "%d realms from %s (%d were there, %d imported) in %.1f s, server CPU %.1f s\nmanifest: %s\n",
			len(files), dir, res.Existing, res.Added, res.Duration.Seconds(), res.ServerCPU.Seconds(), mpath)
	}
	return err
}
