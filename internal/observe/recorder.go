package observe

import (
	"context"
	"errors"
	"fmt"
	"github.com/kcbench/kcbench/internal/results"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
)

// DefaultInterval is the time between two samples.
const DefaultInterval = time.Second

// Source is one thing the Recorder samples. results.ObserveSample returns a results.ObserveSample with
// the values the source observes set and every other one NaN (start from
// Blank); the Recorder merges the sources' samples into one row. A source
// is never called concurrently with itself, so it may keep state (the
// previous counter readings its rates need).
type Source interface {
	// Name says what the source observes, for Unavailable. It must not
	// hold secrets.
	Name() string
	Sample(ctx context.Context) (results.ObserveSample, error)
}

// gapReporter is implemented by sources that can tell, after sampling,
// what they could not observe although the source itself worked (a
// metric family the server does not expose).
type gapReporter interface {
	Unavailable() []string
}

// Config says what New observes. Whatever is missing is left out and
// noted in the Recorder's Unavailable.
type Config struct {
	// Target is the Keycloak under test. Its PID (local servers) gives
	// the /proc CPU and RSS of the JVM's tree; its ManagementURL the
	// /metrics scrape, which also gives CPU when there is no PID.
	Target kc.Target
	// PGPID is the postmaster's pid when PostgreSQL runs on this machine
	// (mariadbd's when Target.DBKind is "mariadb": its CPU and RSS go to
	// the same database columns).
	PGPID int
	// PGDSN connects to Keycloak's database for pg_stat_database, e.g.
	// postgres://keycloak:PASSWORD@127.0.0.1:5432/keycloak. It holds a
	// password, hence kc.Secret.
	PGDSN kc.Secret
	// Interval between samples; 0 means DefaultInterval.
	Interval time.Duration
	// Proc is /proc; nil means os.DirFS("/proc").
	Proc fs.FS
	// HTTPClient scrapes /metrics; nil means a client with
	// DefaultScrapeTimeout.
	HTTPClient *http.Client
}

// New builds a Recorder with every source cfg allows.
func New(cfg Config) *Recorder {
	proc := cfg.Proc
	if proc == nil {
		proc = os.DirFS("/proc")
	}
	var srcs []Source
	var gaps []string
	t := cfg.Target
	if pids := t.ServerPIDs(); len(pids) > 0 {
		srcs = append(srcs, NewProcSource(Keycloak, proc, pids...))
	} else if t.ManagementURL != "" {
		gaps = append(gaps, "keycloak RSS: the target is not a local process (no pid); CPU comes from its metrics, for the JVM only")
	} else {
		gaps = append(gaps, "keycloak CPU and RSS: the target is not a local process (no pid) and has no management URL")
	}
	if t.ManagementURL != "" {
		hc := cfg.HTTPClient
		if hc == nil {
			hc = t.HTTPClient(DefaultScrapeTimeout)
		}
		srcs = append(srcs, NewMetricsSource(t.ManagementURL, hc, t.PID <= 0))
	} else {
		gaps = append(gaps, "keycloak metrics (heap, GC, HTTP requests, DB pool, worker pool, caches): no management URL")
	}
	db := PostgreSQL
	if t.DBKind == "mariadb" {
		db = MariaDB
	}
	if cfg.PGPID > 0 {
		srcs = append(srcs, NewProcSource(db, proc, cfg.PGPID))
	} else {
		gaps = append(gaps, db.String()+" CPU and RSS: no database pid (the database is not a local process)")
	}
	if db == MariaDB {
		gaps = append(gaps, "postgres statistics (commits, blocks, tuples, size): not available on MariaDB (pg_stat_database is PostgreSQL's)")
	} else if cfg.PGDSN != "" {
		srcs = append(srcs, NewPGSource(cfg.PGDSN))
	} else {
		gaps = append(gaps, "postgres statistics (commits, blocks, tuples, size): no database DSN")
	}
	r := NewRecorder(cfg.Interval, srcs...)
	r.gaps = gaps
	return r
}

// Recorder samples its sources every interval into rows, labelled with
// the phase current at each sample. Its methods are safe to call while
// Run is going.
type Recorder struct {
	interval time.Duration
	sources  []Source

	mu      sync.Mutex
	phase   string
	rows    []results.ObserveSample
	gaps    []string
	health  []sourceHealth // one per source
	started bool
}

