package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/observe"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// MatrixFile is a version matrix's table as JSON, in its folder.
const MatrixFile = "matrix.json"

// Search is one capacity search's settings against a Keycloak, shared by
// kcbench capacity and its version matrix.
type Search struct {
	Scenario scenario.Config
	Options  capacity.Options // SLOs included
	MaxVUs   int              // 0: from the rate and the latency SLO
	Grace    time.Duration    // graceful stop of a step
	Quiet    bool             // no log line per step
	// Progress, when set, starts a progress display for a search: an
	// update function for the steps and a function ending it.
	Progress func() (update func(load.Progress), done func())
	Logf     func(format string, args ...any)
	Stdout   io.Writer // the steps table and the finding
	// Local, when set, is the local stack searched: each node's CPU,
	// requests from the balancer and throttled time over the search go
	// to nodes.json (for a cluster or a CPU quota).
	Local *stack.Stack
	// IntervalHook, when set, sees every interval of every step (live
	// metrics).
	IntervalHook func(load.Interval)
	// Gap, for a split search (RunAgent), is the time between one step's
	// end and the next one's start (0: AgentGap's default).
	Gap time.Duration
	// OnStep, when set, is told of each step as it begins (a live view).
	OnStep func(index int, st capacity.Step)
	// KeepSessions keeps the user sessions earlier runs left in a local
	// stack's realms; by default a search on the local stack (Local) ends
	// them first (sessionEnder), and a password-grant or login-form
	// search between its steps too.
	KeepSessions bool
}

// runStepper is the Stepper of a run with o's HTTP client and the
// progress display; done closes both.
func (f *Search) runStepper(tg kc.Target, m *dataset.Manifest, o capacity.Options) (sr *scenario.CapacityStepper, done func()) {
	sr = f.Stepper(tg, m)
	sr.HTTPClient = sr.NewHTTPClient(o)
	done = sr.HTTPClient.CloseIdleConnections
	if f.Progress != nil {
		update, end := f.Progress()
		sr.Progress = update
		done = func() { end(); sr.HTTPClient.CloseIdleConnections() }
	}
	return sr, done
}

// Stepper binds the search to a Keycloak.
func (f *Search) Stepper(tg kc.Target, m *dataset.Manifest) *scenario.CapacityStepper {
	version := ""
	if f.Local != nil {
		version = f.Local.State().Options.Version
	}
	return &scenario.CapacityStepper{Config: f.Scenario, Target: tg, Manifest: m, SLOs: f.Options.SLOs, MaxVUs: f.MaxVUs, Grace: f.Grace,
		IntervalHook: f.IntervalHook, RSS: func() (int64, error) { return stack.TargetRSS(tg) }, Prove: true, KeycloakVersion: version}
}

