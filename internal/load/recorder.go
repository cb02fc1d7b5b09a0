package load

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kcbench/kcbench/internal/results"
)

// Histogram geometry: values in microseconds from 1 µs to 60 s with three
// significant figures. Larger values are recorded as the maximum and
// counted in OpStats.OutOfRange.
const (
	histLowest  = 1
	histHighest = 60_000_000
	histSigFigs = 3
)

// DefaultInterval is the timeline resolution: samples are merged into one
// timeline row (and one .hlog interval) per interval.
const DefaultInterval = time.Second

// RecorderOption configures a Recorder.
type RecorderOption func(*Recorder)

// WithWarmup discards the numbers of the first d of the run: timeline rows
// of the warm-up are kept but marked, and totals, rates, thresholds and
// .hlog intervals cover only what follows.
func WithWarmup(d time.Duration) RecorderOption {
	return func(r *Recorder) { r.warmup = max(d, 0) }
}

// WithStartAt makes the run's clock start at t rather than as soon as
// its up-front VUs exist: agents of a split run (Segment) started apart
// begin together. A t already past starts the run at once; Stats.Start
// says when it did.
func WithStartAt(t time.Time) RecorderOption {
	return func(r *Recorder) { r.startAt = t }
}

// WithIntervalHook has fn called at the end of every timeline interval,
// warm-up included, from the Recorder's own goroutine, with what the
// interval measured (live metrics are built from it, at no cost per
// request). fn must not block nor keep the histograms.
func WithIntervalHook(fn func(Interval)) RecorderOption {
	return func(r *Recorder) { r.hook = fn }
}

// WithEarlyEnd has fn see every interval after the warm-up, as
// WithIntervalHook's fn does, from the Recorder's own goroutine. When it
// returns a reason, an open-model run makes no more arrivals: its regular
// duration ends there, the graceful stop follows, and Stats.EndReason holds
// the reason (a capacity step that has already failed ends without
// overloading the server further). Closed-model runs do not end early.
func WithEarlyEnd(fn func(Interval) string) RecorderOption {
	return func(r *Recorder) { r.earlyEnd = fn }
}

// Interval is one timeline interval as WithIntervalHook sees it.
type Interval struct {
	End       time.Duration // offset from the start of the run
	Warmup    bool
	VUs       int // allocated at the end of the interval
	ActiveVUs int // in an iteration at the end of the interval
	Dropped   int64
	Ops       []IntervalOp
}

// IntervalOp is one operation's share of an Interval.
type IntervalOp struct {
	Name          string
	Count, Errors int64
	Classes       map[string]int64 // failed operations by class (see Classify); nil without errors
	// Latency holds the interval's latencies in µs; it is valid during the
	// call only.
	Latency *hdr.Histogram
}

// WithProgress has fn called after each timeline row is merged (about once
// a second) from the Recorder's own goroutine. fn must not block.
func WithProgress(fn func(Progress)) RecorderOption {
	return func(r *Recorder) { r.progress = fn }
}

// Progress is a running tally passed to the WithProgress callback.
type Progress struct {
	Elapsed    time.Duration // since the start of the run
	Warmup     bool          // still in the warm-up
	Iterations int64         // iterations finished so far, warm-up included
	Errors     int64         // failed iterations so far, warm-up included
	Rate       float64       // iterations per second over the last interval
	ActiveVUs  int           // VUs in an iteration now
	VUs        int           // VUs allocated now
	Dropped    int64         // dropped arrivals so far, warm-up included
	// ConnectErrors counts the failed iterations so far, warm-up included,
	// whose error was a refused connection: when it grows as fast as
	// Iterations, nothing reaches the target.
	ConnectErrors int64
}

