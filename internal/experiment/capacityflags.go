package experiment

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// CapacitySynopsis is the usage line of kcbench capacity (its help page is cmd/kcbench/help).
const CapacitySynopsis = `capacity --scenario NAME [--slo 'p99<500ms,errors<0.1%'] [--precision PCT] [--out DIR] [flags]
       kcbench capacity --scenario NAME --search linear [--start-rate R] [--step S] [--resolution r] [flags]
       kcbench capacity --scenario NAME --kc-version 26.4.7,26.7.3 [dataset flags] [flags]
       kcbench capacity --scenario NAME --segment I/N --start-at TIME --max-rate M [--step S] [flags]`

// CapacityFlags are kcbench capacity's settings.
type CapacityFlags struct {
	Scen         scenario.Config
	SLO          string
	opts         capacity.Options
	minAchPct    float64
	maxDropPct   float64
	maxVUs       int
	Out          string
	Manifest     string
	Repeats      int
	Restart      bool
	Procs        int
	Quiet        bool
	KeepSessions bool
	Versions     string
	Heap         string
	PGVersion    string
	DB           string
	Top          stack.Topology
	grace        time.Duration
	specFlagsSet []string
	mode         string
	precisionPct float64
	set          map[string]bool // flags given on the command line
	// Segment and StartAt make the search an agent's share of a split
	// search (load.AgentFlags resolves them; set them before Validate).
	Segment load.Segment
	StartAt time.Time
	gap     time.Duration
}