// sourceHealth counts one source's failures.
type sourceHealth struct {
	samples, failed int
	last            error
	gaps            []string // from a gapReporter, after its last sample
}

// NewRecorder samples sources every interval (0: DefaultInterval).
func NewRecorder(interval time.Duration, sources ...Source) *Recorder {
	if interval <= 0 {
		interval = DefaultInterval
	}
	return &Recorder{interval: interval, sources: sources, health: make([]sourceHealth, len(sources))}
}

// SetPhase labels the samples taken from now on.
func (r *Recorder) SetPhase(phase string) {
	r.mu.Lock()
	r.phase = phase
	r.mu.Unlock()
}

// ErrStarted means Run was called twice on one Recorder.
var ErrStarted = errors.New("observe: recorder already started")

// Run samples at once, then every interval, until ctx ends; then it
// closes the sources that are io.Closers and returns nil. A failing
// source never stops it: its columns stay empty in that row and the
// failure is counted for Unavailable. A row cut short by ctx's end is
// dropped. Run may be called once per Recorder.
func (r *Recorder) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		return ErrStarted
	}
	r.started = true
	r.mu.Unlock()
	defer func() {
		for _, s := range r.sources {
			if c, ok := s.(io.Closer); ok {
				c.Close()
			}
		}
	}()
	tick := time.NewTicker(r.interval)
	defer tick.Stop()
	for {
		r.sample(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// sample takes one row: every source at once, each bounded by the
// interval so a slow source cannot stall the next row.
func (r *Recorder) sample(ctx context.Context) {
	t := time.Now()
	r.mu.Lock()
	phase := r.phase
	r.mu.Unlock()
	got := make([]results.ObserveSample, len(r.sources))
	errs := make([]error, len(r.sources))
	var wg sync.WaitGroup
	for i, s := range r.sources {
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, r.interval)
			defer cancel()
			got[i], errs[i] = s.Sample(sctx)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	row := results.BlankObserveSample(t)
	row.Phase = phase
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.sources {
		h := &r.health[i]
		h.samples++
		if g, ok := r.sources[i].(gapReporter); ok {
			h.gaps = g.Unavailable() // the source is idle now
		}
		if errs[i] != nil {
			h.failed++
			h.last = errs[i]
			continue
		}
		row.Fill(&got[i])
	}
	r.rows = append(r.rows, row)
}

// Start runs Run in a goroutine. stop ends it, waits for it and returns
// the rows.
func (r *Recorder) Start(ctx context.Context) (stop func() []results.ObserveSample) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	return func() []results.ObserveSample {
		cancel()
		<-done
		return r.Rows()
	}
}

// WaitSampleAfter waits until the recorder holds a sample taken after t,
// at most max (or until ctx ends): so that what the server did before t
// falls in that sample and not in those of what comes next. It reports
// whether such a sample came.
func (r *Recorder) WaitSampleAfter(ctx context.Context, t time.Time, max time.Duration) bool {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		r.mu.Lock()
		ok := len(r.rows) > 0 && r.rows[len(r.rows)-1].T.After(t)
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-poll.C:
		}
	}
}

// Rows returns a copy of the rows so far.
func (r *Recorder) Rows() []results.ObserveSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]results.ObserveSample(nil), r.rows...)
}

// Unavailable says what was not observed and why, one line each: sources
// left out (no pid, no management URL, no DSN), sources that failed
// ("… failed 3 of 60 samples, last: …") and metric families the server
// does not expose. Empty means everything was observed.
func (r *Recorder) Unavailable() []string {
	r.mu.Lock()
	out := append([]string(nil), r.gaps...)
	for i, s := range r.sources {
		h := r.health[i]
		switch {
		case h.failed == 0:
		case h.failed == h.samples:
			out = append(out, fmt.Sprintf("%s: not observed, all %d samples failed, last: %v", s.Name(), h.samples, h.last))
		default:
			out = append(out, fmt.Sprintf("%s: %d of %d samples failed, last: %v", s.Name(), h.failed, h.samples, h.last))
		}
	}
	for _, h := range r.health {
		out = append(out, h.gaps...)
	}
	r.mu.Unlock()
	return out
}
