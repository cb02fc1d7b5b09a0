package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kcbench/kcbench/internal/buildinfo"
	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/observe"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// Runner runs an experiment's points, in order, into Dir.
type Runner struct {
	File *File
	// Dir is results/<experiment>.
	Dir string
	// Dirs and StackName place the local stack the runner starts and
	// stops (a foreground stack: it dies with kcbench).
	Dirs      stack.Dirs
	StackName string
	// Scale multiplies every phase duration (e.g. 0.1 for a quick look).
	Scale float64
	Logf  func(format string, args ...any)
	// Progress, when set, receives load progress.
	Progress func(point, workload string, p load.Progress)
	// Metrics, when set, are served live (--metrics-addr): the phase and
	// point, seeding progress, and the loads' intervals.
	Metrics *metrics.Collector

	st      *stack.Stack
	stKey   string         // the running stack's options
	dsKey   string         // the dataset the stack holds: variant stack key + spec fingerprint
	dsN     int            // its tenant count
	aborted map[string]int // variant/mode → smallest aborted tenant count
}

// Outcome says how each point ended.
type Outcome struct {
	Done, Skipped, Aborted, Failed []string
}

// Run runs every unfinished point. A point with a summary.json is done
// (resume); a point that crosses a watchdog limit is marked aborted and the
// larger tenant counts of its variant and mode are skipped.
func (r *Runner) Run(ctx context.Context) (Outcome, error) {
	var out Outcome
	if r.Logf == nil {
		r.Logf = func(string, ...any) {}
	}
	if r.Scale <= 0 {
		r.Scale = 1
	}
	r.aborted = map[string]int{}
	pts, err := Plan(r.File)
	if err != nil {
		return out, err
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return out, err
	}
	if b, err := yaml.Marshal(r.File); err == nil {
		fileutil.WriteAtomic(filepath.Join(r.Dir, "experiment.yaml"), b, 0o644)
	}
	if err := results.WriteReferences(r.Dir, r.File.References); err != nil {
		return out, err
	}
	defer r.stopStack()
	for i, p := range pts {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		group := p.Variant.Name + "/" + string(p.Mode)
		if prev, err := results.ReadPoint(filepath.Join(r.Dir, p.ID)); err == nil && prev.Summary.Status == results.StatusFailed {
			// an error stopped it (Keycloak refused an option, say): the
			// cause may be gone, so it runs again; an aborted point is a
			// measured outcome and stays
			r.Logf("point %d/%d %s: failed before (%s); running it again", i+1, len(pts), p.ID, prev.Summary.Reason)
			if err := os.RemoveAll(filepath.Join(r.Dir, p.ID)); err != nil {
				return out, err
			}
		} else if err == nil {
			r.Logf("point %d/%d %s: %s already (skipped)", i+1, len(pts), p.ID, prev.Summary.Status)
			if prev.Summary.Status == results.StatusAborted {
				r.noteAbort(group, p.Tenants)
			}
			out.Skipped = append(out.Skipped, p.ID)
			continue
		}
		if n, ok := r.aborted[group]; ok && p.Tenants > n {
			r.Logf("point %d/%d %s: skipped, %s aborted at %d tenants", i+1, len(pts), p.ID, group, n)
			out.Skipped = append(out.Skipped, p.ID)
			continue
		}
		r.Logf("point %d/%d %s", i+1, len(pts), p.ID)
		sum, err := r.runPoint(ctx, p)
		switch {
		case ctx.Err() != nil:
			return out, ctx.Err()
		case err != nil:
			out.Failed = append(out.Failed, p.ID)
			r.Logf("point %s failed: %v", p.ID, err)
			// A broken stack is rebuilt for the next point.
			r.stopStack()
		case sum.Status == results.StatusAborted:
			out.Aborted = append(out.Aborted, p.ID)
			r.noteAbort(group, p.Tenants)
			r.Logf("point %s aborted: %s", p.ID, sum.Reason)
		default:
			out.Done = append(out.Done, p.ID)
		}
	}
	return out, nil
}

func (r *Runner) noteAbort(group string, n int) {
	if m, ok := r.aborted[group]; !ok || n < m {
		r.aborted[group] = n
	}
}

func (r *Runner) stopStack() {
	if r.st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := r.st.Down(ctx); err != nil {
		r.Logf("stop stack: %v", err)
	}
	r.st, r.stKey, r.dsKey, r.dsN = nil, "", "", 0
}