// RegisterFlags adds the flags of the search, its workload and a version
// matrix.
func (f *CapacityFlags) RegisterFlags(fs *flag.FlagSet) {
	c := &f.Scen
	fs.StringVar(&c.Scenario, "scenario", "", "`NAME` of the workload (see kcbench scenarios), mix included")
	fs.StringVar(&f.SLO, "slo", capacity.DefaultSLOs, "SLOs every passing step meets, `LIST` of [op:]metric<value: p50…p99.9, max, avg (latency), errors (rate)")
	fs.StringVar(&f.mode, "search", "", "`KIND` of search: adaptive (default) or linear (default with --step or --resolution)")
	fs.Float64Var(&f.precisionPct, "precision", 100*capacity.DefaultPrecision, "`PCT`: adaptive, the answer is known within PCT% of it")
	fs.Float64Var(&f.opts.Cores, "cores", 0, "`N`: adaptive, the server's cores for the CPU-bound prediction (default: the local stack's CPU; unknown for --target)")
	cliutil.Renamed(fs, "start", "start-rate")
	fs.Float64Var(&f.opts.Start, "start-rate", 0, fmt.Sprintf("`R`: first rate, iterations per second: adaptive, the first probe's (default %g); linear, the first step's and the warm-up's (default %g)",
		capacity.DefaultAdaptiveStart, capacity.DefaultStart))
	fs.Float64Var(&f.opts.Step, "step", 0, fmt.Sprintf("`S`: linear, the rate rises by S per step until an SLO fails (default %g)", capacity.DefaultStep))
	fs.DurationVar(&f.opts.StepDuration, "step-duration", 0, fmt.Sprintf("length of each judged step (adaptive default: from the rate and the SLOs, %s–%s, and with it set every step is as long as a confirming one, so the bracket bisects to the precision itself; linear default %s)",
		capacity.DefaultMinStepDuration, capacity.DefaultMaxStepDuration, capacity.DefaultStepDuration))
	fs.DurationVar(&f.opts.Warmup, "warmup", 0, fmt.Sprintf("discarded warm-up at --start-rate before the first step (adaptive default: none, the probes warm up; linear default %s)", capacity.DefaultWarmup))
	fs.Float64Var(&f.opts.Resolution, "resolution", 0, "`r`: linear, the binary search stops when the limit is known within r/s (default step/10)")
	fs.Float64Var(&f.opts.MaxRate, "max-rate", 0, "`M`: never ask for more than M/s; reaching it ends the search as capped (0: no cap)")
	fs.Int64Var(&f.opts.MinOK, "min-ok", capacity.DefaultMinOK, "`N` successful iterations a passing step needs at least")
	fs.Float64Var(&f.minAchPct, "min-achieved", 100*results.DefaultMinAchieved, "`PCT` of the asked rate a passing step achieves")
	fs.Float64Var(&f.maxDropPct, "max-dropped", 100*capacity.DefaultMaxDropped, "`PCT` of arrivals a passing step must drop fewer than")
	fs.DurationVar(&f.opts.Pause, "pause", capacity.DefaultPause, "pause after a failed step, for the server to drain its queue (0: none)")
	fs.IntVar(&f.maxVUs, "max-vus", 0, "`N` VUs at most per step (0: 2 × rate × the largest latency SLO, + 10)")
	fs.DurationVar(&f.grace, "graceful-stop", scenario.CapacityGrace, "how long iterations running at the end of a step may finish (at least 4 × the latency SLO)")
	fs.DurationVar(&c.Timeout, "timeout", load.DefaultHTTPTimeout, "HTTP request timeout")
	fs.Float64Var(&c.TenantSkew, "tenant-skew", 0, "zipf exponent `S` of the tenant choice (0: uniform; 1: tenant k gets 1/k of tenant 1's traffic)")
	fs.StringVar(&c.ConnPolicy, "conn-policy", c.ConnPolicy, "how the VUs use connections: reuse (kept alive, shared), per-vu (each VU its own, kept), per-iteration (new ones, and a TLS handshake, every iteration: the sizing guide's client-credentials setting) (default per-iteration for client-credentials, reuse for the others)")
	fs.BoolVar(&c.TLSResumption, "tls-resumption", c.TLSResumption, "a new connection resumes an earlier TLS session (TLS 1.3 PSK) instead of a full handshake")
	fs.BoolVar(&c.SpreadClients, "spread-clients", c.SpreadClients, "each grant uses one of its tenant's confidential clients at random, not the first (many clients in use at once; seed --clients N)")
	fs.Var((*MixFlag)(&c.Mix), "mix", "weights of the mix scenario `NAME=W,…` (default "+scenario.MixString(scenario.DefaultMix())+")")
	fs.IntVar(&c.SessionsPerVU, "sessions-per-vu", 0, fmt.Sprintf("refresh: `N` sessions per VU allocated up front, one pool logged in before the clock starts (0: %d)", scenario.DefaultSessionsPerVU))
	fs.Float64Var(&c.AdminWritePct, "admin-write-pct", 0, "admin-write: `PCT` of the iterations that write; the others read (0: 100)")
	fs.Float64Var(&c.BrokerFirstPct, "broker-first-pct", 0, "broker-login: `PCT` of the iterations that are a first visit (the linked user deleted, then made again by first-broker-login); the others log a linked user in (default 0)")
	fs.IntVar(&c.RefreshesPerSession, "refreshes-per-session", 0, "`N` refreshes before a session is replaced by a new login (0: no limit)")
	registerSingle(fs, c)
	fs.StringVar(&f.Manifest, "manifest", "", "dataset manifest `FILE` (default: the local stack's dataset.json; with --kc-version: the dataset to seed)")
	fs.StringVar(&f.Out, "out", "", "`DIR` for capacity.json and steps.csv (default results/capacity-<scenario>-<time>)")
	fs.IntVar(&f.Repeats, "repeats", 1, "`N` searches in a row (out/repeat-<i>/; each one's rate, their mean and spread printed and in out/repeats.json), for the run-to-run spread kcbench gate uses")
	fs.BoolVar(&f.Restart, "restart", false, "restart Keycloak of the local stack before each search, so that every repeat runs on a JVM of its own (the spread then includes the difference between boots: on this project's 2-core machine argon2 cost 28–40 CPU-ms a login on some boots and 61–67 on others); each repeat's boot is in its capacity.json")
	fs.IntVar(&f.Procs, "procs", DefaultProcs, "`N` CPU cores the load generator may use (GOMAXPROCS; 0: all)")
	fs.BoolVar(&f.Quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&f.KeepSessions, "keep-sessions", false, "on the local stack, keep the user sessions earlier runs left (default: each search ends them first, and a password-grant or login-form search ends them before every step too, so that each starts from none)")
	fs.StringVar(&f.Versions, "kc-version", "", "version matrix: `LIST` of Keycloak 26.x versions, each on a fresh local stack")
	fs.StringVar(&f.Heap, "heap", "", "version matrix: JVM heap of each stack (e.g. 1g; default Keycloak's own)")
	fs.StringVar(&f.PGVersion, "pg-version", stack.DefaultPGVersion, "version matrix: PostgreSQL of each stack")
	fs.StringVar(&f.DB, "db", "", "version matrix: database of each stack, postgres (default) or mariadb")
	fs.DurationVar(&f.gap, "step-gap", 0, fmt.Sprintf("split search (--segment): time between one step's end and the next one's start (default: the graceful stop + --pause + %s to set up the next step)", DefaultAgentSetup))
	f.Top.RegisterFlags(fs)
}

