package experiment

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// RunFile is a load run as flags or a YAML file (--file) describe it:
// the workload (scenario.Config; YAML keys are the flag names with
// underscores) and where results go. Flags given beside --file override
// the file (thresholds add to its list).
type RunFile struct {
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

// DefaultProcs: one core keeps the generator's CPU per request lowest (no
// hand-offs between threads) and still makes tens of thousands of requests
// per second, far more than a Keycloak sharing the box serves.
const DefaultProcs = 1

// MaxProcs bounds --procs (GOMAXPROCS).
const MaxProcs = 4096

// DefaultRunFile is a run file of defaults only.
func DefaultRunFile() RunFile {
	f := RunFile{Procs: DefaultProcs}
	f.ApplyDefaults()
	return f
}

// RegisterFlags binds the flags to f, with f's current values as defaults, so
// that registering over a decoded file lets flags override it.
func (f *RunFile) RegisterFlags(fs *flag.FlagSet) {
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
	fs.Var((*cliutil.List)(&c.Thresholds), "threshold", "pass/fail `EXPR`, repeatable: [op:]p95<500ms, errors<1%, rate>100 (exit 3 when one fails)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "HTTP request timeout")
	fs.DurationVar(&c.CPUBaseline, "cpu-baseline", c.CPUBaseline, "measure the server's idle CPU this long before the run and report CPU per operation net of it too (for low rates)")
	fs.Float64Var(&c.TenantSkew, "tenant-skew", c.TenantSkew, "zipf exponent `S` of the tenant choice (0: uniform; 1: tenant k gets 1/k of tenant 1's traffic)")
	fs.StringVar(&c.ConnPolicy, "conn-policy", c.ConnPolicy, "how the VUs use connections: reuse (kept alive, shared), per-vu (each VU its own, kept), per-iteration (new ones, and a TLS handshake, every iteration: the sizing guide's client-credentials setting) (default per-iteration for client-credentials, reuse for the others)")
	fs.BoolVar(&c.TLSResumption, "tls-resumption", c.TLSResumption, "a new connection resumes an earlier TLS session (TLS 1.3 PSK) instead of a full handshake")
	fs.BoolVar(&c.SpreadClients, "spread-clients", c.SpreadClients, "each grant uses one of its tenant's confidential clients at random, not the first (many clients in use at once; seed --clients N)")
	fs.Uint64Var(&c.Seed, "random-seed", c.Seed, "`N`: seed of the VUs' random choices")
	cliutil.Renamed(fs, "seed", "random-seed")
	fs.Var((*MixFlag)(&c.Mix), "mix", "weights of the mix scenario `NAME=W,…` (default "+scenario.MixString(scenario.DefaultMix())+")")
	fs.IntVar(&c.SessionsPerVU, "sessions-per-vu", c.SessionsPerVU, fmt.Sprintf("refresh: `N` sessions per VU allocated up front, one pool logged in before the clock starts (0: %d)", scenario.DefaultSessionsPerVU))
	fs.Float64Var(&c.AdminWritePct, "admin-write-pct", c.AdminWritePct, "admin-write: `PCT` of the iterations that write; the others read (0: 100)")
	fs.Float64Var(&c.BrokerFirstPct, "broker-first-pct", c.BrokerFirstPct, "broker-login: `PCT` of the iterations that are a first visit (the linked user deleted, then made again by first-broker-login); the others log a linked user in (default 0)")
	fs.IntVar(&c.RefreshesPerSession, "refreshes-per-session", c.RefreshesPerSession, "`N` refreshes before a session is replaced by a new login (0: no limit)")
	fs.DurationVar(&c.JourneyThink, "journey-think", c.JourneyThink, fmt.Sprintf("user-journey: mean think time before a login (0: %v)", scenario.DefaultThink))
	fs.DurationVar(&c.JourneyUserinfo, "journey-userinfo-every", c.JourneyUserinfo, fmt.Sprintf("user-journey: userinfo interval (0: %v)", scenario.DefaultUserinfoEvery))
	fs.DurationVar(&c.JourneyLifetime, "journey-token-lifetime", c.JourneyLifetime, "user-journey: plan refreshes and sessions with this token lifetime when shorter than the tokens' (0: the tokens')")
	registerSingle(fs, c)
	fs.StringVar(&c.RedirectURI, "redirect-uri", c.RedirectURI, "without a manifest: the login form's redirect URI (default "+dataset.RedirectURI+")")
	fs.StringVar(&f.Out, "out", f.Out, "`DIR` for summary.json, timeline.csv and one HDR log per operation (<op>.hlog)")
	fs.StringVar(&f.Manifest, "manifest", f.Manifest, "dataset manifest `FILE` (default: the local stack's dataset.json)")
	fs.IntVar(&f.Procs, "procs", f.Procs, "`N` CPU cores the load generator may use (GOMAXPROCS; 0: all)")
	fs.Var((*cliutil.List)(&f.Events), "event", EventHelp)
	fs.DurationVar(&f.RecoverySLO, "recovery-slo", f.RecoverySLO, fmt.Sprintf("with --event: the p99 the run must come back under (and stay under for %v) after each event (0: %v)", results.RecoveryHold, scenario.DefaultRecoverySLO))
}

// Validate reports every problem at once.
func (f *RunFile) Validate() error {
	errs := []error{f.Config.Validate()}
	if f.Procs < 0 || f.Procs > MaxProcs {
		errs = append(errs, fmt.Errorf("procs: %d: must be between 0 and %d", f.Procs, MaxProcs))
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

// MixFlag reads mix weights.
type MixFlag map[string]int

func (m *MixFlag) String() string {
	if m == nil {
		return ""
	}
	return scenario.MixString(*m)
}

func (m *MixFlag) Set(v string) error {
	w, err := scenario.ParseMix(v)
	if err != nil {
		return err
	}
	*m = w
	return nil
}

// ReadRunFile decodes a YAML run file strictly (unknown keys are errors;
// a former key's error names the new one) over the defaults.
func ReadRunFile(path string) (RunFile, error) {
	f := RunFile{Procs: DefaultProcs}
	b, err := fileutil.ReadFile(path, fileutil.MaxConfigFile)
	if err != nil {
		return f, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return f, fmt.Errorf("%s is empty", path)
		}
		if rerr := renamedKey(b, runFileRenames); rerr != nil {
			return f, fmt.Errorf("%s: %w (kcbench help load)", path, rerr)
		}
		return f, fmt.Errorf("%s: %w", path, err)
	}
	f.ApplyDefaults()
	return f, nil
}

// LoadSynopsis is the usage line of kcbench load (its help page is cmd/kcbench/help).
const LoadSynopsis = `load --scenario NAME [--executor E] [--vus N | --rate R | --stages …] [--duration D] [--warmup D] [flags]
       kcbench load --file run.yaml [flags]`

// ReadSplitRunFile reads the run file of a load split over agents
// (kcbench k8s manifests): valid, and giving the last agent, whose share
// is the smallest, some load. Its errors are usage errors.
func ReadSplitRunFile(file string, agents int) (RunFile, error) {
	cfg, err := ReadRunFile(file)
	if err != nil {
		return cfg, cliutil.Usagef("--file: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, cliutil.Usagef("--file %s: %v", file, err)
	}
	if _, err := cfg.Config.Split(load.Segment{Index: agents - 1, Count: agents}); err != nil {
		return cfg, cliutil.Usagef("--file %s with --agents %d: %v", file, agents, err)
	}
	return cfg, nil
}

// registerSingle adds the flags naming the one realm, client and user of
// a run without a dataset manifest, with c's values as defaults.
func registerSingle(fs *flag.FlagSet, c *scenario.Config) {
	fs.StringVar(&c.Realm, "realm", c.Realm, "without a manifest: the realm")
	fs.StringVar(&c.ClientID, "client-id", c.ClientID, "without a manifest: the client for grants and the login form")
	fs.StringVar(&c.ClientSecret, "client-secret", c.ClientSecret, "without a manifest: the client's secret (none for a public client; ps shows it: prefer --client-secret-file)")
	fs.Var(secretFile{&c.ClientSecret}, "client-secret-file", "without a manifest: `FILE` holding the client's secret (instead of --client-secret)")
	fs.StringVar(&c.Username, "username", c.Username, "without a manifest: the user")
	fs.StringVar(&c.Password, "password", c.Password, "without a manifest: the user's password (ps shows it: prefer --password-file)")
	fs.Var(secretFile{&c.Password}, "password-file", "without a manifest: `FILE` holding the user's password (instead of --password)")
}

// secretFile is a flag naming a file whose content (fileutil.ReadSecret:
// bounded, regular files only, one trailing newline trimmed) sets dst, so
// that a secret need not be on the command line.
type secretFile struct{ dst *string }

func (s secretFile) String() string { return "" }

func (s secretFile) Set(path string) error {
	v, err := fileutil.ReadSecret(path)
	if err != nil {
		return err
	}
	*s.dst = v
	return nil
}
