package scenario

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/observe"
	"github.com/kcbench/kcbench/internal/results"
)

// RunInput is one workload run against a Keycloak.
type RunInput struct {
	Target kc.Target
	// Manifest gives the users and clients; nil when Config.Realm names
	// them by hand.
	Manifest *dataset.Manifest
	// Config is the workload, with defaults applied and validated.
	Config Config
	// Progress, when set, is called about once a second from the engine;
	// it must not block.
	Progress func(load.Progress)
	// HTTPClient makes the requests (nil: an h1 client sized for the run).
	HTTPClient *http.Client
	// Users, when set, keeps the VUs' state across runs of the same
	// workload: a run takes the users earlier runs made before it makes
	// new ones (a capacity search's steps). They keep the Env they were
	// made with: give the runs one HTTPClient.
	Users *UserCache
	// Alive, when set, is asked twice a second during the run whether the
	// server is still there (its process runs, its log shows no
	// OutOfMemoryError, it is ready); an error says why not, and stops
	// the run with a *DownError.
	Alive func(context.Context) error
	// DownAfter is how long every iteration must fail at connect before
	// the target counts as unreachable (0: DefaultDownAfter).
	DownAfter time.Duration
	// KeepGoing runs on to the end when the target goes down, and returns
	// no DownError; the summary still says what happened (Stats.EndReason).
	KeepGoing bool
	// Events are timed actions on the system under test (a node killed,
	// started), run one at a time at their offsets from the run's start
	// and stamped in Stats.Events. A run with events does not stop when
	// every connection is refused for a while (an event may have taken
	// the only node down on purpose); Alive should then ignore what the
	// events took down.
	Events []load.Event
	// RecoverySLO is the p99 a run must come back under after each event
	// (results.Recovery; 0: DefaultRecoverySLO).
	RecoverySLO time.Duration
	// Prove runs one iteration, by a VU of its own, before the clock
	// starts: a run whose users, clients or flows do not work on this
	// Keycloak (a seed that silently failed, a client without the grant)
	// is refused with a *SetupError instead of measured. KeycloakVersion,
	// when known, is named in the refusal.
	Prove           bool
	KeycloakVersion string
	// RequireSuccess makes a run in which iterations ran and none
	// succeeded return a *DownError naming the errors (a capacity step
	// that fails them all is a finding of its search instead).
	RequireSuccess bool
	// Segment, when set, runs this agent's share of a run split over
	// several agents: Config.Split's share of the load, Pool.Slice's
	// users.
	Segment load.Segment
	// IntervalHook, when set, is called at the end of every timeline
	// interval (load.WithIntervalHook), e.g. to feed live metrics.
	IntervalHook func(load.Interval)
	// EarlyEnd, when set, may end an open-model run early
	// (load.WithEarlyEnd).
	EarlyEnd func(load.Interval) string
	// StartAt, when set, is when the run's clock starts (after the VUs
	// are set up), so that the agents of a split run start together.
	StartAt time.Time
	// LocalAddr, when valid, is the address the default HTTPClient
	// connects from (h1.Transport.LocalAddr): agents on one machine, each
	// its own loopback address, are told apart by the server as pods are.
	LocalAddr netip.Addr
}

// RunResult is a workload's outcome.
type RunResult struct {
	// Stats are the engine's results, thresholds evaluated.
	Stats results.Stats
	// CPU is the server's CPU time over the measured window.
	CPU results.ServerCPU
	// DB is the database's work over the measured window (nil when the
	// target's database is unknown: not a local stack).
	DB *results.DBCost
	// Directory is the LDAP directory's CPU over the measured window (nil
	// when the users are not in LDAP).
	Directory *results.DirectoryCost
	// Recorder holds the interval histograms (Recorder.WriteHlog).
	Recorder *load.Recorder
	// Params, when set, describe the run's setting in summary.json
	// (target, Keycloak version, heap), as other results' params do.
	Params map[string]string
	// ThresholdErr wraps load.ErrThresholdsFailed when a threshold
	// failed, nil otherwise.
	ThresholdErr error
	// Connections is how the VUs connected: the policy, TLS, handshakes.
	Connections *results.Connections
}

// ErrNoUsers means neither a manifest nor a realm says who logs in.
var ErrNoUsers = errors.New("no dataset manifest and no realm given")