// Recorder collects the samples of one run. Each VU appends to its own
// buffer, guarded by its own mutex that only the merging goroutine ever
// contends for; once per interval that goroutine swaps every buffer for an
// empty one and folds the samples into per-operation HDR histograms, one
// timeline row, the totals and the .hlog intervals.
//
// A Recorder serves one Run. Create it with NewRecorder; after Run returns,
// WriteHlog renders its interval histograms.
type Recorder struct {
	warmup   time.Duration
	interval time.Duration
	startAt  time.Time
	hook     func(Interval)
	progress func(Progress)
	earlyEnd func(Interval) string
	// early is closed when earlyEnd gave a reason (earlyWhy, under
	// mergeMu).
	early    chan struct{}
	earlyWhy string

	mu      sync.Mutex // guards the fields below up to the atomics
	used    bool
	vus     []*vuRecorder
	opIndex map[string]int
	opNames []string

	dropped     atomic.Int64
	interrupted atomic.Int64
	active      atomic.Int64 // VUs in an iteration
	allocated   atomic.Int64 // VUs allocated (closed: running)
	peak        atomic.Int64 // highest allocated

	stopTick chan struct{}
	tickDone chan struct{}

	// The fields below belong to the merge; mergeMu serialises merges.
	mergeMu    sync.Mutex
	info       runInfo
	start      time.Time
	regularEnd time.Time
	lastEnd    time.Duration
	ops        []*opAgg
	enc        hlogEncoder // the .hlog intervals' encoder
	store      hlogStore   // and their encodings until WriteHlog
	bufs       [][]sample
	timeline   []results.TimelineRow
	seen       struct{ dropped, interrupted int64 }
	measured   struct{ dropped, interrupted int64 }
	progressed struct{ iterations, errors, connect int64 }

	exMu     sync.Mutex
	examples map[class]string // the first error message of each class
}

