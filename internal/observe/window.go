package observe

import (
	"context"
	"errors"
	"os"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// Windows read the server's CPU time, the database's statistics and the
// LDAP directory's CPU time at the end of a run's warm-up and at its end:
// the figures of the run's measured window, per successful iteration.
type Windows struct {
	cpu *cpuWindow
	db  *dbWindow
	dir *dirWindow
}

// NewWindows prepares the readings of what tg tells about: a local
// server's /proc or its management URLs, its database, its directory.
func NewWindows(ctx context.Context, tg kc.Target) *Windows {
	return &Windows{cpu: newCPUWindow(ctx, tg), db: newDBWindow(ctx, tg), dir: newDirWindow(ctx, tg)}
}

// Baseline measures the server's idle CPU use for d, before the run: the
// CPU figures are then also given net of it.
func (w *Windows) Baseline(ctx context.Context, d time.Duration) error { return w.cpu.baseline(ctx, d) }

// Begin schedules the first readings after warmup; call it when the run's
// clock starts.
func (w *Windows) Begin(warmup time.Duration) {
	w.cpu.begin(warmup)
	w.db.begin(warmup)
	w.dir.begin(warmup)
}

// End takes the last readings.
func (w *Windows) End() {
	w.cpu.end()
	w.db.end()
	w.dir.end()
}

// CPU is the server's CPU over the window, per successful iteration of s.
func (w *Windows) CPU(s results.Stats) results.ServerCPU { return w.cpu.result(s) }

// DB is the database's cost over the window; nil when the target's
// database is unknown.
func (w *Windows) DB(s results.Stats) *results.DBCost { return w.db.result(s) }

// Directory is the directory's CPU over the window; nil when the users
// are not in LDAP.
func (w *Windows) Directory(s results.Stats) *results.DirectoryCost { return w.dir.result(s) }

// window takes a reading of a cumulative figure at the end of the
// warm-up and at the end of the run.
type window[T any] struct {
	ctx  context.Context
	read func(context.Context) (T, error) // nil: nothing to read

	mu      sync.Mutex
	t0, t1  time.Time
	v0, v1  T
	err     error
	timer   *time.Timer
	started bool
	sampled chan struct{} // closed once the first reading is taken or abandoned
}

func newWindow[T any](ctx context.Context, read func(context.Context) (T, error)) window[T] {
	return window[T]{ctx: ctx, read: read, sampled: make(chan struct{})}
}

// begin schedules the first reading after warmup.
func (w *window[T]) begin(warmup time.Duration) {
	if w.read == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = true
	w.timer = time.AfterFunc(warmup, func() {
		defer close(w.sampled)
		v, err := w.read(w.ctx)
		w.mu.Lock()
		w.t0, w.v0, w.err = time.Now(), v, err
		w.mu.Unlock()
	})
}

// end takes the last reading.
func (w *window[T]) end() {
	w.mu.Lock()
	started, timer := w.started, w.timer
	w.mu.Unlock()
	if w.read == nil || !started {
		return
	}
	if timer.Stop() { // the run ended within the warm-up
		w.mu.Lock()
		w.err = errors.New("the run ended before its warm-up did")
		w.mu.Unlock()
		close(w.sampled)
		return
	}
	<-w.sampled
	v, err := w.read(context.WithoutCancel(w.ctx))
	w.mu.Lock()
	w.t1, w.v1 = time.Now(), v
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// cpuWindow samples the server's CPU time at the end of the warm-up and
// at the end of the run.
type cpuWindow struct {
	window[time.Duration]
	sampler CPUSampler
	reason  string // why there is no sampler
	res     string
	warning string // why the CPU may not be the whole cluster's

	idle, idleFor float64 // cores and seconds of the baseline
}

func newCPUWindow(ctx context.Context, tg kc.Target) *cpuWindow {
	w := &cpuWindow{}
	switch {
	case tg.PID > 0:
		w.sampler = NewProcCPU(os.DirFS("/proc"), tg.ServerPIDs())
		w.res = "10 ms (clock ticks)"
	case tg.ManagementURL != "":
		var m PodsCPU
		for _, u := range tg.ManagementURLs() {
			m = append(m, MetricsCPU{URL: u, Client: tg.HTTPClient(DefaultScrapeTimeout)})
		}
		if _, err := m.CPUTime(ctx); err != nil {
			w.reason = err.Error()
		} else {
			w.sampler = m
			w.res = "Micrometer's text format: 4 significant digits"
			if pods, err := ReadPods(ctx, tg.HTTPClient(DefaultScrapeTimeout), tg.ManagementURLs()); err == nil {
				w.warning = PodsWarning(pods)
			}
		}
	default:
		w.reason = "the target is not a local stack and has no management URL"
	}
	var read func(context.Context) (time.Duration, error)
	if w.sampler != nil {
		read = w.sampler.CPUTime
	}
	w.window = newWindow(ctx, read)
	return w
}

// baseline measures the server's idle CPU use for d.
func (w *cpuWindow) baseline(ctx context.Context, d time.Duration) error {
	if w.sampler == nil {
		return nil
	}
	c0, err := w.sampler.CPUTime(ctx)
	if err != nil {
		return nil // the run says the CPU is unavailable
	}
	t0 := time.Now()
	if err := load.Sleep(ctx, d); err != nil {
		return err
	}
	c1, err := w.sampler.CPUTime(ctx)
	if err != nil {
		return nil
	}
	w.idleFor = time.Since(t0).Seconds()
	w.idle = (c1 - c0).Seconds() / w.idleFor
	return nil
}

// dbWindow reads the database's statistics (and, when local, its CPU) at
// the end of the warm-up and at the end of the run.
type dbWindow struct {
	window[DBUsage]
	reader *DBUsageReader
	// engine is the target's DBKind when only the database's CPU is read
	// (MariaDB: mariadbd's tree from /proc).
	engine string
}

func newDBWindow(ctx context.Context, tg kc.Target) *dbWindow {
	w := &dbWindow{}
	var read func(context.Context) (DBUsage, error)
	if tg.DB != "" {
		w.reader = &DBUsageReader{DSN: tg.DB, PID: tg.DBPID, Proc: os.DirFS("/proc")}
		read = w.reader.Read
	} else if tg.DBKind != "" && tg.DBPID > 0 {
		w.engine = tg.DBKind
		proc, pid := os.DirFS("/proc"), tg.DBPID
		read = func(context.Context) (DBUsage, error) { return ReadTreeCPU(proc, pid) }
	}
	w.window = newWindow(ctx, read)
	return w
}

// dirWindow reads the LDAP directory server's CPU time (users in LDAP,
// the server local) at the end of the warm-up and at the end of the run.
type dirWindow struct {
	window[time.Duration]
	dir *kc.Directory
	src string
}

func newDirWindow(ctx context.Context, tg kc.Target) *dirWindow {
	w := &dirWindow{dir: tg.LDAP}
	var read func(context.Context) (time.Duration, error)
	if tg.LDAP != nil && tg.LDAP.PID > 0 {
		p := NewProcCPU(os.DirFS("/proc"), []int{tg.LDAP.PID})
		read, w.src = p.CPUTime, p.Source()
	}
	w.window = newWindow(ctx, read)
	return w
}

// result is the directory's CPU per successful iteration; nil when the
// users are not in LDAP.
func (w *dirWindow) result(s results.Stats) *results.DirectoryCost {
	if w.dir == nil {
		return nil
	}
	if w.src == "" {
		return &results.DirectoryCost{Reason: "CPU not measured (the directory is not a local process)"}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.started:
		return &results.DirectoryCost{Source: w.src, Reason: "no iteration ran"}
	case w.err != nil:
		return &results.DirectoryCost{Source: w.src, Reason: w.err.Error()}
	}
	c := &results.DirectoryCost{Available: true, Source: w.src, Window: w.t1.Sub(w.t0).Seconds(), CPU: (w.v1 - w.v0).Seconds()}
	if it, ok := s.Op(results.IterationOp); ok && it.OK > 0 {
		c.Ops = it.OK
		c.CPUMsPerOp = c.CPU * 1000 / float64(it.OK)
	}
	return c
}

// end takes the last reading and closes the connection.
func (w *dbWindow) end() {
	w.window.end()
	if w.reader != nil {
		w.reader.Close()
	}
}

// result is the database's cost over the measured window, per successful
// iteration; nil when the target's database is unknown.
func (w *dbWindow) result(s results.Stats) *results.DBCost {
	if w.reader == nil && w.engine == "" {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case !w.started:
		return &results.DBCost{Reason: "no iteration ran"}
	case w.err != nil:
		return &results.DBCost{Reason: "database statistics unreadable: " + w.err.Error()}
	}
	var ok int64
	if it, found := s.Op(results.IterationOp); found {
		ok = it.OK
	}
	if w.engine != "" {
		c := CPUCost(w.engine, w.v0, w.v1, w.t1.Sub(w.t0).Seconds(), ok)
		return &c
	}
	// the first reading's own transaction commits inside the window
	c := Cost(w.v0, w.v1, w.t1.Sub(w.t0).Seconds(), ok, 1)
	return &c
}

func (w *cpuWindow) result(s results.Stats) results.ServerCPU {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.sampler == nil:
		return results.ServerCPU{Reason: w.reason}
	case !w.started:
		return results.ServerCPU{Source: w.sampler.Source(), Reason: "no iteration ran"}
	case w.err != nil:
		return results.ServerCPU{Source: w.sampler.Source(), Reason: w.err.Error()}
	}
	r := results.ServerCPU{Available: true, Source: w.sampler.Source(), Resolution: w.res, Warning: w.warning,
		CPU: (w.v1 - w.v0).Seconds(), Window: w.t1.Sub(w.t0).Seconds()}
	if r.Window > 0 {
		r.Cores = r.CPU / r.Window
	}
	ms := r.CPU * 1000
	if it, ok := s.Op(results.IterationOp); ok && it.OK > 0 {
		r.PerIteration = ms / float64(it.OK)
		if w.idleFor > 0 {
			r.IdleCores, r.Baseline = w.idle, w.idleFor
			r.NetPerIteration = max(ms-w.idle*r.Window*1000, 0) / float64(it.OK)
		}
	}
	if len(s.Ops) == 2 { // the iteration and its one operation
		if o := s.Ops[1]; o.OK > 0 {
			r.PerOp = map[string]float64{o.Name: ms / float64(o.OK)}
		}
	}
	return r
}