// Run runs in.Config's scenario against in.Target: it builds the pool,
// the scenario and the executor, measures the server's CPU time after the
// warm-up (from /proc for a local server, else from its management
// /metrics when reachable), runs, and evaluates the thresholds. An
// interrupted run returns its partial result with an error wrapping the
// context's.
func Run(ctx context.Context, in RunInput) (_ *RunResult, err error) {
	whole, cfg, err := in.configs()
	if err != nil {
		return nil, err
	}
	if err := kc.CheckTLS(ctx, in.Target); err != nil {
		return nil, err
	}
	ths, err := parseThresholds(cfg.Thresholds)
	if err != nil {
		return nil, err
	}
	hc := in.HTTPClient
	if hc == nil {
		tr := LoadTransport(in.Target, cfg.Timeout, cfg.MaxVUsAtOnce(), in.LocalAddr)
		tr.Resume = cfg.TLSResumption
		hc = &http.Client{Transport: tr}
		defer hc.CloseIdleConnections()
	}
	sc, err := newScenario(ctx, in, cfg, hc)
	if err != nil {
		return nil, err
	}
	ex := cfg.AgentExecutor(whole, in.Segment)
	if err := ex.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Executor, err)
	}
	if f, ok := sc.(finisher); ok {
		defer func() {
			if ferr := f.finish(context.WithoutCancel(ctx)); ferr != nil {
				err = errors.Join(err, ferr)
			}
		}()
	}
	if sc, err = proveAndReuse(ctx, in, sc); err != nil {
		return nil, err
	}

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	watch := &downWatch{after: cmp.Or(in.DownAfter, DefaultDownAfter), stop: stop}
	if in.KeepGoing {
		watch.stop = nil
	}
	watch.noConnectRule = len(in.Events) > 0
	events := load.NewEventRunner(in.Events)
	rec := load.NewRecorder(recorderOptions(in, cfg, watch)...)
	win := observe.NewWindows(ctx, in.Target)
	if cfg.CPUBaseline > 0 {
		if err := win.Baseline(ctx, cfg.CPUBaseline); err != nil {
			return nil, err
		}
	}
	first := func() {
		win.Begin(cfg.Warmup)
		watch.start = time.Now()
		if in.Alive != nil {
			go watch.poll(runCtx, in.Alive)
		}
		if len(in.Events) > 0 {
			events.Start(runCtx, ctx, watch.start)
		}
	}
	conns := newConnPolicy(sc, cfg.Policy())
	defer conns.closeAll()
	mf := &markFirst{Scenario: conns, first: first}
	if len(in.Events) > 0 {
		mf.errs = &errorLog{}
	}
	stats, runErr := ex.Run(runCtx, mf, rec)
	stats.Timeout = cfg.Timeout
	stop(nil)
	events.Wait()
	stats.Events = events.Events(stats.Start)
	if len(stats.Events) > 0 {
		results.MeasureRecovery(&stats, cmp.Or(in.RecoverySLO, DefaultRecoverySLO), mf.errs.since(stats.Start))
	}
	win.End()
	if runErr != nil && stats.Start.IsZero() {
		return nil, runErr // nothing ran (e.g. a VU could not log in)
	}
	down := watch.result()
	if down == nil && ctx.Err() == nil && in.RequireSuccess {
		down = noSuccess(stats)
	}
	if down != nil {
		stats.EndReason = down.Error()
		if !in.KeepGoing && ctx.Err() == nil {
			runErr = down
		}
	}
	res := &RunResult{Stats: stats, Recorder: rec, CPU: win.CPU(stats), DB: win.DB(stats), Directory: win.Directory(stats),
		Connections: conns.result(h1Transport(hc), strings.HasPrefix(in.Target.BaseURL, "https://"))}
	if len(ths) > 0 {
		res.Stats.Thresholds, res.ThresholdErr = stats.Check(ths)
	}
	return res, runErr
}

// proveAndReuse proves sc's setup when in asks (Prove), then wraps it to
// reuse in.Users' users: after the proof, whose user is none of the run's.
func proveAndReuse(ctx context.Context, in RunInput, sc load.Scenario) (load.Scenario, error) {
	if in.Prove {
		if err := Prove(ctx, sc, in.KeycloakVersion); err != nil {
			return nil, err
		}
	}
	if in.Users != nil {
		sc = in.Users.Reuse(sc)
	}
	return sc, nil
}

// configs are the run's whole config (defaults applied, validated) and
// its segment's part of it.
func (in RunInput) configs() (whole, part Config, err error) {
	whole = in.Config
	whole.ApplyDefaults()
	if err := whole.Validate(); err != nil {
		return whole, part, err
	}
	part, err = whole.Split(in.Segment)
	return whole, part, err
}

// parseThresholds parses a run's thresholds.
func parseThresholds(ts []string) ([]results.Threshold, error) {
	var ths []results.Threshold
	for _, t := range ts {
		th, err := results.ParseThreshold(t)
		if err != nil {
			return nil, err
		}
		ths = append(ths, th)
	}
	return ths, nil
}