// NewRecorder returns a Recorder with the given options applied.
func NewRecorder(opts ...RecorderOption) *Recorder {
	r := &Recorder{
		interval: DefaultInterval,
		opIndex:  map[string]int{results.IterationOp: 0},
		opNames:  []string{results.IterationOp},
		early:    make(chan struct{}),
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// sample is one recorded operation: latency from the intended start,
// service time from the actual start, and the error class.
type sample struct {
	latency time.Duration
	service time.Duration
	op      int32
	class   class
}

// runInfo describes the run a Recorder serves.
type runInfo struct {
	scenario string
	executor string
	model    results.Model
}

var errRecorderUsed = errors.New("load: a Recorder serves only one run")

// begin marks the start of the run, at the start time when one is set,
// and starts the merging goroutine.
func (r *Recorder) begin(ctx context.Context, info runInfo) (time.Time, error) {
	var start time.Time
	if wait := time.Until(r.startAt); !r.startAt.IsZero() && wait > 0 {
		if err := Sleep(ctx, wait); err != nil {
			return time.Time{}, fmt.Errorf("load: waiting for the start time: %w", err)
		}
		// The schedule starts at the start time, not when the timer
		// fired: every agent's rows and arrivals fall on the same instants.
		start = r.startAt
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.used {
		return time.Time{}, errRecorderUsed
	}
	r.used = true
	r.mergeMu.Lock()
	r.info = info
	r.start = start
	if r.start.IsZero() {
		r.start = time.Now()
	}
	r.mergeMu.Unlock()
	r.stopTick = make(chan struct{})
	r.tickDone = make(chan struct{})
	go r.tick()
	return r.start, nil
}

// endRegular marks the end of the run's regular duration, now or at its
// deadline if that passed already: rates are computed over the time from
// the end of the warm-up to this point.
func (r *Recorder) endRegular(deadline time.Time) {
	end := time.Now()
	if deadline.Before(end) {
		end = deadline
	}
	r.mergeMu.Lock()
	if r.regularEnd.IsZero() {
		r.regularEnd = end
	}
	r.mergeMu.Unlock()
}

// tick merges at every interval boundary and at the end of the warm-up.
func (r *Recorder) tick() {
	defer close(r.tickDone)
	next := r.nextBoundary(0)
	t := time.NewTimer(time.Until(r.start.Add(next)))
	defer t.Stop()
	for {
		select {
		case <-r.stopTick:
			return
		case <-t.C:
			p := r.flush(next, false)
			if r.progress != nil {
				r.progress(p)
			}
			next = r.nextBoundary(next)
			t.Reset(time.Until(r.start.Add(next)))
		}
	}
}

// nextBoundary returns the first row boundary after offset after.
func (r *Recorder) nextBoundary(after time.Duration) time.Duration {
	next := (after/r.interval + 1) * r.interval
	if r.warmup > after && r.warmup < next {
		return r.warmup
	}
	return next
}

// finish stops the merging goroutine, merges what is left and returns the
// run's Stats.
func (r *Recorder) finish(aborted bool) results.Stats {
	close(r.stopTick)
	<-r.tickDone
	end := time.Since(r.start)
	r.flush(end, true)

	r.mergeMu.Lock()
	defer r.mergeMu.Unlock()
	regular := end
	if !r.regularEnd.IsZero() {
		regular = min(r.regularEnd.Sub(r.start), end)
	}
	s := results.Stats{
		Scenario:    r.info.scenario,
		Executor:    r.info.executor,
		Model:       r.info.model,
		Start:       r.start,
		Warmup:      r.warmup,
		Duration:    max(regular-r.warmup, 0),
		Elapsed:     end,
		Aborted:     aborted,
		VUs:         int(r.peak.Load()),
		Dropped:     r.measured.dropped,
		Interrupted: r.measured.interrupted,
		Timeline:    r.timeline,
		EndReason:   r.earlyWhy,
	}
	for _, a := range r.ops {
		s.Ops = append(s.Ops, a.stats(s.Duration))
	}
	slices.SortFunc(s.Ops[1:], func(a, b results.OpStats) int { return strings.Compare(a.Name, b.Name) })
	s.Iterations = s.Ops[0].Count
	r.exMu.Lock()
	if len(r.examples) > 0 {
		s.ErrorExamples = make(map[string]string, len(r.examples))
		for c, m := range r.examples {
			s.ErrorExamples[c.String()] = m
		}
	}
	r.exMu.Unlock()
	return s
}

// maxExample bounds the length of an error message kept as an example.
const maxExample = 300

// example keeps err's message as the example of class c, unless one is
// kept already.
func (r *Recorder) example(c class, err error) {
	r.exMu.Lock()
	defer r.exMu.Unlock()
	if _, ok := r.examples[c]; ok {
		return
	}
	if r.examples == nil {
		r.examples = map[class]string{}
	}
	m := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(m) > maxExample {
		m = m[:maxExample] + "…"
	}
	r.examples[c] = m
}

// flush merges all buffered samples into a timeline row ending at offset
// end and, outside the warm-up, into the totals; it hands the interval to
// the hook and to the early-end rule, and returns the progress so far.
func (r *Recorder) flush(end time.Duration, final bool) Progress {
	r.mergeMu.Lock()
	defer r.mergeMu.Unlock()
	r.merge()
	if final && end <= r.lastEnd {
		end = r.lastEnd
	}
	row, dropped := r.openRow(end)
	// an early end is decided within the regular duration only
	early := r.earlyEnd != nil && !row.Warmup && !final && r.earlyWhy == "" && r.regularEnd.IsZero()
	if r.hook != nil || early {
		iv := r.intervalOf(row)
		if r.hook != nil {
			r.hook(iv)
		}
		if early {
			r.judgeEarly(iv)
		}
	}
	r.closeRow(&row)
	return r.progressAt(row, dropped)
}

// merge swaps every VU's buffer for its spare and folds the samples into
// the operations' current intervals (under mergeMu).
func (r *Recorder) merge() {
	r.mu.Lock()
	vus := r.vus
	r.mu.Unlock()
	bufs := r.bufs[:0]
	for _, v := range vus {
		v.mu.Lock()
		b := v.buf
		v.buf = v.spare
		v.mu.Unlock()
		bufs = append(bufs, b)
	}
	// Operations are registered before their samples are appended, so
	// reading the names after the swap covers every swapped sample.
	r.mu.Lock()
	names := r.opNames
	r.mu.Unlock()
	for len(r.ops) < len(names) {
		r.ops = append(r.ops, newOpAgg(names[len(r.ops)]))
	}
	for i, b := range bufs {
		for _, s := range b {
			r.ops[s.op].add(s)
		}
		vus[i].spare = b[:0]
	}
	r.bufs = bufs
}

// openRow starts the timeline row from the last one's end to end: VUs and
// the arrivals dropped since, counted into the measured totals outside
// the warm-up. It returns the arrivals dropped so far too.
func (r *Recorder) openRow(end time.Duration) (results.TimelineRow, int64) {
	warm := end <= r.warmup && r.warmup > 0
	dropped, interrupted := r.dropped.Load(), r.interrupted.Load()
	row := results.TimelineRow{
		Start:     r.lastEnd,
		End:       end,
		Warmup:    warm,
		VUs:       int(r.allocated.Load()),
		ActiveVUs: int(r.active.Load()),
		Dropped:   dropped - r.seen.dropped,
		Ops:       make([]results.OpInterval, len(r.ops)),
	}
	if !warm {
		r.measured.dropped += row.Dropped
		r.measured.interrupted += interrupted - r.seen.interrupted
	}
	r.seen.dropped, r.seen.interrupted = dropped, interrupted
	r.progressed.connect += r.ops[0].iClasses[classConnRefused]
	return row, dropped
}

// intervalOf is the row's Interval, for the hook and the early-end rule.
func (r *Recorder) intervalOf(row results.TimelineRow) Interval {
	iv := Interval{End: row.End, Warmup: row.Warmup, VUs: row.VUs, ActiveVUs: row.ActiveVUs, Dropped: row.Dropped, Ops: make([]IntervalOp, len(r.ops))}
	for i, a := range r.ops {
		o := IntervalOp{Name: a.name, Count: a.iCount, Errors: a.iErrors, Latency: a.iLat}
		for c, n := range a.iClasses {
			if o.Classes == nil {
				o.Classes = map[string]int64{}
			}
			o.Classes[c.String()] += n
		}
		iv.Ops[i] = o
	}
	return iv
}

// judgeEarly asks the early-end rule about iv; a reason ends the run
// (early is closed).
func (r *Recorder) judgeEarly(iv Interval) {
	if why := r.earlyEnd(iv); why != "" {
		r.earlyWhy = why
		close(r.early)
	}
}

// closeRow closes the operations' current intervals into row (and the
// .hlog) and appends it to the timeline.
func (r *Recorder) closeRow(row *results.TimelineRow) {
	startMs, endMs := r.start.Add(row.Start).UnixMilli(), r.start.Add(row.End).UnixMilli()
	for i, a := range r.ops {
		row.Ops[i] = a.closeInterval(!row.Warmup, startMs, endMs, &r.enc, &r.store)
	}
	slices.SortFunc(row.Ops[1:], func(a, b results.OpInterval) int { return strings.Compare(a.Op, b.Op) })
	if row.End > r.lastEnd || row.Ops[0].Count > 0 {
		r.timeline = append(r.timeline, *row)
	}
	r.lastEnd = row.End
}

// progressAt is the running tally after row.
func (r *Recorder) progressAt(row results.TimelineRow, dropped int64) Progress {
	it := row.Ops[0]
	r.progressed.iterations += it.Count
	r.progressed.errors += it.Errors
	p := Progress{
		Elapsed:       row.End,
		Warmup:        row.Warmup,
		Iterations:    r.progressed.iterations,
		Errors:        r.progressed.errors,
		ActiveVUs:     row.ActiveVUs,
		VUs:           row.VUs,
		Dropped:       dropped,
		ConnectErrors: r.progressed.connect,
	}
	if d := row.End - row.Start; d > 0 {
		p.Rate = float64(it.Count) / d.Seconds()
	}
	return p
}

// opAgg aggregates one operation: the current interval and the totals.
type opAgg struct {
	name string

	iLat, iSvc  *hdr.Histogram
	iCount      int64
	iErrors     int64
	iOutOfRange int64
	iClasses    map[class]int64

	tLat, tSvc  *hdr.Histogram
	tCount      int64
	tErrors     int64
	tOutOfRange int64
	tClasses    map[class]int64

	hlog []hlogInterval
}

// hlogInterval is one measured interval, kept encoded for WriteHlog.
type hlogInterval struct {
	startMs, endMs   int64
	latency, service hlogRef
}

func newHist() *hdr.Histogram { return hdr.New(histLowest, histHighest, histSigFigs) }

func newOpAgg(name string) *opAgg {
	return &opAgg{
		name:     name,
		iLat:     newHist(),
		iSvc:     newHist(),
		tLat:     newHist(),
		tSvc:     newHist(),
		iClasses: map[class]int64{},
		tClasses: map[class]int64{},
	}
}

func (a *opAgg) add(s sample) {
	a.iCount++
	if s.class != classNone {
		a.iErrors++
		a.iClasses[s.class]++
	}
	if !recordMicros(a.iLat, s.latency) {
		a.iOutOfRange++
	}
	recordMicros(a.iSvc, s.service)
}

// recordMicros records d in microseconds, clamped to the histogram's range;
// it reports whether d was in range.
func recordMicros(h *hdr.Histogram, d time.Duration) bool {
	us := max(d.Microseconds(), 0)
	in := us <= histHighest
	if !in {
		us = histHighest
	}
	// In range by construction, so RecordValue cannot fail.
	_ = h.RecordValue(us)
	return in
}

// closeInterval summarises the current interval, folds it into the totals
// when measured, and resets it.
func (a *opAgg) closeInterval(measured bool, startMs, endMs int64, enc *hlogEncoder, store *hlogStore) results.OpInterval {
	iv := results.OpInterval{
		Op:     a.name,
		Count:  a.iCount,
		Errors: a.iErrors,
	}
	if a.iCount > 0 {
		iv.P50 = micros(a.iLat.ValueAtQuantile(50))
		iv.P95 = micros(a.iLat.ValueAtQuantile(95))
		iv.P99 = micros(a.iLat.ValueAtQuantile(99))
		iv.Max = micros(a.iLat.Max())
	}
	if measured {
		a.tLat.Merge(a.iLat)
		a.tSvc.Merge(a.iSvc)
		a.tCount += a.iCount
		a.tErrors += a.iErrors
		a.tOutOfRange += a.iOutOfRange
		for c, n := range a.iClasses {
			a.tClasses[c] += n
		}
		a.hlog = append(a.hlog, hlogInterval{startMs, endMs, store.put(enc.encode(a.iLat)), store.put(enc.encode(a.iSvc))})
	}
	a.iLat.Reset()
	a.iSvc.Reset()
	a.iCount, a.iErrors, a.iOutOfRange = 0, 0, 0
	clear(a.iClasses)
	return iv
}

func (a *opAgg) stats(d time.Duration) results.OpStats {
	s := results.OpStats{
		Name:       a.name,
		Count:      a.tCount,
		OK:         a.tCount - a.tErrors,
		Errors:     a.tErrors,
		OutOfRange: a.tOutOfRange,
		Latency:    dist(a.tLat),
		Service:    dist(a.tSvc),
	}
	if d > 0 {
		s.Rate = float64(a.tCount) / d.Seconds()
	}
	if len(a.tClasses) > 0 {
		s.ErrorClasses = make(map[string]int64, len(a.tClasses))
		for c, n := range a.tClasses {
			s.ErrorClasses[c.String()] += n
		}
	}
	return s
}

// Dist summarises h (values in microseconds) as the engine does its own
// histograms, so that merged results read like a single run's.
func Dist(h *hdr.Histogram) results.Dist { return dist(h) }

func dist(h *hdr.Histogram) results.Dist {
	if h.TotalCount() == 0 {
		return results.Dist{}
	}
	return results.Dist{
		Min:  micros(h.Min()),
		Mean: time.Duration(h.Mean() * float64(time.Microsecond)).Round(time.Microsecond),
		P50:  micros(h.ValueAtQuantile(50)),
		P90:  micros(h.ValueAtQuantile(90)),
		P95:  micros(h.ValueAtQuantile(95)),
		P99:  micros(h.ValueAtQuantile(99)),
		P999: micros(h.ValueAtQuantile(99.9)),
		Max:  micros(h.Max()),
	}
}

func micros(us int64) time.Duration { return time.Duration(us) * time.Microsecond }

// drop counts an arrival that found no free VU.
func (r *Recorder) drop() { r.dropped.Add(1) }

// newVU registers a VU whose iterations run under ctx.
func (r *Recorder) newVU(ctx context.Context) *vuRecorder {
	v := &vuRecorder{r: r, ctx: ctx, ops: map[string]int32{results.IterationOp: 0}}
	r.trackPeak(r.allocated.Add(1))
	r.mu.Lock()
	r.vus = append(r.vus, v)
	r.mu.Unlock()
	return v
}

// setVUs sets the number of allocated VUs.
func (r *Recorder) setVUs(n int64) {
	r.allocated.Store(n)
	r.trackPeak(n)
}

// trackPeak raises the peak number of allocated VUs to n.
func (r *Recorder) trackPeak(n int64) {
	for {
		p := r.peak.Load()
		if n <= p || r.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

// opID returns the index of operation name, registering it if new.
func (r *Recorder) opID(name string) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.opIndex[name]
	if !ok {
		id = len(r.opNames)
		r.opIndex[name] = id
		r.opNames = append(r.opNames, name)
	}
	return int32(id)
}

// vuRecorder is one VU's OpRecorder. mu is taken by the VU for each sample
// and by the merging goroutine once per interval; no other goroutine shares
// it, so the hot path does not contend.
type vuRecorder struct {
	r   *Recorder
	ctx context.Context // the VU's iteration context, to tell interruptions

	mu    sync.Mutex
	buf   []sample
	ops   map[string]int32 // this VU's cache of operation ids
	lag   time.Duration    // how late the current iteration started
	spare []sample         // owned by the merge

	exampled map[class]bool // classes this VU has given an example of; the VU's own
}

// noteError hands the Recorder an example of an error of class c, once
// per class and VU.
func (v *vuRecorder) noteError(c class, err error) {
	if v.exampled[c] {
		return
	}
	if v.exampled == nil {
		v.exampled = map[class]bool{}
	}
	v.exampled[c] = true
	v.r.example(c, err)
}

var _ OpRecorder = (*vuRecorder)(nil)

// Record implements OpRecorder. An operation of the current iteration is
// shifted by the iteration's lag: had the iteration started on time, the
// operation would have, so its latency counts from its intended start.
func (v *vuRecorder) Record(op string, start time.Time, err error) {
	svc := time.Since(start)
	c := classify(err)
	if c != classNone {
		if v.ctx.Err() != nil {
			return // part of an interrupted iteration
		}
		v.noteError(c, err)
	}
	v.mu.Lock()
	id, ok := v.ops[op]
	if !ok {
		id = v.r.opID(op)
		v.ops[op] = id
	}
	v.buf = append(v.buf, sample{latency: svc + v.lag, service: svc, op: id, class: c})
	v.mu.Unlock()
}

// startIteration notes how late the iteration that starts now is.
func (v *vuRecorder) startIteration(lag time.Duration) {
	v.mu.Lock()
	v.lag = lag
	v.mu.Unlock()
}

// endIteration records an iteration intended to start at intended, actually
// started at begin, and failed with err if not nil.
func (v *vuRecorder) endIteration(intended, begin time.Time, err error) {
	end := time.Now()
	c := classify(err)
	if c != classNone {
		if v.ctx.Err() != nil {
			v.r.interrupted.Add(1)
			return
		}
		v.noteError(c, err)
	}
	v.mu.Lock()
	v.buf = append(v.buf, sample{latency: end.Sub(intended), service: end.Sub(begin), op: 0, class: c})
	v.mu.Unlock()
}
