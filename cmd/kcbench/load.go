package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"text/tabwriter"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// loadFile is a load run as flags or a YAML file (--file) describe it:
// the workload (scenario.Config; YAML keys are the flag names with
// underscores) and where results go. Flags given beside --file override
// the file (thresholds add to its list).
type loadFile struct {
	scenario.Config `yaml:",inline"`
	Out             string `yaml:"out"`
	Manifest        string `yaml:"manifest"`
	Procs           int    `yaml:"procs"`
	// Events are timed faults ("30s kill node=2"), as --event.
	Events []string `yaml:"events"`
	// RecoverySLO is the p99 the run must come back under after each
	// event (0: scenario.DefaultRecoverySLO).
	RecoverySLO time.Duration `yaml:"recovery_slo"`
}

// defaultProcs: one core keeps the generator's CPU per request lowest (no
// hand-offs between threads) and still makes tens of thousands of requests
// per second, far more than a Keycloak sharing the box serves.
const defaultProcs = 1

// maxProcs bounds --procs (GOMAXPROCS).
const maxProcs = 4096

func defaultLoadFile() loadFile {
	f := loadFile{Procs: defaultProcs}
	f.ApplyDefaults()
	return f
}

// register binds the flags to f, with f's current values as defaults, so
// that registering over a decoded file lets flags override it.
func (f *loadFile) RegisterFlags(fs *flag.FlagSet) {
	c := &f.Config
	fs.StringVar(&c.Scenario, "scenario", c.Scenario, "`NAME` of the workload (see kcbench scenarios)")
	fs.StringVar(&c.Executor, "executor", c.Executor, "`NAME`: constant-vus, ramping-vus, per-vu-iterations (closed model); constant-arrival-rate, ramping-arrival-rate (open model)")
	fs.IntVar(&c.VUs, "vus", c.VUs, "`N` virtual users (closed model), or VUs allocated up front (open model)")
	fs.IntVar(&c.MaxVUs, "max-vus", c.MaxVUs, "`N`: open model, allocate VUs up to N when none is free, then drop arrivals (0: --vus)")
	fs.IntVar(&c.StartVUs, "start-vus", c.StartVUs, "`N` VUs at the start of ramping-vus")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "`R` iterations per second (constant-arrival-rate)")
	fs.Float64Var(&c.StartRate, "start-rate", c.StartRate, "`R` iterations per second at the start of ramping-arrival-rate")
	fs.IntVar(&c.Iterations, "iterations", c.Iterations, "`N` iterations per VU (per-vu-iterations)")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "measured time, after the warm-up (per-vu-iterations: the longest it may take)")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "warm-up whose numbers are discarded: before --duration, or the first part of --stages")
	fs.DurationVar(&c.GracefulStop, "graceful-stop", c.GracefulStop, "how long iterations running at the end may finish (0: the default)")
	fs.Var(&c.Stages, "stages", "ramping stages `DUR:TARGET,…`, e.g. '10s:50,30s:50' (target VUs or iterations/s)")
	fs.Var((*listFlag)(&c.Thresholds), "threshold", "pass/fail `EXPR`, repeatable: [op:]p95<500ms, errors<1%, rate>100 (exit 3 when one fails)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "HTTP request timeout")
	fs.DurationVar(&c.CPUBaseline, "cpu-baseline", c.CPUBaseline, "measure the server's idle CPU this long before the run and report CPU per operation net of it too (for low rates)")
	fs.Float64Var(&c.TenantSkew, "tenant-skew", c.TenantSkew, "zipf exponent `S` of the tenant choice (0: uniform; 1: tenant k gets 1/k of tenant 1's traffic)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "`N`: seed of the VUs' random choices")
	fs.Var((*mixFlag)(&c.Mix), "mix", "weights of the mix scenario `NAME=W,…` (default "+scenario.MixString(scenario.DefaultMix())+")")
	fs.IntVar(&c.SessionsPerVU, "sessions-per-vu", c.SessionsPerVU, fmt.Sprintf("`N` sessions each refresh VU keeps (0: %d)", scenario.DefaultSessionsPerVU))
	fs.IntVar(&c.RefreshesPerSession, "refreshes-per-session", c.RefreshesPerSession, "`N` refreshes before a session is replaced by a new login (0: no limit)")
	fs.DurationVar(&c.JourneyThink, "journey-think", c.JourneyThink, fmt.Sprintf("user-journey: mean think time before a login (0: %v)", scenario.DefaultThink))
	fs.DurationVar(&c.JourneyUserinfo, "journey-userinfo-every", c.JourneyUserinfo, fmt.Sprintf("user-journey: userinfo interval (0: %v)", scenario.DefaultUserinfoEvery))
	fs.DurationVar(&c.JourneyLifetime, "journey-token-lifetime", c.JourneyLifetime, "user-journey: plan refreshes and sessions with this token lifetime when shorter than the tokens' (0: the tokens')")
	fs.StringVar(&c.Realm, "realm", c.Realm, "without a manifest: the realm")
	fs.StringVar(&c.ClientID, "client-id", c.ClientID, "without a manifest: the client for grants and the login form")
	fs.StringVar(&c.ClientSecret, "client-secret", c.ClientSecret, "without a manifest: the client's secret (none for a public client)")
	fs.StringVar(&c.Username, "username", c.Username, "without a manifest: the user")
	fs.StringVar(&c.Password, "password", c.Password, "without a manifest: the user's password")
	fs.StringVar(&c.RedirectURI, "redirect-uri", c.RedirectURI, "without a manifest: the login form's redirect URI (default "+dataset.RedirectURI+")")
	fs.StringVar(&f.Out, "out", f.Out, "`DIR` for summary.json, timeline.csv and one HDR log per operation (<op>.hlog)")
	fs.StringVar(&f.Manifest, "manifest", f.Manifest, "dataset manifest `FILE` (default: the local stack's dataset.json)")
	fs.IntVar(&f.Procs, "procs", f.Procs, "`N` CPU cores the load generator may use (GOMAXPROCS; 0: all)")
	fs.Var((*listFlag)(&f.Events), "event", eventHelp)
	fs.DurationVar(&f.RecoverySLO, "recovery-slo", f.RecoverySLO, fmt.Sprintf("with --event: the p99 the run must come back under (and stay under for %v) after each event (0: %v)", results.RecoveryHold, scenario.DefaultRecoverySLO))
}

// validate reports every problem at once.
func (f *loadFile) validate() error {
	errs := []error{f.Config.Validate()}
	if f.Procs < 0 || f.Procs > maxProcs {
		errs = append(errs, fmt.Errorf("procs: %d: must be between 0 and %d", f.Procs, maxProcs))
	}
	for _, ev := range f.Events {
		if _, err := stack.ParseFault(ev); err != nil {
			errs = append(errs, fmt.Errorf("event: %w", err))
		}
	}
	if f.RecoverySLO < 0 {
		errs = append(errs, fmt.Errorf("recovery slo: %v: must be positive (0: %v)", f.RecoverySLO, scenario.DefaultRecoverySLO))
	}
	if f.Realm != "" && f.Manifest != "" {
		errs = append(errs, errors.New("realm and manifest exclude each other"))
	}
	return errors.Join(errs...)
}

// mixFlag reads mix weights.
type mixFlag map[string]int

func (m *mixFlag) String() string {
	if m == nil {
		return ""
	}
	return scenario.MixString(*m)
}

func (m *mixFlag) Set(v string) error {
	w, err := scenario.ParseMix(v)
	if err != nil {
		return err
	}
	*m = w
	return nil
}

// readLoadFile decodes a YAML run file strictly (unknown keys are errors)
// over the defaults.
func readLoadFile(path string) (loadFile, error) {
	f := loadFile{Procs: defaultProcs}
	r, err := os.Open(path)
	if err != nil {
		return f, err
	}
	defer r.Close()
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return f, fmt.Errorf("%s is empty", path)
		}
		return f, fmt.Errorf("%s: %w", path, err)
	}
	f.ApplyDefaults()
	return f, nil
}