// Run runs one search against tg, prints its steps and conclusion, and
// writes its folder (also when it was interrupted or failed part way).
// boot, when set, is the server boot measured before the search.
func (f *Search) Run(ctx context.Context, tg kc.Target, m *dataset.Manifest, params map[string]string, dir string, boot *stack.BootResult) (*results.CapacityResult, error) {
	o := f.Options
	if f.Local != nil && o.Adaptive && o.Cores == 0 {
		o.Cores = f.Local.State().Topology.ServerCores(numCPU())
	}
	sr, done := f.runStepper(tg, m, o)
	defer done()
	sr.KeycloakVersion = cmp.Or(sr.KeycloakVersion, params["keycloak_version"])
	sr.EarlyEnd = o.WithDefaults().EarlyEnd
	o.BeforeStep, o.AfterStep = f.stepLogs()
	desc := f.Scenario.Scenario
	if f.Scenario.Scenario == results.ScenarioMix {
		desc += " (" + scenario.MixString(orDefaultMix(f.Scenario.Mix)) + ")"
	}
	f.Logf("capacity: %s against %s, SLOs %s; %s", desc, tg.BaseURL, results.FormatSLOs(o.SLOs), o.WithDefaults().Describe())
	if f.Local != nil && !f.KeepSessions {
		if err := f.endSessions(ctx, tg, m, &o); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	var before stack.NodeSamples
	var uptime time.Duration
	var podsWarning string
	if f.Local != nil {
		before = f.Local.SampleNodes(ctx)
		uptime = f.Local.Uptime()
	} else if pods, ok := externalPods(tg); ok {
		uptime, podsWarning = observe.Youngest(pods), observe.PodsWarning(pods)
	}
	r, err := capacity.Search(ctx, sr.Step, o)
	if r == nil {
		return nil, err
	}
	if uptime > 0 {
		r.ServerUptime = math.Round(uptime.Seconds())
		switch {
		case uptime < coldUptime && r.Found && boot != nil:
			r.Conclusion += fmt.Sprintf(". Keycloak was restarted %s before the search began: this is a just-booted JVM's answer, which goes on getting cheaper per operation for minutes",
				uptime.Round(time.Second))
		case uptime < coldUptime && r.Found:
			r.Conclusion += fmt.Sprintf(". Keycloak had been up only %s when the search began: a just-booted JVM goes on getting cheaper per operation for minutes, so a repeat may find more",
				uptime.Round(time.Second))
		}
	}
	if podsWarning != "" {
		r.Conclusion += ". Warning: " + podsWarning
	}
	if f.Local != nil {
		if werr := WriteNodeSamples(f.Logf, dir, f.Local.SampleNodes(ctx).Since(before)); werr != nil {
			return r, errors.Join(err, werr)
		}
	}
	f.describe(r, tg, params, boot)
	f.Logf("capacity: done in %s", time.Since(start).Round(time.Second))
	if werr := r.WriteDir(dir); werr != nil {
		return r, errors.Join(err, werr)
	}
	if perr := capacity.WriteText(f.Stdout, r); perr != nil {
		return r, errors.Join(err, perr)
	}
	fmt.Fprintf(f.Stdout, "results: %s\n", dir)
	return r, err
}

// stepLogs are the search's BeforeStep and AfterStep: a line before and
// after each step (unless Quiet), and OnStep.
func (f *Search) stepLogs() (func(int, capacity.Step), func(results.CapacityStep)) {
	before := func(i int, st capacity.Step) {
		if !f.Quiet {
			f.Logf("capacity: step %d (%s) %g/s for %s", i, st.Phase, st.Rate, st.Duration)
		}
		if f.OnStep != nil {
			f.OnStep(i, st)
		}
	}
	after := func(s results.CapacityStep) {
		if f.Quiet {
			return
		}
		f.Logf("capacity: step %d: achieved %.1f/s, p99 %s ms, errors %.2f%%, dropped %d, CPU %s ms/op: %s",
			s.Index, s.Achieved, results.FormatMs(s.P99), s.ErrorPct, s.Dropped, results.FormatOpt(s.CPUMsPerOp, 2), s.Verdict())
	}
	return before, after
}

// endSessions ends the sessions earlier runs left in the dataset's
// realms and compacts their tables, so that the search starts from none;
// for the workloads that make a session per iteration it has o end them
// before every step too.
func (f *Search) endSessions(ctx context.Context, tg kc.Target, m *dataset.Manifest, o *capacity.Options) error {
	if m != nil && m.Sessions != nil && m.Sessions.Any() {
		f.Logf("capacity: the dataset holds seeded sessions (%d online, %d offline): kept (ending the realms' sessions, logout-all, ends offline ones too)",
			m.Sessions.Online, m.Sessions.Offline)
		return nil
	}
	ender := newSessionEnder(tg, m, f.Scenario.Realm)
	n, err := ender.end(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		f.Logf("capacity: ended %d sessions earlier runs left, so that the search starts from none (--keep-sessions keeps them)", n)
	}
	if tg.DB != "" {
		if err := compactSessionTables(ctx, tg.DB); err != nil {
			f.Logf("capacity: the session tables were not compacted (the search goes on): %v", err)
		}
	}
	if endEachStep(f.Scenario.Scenario, len(ender.realms)) {
		f.Logf("capacity: each step starts from no user sessions too (those of the step before are ended between steps; --keep-sessions keeps them)")
		before := o.BeforeStep
		o.BeforeStep = func(i int, st capacity.Step) {
			if i > 0 {
				if _, err := ender.end(ctx); err != nil {
					f.Logf("%v", err)
				}
			}
			before(i, st)
		}
	}
	return nil
}

// describe records in r what was searched: the scenario, params (with
// the database's durability, the mix and the connection policy) and the
// boot before the search.
func (f *Search) describe(r *results.CapacityResult, tg kc.Target, params map[string]string, boot *stack.BootResult) {
	r.Scenario, r.Params = f.Scenario.Scenario, params
	for _, s := range r.Steps {
		if s.Database != nil && s.Database.Available {
			r.Params = WithParam(params, results.ParamPGDurable, strconv.FormatBool(s.Database.Durable))
			break
		}
	}
	if boot != nil {
		r.BootSeconds, r.RSSAtReadyBytes = boot.Duration.Seconds(), boot.RSS
	}
	if f.Scenario.Scenario == results.ScenarioMix {
		r.Params = WithParam(r.Params, "mix", scenario.MixString(orDefaultMix(f.Scenario.Mix)))
	}
	for k, v := range scenario.ConnParams(tg, f.Scenario) {
		r.Params = WithParam(r.Params, k, v)
	}
}

// coldUptime: a search on a server up for less is on a just-booted JVM,
// whose answer comes out lower than a warm one's
// (docs/results/capacity-search).
const coldUptime = time.Minute

// sessionEnder ends the user sessions in a dataset's realms (POST
// logout-all), so that a search starts from none and, for the workloads
// that make a session per iteration, each step does too. Each password
// grant or login makes a session, and as they pile up each costs more, so
// that searches in a row, and the later steps of one search, find lower
// limits (docs/results/capacity-search). Ending them is cheap.
type sessionEnder struct {
	admin  *kc.Admin
	realms []string
}

// newSessionEnder returns the ender of the dataset's realms (m's, or the
// run's realm without one); nil without admin credentials.
func newSessionEnder(tg kc.Target, m *dataset.Manifest, realm string) *sessionEnder {
	if tg.Admin.ClientID == "" && tg.Admin.Username == "" {
		return nil
	}
	e := &sessionEnder{admin: kc.NewAdmin(kc.NewFor(tg), tg.Admin)}
	if m == nil {
		e.realms = []string{realm}
		return e
	}
	seen := map[string]bool{}
	for i := 1; i <= m.Tenants(); i++ {
		if r := m.Tenant(i).Realm; !seen[r] {
			seen[r] = true
			e.realms = append(e.realms, r)
		}
	}
	return e
}

// end ends the sessions of every realm that has some and returns how
// many client sessions there were.
func (e *sessionEnder) end(ctx context.Context) (int64, error) {
	var ended atomic.Int64
	err := dataset.Parallel(ctx, len(e.realms), 8, func(ctx context.Context, k int) error {
		online, err := e.admin.ClientSessions(ctx, e.realms[k])
		if err != nil || online == 0 {
			return err
		}
		ended.Add(int64(online))
		return e.admin.LogoutAll(ctx, e.realms[k])
	})
	if err != nil {
		return 0, fmt.Errorf("capacity: ending user sessions (--keep-sessions keeps them): %w", err)
	}
	return ended.Load(), nil
}

// compactSessionTables rewrites the tables of the user sessions (VACUUM
// FULL: a lock held for the moment it takes before the search, no data
// changed). Sessions made and ended by earlier runs leave them bloated,
// and PostgreSQL's autovacuum, throttled, then spends a minute on them in
// the middle of a search, taking CPU from Keycloak and failing the steps
// it overlaps (docs/results/capacity-search).
func compactSessionTables(ctx context.Context, dsn kc.Secret) error {
	cfg, err := observe.PGConfig(dsn, "kcbench-capacity")
	if err != nil {
		return fmt.Errorf("capacity: compacting the session tables: %w", err)
	}
	// a lock another transaction holds is waited for 10 s at most
	cfg.RuntimeParams["lock_timeout"] = "10s"
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		defer conn.Close(context.WithoutCancel(ctx))
		_, err = conn.Exec(ctx, "VACUUM (FULL, ANALYZE) offline_user_session, offline_client_session")
	}
	if err != nil {
		return fmt.Errorf("capacity: compacting the session tables: %w", err)
	}
	return nil
}