// newScenario builds the run's scenario over hc: its pool of users and
// clients (a hand-given realm's, or the manifest's, this segment's
// slice), its sessions logged in when it needs them (in in.Users' pool
// when set; Run wraps the scenario to reuse its users across runs).
func newScenario(ctx context.Context, in RunInput, cfg Config, hc *http.Client) (load.Scenario, error) {
	env := cfg.env()
	env.Client = kc.New(in.Target.BaseURL, hc)
	if a := in.Target.Admin; a.ClientID != "" || a.Username != "" {
		env.Admin = kc.NewAdmin(kc.New(in.Target.BaseURL, hc), a)
	}
	var err error
	switch {
	case cfg.Realm != "":
		env.Pool, err = NewSinglePool(Single{Realm: cfg.Realm, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
			Username: cfg.Username, Password: cfg.Password, RedirectURI: cfg.RedirectURI})
	case in.Manifest != nil:
		env.Pool, err = NewManifestPool(in.Manifest, cfg.TenantSkew)
	default:
		err = ErrNoUsers
	}
	if err == nil && cfg.SpreadClients {
		err = env.Pool.SpreadClients()
	}
	if err != nil {
		return nil, err
	}
	if env.Pool, err = env.Pool.Slice(in.Segment); err != nil {
		return nil, err
	}
	if in.Users != nil {
		env.sessions, env.registered = &in.Users.sessions, &in.Users.registered
	}
	sc, err := ByName(cfg.Scenario, env)
	if err != nil {
		return nil, err
	}
	if p, ok := sc.(preparer); ok {
		if err := p.prepare(ctx, cmp.Or(cfg.VUs, cfg.MaxVUsAtOnce())); err != nil {
			return nil, fmt.Errorf("scenario %s: logging its sessions in: %w", cfg.Scenario, err)
		}
	}
	return sc, nil
}

// recorderOptions are the recorder's: the warm-up, the start time, the
// hooks the caller gives, and the progress, which the down-watch reads.
func recorderOptions(in RunInput, cfg Config, watch *downWatch) []load.RecorderOption {
	opts := []load.RecorderOption{load.WithWarmup(cfg.Warmup)}
	if !in.StartAt.IsZero() {
		opts = append(opts, load.WithStartAt(in.StartAt))
	}
	if in.IntervalHook != nil {
		opts = append(opts, load.WithIntervalHook(in.IntervalHook))
	}
	if in.EarlyEnd != nil {
		opts = append(opts, load.WithEarlyEnd(in.EarlyEnd))
	}
	return append(opts, load.WithProgress(func(p load.Progress) {
		if in.Progress != nil {
			in.Progress(p)
		}
		watch.observe(p)
	}))
}

// SetupError refuses a run whose proof of setup failed (RunInput.Prove):
// one iteration before the clock was refused by the server (an HTTP 4xx)
// or failed a check.
type SetupError struct {
	Scenario string
	Version  string // the Keycloak's, when known
	Class    string // the error's class (load.Classify)
	Err      error
}

func (e *SetupError) Error() string {
	on := "this Keycloak"
	if e.Version != "" {
		on = "Keycloak " + e.Version
	}
	return fmt.Sprintf("setup: one %s iteration before the clock failed on %s (%s), so the run would measure no success: %v "+
		"(is the dataset seeded, and do its clients allow the flow?)", e.Scenario, on, e.Class, e.Err)
}

func (e *SetupError) Unwrap() error { return e.Err }

// proofWait bounds the proof: a server that does not answer within it is
// left to the run, whose own accounting says what it did.
const proofWait = 5 * time.Second

// Prove runs one iteration of sc by a VU of its own, id 0 (the twin of
// the run's first VU: the same tenant, client and user). When the
// server refused it (an HTTP 4xx: no such realm, user or client, a grant
// the client may not use) or it failed a check, it returns a *SetupError.
// A server that is down, slow or broken (refused or reset connections,
// time-outs, 5xx, malformed answers) is the run's to measure and report,
// not a setup's: Prove returns nil then.
func Prove(ctx context.Context, sc load.Scenario, version string) error {
	ctx, cancel := context.WithTimeout(ctx, proofWait)
	defer cancel()
	err := proveOnce(ctx, sc)
	if err == nil {
		return nil
	}
	c := load.Classify(err)
	if c == load.ClassCheck || strings.HasPrefix(c, "http_4") {
		return &SetupError{Scenario: sc.Name(), Version: version, Class: c, Err: err}
	}
	return nil
}

func proveOnce(ctx context.Context, sc load.Scenario) error {
	u, err := sc.NewUser(ctx, 0)
	if err != nil {
		return err
	}
	var rec firstError
	if err := u.Iterate(ctx, &rec); err != nil {
		return err
	}
	return rec.get()
}