func key(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// stackKey names the stack point p runs on: the runner keeps a stack
// for the next point with the same key and starts another (a variant's
// TLS, version, options or topology) otherwise.
func (p Point) stackKey() string {
	k := []any{p.Stack, p.PG, p.Topology, p.LDAP}
	if p.DBDurable { // absent otherwise: the keys of earlier runs stay
		k = append(k, "durable")
	}
	return key(k)
}

// ensureStack starts (or keeps) a stack with the point's options.
func (r *Runner) ensureStack(ctx context.Context, p Point) error {
	k := p.stackKey()
	if r.st != nil && r.stKey == k && r.st.Running() {
		return nil
	}
	r.stopStack()
	name := r.StackName
	if name == "" {
		name = "exp-" + r.File.Name
	}
	if old, err := stack.Attach(r.Dirs, name); err == nil {
		if err := old.Down(ctx); err != nil {
			return fmt.Errorf("stack %s left by an earlier run: %w", name, err)
		}
	}
	ko := p.Stack
	cfg := stack.Config{Name: name, Dirs: r.Dirs, Keycloak: ko, Topology: p.Topology, PG: stack.PGOptions{Version: p.PG, Durable: p.DBDurable}, LDAP: p.LDAP, Logf: r.Logf}
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		return err
	}
	r.st, r.stKey, r.dsKey, r.dsN = s, k, "", 0
	if *r.File.Dataset.Snapshots && !r.snapshots(p) {
		r.Logf("variant %s: no snapshots (%s): every point seeds its dataset", p.Variant.Name, noSnapshotReason(p))
	}
	if r.snapshots(p) {
		// The empty database, to come back to when the mode changes.
		if err := r.saveSnapshot(ctx, r.emptySnapshot(p)); err != nil {
			return err
		}
	}
	return nil
}

// snapshots reports whether the point's datasets are kept as snapshots:
// asked for, and possible (a PostgreSQL data folder holds the whole
// dataset: not with MariaDB, nor with users in a directory the snapshot
// does not copy).
func (r *Runner) snapshots(p Point) bool {
	return *r.File.Dataset.Snapshots && noSnapshotReason(p) == ""
}

func noSnapshotReason(p Point) string {
	switch {
	case p.Stack.DB == stack.DBMariaDB:
		return "snapshots are PostgreSQL's, not available on MariaDB"
	case p.LDAP.Enabled():
		return "the users live in the stack's slapd, which a snapshot does not copy"
	}
	return ""
}

// snapshotName names the snapshot of point p's dataset at n tenants. It
// is shared by the variants whose databases hold the same thing: same
// Keycloak (version, build and start options), database and number of
// nodes; they may differ in what only the running server feels (heap,
// threads, pool and cache sizes, CPU quotas, injected latency, the
// balancer's settings): the cache study's five variants seed one dataset
// of 100,000 users once, the vertical study's four CPU quotas one of
// 20,000.
func (r *Runner) snapshotName(p Point, n int) string {
	return fmt.Sprintf("%s-%s-n%05d", r.File.Name, p.datasetKey(), n)
}

// datasetKey names point p's dataset among the file's: the variants whose
// databases hold the same thing share it (see snapshotName); TLS, the
// balancer's included, is not in the database, nor are CPU quotas and
// latencies. A durable database's snapshots are its own: a snapshot
// carries its postgresql.conf, fsync setting included, into the stack
// that restores it.
func (p Point) datasetKey() string {
	k, top := p.Stack, p.Topology
	top.LBTLS, top.NodeCPUs, top.Latency, top.Sticky, top.HAProxy = "", 0, stack.Latency{}, false, ""
	parts := []any{k.Version, k.BuildOptions, k.ExtraOptions, k.DB, p.PG, top}
	if k.VolatileSessions {
		parts = append(parts, "volatile-sessions")
	}
	if p.DBDurable {
		parts = append(parts, "durable")
	}
	db := shortHash(key(parts))
	return fmt.Sprintf("db%s-%s-%s", db, p.Mode, p.Spec.Fingerprint()[:8])
}

func (r *Runner) emptySnapshot(p Point) string {
	return fmt.Sprintf("%s-%s-empty-%s", r.File.Name, p.Variant.Name, shortHash(r.stKey))
}

func shortHash(s string) string {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return fmt.Sprintf("%08x", h)
}

func (r *Runner) saveSnapshot(ctx context.Context, name string) error {
	stack.DeleteSnapshot(r.Dirs, name)
	_, err := r.st.SaveSnapshot(ctx, name)
	return err
}

func (r *Runner) haveSnapshot(name string) bool {
	ss, _ := stack.ListSnapshots(r.Dirs)
	for _, s := range ss {
		if s.Name == name {
			return true
		}
	}
	return false
}