// endEachStep: the workloads whose every iteration makes a user session
// and keeps none from step to step; their steps start from none too
// (datasets of up to maxEndRealms realms: two admin calls per realm and
// step).
func endEachStep(scenarioName string, realms int) bool {
	return (scenarioName == results.ScenarioPasswordGrant || scenarioName == results.ScenarioLoginForm) && realms <= maxEndRealms
}

const maxEndRealms = 50

// NodesFile holds what each node of a cluster (or a CPU-limited node) did
// over a capacity search.
const NodesFile = "nodes.json"

// WriteNodeSamples logs what each node did over a search (CPU, requests
// from the balancer, throttled time) and writes it to dir/nodes.json when
// the stack has several nodes or a CPU limit.
func WriteNodeSamples(logf func(string, ...any), dir string, d stack.NodeSamples) error {
	interesting := len(d.Nodes) > 1
	for _, n := range d.Nodes {
		interesting = interesting || n.Throttling != nil
	}
	if !interesting {
		return nil
	}
	for _, n := range d.Nodes {
		line := fmt.Sprintf("capacity: node %d: CPU %.1f s", n.Node, n.CPU.Seconds())
		if n.Requests != nil {
			line += fmt.Sprintf(", %d requests from the balancer", *n.Requests)
		}
		if t := n.Throttling; t != nil {
			line += fmt.Sprintf(", throttled %d of %d periods (%.1f s)", t.Throttled, t.Periods, t.Time.Seconds())
		}
		logf("%s, RSS %.0f MiB", line, float64(n.RSS)/(1<<20))
	}
	if d.BalancerCPU > 0 {
		logf("capacity: HAProxy CPU %.1f s (not in the server's CPU-ms/op)", d.BalancerCPU.Seconds())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return fileutil.WriteJSON(filepath.Join(dir, NodesFile), d, 0o644)
}

func orDefaultMix(m map[string]int) map[string]int {
	if len(m) == 0 {
		return scenario.DefaultMix()
	}
	return m
}

// WithParam returns a copy of m with k set to v.
func WithParam(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// AddSpecParams records a dataset spec in a result's params.
func AddSpecParams(p map[string]string, s dataset.Spec) {
	p["mode"] = string(s.Mode)
	p["tenants"] = fmt.Sprint(s.Tenants)
	p["users_per_tenant"] = fmt.Sprint(s.Content.Users)
	p["password_policy"] = s.Policy.String()
	p["password_salts"] = s.Salts()
	maps.Copy(p, ShapeParams(s.Content.Shape))
}

// MatrixRow is one version of a version matrix.
type MatrixRow struct {
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

// Matrix is matrix.json: one capacity search per Keycloak version.
type Matrix struct {
	Scenario   string       `json:"scenario"`
	SLOs       string       `json:"slos"`
	Dataset    dataset.Spec `json:"dataset"`
	CommonRate float64      `json:"common_rate,omitempty"` // the highest ramp rate every version passed
	Rows       []MatrixRow  `json:"rows"`
}

// MatrixOptions are a version matrix's settings.
type MatrixOptions struct {
	Search    *Search
	Versions  []string       // Keycloak versions, each on a fresh local stack
	Dirs      stack.Dirs     // where the stacks live
	Spec      dataset.Spec   // the dataset seeded into each
	Heap      string         // JVM heap of each stack ("": Keycloak's own)
	Topology  stack.Topology // nodes, balancer and CPU limits of each stack
	PGVersion string
	DB        string // database of each stack: "" (PostgreSQL) or mariadb
	Out       string // matrix.json, and a folder per version
	SLOText   string // the SLOs as the user wrote them, for the table ("": canonical)
}

// RunMatrix searches each version on a fresh local stack seeded with the
// same dataset, writes matrix.json into o.Out and prints one table. A
// version that could not be measured has its Error set; the error
// returned is the context's, or one writing the results.
func RunMatrix(ctx context.Context, o MatrixOptions) (*Matrix, error) {
	f, spec := o.Search, o.Spec
	mx := Matrix{Scenario: f.Scenario.Scenario, SLOs: cmp.Or(o.SLOText, results.FormatSLOs(f.Options.SLOs)), Dataset: spec}
	var found []*results.CapacityResult
	byVersion := map[string]*results.CapacityResult{}
	versions := o.Versions
	for i, v := range versions {
		if ctx.Err() != nil {
			break
		}
		f.Logf("matrix: version %d of %d: Keycloak %s", i+1, len(versions), v)
		dir := filepath.Join(o.Out, v)
		r, err := matrixVersion(ctx, o, v, dir)
		row := MatrixRow{Version: v}
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
				return nil, err
			}
			row.Error = err.Error()
			f.Logf("matrix: Keycloak %s failed: %v", v, err)
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
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	if err := fileutil.WriteFile(filepath.Join(o.Out, MatrixFile), 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(mx)
	}); err != nil {
		return nil, err
	}
	if err := mx.WriteText(f.Stdout); err != nil {
		return nil, err
	}
	return &mx, ctx.Err()
}

// Unmeasured lists the versions that could not be measured, and those
// where no rate met the SLOs.
func (mx *Matrix) Unmeasured() (failed, notFound []string) {
	for _, r := range mx.Rows {
		switch {
		case r.Error != "":
			failed = append(failed, r.Version)
		case !r.Found:
			notFound = append(notFound, r.Version)
		}
	}
	return failed, notFound
}

// matrixVersion starts a fresh stack of version v, seeds spec, restarts
// it (the boot measured), searches, writes dir and stops the stack.
func matrixVersion(ctx context.Context, o MatrixOptions, v, dir string) (r *results.CapacityResult, err error) {
	f, dirs, spec := o.Search, o.Dirs, o.Spec
	name := "capacity-" + strings.ReplaceAll(v, ".", "-")
	if old, err := stack.Attach(dirs, name); err == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		err := old.Down(cctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("stack %s left by an earlier run: %w", name, err)
		}
	}
	start := time.Now()
	st, err := stack.Start(ctx, stack.Config{Name: name, Dirs: dirs, Logf: f.Logf,
		Keycloak: stack.KeycloakOptions{Version: v, Heap: o.Heap, DB: o.DB}, Topology: o.Topology, PG: stack.PGOptions{Version: o.PGVersion}})
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		if derr := st.Down(cctx); derr != nil {
			err = errors.Join(err, fmt.Errorf("stop stack %s: %w", name, derr))
		}
	}()
	f.Logf("matrix: Keycloak %s up in %s", v, time.Since(start).Round(time.Second))
	tg := st.Target()
	manifestPath := st.DatasetManifest()
	db, err := st.DSN()
	if err != nil && !errors.Is(err, stack.ErrNotPostgres) {
		return nil, err
	}
	keys, err := dataset.KeyPoolIn(o.Dirs.Cache)
	if err != nil {
		return nil, err
	}
	sr, err := dataset.Seed(ctx, kc.NewAdmin(kc.NewFor(tg), tg.Admin), spec, dataset.SeedOptions{
		Strategy: dataset.Clone, Logf: f.Logf, ManifestPath: manifestPath, Target: tg.BaseURL, DB: db, DBKind: tg.DBKind, Keys: keys, LDAP: tg.LDAP,
		ServerCPU: func() (time.Duration, error) { return stack.TargetCPU(tg) },
	})
	if err != nil {
		return nil, fmt.Errorf("seed: %w", err)
	}
	f.Logf("matrix: seeded %d tenants in %s", sr.Tenants, sr.Duration.Round(time.Millisecond))
	// A version whose setup failed silently would measure an empty realm
	// (keycloak/keycloak#48480): its dataset is counted first.
	ver, err := dataset.Verify(ctx, kc.NewAdmin(kc.NewFor(tg), tg.Admin), sr.Manifest, nil)
	if err != nil {
		return nil, fmt.Errorf("verify the dataset: %w", err)
	}
	if !ver.OK() {
		var b strings.Builder
		ver.WriteText(&b)
		return nil, fmt.Errorf("Keycloak %s does not hold the dataset it was seeded with:\n%s", v, b.String())
	}
	f.Logf("matrix: Keycloak %s holds the dataset (dataset verify: every count as seeded)", v)
	boot, err := st.Restart(ctx)
	if err != nil {
		return nil, fmt.Errorf("restart: %w", err)
	}
	f.Logf("matrix: Keycloak %s restarted in %.1f s, RSS %d MiB at ready", v, boot.Duration.Seconds(), boot.RSS>>20)
	m, err := dataset.ReadManifest(manifestPath)
	if err != nil {
		return nil, err
	}
	tg = st.Target() // a new JVM pid
	if _, err := scenario.ByName(f.Scenario.Scenario, scenario.ProbeEnv(tg, m, f.Scenario)); err != nil {
		return nil, err
	}
	params := map[string]string{"keycloak_version": v, "target": "local", "machine_cores": fmt.Sprint(runtime.NumCPU())}
	if h, err := st.Heap(); err == nil {
		params["heap"] = h.String()
	}
	AddSpecParams(params, m.Spec)
	for k, v := range o.Topology.Params() {
		params[k] = v
	}
	if o.DB != "" {
		params["db"] = o.DB
	}
	fs := *f
	fs.Local = st
	return fs.Run(ctx, tg, m, params, dir, &boot)
}

// WriteText writes the version table.
func (mx *Matrix) WriteText(w io.Writer) error {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Version, rate, results.FormatOpt(r.CPUMsPerOp, 2), results.FormatOpt(r.OpsPerCPUSecond, 0),
			results.FormatOpt(r.P99AtCommon, 1), results.FormatOpt(r.BootSeconds, 1), results.FormatOpt(float64(r.RSSAtReady)/(1<<20), 0), results.FormatOpt(float64(r.MaxRSS)/(1<<20), 0))
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