const loadSynopsis = `load --scenario NAME [--executor E] [--vus N | --rate R | --stages …] [--duration D] [--warmup D] [flags]
       kcbench load --file run.yaml [flags]

Runs a workload against the local stack (or --target) with users and clients
from the seeded dataset (--manifest, default the stack's dataset.json), or
from --realm --client-id --username --password. Prints a summary on stdout,
progress on stderr, and with --out writes summary.json, timeline.csv and
<op>.hlog files. Server CPU per successful iteration is measured from
/proc for the local stack, or from --management-url's /metrics.
Exit code 3 when a --threshold fails, 5 when the target died, was
unreachable or failed every iteration (after the results of what ran are
written; --keep-going runs on and exits 0 instead).

--event "AT ACTION [node=N]" acts on the local stack during the run
(kill, stop, start, restart a node; add-node, remove-node behind the
balancer; db-restart) and stamps it in summary.json's events with the
recovery measured after it. A node an event took down is not "the target
died"; a run with events does not stop when every connection is refused.`

func cmdLoad(ctx context.Context, e *env, args []string) error {
	cfg := defaultLoadFile()
	var file string
	var w stack.Where
	var tf kc.TargetFlags
	var af load.AgentFlags
	var df report.DashboardFlags
	var mf metrics.Flags
	var quiet, keepGoing bool
	newFS := func(f *loadFile) *flag.FlagSet {
		fs := newFlags(e, "load", loadSynopsis)
		f.RegisterFlags(fs)
		fs.StringVar(&file, "file", file, "YAML `FILE` with the run's settings (keys: the flag names with _ for -)")
		fs.BoolVar(&quiet, "quiet", quiet, "no progress line on stderr")
		fs.BoolVar(&keepGoing, "keep-going", keepGoing, "when the target dies or refuses every connection, run on to the end and exit 0 (or 3), e.g. for a deliberate restart; without it the run stops and exits 5")
		w.RegisterFlags(fs)
		tf.RegisterFlags(fs)
		af.RegisterFlags(fs)
		df.RegisterFlags(fs)
		mf.RegisterFlags(fs)
		return fs
	}
	fs := newFS(&cfg)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if file != "" {
		fc, err := readLoadFile(file)
		if err != nil {
			return usagef("--file: %v", err)
		}
		cfg = fc
		fs = newFS(&cfg)
		if err := parse(fs, args, 0); err != nil { // flags override the file
			return err
		}
	}
	if err := cfg.validate(); err != nil {
		return cliutil.Usage(flagNames(fs, err))
	}
	if err := df.Check(); err != nil {
		return err
	}
	seg, startAt, err := af.Resolve(e.getenv, time.Now())
	if err != nil {
		return cliutil.Usage(err)
	}
	if _, err := cfg.Config.Split(seg); err != nil {
		return cliutil.Usage(err)
	}
	if err := mf.Check(); err != nil {
		return err
	}
	if af.Emit && cfg.Out == "" {
		return usagef("--emit-results needs --out")
	}
	if cfg.Out != "" {
		if err := fileutil.CheckWritableDir(cfg.Out); err != nil {
			return usagef("--out: %v", err)
		}
	}
	tg, st, manifestPath, err := loadTarget(e, &cfg, &tf, &w)
	if err != nil {
		return err
	}
	in := scenario.RunInput{Target: tg, Config: cfg.Config, KeepGoing: keepGoing, RequireSuccess: true, Segment: seg, StartAt: startAt, RecoverySLO: cfg.RecoverySLO}
	// params describe the run's setting in summary.json, as other
	// results' params do.
	params := map[string]string{"target": "external", "machine_cores": fmt.Sprint(runtime.NumCPU())}
	load.AgentParams(params, seg, startAt)
	if in.Events, err = eventsFor(e, cfg.Events, st, cfg.Total()); err != nil {
		return err
	}
	if st != nil {
		in.Alive = st.Watch().Check
		params["target"], params["keycloak_version"] = "local", st.State().Options.Version
		if h, err := st.Heap(); err == nil {
			params["heap"] = h.String()
			e.logf("load: Keycloak heap %s", h)
		}
		for k, v := range st.LatencyParams() {
			params[k] = v
		}
	}
	desc := "realm " + cfg.Realm
	if cfg.Realm == "" {
		m, err := dataset.ReadManifest(manifestPath)
		if err != nil {
			return err
		}
		in.Manifest = m
		params["password_policy"], params["password_salts"] = m.Spec.Policy.String(), cmp.Or(m.Salts, "unknown")
		desc = fmt.Sprintf("dataset %s: %d tenants (%s mode), %s", manifestPath, m.Tenants(), m.Spec.Mode, skewDesc(cfg.TenantSkew))
	}
	// Check the scenario against the users and clients before starting.
	if _, err := scenario.ByName(cfg.Scenario, scenario.ProbeEnv(tg, in.Manifest, cfg.Config)); err != nil {
		return cliutil.Usage(err)
	}
	if cfg.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Procs))
	}
	hook, stopMetrics, err := mf.Start(e.logf, seg)
	if err != nil {
		return err
	}
	defer stopMetrics()
	in.IntervalHook = hook
	prog := progress.NewLoad(e.stderr, quiet)
	in.Progress = prog.Update
	live, err := df.Start(e.logf, "load "+cfg.Scenario)
	if err != nil {
		return err
	}
	if live != nil {
		total := cfg.Config.Total()
		in.Progress = func(p load.Progress) {
			prog.Update(p)
			live.Add(liveSample(cfg.Scenario, total, p))
		}
		defer report.FinishLive(live, "")
	}

	if !seg.Whole() {
		share, _ := cfg.Config.Split(seg)
		desc += fmt.Sprintf("; agent %s: %s", seg, share.Describe())
	}
	e.logf("load: %s, against %s; %s", cfg.Describe(), tg.BaseURL, desc)
	start := time.Now()
	res, runErr := scenario.Run(ctx, in)
	prog.Done()
	if res == nil {
		return runErr // nothing ran (e.g. a VU could not log in)
	}
	e.logf("load: done in %s", time.Since(start).Round(time.Millisecond))
	if err := load.WriteSummary(e.stdout, res.Stats); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	if err := res.CPU.Write(e.stdout); err != nil {
		return err
	}
	if res.DB != nil {
		if err := res.DB.Write(e.stdout); err != nil {
			return err
		}
		if res.DB.Available {
			params["pg_durable"] = strconv.FormatBool(res.DB.Durable)
		}
	}
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return err
		}
		res.Params = params
		if err := res.WriteDir(cfg.Out); err != nil {
			return err
		}
		e.logf("load: results in %s", cfg.Out)
		if af.Emit {
			if err := load.EmitResults(e.stdout, cfg.Out, seg); err != nil {
				return err
			}
		}
	}
	var down *scenario.DownError
	if errors.As(runErr, &down) {
		sep := ": "
		if down.At > 0 {
			sep = " " // "target down 42 s into the run: …"
		}
		return codedError{code: exitTargetDown, err: fmt.Errorf("target down%s%w", sep, down)}
	}
	if runErr != nil {
		return runErr
	}
	if res.ThresholdErr != nil {
		return codedError{code: exitThresholds, err: res.ThresholdErr}
	}
	return nil
}