// reach brings the stack's database to the point's dataset: grow what is
// there, or restore the nearest snapshot at or below N and grow from it.
func (r *Runner) reach(ctx context.Context, p Point) (*results.Seed, error) {
	ds := key([]any{r.stKey, p.Spec.Fingerprint()})
	seed := &results.Seed{Tenants: p.Tenants, Strategy: r.File.Dataset.Strategy}
	if r.dsKey == ds && r.dsN == p.Tenants {
		return seed, nil // a repeat: the dataset is there
	}
	if r.dsKey != ds || r.dsN > p.Tenants {
		if err := r.restoreBest(ctx, p, ds, seed); err != nil {
			return nil, err
		}
	}
	if r.dsN < p.Tenants {
		if err := r.seedRest(ctx, p, seed); err != nil {
			return nil, err
		}
		r.dsN = p.Tenants
		if r.snapshots(p) {
			if err := r.saveSnapshot(ctx, r.snapshotName(p, p.Tenants)); err != nil {
				return nil, err
			}
		}
	}
	return seed, nil
}

// restoreBest restores the best snapshot for point p (dataset ds): exact
// N, else the largest below, else the empty database; without one, a
// fresh stack.
func (r *Runner) restoreBest(ctx context.Context, p Point, ds string, seed *results.Seed) error {
	best, bestN := "", -1
	ss, _ := stack.ListSnapshots(r.Dirs)
	for n := p.Tenants; n >= 1 && r.snapshots(p); n-- {
		name := r.snapshotName(p, n)
		if slices.ContainsFunc(ss, func(s stack.SnapshotInfo) bool { return s.Name == name }) {
			best, bestN = name, n
			break
		}
		if n < p.Tenants-100000 {
			break
		}
	}
	if best == "" && r.dsKey != "" {
		if r.snapshots(p) && r.haveSnapshot(r.emptySnapshot(p)) {
			best, bestN = r.emptySnapshot(p), 0
		} else {
			// No way back to an empty database but a fresh stack.
			r.stopStack()
			if err := r.ensureStack(ctx, p); err != nil {
				return err
			}
		}
	}
	if best == "" {
		r.dsKey, r.dsN = ds, 0
		return nil
	}
	start := time.Now()
	r.Logf("restoring snapshot %s", best)
	if _, err := r.st.RestoreSnapshot(ctx, best); err != nil {
		return err
	}
	if bestN > 0 {
		seed.Restored = best
	}
	if bestN == p.Tenants {
		// the whole dataset came back: what it took to make it is in its
		// manifest (a resumed sweep keeps its seed times)
		if m, err := dataset.ReadManifest(r.manifestPath()); err == nil {
			recordedSeed(seed, m, p.Tenants, r.File.Dataset.AdminAPISample > 0)
		}
	}
	seed.RestoreSeconds = time.Since(start).Seconds()
	r.dsKey, r.dsN = ds, bestN
	return nil
}

// seedRest seeds point p's tenants beyond the r.dsN there, with the
// file's strategy, the last ones through the admin API when the file
// samples it; seed adds what it took.
func (r *Runner) seedRest(ctx context.Context, p Point, seed *results.Seed) error {
	tg := r.st.Target()
	adm := kc.NewAdmin(kc.NewFor(tg), tg.Admin)
	strat, _ := dataset.ParseStrategy(r.File.Dataset.Strategy)
	keys, err := dataset.KeyPoolIn(r.Dirs.Cache)
	if err != nil {
		return err
	}
	o := dataset.SeedOptions{
		Strategy: strat, Logf: r.Logf, ManifestPath: r.manifestPath(), Target: tg.BaseURL, DB: r.pgDSN(), DBKind: tg.DBKind, Keys: keys, LDAP: tg.LDAP,
		Progress:  r.Metrics.SeedProgress(nil),
		ServerCPU: func() (time.Duration, error) { return stack.TargetCPU(tg) },
	}
	// The sample: the point's last tenants through the admin API.
	sample := 0
	if k := r.File.Dataset.AdminAPISample; k > 0 && strat == dataset.Clone {
		sample = min(k, p.Tenants-r.dsN)
	}
	add := func(spec dataset.Spec, o dataset.SeedOptions) (*dataset.SeedResult, error) {
		res, err := dataset.Seed(ctx, adm, spec, o)
		if err != nil {
			return nil, err
		}
		seed.Added += res.Added
		seed.Seconds += res.Duration.Seconds()
		seed.ServerCPU += res.ServerCPU.Seconds()
		return res, nil
	}
	if bulk := p.Tenants - sample; bulk > r.dsN {
		spec := p.Spec
		spec.Tenants = bulk
		if _, err := add(spec, o); err != nil {
			return err
		}
	}
	if sample > 0 {
		r.Logf("seed: the last %d tenants through the admin API, timed (admin_api_sample)", sample)
		o.Strategy = dataset.Fast
		res, err := add(p.Spec, o)
		if err != nil {
			return err
		}
		seed.AdminAPISample = &results.SeedSample{Tenants: res.Added, Seconds: res.Duration.Seconds(), ServerCPU: res.ServerCPU.Seconds()}
	}
	return nil
}