// ProveSetup builds in's scenario on a client of its own and proves it
// (Prove), without running anything else: a caller that must not warm
// the server just before the clock (a cold phase, measured right after a
// restart) proves its workloads before the restart instead.
func ProveSetup(ctx context.Context, in RunInput) error {
	_, cfg, err := in.configs()
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: LoadTransport(in.Target, cfg.Timeout, 1, in.LocalAddr)}
	defer hc.CloseIdleConnections()
	in.Users = nil
	sc, err := newScenario(ctx, in, cfg, hc)
	if err != nil {
		return err
	}
	err = Prove(ctx, sc, in.KeycloakVersion)
	if f, ok := sc.(finisher); ok {
		err = errors.Join(err, f.finish(context.WithoutCancel(ctx)))
	}
	return err
}

// firstError is an OpRecorder that keeps the first failed operation.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (r *firstError) Record(op string, _ time.Time, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.err == nil {
		r.err = fmt.Errorf("%s: %w", op, err)
	}
}

func (r *firstError) get() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// markFirst calls first when the run's first iteration starts: the run's
// clock has started and every up-front VU exists.
type markFirst struct {
	load.Scenario
	once  sync.Once
	first func()
	errs  *errorLog // when set, every failed operation is logged
}

// DefaultRecoverySLO is the p99 a run must come back under after an event
// when none is given: the capacity search's usual SLO.
const DefaultRecoverySLO = 500 * time.Millisecond

// errorLog keeps when each operation failed and how, for the recovery
// after fault events (only failures are logged).
type errorLog struct {
	mu   sync.Mutex
	errs []struct {
		at    time.Time
		class string
	}
}

func (l *errorLog) add(class string) {
	l.mu.Lock()
	l.errs = append(l.errs, struct {
		at    time.Time
		class string
	}{time.Now(), class})
	l.mu.Unlock()
}

// since returns the failures with offsets from start.
func (l *errorLog) since(start time.Time) []results.TimedError {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]results.TimedError, len(l.errs))
	for i, e := range l.errs {
		out[i] = results.TimedError{At: e.at.Sub(start), Class: e.class}
	}
	return out
}

// loggingRecorder logs the failures it records.
type loggingRecorder struct {
	load.OpRecorder
	log *errorLog
}

func (r loggingRecorder) Record(op string, start time.Time, err error) {
	r.OpRecorder.Record(op, start, err)
	if err != nil {
		r.log.add(load.Classify(err))
	}
}

func (m *markFirst) NewUser(ctx context.Context, id int) (load.User, error) {
	u, err := m.Scenario.NewUser(ctx, id)
	if err != nil {
		return nil, err
	}
	return &markFirstUser{User: u, m: m}, nil
}

type markFirstUser struct {
	load.User
	m *markFirst
}

func (u *markFirstUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	u.m.once.Do(u.m.first)
	if u.m.errs != nil {
		rec = loggingRecorder{OpRecorder: rec, log: u.m.errs}
	}
	return u.User.Iterate(ctx, rec)
}

// WriteDir writes the run's HDR logs (<op>.hlog, and <op>.service.hlog in
// the open model), timeline.csv and, last, summary.json (with the server
// CPU), so that a summary.json means a complete result (kcbench load --out).
func (res *RunResult) WriteDir(dir string) error {
	s, rec := res.Stats, res.Recorder
	for _, op := range rec.Ops() {
		if err := fileutil.WriteFile(filepath.Join(dir, op+".hlog"), 0o644, func(w io.Writer) error {
			return rec.WriteHlog(w, op, load.SeriesLatency)
		}); err != nil && !errors.Is(err, load.ErrUnknownOp) {
			return err
		}
		if s.Model == results.ModelOpen {
			if err := fileutil.WriteFile(filepath.Join(dir, op+".service.hlog"), 0o644, func(w io.Writer) error {
				return rec.WriteHlog(w, op, load.SeriesService)
			}); err != nil && !errors.Is(err, load.ErrUnknownOp) {
				return err
			}
		}
	}
	if err := fileutil.WriteFile(filepath.Join(dir, "timeline.csv"), 0o644, func(w io.Writer) error {
		return results.WriteTimelineCSV(w, s.Timeline)
	}); err != nil {
		return err
	}
	return fileutil.WriteFile(filepath.Join(dir, "summary.json"), 0o644, func(w io.Writer) error {
		return results.WriteLoadSummary(w, results.LoadSummary{Stats: s, ServerCPU: res.CPU, Database: res.DB,
			Directory: res.Directory, Connections: res.Connections, Params: res.Params})
	})
}