// codedError gives an error its own exit code (cliutil.go exitCode reads it).
type codedError struct {
	code int
	err  error
}

func (x codedError) Error() string { return x.err.Error() }
func (x codedError) Unwrap() error { return x.err }
func (x codedError) ExitCode() int { return x.code }

func skewDesc(s float64) string {
	if s == 0 {
		return "tenants picked uniformly"
	}
	return fmt.Sprintf("tenants picked with zipf skew %g", s)
}

// loadTarget resolves the Keycloak and the default manifest path. An
// external --target needs admin credentials only for admin-api.
func loadTarget(e *env, c *loadFile, tf *kc.TargetFlags, w *stack.Where) (kc.Target, *stack.Stack, string, error) {
	if tf.Set() {
		tg, err := tf.LoadTarget()
		if err != nil {
			return tg, nil, "", err
		}
		if c.Realm == "" && c.Manifest == "" {
			return tg, nil, "", usagef("with --target, give --manifest or --realm")
		}
		return tg, nil, c.Manifest, nil
	}
	s, err := w.Attach(e.getenv, e.logf)
	if err != nil {
		return kc.Target{}, nil, "", err
	}
	m := c.Manifest
	if m == "" {
		m = filepath.Join(s.State().Dir, "dataset.json")
	}
	return s.Target(), s, m, nil
}

func cmdScenarios(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "scenarios", "scenarios")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, i := range scenario.List() {
		fmt.Fprintf(tw, "%s\t%s\n", i.Name, i.Description)
	}
	return tw.Flush()
}