func (r *Runner) manifestPath() string { return r.st.DatasetManifest() }

// seedSessions brings the point's realms to exactly its sessions (the
// restart after it empties Keycloak's caches of any it ended).
func (r *Runner) seedSessions(ctx context.Context, p Point) (*results.SessionSeed, error) {
	m, err := dataset.ReadManifest(r.manifestPath())
	if err != nil {
		return nil, err
	}
	tg := r.st.Target()
	o := dataset.SessionOptions{DB: r.pgDSN(), DBKind: tg.DBKind, ManifestPath: r.manifestPath(), Logf: r.Logf, Exact: true,
		OnlineInMemory: p.Stack.VolatileSessions}
	if pg := r.st.State().PG; pg != nil {
		o.DataDir = pg.Data
	}
	res, err := dataset.SeedSessions(ctx, kc.NewAdmin(kc.NewFor(tg), tg.Admin), m, p.Sessions, o)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	res.WriteText(&b)
	r.Logf("%s", strings.TrimSpace(b.String()))
	return &results.SessionSeed{Online: p.Sessions.Online, Offline: p.Sessions.Offline, WrittenOnline: res.Written.Online,
		WrittenOffline: res.Written.Offline, Seconds: res.Duration.Seconds(), DBGrowthBytes: res.DBGrowth}, nil
}

// recordedSeed fills seed from the manifest's record of the seeding that
// brought the dataset to n tenants. With a sample (sampled: the file's
// admin_api_sample), that seeding was two runs: the clone of the bulk and
// the last tenants through the admin API (fast), the latter the sample.
func recordedSeed(seed *results.Seed, m *dataset.Manifest, n int, sampled bool) {
	ev, ok := m.SeedRunTo(n)
	if !ok {
		return
	}
	seed.Added, seed.Seconds, seed.ServerCPU, seed.Strategy, seed.Recorded = ev.Added, ev.Seconds, ev.ServerCPUSec, ev.Strategy, true
	if !sampled || ev.Strategy != string(dataset.Fast) {
		return
	}
	seed.AdminAPISample = &results.SeedSample{Tenants: ev.Added, Seconds: ev.Seconds, ServerCPU: ev.ServerCPUSec}
	seed.Strategy = string(dataset.Clone)
	if bulk, ok := m.SeedRunTo(ev.From); ok && bulk.Strategy == string(dataset.Clone) {
		seed.Added += bulk.Added
		seed.Seconds += bulk.Seconds
		seed.ServerCPU += bulk.ServerCPUSec
	}
}

// errAbort carries a watchdog's reason.
type errAbort struct{ reason string }

func (e errAbort) Error() string { return "watchdog: " + e.reason }

// runPoint runs one point and writes its folder.
func (r *Runner) runPoint(ctx context.Context, p Point) (*results.Summary, error) {
	pr := &pointRun{p: p, dir: filepath.Join(r.Dir, p.ID), start: time.Now()}
	os.RemoveAll(pr.dir) // an unfinished earlier attempt
	if err := os.MkdirAll(pr.dir, 0o755); err != nil {
		return nil, err
	}
	pr.records(r.File)
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if t := r.File.Watchdog.PointTimeout.Duration; t > 0 {
		var c2 context.CancelFunc
		pctx, c2 = context.WithTimeoutCause(pctx, t, errAbort{fmt.Sprintf("point time limit %s reached", t)})
		defer c2()
	}
	runErr := r.measure(pctx, cancel, pr)
	if runErr != nil && ctx.Err() != nil {
		return nil, ctx.Err() // interrupted: leave no summary, the point reruns
	}
	var ab errAbort
	if cause := context.Cause(pctx); runErr != nil && errors.As(cause, &ab) {
		runErr = ab
	}
	sum, man := pr.sum, pr.man
	switch {
	case errors.As(runErr, &ab):
		sum.Status, sum.Reason = results.StatusAborted, ab.reason
		r.stopStack() // a point past a limit leaves the stack in no shape to reuse
	case runErr != nil:
		sum.Status, sum.Reason = results.StatusFailed, runErr.Error()
	}
	for i := range sum.Workloads {
		serverFigures(&sum.Workloads[i], pr.timelines[i], pr.samples)
	}
	sum.Seconds = time.Since(pr.start).Seconds()
	man.End = time.Now().UTC()
	if err := writePoint(pr.dir, man, sum, pr.timelines, pr.samples, pr.recs); err != nil {
		return nil, err
	}
	if sum.Status == results.StatusFailed {
		return sum, runErr
	}
	return sum, nil
}

