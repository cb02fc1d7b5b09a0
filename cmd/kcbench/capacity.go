package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// Capacity defaults of the CLI (the search's own are capacity.Default*).
const (
	// matrixFile is the version matrix's table as JSON, in --out.
	matrixFile = "matrix.json"
)

const capacitySynopsis = `capacity --scenario NAME [--slo 'p99<500ms,errors<0.1%'] [--start R] [--step S]
       [--step-duration D] [--resolution r] [--max-rate M] [--out DIR] [flags]
       kcbench capacity --scenario NAME --kc-version 26.4.7,26.7.3 [dataset flags] [flags]

Finds the highest arrival rate that meets every SLO: a discarded warm-up at
--start, then constant-arrival-rate steps rising by --step until one fails,
then a binary search down to --resolution. A step passes only when every SLO
holds, it achieved at least 95% of the asked rate, dropped fewer than 1% of
its arrivals and completed at least --min-ok successful iterations; a step
where everything failed never passes.

Runs against the local stack (users and clients from its dataset manifest)
or --target. With --kc-version, each version in turn gets a fresh local
stack (named capacity-<version>), the same dataset (the dataset flags, or
--manifest's spec) seeded into it, a measured restart, and the same search;
one table compares them. Writes capacity.json and steps.csv into --out
(per version: --out/<version>/, and matrix.json). Exit code 3 when no rate
met the SLOs.`

// capacityFlags are the command's settings.
type capacityFlags struct {
	scen         scenario.Config
	slo          string
	opts         capacity.Options
	minAchPct    float64
	maxDropPct   float64
	maxVUs       int
	out          string
	manifest     string
	repeats      int
	procs        int
	quiet        bool
	versions     string
	heap         string
	pgVersion    string
	grace        time.Duration
	specFlagsSet []string
}