// search options from the flags; checked by validate.
func (f *CapacityFlags) searchOptions() (capacity.Options, error) {
	o := f.opts
	slos, err := capacity.ParseSLOs(f.SLO)
	if err != nil {
		return o, fmt.Errorf("--slo: %w", err)
	}
	o.SLOs = slos
	o.MinAchieved, o.MaxDropped = f.minAchPct/100, f.maxDropPct/100
	switch f.mode {
	case "":
		o.Adaptive = f.Segment.Whole() && !f.set["step"] && !f.set["resolution"]
	case results.ModeAdaptive:
		if !f.Segment.Whole() {
			return o, fmt.Errorf("--search adaptive with --segment: %w", capacity.ErrAdaptiveSchedule)
		}
		o.Adaptive = true
		if f.set["step"] || f.set["resolution"] {
			return o, errors.New("--step and --resolution apply to --search linear")
		}
	case results.ModeLinear:
	default:
		return o, fmt.Errorf("--search %q: must be %s or %s", f.mode, results.ModeAdaptive, results.ModeLinear)
	}
	if o.Adaptive {
		if !(f.precisionPct > 0 && f.precisionPct <= maxPrecisionPct) {
			return o, fmt.Errorf("--precision %v: must be a percentage above 0 and at most %v (1 for 1%%)", f.precisionPct, maxPrecisionPct)
		}
		o.Precision = f.precisionPct / 100
	} else if f.set["precision"] || f.set["cores"] {
		return o, errors.New("--precision and --cores apply to the adaptive search")
	}
	for name, v := range map[string]float64{"start-rate": o.Start, "step": o.Step, "step-duration": o.StepDuration.Seconds(), "resolution": o.Resolution} {
		if f.set[name] && v <= 0 {
			return o, fmt.Errorf("--%s %v: must be positive (leave it out for the default)", name, v)
		}
	}
	// Flags given are taken as given (0 is not "the default" then): no
	// warm-up and no pause when 0.
	if f.set["warmup"] && o.Warmup == 0 {
		o.Warmup = -1
	}
	if f.set["pause"] && o.Pause == 0 {
		o.Pause = -1
	}
	o = o.WithDefaults()
	return o, o.Validate()
}

// maxPrecisionPct bounds --precision: an answer known within more than
// half of itself is no answer (capacity.Options.Precision ≤ 0.5).
const maxPrecisionPct = 50

// maxRepeats bounds --repeats (as experiments' repeats).
const maxRepeats = 100