// pointRun is what a point's run gathers for its folder.
type pointRun struct {
	p         Point
	dir       string
	start     time.Time
	man       results.Manifest
	sum       *results.Summary
	timelines [][]results.TimelineRow
	samples   []results.ObserveSample
	recs      []*load.Recorder
	// noLiveHeap: a full GC or the heap after it could not be had
	// (said once in the summary's unobserved list); not tried again.
	noLiveHeap bool
	// obs samples the server while the point's workloads run.
	obs *observe.Recorder
}

// records starts the point's manifest and summary.
func (pr *pointRun) records(f *File) {
	p := pr.p
	pr.man = results.Manifest{Schema: results.Schema, Kcbench: buildinfo.Version(), Experiment: f.Name, Point: p.ID,
		Params: p.Params(), Keycloak: p.Stack.Version, Machine: ReadMachine(), Seed: int64(f.Seed), Start: pr.start.UTC()}
	pr.man.Options, _ = json.Marshal(p.Stack)
	pr.man.Dataset, _ = json.Marshal(p.Spec)
	pr.sum = &results.Summary{Schema: results.Schema, Point: p.ID, Params: p.Params(), Status: results.StatusDone}
	// Whether users share a password salt is part of what was measured.
	pr.param("password_salts", p.Spec.Salts())
	pr.param("password_policy", p.Spec.Policy.String())
}

// param records a parameter in the manifest and the summary.
func (pr *pointRun) param(k, v string) { pr.man.Params[k], pr.sum.Params[k] = v, v }

// measure brings the point's stack and dataset up, boots Keycloak afresh
// and runs the phases' workloads, then the capacity searches, under the
// watchdogs (cancel ends the point with an errAbort cause).
func (r *Runner) measure(ctx context.Context, cancel context.CancelCauseFunc, pr *pointRun) error {
	p, sum := pr.p, pr.sum
	maxRSS, _ := ParseBytes(r.File.Watchdog.MaxRSS)
	r.Metrics.SetPhase("stack", p.ID)
	if err := r.ensureStack(ctx, p); err != nil {
		return err
	}
	stopWatch := r.watchRSS(ctx, cancel, maxRSS)
	defer func() { stopWatch() }()
	r.Metrics.SetPhase("seed", p.ID)
	seed, err := r.reach(ctx, p)
	if err != nil {
		return err
	}
	sum.Seed = seed
	if p.SeedSessions {
		if seed.Sessions, err = r.seedSessions(ctx, p); err != nil {
			return err
		}
	}
	if slices.Contains(r.File.Phases, "cold") {
		// the cold phase runs right after the restart: its workloads'
		// setup is proved before it
		if err := r.proveCold(ctx, p); err != nil {
			return err
		}
	}
	r.Metrics.SetPhase("boot", p.ID)
	br, err := r.st.Restart(ctx)
	if err != nil {
		return err
	}
	stopWatch()
	stopWatch = r.watchRSS(ctx, cancel, maxRSS)
	sum.Boot = &results.Boot{Seconds: br.Duration.Seconds(), RSSBytes: br.RSS, CPUSeconds: br.CPU.Seconds()}
	sum.Boot.HeapAfterGCBytes = r.liveHeap(ctx, pr)
	r.stackParams(pr)
	m, err := dataset.ReadManifest(r.manifestPath())
	if err != nil {
		return err
	}
	tg := r.st.Target()
	obs := observe.New(observe.Config{Target: tg, PGPID: tg.DBPID, PGDSN: r.pgDSN()})
	pr.obs = obs
	stopObs := obs.Start(ctx)
	defer func() {
		pr.samples = stopObs()
		sum.Unobserved = append(sum.Unobserved, obs.Unavailable()...)
	}()
	for _, phase := range r.File.Phases {
		obs.SetPhase(phase)
		r.Metrics.SetPhase(phase, p.ID)
		for _, w := range r.File.Workload {
			if w.Capacity != nil {
				continue // after the phases
			}
			if err := r.runWorkload(ctx, pr, phase, w, tg, m); err != nil {
				return err
			}
		}
	}
	// Capacity searches: their failing steps are the point of a
	// search, so the error-rate watchdog does not judge them.
	obs.SetPhase("capacity")
	for _, w := range r.File.Workload {
		if w.Capacity == nil {
			continue
		}
		c, err := r.runCapacity(ctx, p, pr.dir, w, tg, m)
		if err != nil {
			return fmt.Errorf("capacity %s: %w", w.Name, err)
		}
		sum.Capacity = append(sum.Capacity, c)
	}
	return nil
}