func (f *capacityFlags) register(fs *flag.FlagSet) {
	c := &f.scen
	fs.StringVar(&c.Scenario, "scenario", "", "`NAME` of the workload (see kcbench scenarios), mix included")
	fs.StringVar(&f.slo, "slo", capacity.DefaultSLOs, "SLOs every passing step meets, `LIST` of [op:]metric<value: p50…p99.9, max, avg (latency), errors (rate)")
	fs.Float64Var(&f.opts.Start, "start", capacity.DefaultStart, "`R`: first rate, iterations per second (also the warm-up's)")
	fs.Float64Var(&f.opts.Step, "step", capacity.DefaultStep, "`S`: the rate rises by S per step until an SLO fails")
	fs.DurationVar(&f.opts.StepDuration, "step-duration", capacity.DefaultStepDuration, "length of each step")
	fs.DurationVar(&f.opts.Warmup, "warmup", capacity.DefaultWarmup, "discarded warm-up at --start before the first step (0: none)")
	fs.Float64Var(&f.opts.Resolution, "resolution", 0, "`r`: the binary search stops when the limit is known within r/s (0: step/10)")
	fs.Float64Var(&f.opts.MaxRate, "max-rate", 0, "`M`: never ask for more than M/s; reaching it ends the search as capped (0: no cap)")
	fs.Int64Var(&f.opts.MinOK, "min-ok", capacity.DefaultMinOK, "`N` successful iterations a passing step needs at least")
	fs.Float64Var(&f.minAchPct, "min-achieved", 100*results.DefaultMinAchieved, "`PCT` of the asked rate a passing step achieves")
	fs.Float64Var(&f.maxDropPct, "max-dropped", 100*capacity.DefaultMaxDropped, "`PCT` of arrivals a passing step must drop fewer than")
	fs.DurationVar(&f.opts.Pause, "pause", capacity.DefaultPause, "pause after a failed step, for the server to drain its queue (0: none)")
	fs.IntVar(&f.maxVUs, "max-vus", 0, "`N` VUs at most per step (0: 2 × rate × the largest latency SLO, + 10)")
	fs.DurationVar(&f.grace, "graceful-stop", scenario.CapacityGrace, "how long iterations running at the end of a step may finish (at least 4 × the latency SLO)")
	fs.DurationVar(&c.Timeout, "timeout", load.DefaultHTTPTimeout, "HTTP request timeout")
	fs.Float64Var(&c.TenantSkew, "tenant-skew", 0, "zipf exponent `S` of the tenant choice (0: uniform)")
	fs.Var((*mixFlag)(&c.Mix), "mix", "weights of the mix scenario `NAME=W,…` (default "+scenario.MixString(scenario.DefaultMix())+")")
	fs.IntVar(&c.SessionsPerVU, "sessions-per-vu", 0, fmt.Sprintf("`N` sessions each refresh VU keeps (0: %d)", scenario.DefaultSessionsPerVU))
	fs.IntVar(&c.RefreshesPerSession, "refreshes-per-session", 0, "`N` refreshes before a session is replaced by a new login (0: no limit)")
	fs.StringVar(&c.Realm, "realm", "", "without a manifest: the realm")
	fs.StringVar(&c.ClientID, "client-id", "", "without a manifest: the client")
	fs.StringVar(&c.ClientSecret, "client-secret", "", "without a manifest: the client's secret")
	fs.StringVar(&c.Username, "username", "", "without a manifest: the user")
	fs.StringVar(&c.Password, "password", "", "without a manifest: the user's password")
	fs.StringVar(&f.manifest, "manifest", "", "dataset manifest `FILE` (default: the local stack's dataset.json; with --kc-version: the dataset to seed)")
	fs.StringVar(&f.out, "out", "", "`DIR` for capacity.json and steps.csv (default results/capacity-<scenario>-<time>)")
	fs.IntVar(&f.repeats, "repeats", 1, "`N` searches in a row (out/repeat-<i>/), for the run-to-run spread kcbench gate uses")
	fs.IntVar(&f.procs, "procs", defaultProcs, "`N` CPU cores the load generator may use (GOMAXPROCS; 0: all)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&f.versions, "kc-version", "", "version matrix: `LIST` of Keycloak 26.x versions, each on a fresh local stack")
	fs.StringVar(&f.heap, "heap", "", "version matrix: JVM heap of each stack (e.g. 1g; default Keycloak's own)")
	fs.StringVar(&f.pgVersion, "pg-version", stack.DefaultPGVersion, "version matrix: PostgreSQL of each stack")
}

// search options from the flags; checked by validate.
func (f *capacityFlags) searchOptions() (capacity.Options, error) {
	o := f.opts
	slos, err := capacity.ParseSLOs(f.slo)
	if err != nil {
		return o, fmt.Errorf("--slo: %w", err)
	}
	o.SLOs = slos
	o.MinAchieved, o.MaxDropped = f.minAchPct/100, f.maxDropPct/100
	// Flags are taken as given (0 is not "the default" here): no warm-up
	// and no pause when 0, resolution step/10 when 0.
	if o.Warmup == 0 {
		o.Warmup = -1
	}
	if o.Pause == 0 {
		o.Pause = -1
	}
	if o.Resolution == 0 {
		o.Resolution = o.Step / capacity.DefaultResolutionDivisor
	}
	o.MaxSteps = capacity.DefaultMaxSteps
	return o, o.Validate()
}

func (f *capacityFlags) validate() error {
	var errs []error
	if _, err := f.searchOptions(); err != nil {
		errs = append(errs, err)
	}
	c := f.stepper(kc.Target{}, nil).StepConfig(f.opts.Start, time.Second)
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if f.repeats < 1 {
		errs = append(errs, fmt.Errorf("--repeats %d: must be at least 1", f.repeats))
	}
	if f.procs < 0 {
		errs = append(errs, fmt.Errorf("--procs %d: must not be negative", f.procs))
	}
	if f.maxVUs < 0 {
		errs = append(errs, fmt.Errorf("--max-vus %d: must not be negative", f.maxVUs))
	}
	if f.scen.Realm != "" && f.manifest != "" {
		errs = append(errs, errors.New("--realm and --manifest exclude each other"))
	}
	if f.versions == "" && len(f.specFlagsSet) > 0 {
		errs = append(errs, fmt.Errorf("dataset flags (%s) apply with --kc-version only: without it the dataset is the stack's", strings.Join(f.specFlagsSet, ", ")))
	}
	if f.versions != "" {
		if f.scen.Realm != "" {
			errs = append(errs, errors.New("--kc-version seeds a dataset on each stack: --realm does not apply"))
		}
		if f.repeats > 1 {
			errs = append(errs, errors.New("--repeats applies without --kc-version only"))
		}
		for _, v := range f.versionList() {
			if err := (stack.KeycloakOptions{Version: v, Heap: f.heap}).Validate(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (f *capacityFlags) versionList() []string {
	var vs []string
	for v := range strings.SplitSeq(f.versions, ",") {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs
}

// stepper binds the search to a Keycloak.
func (f *capacityFlags) stepper(tg kc.Target, m *dataset.Manifest) *scenario.CapacityStepper {
	slos, _ := capacity.ParseSLOs(f.slo)
	return &scenario.CapacityStepper{Config: f.scen, Target: tg, Manifest: m, SLOs: slos, MaxVUs: f.maxVUs, Grace: f.grace,
		RSS: func() (int64, error) { return stack.RSS(tg.PID) }}
}

func cmdCapacity(ctx context.Context, e *env, args []string) error {
	var f capacityFlags
	var w where
	var tf targetFlags
	var sf specFlags
	fs := newFlags(e, "capacity", capacitySynopsis)
	f.register(fs)
	w.register(fs)
	tf.register(fs)
	sf.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	specNames := map[string]bool{}
	probe := flag.NewFlagSet("", flag.ContinueOnError)
	(&specFlags{}).register(probe)
	probe.VisitAll(func(fl *flag.Flag) { specNames[fl.Name] = true })
	fs.Visit(func(fl *flag.Flag) {
		if specNames[fl.Name] {
			f.specFlagsSet = append(f.specFlagsSet, "--"+fl.Name)
		}
	})
	if err := f.validate(); err != nil {
		return usageError{err}
	}
	if f.versions != "" && tf.set() {
		return usagef("--kc-version starts local stacks: --target does not apply")
	}
	if f.out == "" {
		f.out = filepath.Join("results", fmt.Sprintf("capacity-%s-%s", f.scen.Scenario, time.Now().Format("20060102-150405")))
	}
	if f.procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.procs))
	}
	if f.versions != "" {
		return runMatrix(ctx, e, &f, &w, &sf)
	}
	lf := loadFile{Config: f.scen, Manifest: f.manifest}
	tg, manifestPath, err := loadTarget(e, &lf, &tf, &w)
	if err != nil {
		return err
	}
	var m *dataset.Manifest
	params := map[string]string{"machine_cores": fmt.Sprint(runtime.NumCPU())}
	if f.scen.Realm == "" {
		if m, err = dataset.ReadManifest(manifestPath); err != nil {
			return err
		}
		addSpecParams(params, m.Spec)
	}
	if tf.set() {
		params["target"] = "external"
	} else if s, err := w.attach(e); err == nil {
		params["target"] = "local"
		params["keycloak_version"] = s.State().Options.Version
	}
	if _, err := scenario.ByName(f.scen.Scenario, probeEnv(tg, m, f.scen)); err != nil {
		return usageError{err}
	}
	var found []*results.CapacityResult
	var searchErr error
	for i := 1; i <= f.repeats; i++ {
		dir := f.out
		p := params
		if f.repeats > 1 {
			dir = filepath.Join(f.out, fmt.Sprintf("repeat-%d", i))
			p = withParam(params, "repeat", fmt.Sprint(i))
			e.logf("capacity: repeat %d of %d", i, f.repeats)
		}
		r, err := searchOnce(ctx, e, &f, tg, m, p, dir, nil)
		if r != nil {
			found = append(found, r)
		}
		if err != nil {
			searchErr = err
			break
		}
	}
	if searchErr != nil {
		return searchErr
	}
	for _, r := range found {
		if !r.Found {
			return codedError{code: exitThresholds, err: fmt.Errorf("capacity: no rate met the SLOs: %s", r.Conclusion)}
		}
	}
	return nil
}

// withParam returns a copy of m with k set to v.
func withParam(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

func addSpecParams(p map[string]string, s dataset.Spec) {
	p["mode"] = string(s.Mode)
	p["tenants"] = fmt.Sprint(s.Tenants)
	p["users_per_tenant"] = fmt.Sprint(s.Content.Users)
	p["password_policy"] = s.Policy.String()
}

// searchOnce runs one search, prints its steps and conclusion, and writes
// its folder (also when it was interrupted or failed part way). boot, when
// set, is the server boot measured before the search.
func searchOnce(ctx context.Context, e *env, f *capacityFlags, tg kc.Target, m *dataset.Manifest, params map[string]string, dir string, boot *stack.BootResult) (*results.CapacityResult, error) {
	o, err := f.searchOptions()
	if err != nil {
		return nil, usageError{err}
	}
	sr := f.stepper(tg, m)
	sr.HTTPClient = sr.NewHTTPClient(o)
	defer sr.HTTPClient.CloseIdleConnections()
	if !f.quiet && progress.IsTerminal(e.stderr) {
		p := newLoadProgress(e.stderr, false)
		sr.Progress = p.update
		defer p.done()
	}
	o.BeforeStep = func(i int, phase string, rate float64, d time.Duration) {
		if !f.quiet {
			e.logf("capacity: step %d (%s) %g/s for %s", i, phase, rate, d)
		}
	}
	o.AfterStep = func(s results.CapacityStep) {
		if f.quiet {
			return
		}
		verdict := s.Verdict()
		e.logf("capacity: step %d: achieved %.1f/s, p99 %s ms, errors %.2f%%, dropped %d, CPU %s ms/op: %s",
			s.Index, s.Achieved, results.FormatMs(s.P99), s.ErrorPct, s.Dropped, fmtOpt(s.CPUMsPerOp, 2), verdict)
	}
	desc := f.scen.Scenario
	if f.scen.Scenario == results.ScenarioMix {
		desc += " (" + scenario.MixString(orDefaultMix(f.scen.Mix)) + ")"
	}
	e.logf("capacity: %s against %s, SLOs %s; start %g/s, step %g/s, %s per step, resolution %g/s",
		desc, tg.BaseURL, results.FormatSLOs(o.SLOs), o.Start, o.Step, o.StepDuration, o.Resolution)
	start := time.Now()
	r, err := capacity.Search(ctx, sr.Step, o)
	if r == nil {
		return nil, err
	}
	r.Scenario, r.Params = f.scen.Scenario, params
	if boot != nil {
		r.BootSeconds, r.RSSAtReadyBytes = boot.Duration.Seconds(), boot.RSS
	}
	if f.scen.Scenario == results.ScenarioMix {
		r.Params = withParam(params, "mix", scenario.MixString(orDefaultMix(f.scen.Mix)))
	}
	e.logf("capacity: done in %s", time.Since(start).Round(time.Second))
	if werr := r.WriteDir(dir); werr != nil {
		return r, errors.Join(err, werr)
	}
	if perr := printResult(e.stdout, r); perr != nil {
		return r, errors.Join(err, perr)
	}
	fmt.Fprintf(e.stdout, "results: %s\n", dir)
	return r, err
}

func orDefaultMix(m map[string]int) map[string]int {
	if len(m) == 0 {
		return scenario.DefaultMix()
	}
	return m
}

// printResult writes the steps table and the finding.
func printResult(w io.Writer, r *results.CapacityResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tphase\tasked/s\tachieved/s\tok/s\tdropped\terrors %\tp50 ms\tp95 ms\tp99 ms\tmax ms\tCPU-ms/op\tcores\tRSS MiB\tverdict\t")
	for _, s := range r.Steps {
		v := "pass"
		switch {
		case s.Phase == results.StepWarmup:
			v = "discarded"
		case !s.Pass:
			v = "FAIL"
		}
		fmt.Fprintf(tw, "%d\t%s\t%g\t%.1f\t%.1f\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Index, s.Phase, s.Rate, s.Achieved, s.OKRate,
			s.Dropped, s.ErrorPct, results.FormatMs(s.P50), results.FormatMs(s.P95), results.FormatMs(s.P99), results.FormatMs(s.Max), fmtOpt(s.CPUMsPerOp, 2),
			fmtOpt(s.ServerCores, 2), fmtOpt(float64(s.RSSBytes)/(1<<20), 0), v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s, SLOs %s: %s\n", r.Scenario, results.FormatSLOs(r.SLOs), r.Conclusion)
	if r.Found {
		fmt.Fprintf(w, "max rate at SLO: %g/s (achieved %.1f/s, p95 %s ms, p99 %s ms)\n", r.MaxRate, r.Achieved, results.FormatMs(r.P95), results.FormatMs(r.P99))
		if r.CPUMsPerOp > 0 {
			fmt.Fprintf(w, "server CPU:      %.2f ms per operation = %.0f operations/s per vCPU (%.2f cores busy at the max)\n",
				r.CPUMsPerOp, r.OpsPerCPUSecond, r.ServerCores)
		}
	}
	if r.MaxRSSBytes > 0 {
		fmt.Fprintf(w, "server RSS:      %.0f MiB at most\n", float64(r.MaxRSSBytes)/(1<<20))
	}
	return nil
}

func fmtOpt(v float64, prec int) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// matrixRow is one version of a version matrix.
type matrixRow struct {
	Version         string  `json:"keycloak_version"`
	Dir             string  `json:"dir,omitempty"`
	Found           bool    `json:"found"`
	Capped          bool    `json:"capped,omitempty"`
	MaxRate         float64 `json:"max_rate"`
	CPUMsPerOp      float64 `json:"cpu_ms_per_op,omitempty"`
	OpsPerCPUSecond float64 `json:"ops_per_cpu_second,omitempty"`
	P99AtCommon     float64 `json:"p99_at_common_rate_ms,omitempty"`
	BootSeconds     float64 `json:"boot_s,omitempty"`
	RSSAtReady      int64   `json:"rss_at_ready_bytes,omitempty"`
	MaxRSS          int64   `json:"max_rss_bytes,omitempty"`
	Conclusion      string  `json:"conclusion,omitempty"`
	Error           string  `json:"error,omitempty"`
}

// matrix is matrix.json.
type matrix struct {
	Scenario   string       `json:"scenario"`
	SLOs       string       `json:"slos"`
	Dataset    dataset.Spec `json:"dataset"`
	CommonRate float64      `json:"common_rate,omitempty"` // the highest ramp rate every version passed
	Rows       []matrixRow  `json:"rows"`
}

// runMatrix searches each version on a fresh local stack seeded with the
// same dataset, and prints one table.
func runMatrix(ctx context.Context, e *env, f *capacityFlags, w *where, sf *specFlags) error {
	spec, err := sf.spec()
	if err != nil {
		return err
	}
	if f.manifest != "" {
		m, err := dataset.ReadManifest(f.manifest)
		if err != nil {
			return err
		}
		spec = m.Spec
	}
	dirs, err := w.dirs(e)
	if err != nil {
		return err
	}
	mx := matrix{Scenario: f.scen.Scenario, SLOs: f.slo, Dataset: spec}
	var found []*results.CapacityResult
	byVersion := map[string]*results.CapacityResult{}
	versions := f.versionList()
	for i, v := range versions {
		if ctx.Err() != nil {
			break
		}
		e.logf("matrix: version %d of %d: Keycloak %s", i+1, len(versions), v)
		dir := filepath.Join(f.out, v)
		r, err := matrixVersion(ctx, e, f, dirs, spec, v, dir)
		row := matrixRow{Version: v}
		if r != nil {
			row.Dir = dir
			row.Found, row.Capped, row.MaxRate = r.Found, r.Capped, r.MaxRate
			row.CPUMsPerOp, row.OpsPerCPUSecond = r.CPUMsPerOp, r.OpsPerCPUSecond
			row.BootSeconds, row.RSSAtReady, row.MaxRSS = r.BootSeconds, r.RSSAtReadyBytes, r.MaxRSSBytes
			row.Conclusion = r.Conclusion
			byVersion[v] = r
			if r.Found {
				found = append(found, r)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			row.Error = err.Error()
			e.logf("matrix: Keycloak %s failed: %v", v, err)
		}
		mx.Rows = append(mx.Rows, row)
	}
	if rate, ok := results.CommonRate(found); ok && len(found) == len(versions) {
		mx.CommonRate = rate
		for i := range mx.Rows {
			if r := byVersion[mx.Rows[i].Version]; r != nil {
				if s := r.StepAt(rate); s != nil {
					mx.Rows[i].P99AtCommon = s.P99
				}
			}
		}
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	if err := fileutil.WriteFile(filepath.Join(f.out, matrixFile), 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(mx)
	}); err != nil {
		return err
	}
	if err := printMatrix(e.stdout, &mx); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "results: %s (kcbench report %s draws the charts)\n", f.out, f.out)
	if err := ctx.Err(); err != nil {
		return err
	}
	var failed, notFound []string
	for _, r := range mx.Rows {
		switch {
		case r.Error != "":
			failed = append(failed, r.Version)
		case !r.Found:
			notFound = append(notFound, r.Version)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("matrix: %s could not be measured (see above)", strings.Join(failed, ", "))
	}
	if len(notFound) > 0 {
		return codedError{code: exitThresholds, err: fmt.Errorf("matrix: no rate met the SLOs on %s", strings.Join(notFound, ", "))}
	}
	return nil
}

// matrixVersion starts a fresh stack of version v, seeds spec, restarts
// it (the boot measured), searches, writes dir and stops the stack.
func matrixVersion(ctx context.Context, e *env, f *capacityFlags, dirs stack.Dirs, spec dataset.Spec, v, dir string) (r *results.CapacityResult, err error) {
	name := "capacity-" + strings.ReplaceAll(v, ".", "-")
	if old, err := stack.Attach(dirs, name); err == nil {
		cctx, cancel := cleanupCtx(ctx)
		err := old.Down(cctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("stack %s left by an earlier run: %w", name, err)
		}
	}
	start := time.Now()
	st, err := stack.Start(ctx, stack.Config{Name: name, Dirs: dirs, Logf: e.logf,
		Keycloak: stack.KeycloakOptions{Version: v, Heap: f.heap}, PG: stack.PGOptions{Version: f.pgVersion}})
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := cleanupCtx(ctx)
		defer cancel()
		if derr := st.Down(cctx); derr != nil {
			err = errors.Join(err, fmt.Errorf("stop stack %s: %w", name, derr))
		}
	}()
	e.logf("matrix: Keycloak %s up in %s", v, time.Since(start).Round(time.Second))
	tg := st.Target()
	manifestPath := filepath.Join(st.State().Dir, "dataset.json")
	pid := tg.PID
	db, err := st.DSN()
	if err != nil {
		return nil, err
	}
	sr, err := dataset.Seed(ctx, kc.NewAdmin(kc.New(tg.BaseURL, nil), tg.Admin), spec, dataset.SeedOptions{
		Strategy: dataset.Clone, Logf: e.logf, ManifestPath: manifestPath, Target: tg.BaseURL, DB: db,
		ServerCPU: func() (time.Duration, error) { return stack.CPUTime(pid) },
	})
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	e.logf("matrix: seeded %d tenants in %s", sr.Tenants, sr.Duration.Round(time.Millisecond))
	boot, err := st.Restart(ctx)
	if err != nil {
		return nil, fmt.Errorf("restart: %w", err)
	}
	e.logf("matrix: Keycloak %s restarted in %.1f s, RSS %d MiB at ready", v, boot.Duration.Seconds(), boot.RSS>>20)
	m, err := dataset.ReadManifest(manifestPath)
	if err != nil {
		return nil, err
	}
	tg = st.Target() // a new JVM pid
	if _, err := scenario.ByName(f.scen.Scenario, probeEnv(tg, m, f.scen)); err != nil {
		return nil, err
	}
	params := map[string]string{"keycloak_version": v, "target": "local", "machine_cores": fmt.Sprint(runtime.NumCPU())}
	addSpecParams(params, m.Spec)
	return searchOnce(ctx, e, f, tg, m, params, dir, &boot)
}

// printMatrix writes the version table.
func printMatrix(w io.Writer, mx *matrix) error {
	fmt.Fprintf(w, "\nversion matrix: %s, SLOs %s, dataset %s mode, %d tenants × %d users, password policy %s\n",
		mx.Scenario, mx.SLOs, mx.Dataset.Mode, mx.Dataset.Tenants, mx.Dataset.Content.Users, mx.Dataset.Policy)
	common := "p99 @ common rate ms"
	if mx.CommonRate > 0 {
		common = fmt.Sprintf("p99 @ %g/s ms", mx.CommonRate)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "Keycloak\tmax rate at SLO /s\tCPU-ms/op\tops/s per vCPU\t%s\tboot s\tRSS at ready MiB\tpeak RSS MiB\t\n", common)
	for _, r := range mx.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\tfailed\t\t\t\t\t\t\t\n", r.Version)
			continue
		}
		rate := fmt.Sprintf("%g", r.MaxRate)
		switch {
		case !r.Found:
			rate = "none"
		case r.Capped:
			rate = "≥ " + rate
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Version, rate, fmtOpt(r.CPUMsPerOp, 2), fmtOpt(r.OpsPerCPUSecond, 0),
			fmtOpt(r.P99AtCommon, 1), fmtOpt(r.BootSeconds, 1), fmtOpt(float64(r.RSSAtReady)/(1<<20), 0), fmtOpt(float64(r.MaxRSS)/(1<<20), 0))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range mx.Rows {
		switch {
		case r.Error != "":
			fmt.Fprintf(w, "  %s: %s\n", r.Version, r.Error)
		case !r.Found:
			fmt.Fprintf(w, "  %s: %s\n", r.Version, r.Conclusion)
		}
	}
	if mx.CommonRate == 0 && len(mx.Rows) > 1 {
		fmt.Fprintln(w, "  no ramp rate passed on every version: p99 at a common rate is left out")
	}
	return nil
}