func (f *CapacityFlags) validate() error {
	var errs []error
	if _, err := f.searchOptions(); err != nil {
		errs = append(errs, err)
	}
	if o, _ := f.searchOptions(); o.Start > 0 && o.Start <= capacity.MaxRate && f.maxVUs >= 0 && f.maxVUs <= scenario.MaxVUs {
		c := (&Search{Scenario: f.Scen, MaxVUs: f.maxVUs, Grace: f.grace}).Stepper(kc.Target{}, nil).StepConfig(o.Start, time.Second)
		if err := c.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, f.validateAgent()...)
	if f.Repeats < 1 || f.Repeats > maxRepeats {
		errs = append(errs, fmt.Errorf("--repeats %d: must be between 1 and %d", f.Repeats, maxRepeats))
	}
	if f.Procs < 0 || f.Procs > MaxProcs {
		errs = append(errs, fmt.Errorf("--procs %d: must be between 0 and %d", f.Procs, MaxProcs))
	}
	if f.maxVUs < 0 || f.maxVUs > scenario.MaxVUs {
		errs = append(errs, fmt.Errorf("--max-vus %d: must be between 0 and %d", f.maxVUs, scenario.MaxVUs))
	}
	if f.Scen.Realm != "" && f.Manifest != "" {
		errs = append(errs, errors.New("--realm and --manifest exclude each other"))
	}
	if f.Versions == "" && len(f.specFlagsSet) > 0 {
		errs = append(errs, fmt.Errorf("dataset flags (%s) apply with --kc-version only: without it the dataset is the stack's", strings.Join(f.specFlagsSet, ", ")))
	}
	if f.Versions != "" {
		if f.Scen.Realm != "" {
			errs = append(errs, errors.New("--kc-version seeds a dataset on each stack: --realm does not apply"))
		}
		if f.Repeats > 1 {
			errs = append(errs, errors.New("--repeats applies without --kc-version only"))
		}
		if f.Restart {
			errs = append(errs, errors.New("--restart applies without --kc-version only (a version matrix restarts each stack before its search)"))
		}
		for _, v := range f.VersionList() {
			if err := (stack.KeycloakOptions{Version: v, Heap: f.Heap}).Validate(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// validateAgent checks the flags of a split search's agent (--segment):
// a fixed schedule from a common start to --max-rate.
func (f *CapacityFlags) validateAgent() []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if f.Segment.Whole() {
		if !f.StartAt.IsZero() {
			add("--start-at: applies to a split search (--segment or --segments)")
		}
		if f.set["step-gap"] {
			add("--step-gap: applies to a split search (--segment or --segments)")
		}
		return errs
	}
	if f.StartAt.IsZero() {
		add("--segment: a split search needs --start-at TIME, the same for every agent: its steps start at fixed instants from it")
	}
	if f.set["resolution"] {
		add("--resolution: a split search has no binary search: its answer is known within --step")
	}
	if f.opts.MaxRate <= 0 {
		add("--max-rate: a split search needs one: its agents run every step from --start-rate by --step up to it (only the merge sees where the SLOs failed)")
	} else if o, err := f.searchOptions(); err == nil {
		if _, err := o.Schedule(f.StartAt, 0); err != nil {
			errs = append(errs, err)
		}
	}
	if f.gap < 0 || f.gap > capacity.MaxWait {
		add("--step-gap %v: must be between 0 and %v", f.gap, capacity.MaxWait)
	}
	if f.Repeats > 1 {
		add("--repeats: applies without --segment only")
	}
	if f.Restart {
		add("--restart: applies without --segment only")
	}
	if f.Versions != "" {
		add("--kc-version: a version matrix starts local stacks: it cannot be split over agents")
	}
	return errs
}

// VersionList is --kc-version's versions, each once.
func (f *CapacityFlags) VersionList() []string {
	var vs []string
	for v := range strings.SplitSeq(f.Versions, ",") {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs
}

// Validate checks the flags after parsing fs; problems are usage errors
// named by flag.
func (f *CapacityFlags) Validate(fs *flag.FlagSet) error {
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	specNames := dataset.SpecFlagNames()
	fs.Visit(func(fl *flag.Flag) {
		if specNames[fl.Name] {
			f.specFlagsSet = append(f.specFlagsSet, "--"+fl.Name)
		}
	})
	if err := f.validate(); err != nil {
		return cliutil.Usage(cliutil.FlagNames(fs, err))
	}
	return nil
}

// CheckStack checks the flags that shape the stacks (targetSet: --target
// was given) and sets the default --out.
func (f *CapacityFlags) CheckStack(fs *flag.FlagSet, targetSet bool) error {
	if f.Versions != "" && targetSet {
		return cliutil.Usagef("--kc-version starts local stacks: --target does not apply")
	}
	if f.Restart && targetSet {
		return cliutil.Usagef("--restart restarts the local stack's Keycloak: --target does not apply")
	}
	if f.Versions == "" {
		if err := matrixOnly(fs); err != nil {
			return err
		}
	}
	if err := f.Top.CheckFlags(); err != nil {
		return err
	}
	if f.DB != "" && !slices.Contains(stack.DBKinds, f.DB) {
		return cliutil.Usagef("--db %q: want %s", f.DB, strings.Join(stack.DBKinds, " or "))
	}
	if f.Out == "" {
		f.Out = filepath.Join("results", fmt.Sprintf("capacity-%s-%s", f.Scen.Scenario, time.Now().Format("20060102-150405")))
	}
	if err := fileutil.CheckOutDir(f.Out); err != nil {
		return cliutil.Usagef("--out: %v", err)
	}
	return nil
}

// matrixOnly rejects the flags that shape the stacks a version matrix
// starts (topology, latency, heap, PostgreSQL), given without
// --kc-version: one search runs on the stack as it was started.
func matrixOnly(fs *flag.FlagSet) error {
	var names, what, up []string
	fs.Visit(func(fl *flag.Flag) {
		var w string
		switch fl.Name {
		case "nodes", "lb", "lb-sticky", "haproxy", "node-cpus":
			w = "topology"
		case "latency":
			w = "latency"
		case "heap":
			w = "heap"
		case "pg-version", "db":
			w = "database"
		default:
			return
		}
		names = append(names, "--"+fl.Name)
		if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			up = append(up, "--"+fl.Name)
		} else {
			up = append(up, "--"+fl.Name+" …")
		}
		if !slices.Contains(what, w) {
			what = append(what, w)
		}
	})
	if len(names) == 0 {
		return nil
	}
	verb := "applies"
	if len(names) > 1 {
		verb = "apply"
	}
	return cliutil.Usagef("%s %s to the stacks --kc-version starts; without it the search runs on the running stack (or --target), which keeps the %s it was started with: kcbench up %s",
		joinAnd(names), verb, joinAnd(what), strings.Join(up, " "))
}

// joinAnd joins "a", "b", "c" as "a, b and c".
func joinAnd(ss []string) string {
	if len(ss) < 2 {
		return strings.Join(ss, "")
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// Search is the search the flags ask for, logging through logf and
// writing its finding to stdout.
func (f *CapacityFlags) Search(logf func(string, ...any), stdout io.Writer) *Search {
	o, _ := f.searchOptions()
	return &Search{Scenario: f.Scen, Options: o, MaxVUs: f.maxVUs, Grace: f.grace, Quiet: f.Quiet, Logf: logf, Stdout: stdout, Gap: f.gap,
		KeepSessions: f.KeepSessions}
}

// CapacityTarget is what a search without --kc-version runs against.
type CapacityTarget struct {
	Target   kc.Target
	Manifest *dataset.Manifest // nil with --realm
	Params   map[string]string // capacity.json's params
	Local    *stack.Stack      // the local stack searched; nil for --target
}

// Target resolves the Keycloak searched (tf's external target, else the
// local stack), reads its dataset, records both in the params and checks
// the scenario against the users and clients.
func (f *CapacityFlags) Target(tf *kc.TargetFlags, w *stack.Where, getenv func(string) string, logf func(string, ...any)) (*CapacityTarget, error) {
	lf := RunFile{Config: f.Scen, Manifest: f.Manifest}
	tg, st, manifestPath, err := lf.Target(tf, w, getenv, logf)
	if err != nil {
		return nil, err
	}
	t := &CapacityTarget{Target: tg, Params: map[string]string{"machine_cores": fmt.Sprint(runtime.NumCPU()), "target": "external"}, Local: st}
	if f.Scen.Realm == "" {
		if t.Manifest, err = dataset.ReadManifest(manifestPath); err != nil {
			return nil, err
		}
		AddSpecParams(t.Params, t.Manifest.Spec)
	}
	if st == nil {
		externalVersion(tg, t.Params, logf)
	}
	if st != nil {
		t.Params["target"] = "local"
		t.Params["keycloak_version"] = st.State().Options.Version
		if h, err := st.Heap(); err == nil {
			t.Params["heap"] = h.String()
		}
		maps.Copy(t.Params, st.State().Topology.Params())
		maps.Copy(t.Params, st.RunParams())
		if db := st.State().Options.DB; db != "" {
			t.Params["db"] = db
		}
	}
	if _, err := scenario.ByName(f.Scen.Scenario, scenario.ProbeEnv(tg, t.Manifest, f.Scen)); err != nil {
		return nil, cliutil.Usage(err)
	}
	return t, nil
}

// RunRepeats runs the search n times in a row against t: into out, or
// with n > 1 into out/repeat-<i>/, and then prints their spread and
// writes it to out/repeats.json (results.CapacityRepeats). With restart, the
// local stack's Keycloak is restarted before each search (its boot goes
// into that search's result). It stops at the first search that fails;
// when one found no rate, the error wraps ErrNoRate.
func (s *Search) RunRepeats(ctx context.Context, t *CapacityTarget, out string, n int, restart bool) error {
	if restart {
		if t.Local == nil {
			return errors.New("capacity: --restart needs the local stack")
		}
		if err := t.Local.CheckRestartable("kcbench capacity --restart"); err != nil {
			return err
		}
	}
	s.Local = t.Local
	var found []*results.CapacityResult
	for i := 1; i <= n; i++ {
		dir, p := out, t.Params
		if n > 1 {
			dir = filepath.Join(out, fmt.Sprintf("repeat-%d", i))
			p = WithParam(t.Params, "repeat", fmt.Sprint(i))
			s.Logf("capacity: repeat %d of %d", i, n)
		}
		var boot *stack.BootResult
		if restart {
			b, err := t.Local.Restart(ctx)
			if err != nil {
				return fmt.Errorf("capacity: restart Keycloak before repeat %d (it may be left stopped: kcbench status, kcbench restart): %w", i, err)
			}
			boot = &b
			// The new JVM's pid: the server CPU and RSS are read from it.
			t.Target = t.Local.Target()
			p = WithParam(p, "restarted", "true")
			s.Logf("capacity: Keycloak restarted in %.1f s, RSS %d MiB at ready", b.Duration.Seconds(), b.RSS>>20)
		}
		r, err := s.Run(ctx, t.Target, t.Manifest, p, dir, boot)
		if r != nil {
			found = append(found, r)
		}
		if err != nil {
			return err
		}
	}
	if n > 1 {
		rep := results.NewCapacityRepeats(found)
		if err := rep.WriteText(s.Stdout); err != nil {
			return err
		}
		if err := fileutil.WriteJSON(filepath.Join(out, results.RepeatsFile), rep, 0o644); err != nil {
			return err
		}
	}
	for _, r := range found {
		if !r.Found {
			return fmt.Errorf("capacity: %w: %s", ErrNoRate, r.Conclusion)
		}
	}
	return nil
}

// ErrNoRate is wrapped by the error of a search, or a version of a
// matrix, that found no rate meeting the SLOs (kcbench exits 3).
var ErrNoRate = errors.New("no rate met the SLOs")

// RunMatrix searches each version of --kc-version on a fresh local stack
// seeded with the same dataset (the dataset flags', or --manifest's spec;
// RunMatrix). A version that found no rate makes the error wrap
// ErrNoRate.
func (f *CapacityFlags) RunMatrix(ctx context.Context, s *Search, w *stack.Where, sf *dataset.SpecFlags, getenv func(string) string) error {
	spec, err := sf.Spec()
	if err != nil {
		return err
	}
	if f.Manifest != "" {
		m, err := dataset.ReadManifest(f.Manifest)
		if err != nil {
			return err
		}
		spec = m.Spec
	}
	dirs, err := w.Dirs(getenv)
	if err != nil {
		return err
	}
	mx, err := RunMatrix(ctx, MatrixOptions{Search: s, Versions: f.VersionList(), Dirs: dirs,
		Spec: spec, Heap: f.Heap, Topology: f.Top, PGVersion: f.PGVersion, DB: f.DB, Out: f.Out, SLOText: f.SLO})
	if mx == nil {
		return err
	}
	fmt.Fprintf(s.Stdout, "results: %s (kcbench report %s draws the charts)\n", f.Out, f.Out)
	if err != nil {
		return err
	}
	failed, notFound := mx.Unmeasured()
	if len(failed) > 0 {
		return fmt.Errorf("matrix: %s could not be measured (see above)", strings.Join(failed, ", "))
	}
	if len(notFound) > 0 {
		return fmt.Errorf("matrix: %w on %s", ErrNoRate, strings.Join(notFound, ", "))
	}
	return nil
}