// stackParams records what the stack (which may have been replaced while
// reaching the dataset) runs: Java, target, heap, its run parameters and
// PostgreSQL's version.
func (r *Runner) stackParams(pr *pointRun) {
	st := r.st.State()
	pr.man.Java, pr.man.Target = st.Java.Version, r.st.Target().BaseURL
	if h, err := r.st.Heap(); err == nil {
		pr.param("heap", h.String())
	}
	for k, v := range r.st.RunParams() {
		pr.param(k, v)
	}
	if st.PG != nil {
		pr.man.Postgres = st.PG.Version
	}
}

// runWorkload runs workload w in phase and records it; the error-rate
// watchdog judges it.
func (r *Runner) runWorkload(ctx context.Context, pr *pointRun, phase string, w Workload, tg kc.Target, m *dataset.Manifest) error {
	p := pr.p
	cfg := w.Config.Scaled(r.Scale)
	if phase == "warm" && cfg.Warmup == 0 {
		cfg.Warmup = time.Duration(float64(r.File.Warmup.Duration) * r.Scale)
	}
	if phase == "cold" {
		cfg.Warmup = 0
	}
	cfg.Seed = r.File.Seed
	r.Logf("  %s %s: %s", phase, w.Name, cfg.Describe())
	events, err := r.events(w)
	if err != nil {
		return fmt.Errorf("%s %s: %w", phase, w.Name, err)
	}
	res, err := scenario.Run(ctx, scenario.RunInput{Target: tg, Manifest: m, Config: cfg, Prove: phase != "cold", KeycloakVersion: p.Stack.Version,
		Alive:  r.st.Watch().Check, // a dead Keycloak fails the point, named
		Events: events, RecoverySLO: w.RecoverySLO.Duration, IntervalHook: r.Metrics.Hook(),
		Progress: func(pg load.Progress) {
			if r.Progress != nil {
				r.Progress(p.ID, phase+" "+w.Name, pg)
			}
		}})
	if len(events) > 0 {
		// Back to the point's topology for what follows.
		if rerr := r.st.RestoreTopology(ctx, topologyOf(r.File.Stack, p.Variant).Nodes); rerr != nil && err == nil {
			err = fmt.Errorf("after the events: %w", rerr)
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", phase, w.Name, err)
	}
	pr.sum.Workloads = append(pr.sum.Workloads, results.Workload{Name: w.Name, Scenario: cfg.Scenario, Phase: phase, Stats: res.Stats,
		ServerCPUMsPerOp: res.CPU.PerIteration, ServerCPUSource: res.CPU.Source, Database: res.DB, Directory: res.Directory,
		ClientsInUse: clientsInUse(p.Spec, cfg), Connections: res.Connections})
	res.DB.RecordDurable(pr.sum.Params)
	res.DB.RecordDurable(pr.man.Params)
	pr.timelines = append(pr.timelines, res.Stats.Timeline)
	pr.recs = append(pr.recs, res.Recorder)
	pr.sum.Workloads[len(pr.sum.Workloads)-1].HeapAfterGCBytes = r.liveHeap(ctx, pr)
	if lim, _ := ParsePercent(r.File.Watchdog.MaxErrorRate); r.File.Watchdog.MaxErrorRate != "" {
		// time-outs are a measured outcome (the admin API at a thousand
		// realms), not a broken run: they do not count
		it, _ := res.Stats.Op(results.IterationOp)
		if rate := it.ErrorRateBesidesTimeouts(); rate > lim {
			return errAbort{fmt.Sprintf("%s %s: error rate %.1f%% above %s (time-outs not counted: %d)", phase, w.Name,
				100*rate, r.File.Watchdog.MaxErrorRate, res.Stats.Timeouts())}
		}
	}
	return nil
}

// proveCold proves the setup of every workload of point p (one iteration
// each, scenario.ProveSetup) on the server before the restart that the
// cold phase follows, so that the cold phase meets cold caches.
func (r *Runner) proveCold(ctx context.Context, p Point) error {
	m, err := dataset.ReadManifest(r.manifestPath())
	if err != nil {
		return err
	}
	for _, w := range r.File.Workload {
		if w.Capacity != nil {
			continue
		}
		cfg := w.Config.Scaled(r.Scale)
		cfg.Seed = r.File.Seed
		if err := scenario.ProveSetup(ctx, scenario.RunInput{Target: r.st.Target(), Manifest: m, Config: cfg, KeycloakVersion: p.Stack.Version}); err != nil {
			return fmt.Errorf("%s: %w", w.Name, err)
		}
	}
	return nil
}

// liveHeap is Keycloak's heap in use right after a full garbage
// collection, summed over its nodes: what it holds live. 0 when it cannot
// be had (the first reason why goes to the point's unobserved list, and
// it is not tried again at the point).
func (r *Runner) liveHeap(ctx context.Context, pr *pointRun) int64 {
	if pr.noLiveHeap || r.st == nil {
		return 0
	}
	n, err := r.heapAfterGC(ctx)
	if err != nil {
		pr.noLiveHeap = true
		pr.sum.Unobserved = append(pr.sum.Unobserved, "heap after a full GC: "+err.Error())
		return 0
	}
	if pr.obs != nil {
		// the collection's pause and CPU go to a sample before the next
		// workload's start, not into its figures
		pr.obs.WaitSampleAfter(ctx, time.Now(), 3*observe.DefaultInterval)
	}
	return n
}

// heapAfterGC runs a full collection in every Keycloak node and reads
// their heap in use from their metrics at once after.
func (r *Runner) heapAfterGC(ctx context.Context) (int64, error) {
	urls, err := r.st.CollectGarbage(ctx)
	if err != nil {
		return 0, err
	}
	hc := r.st.Target().HTTPClient(observe.DefaultScrapeTimeout)
	var sum float64
	for _, u := range urls {
		m, err := observe.Scrape(ctx, hc, u)
		if err != nil {
			return 0, err
		}
		if math.IsNaN(m.HeapUsed) {
			return 0, fmt.Errorf("%s has no heap figures", observe.MetricsURL(u))
		}
		sum += m.HeapUsed
	}
	return int64(sum), nil
}

// serverFigures fills a workload's server figures from the samples over
// its run, and from those and its timeline how long it took to warm.
func serverFigures(w *results.Workload, tl []results.TimelineRow, samples []results.ObserveSample) {
	if after, ok := observe.WarmAfter(tl, w.Stats.Start, w.Stats.Warmup+w.Stats.Duration, samples, results.WarmWindow, results.WarmTolerance); ok {
		s := after.Seconds()
		w.WarmAfterSeconds = &s
	}
	sp := observe.SpanOf(samples, w.Stats.Start, w.Stats.Start.Add(w.Stats.Elapsed))
	if !math.IsNaN(sp.MaxRSSBytes) {
		w.MaxRSSBytes = int64(sp.MaxRSSBytes)
	}
	if !math.IsNaN(sp.MeanCPUPct) {
		w.MeanCPUPct = sp.MeanCPUPct
	}
	if !math.IsNaN(sp.MeanHeapBytes) {
		w.MeanHeapBytes = int64(sp.MeanHeapBytes)
	}
	if ms := sp.MeanGCPauseMs(); !math.IsNaN(ms) {
		w.GCPauses, w.GCPauseMeanMs = sp.GCPauses, ms
	}
}

// capacityDir is the folder of a point's capacity search.
func capacityDir(workload string) string { return "capacity-" + workload }

// runCapacity runs workload w's capacity search at point p and writes its
// folder into the point's dir.
func (r *Runner) runCapacity(ctx context.Context, p Point, dir string, w Workload, tg kc.Target, m *dataset.Manifest) (results.Capacity, error) {
	o, err := w.Capacity.Options(r.Scale)
	if err != nil {
		return results.Capacity{}, err
	}
	if r.st != nil && o.Cores == 0 {
		o.Cores = r.st.State().Topology.ServerCores(numCPU())
	}
	cfg := w.Config
	cfg.Seed = r.File.Seed
	r.Metrics.SetPhase("capacity", p.ID)
	st := &scenario.CapacityStepper{Config: cfg, Target: tg, Manifest: m, SLOs: o.SLOs, MaxVUs: w.Capacity.MaxVUs, IntervalHook: r.Metrics.Hook(),
		RSS: func() (int64, error) { return stack.TargetRSS(tg) },
		Progress: func(pr load.Progress) {
			if r.Progress != nil {
				r.Progress(p.ID, "capacity "+w.Name, pr)
			}
		}}
	st.HTTPClient = st.NewHTTPClient(o)
	st.EarlyEnd = o.WithDefaults().EarlyEnd
	defer st.HTTPClient.CloseIdleConnections()
	o.AfterStep = func(s results.CapacityStep) {
		r.Logf("  capacity %s: step %d %g/s: achieved %.1f/s, p99 %.1f ms, errors %.2f%%: %s", w.Name, s.Index, s.Rate, s.Achieved, s.P99, s.ErrorPct, s.Verdict())
	}
	r.Logf("  capacity %s: %s, SLOs %s, %s", w.Name, cfg.Scenario, results.FormatSLOs(o.SLOs), o.Describe())
	var before stack.NodeSamples
	if r.st != nil {
		before = r.st.SampleNodes(ctx)
	}
	res, err := capacity.Search(ctx, st.Step, o)
	if res == nil {
		return results.Capacity{}, err
	}
	if r.st != nil {
		// Per node of a cluster or a CPU-limited node: CPU, requests
		// from the balancer, throttled time.
		logf := func(format string, args ...any) { r.Logf("  "+w.Name+" "+format, args...) }
		if werr := WriteNodeSamples(logf, filepath.Join(dir, capacityDir(w.Name)), r.st.SampleNodes(ctx).Since(before)); werr != nil {
			r.Logf("  capacity %s: %s: %v", w.Name, NodesFile, werr)
		}
	}
	res.Scenario = cfg.Scenario
	res.Params = p.Params()
	res.Params["point"], res.Params["workload"] = p.ID, w.Name
	res.Params["keycloak_version"] = p.Stack.Version
	res.Params["password_policy"] = p.Spec.Policy.String()
	res.Params["password_salts"] = p.Spec.Salts()
	res.Params["users_per_tenant"] = fmt.Sprint(p.Spec.Content.Users)
	res.Params["machine_cores"] = fmt.Sprint(numCPU())
	maps.Copy(res.Params, scenario.ConnParams(tg, cfg))
	if r.st != nil {
		if h, err := r.st.Heap(); err == nil {
			res.Params["heap"] = h.String()
		}
	}
	if werr := res.WriteDir(filepath.Join(dir, capacityDir(w.Name))); werr != nil {
		return results.Capacity{}, errors.Join(err, werr)
	}
	if err != nil {
		return results.Capacity{}, err
	}
	r.Logf("  capacity %s: %s", w.Name, res.Conclusion)
	return results.Capacity{Name: w.Name, Scenario: cfg.Scenario, Dir: capacityDir(w.Name), Found: res.Found, MaxRate: res.MaxRate,
		P99Ms: res.P99, CPUMsPerOp: res.CPUMsPerOp, Conclusion: res.Conclusion, Seconds: res.End.Sub(res.Start).Seconds()}, nil
}

// watchRSS aborts the point when the JVM's RSS passes max (0: no limit),
// checking every second. The returned func stops it.
func (r *Runner) watchRSS(ctx context.Context, cancel context.CancelCauseFunc, max int64) func() {
	if max <= 0 || r.st == nil {
		return func() {}
	}
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				tg := r.st.Target()
				if !tg.Local() {
					continue
				}
				if rss, err := stack.TargetRSS(tg); err == nil && rss > max {
					cancel(errAbort{fmt.Sprintf("Keycloak RSS %d MiB above the limit %s", rss>>20, r.File.Watchdog.MaxRSS)})
					return
				}
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

func (r *Runner) pgDSN() kc.Secret {
	dsn, err := r.st.DSN()
	if err != nil {
		return ""
	}
	return dsn
}

// writePoint writes the point's files, summary.json last.
func writePoint(dir string, man results.Manifest, sum *results.Summary, timelines [][]results.TimelineRow, samples []results.ObserveSample, recs []*load.Recorder) error {
	if err := fileutil.WriteJSON(filepath.Join(dir, results.ManifestFile), man, 0o644); err != nil {
		return err
	}
	if err := fileutil.WriteFile(filepath.Join(dir, results.TimelineFile), 0o644, func(w io.Writer) error {
		for _, tl := range timelines {
			if err := results.WriteTimelineCSV(w, tl); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if len(samples) > 0 {
		if err := fileutil.WriteFile(filepath.Join(dir, results.ObserveFile), 0o644, func(w io.Writer) error {
			return results.WriteObserveCSV(w, samples)
		}); err != nil {
			return err
		}
	}
	for i, rec := range recs {
		wl := sum.Workloads[i]
		for _, op := range rec.Ops() {
			name := fmt.Sprintf("%s-%s-%s.hlog", wl.Phase, wl.Name, op)
			if err := fileutil.WriteFile(filepath.Join(dir, name), 0o644, func(w io.Writer) error {
				return rec.WriteHlog(w, op, load.SeriesLatency)
			}); err != nil && !errors.Is(err, load.ErrUnknownOp) {
				return err
			}
		}
	}
	return fileutil.WriteJSON(filepath.Join(dir, results.SummaryFile), sum, 0o644)
}

// ReadMachine describes this machine.
func ReadMachine() results.Machine {
	m := results.Machine{Cores: numCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(string(b), "MemTotal: %d kB", &kb)
		m.RAMBytes = kb * 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.Hostname, _ = os.Hostname()
	return m
}

// clientsInUse is how many confidential clients a workload's grants draw
// from: one per tenant, or every backend of every tenant when it spreads
// them.
func clientsInUse(spec dataset.Spec, c scenario.Config) int {
	if c.SpreadClients && spec.Content.Clients > 2 {
		return spec.Tenants * (spec.Content.Clients - 1)
	}
	return spec.Tenants
}
