package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// ObserveSample is one row of observe.csv (internal/observe samples
// the server; the file type lives here, for report and the others that read it): what the sources saw at T. A value is
// NaN when it was not observed (source unavailable or failing, first
// sample of a rate); it is written as an empty cell. Counters are turned
// into rates per second between two samples of the same source.
type ObserveSample struct {
	T     time.Time
	Phase string // set with observe's Recorder.SetPhase: "boot", "cold", "warm"…

	// Keycloak process tree, from /proc (local) or /metrics (CPU only).
	KCCPUPct   float64 // percent of one core
	KCRSSBytes float64
	// PostgreSQL process tree (postmaster and backends), from /proc.
	PGCPUPct   float64 // percent of one core
	PGRSSBytes float64

	// Keycloak's management /metrics.
	HeapUsed, HeapCommitted float64 // bytes
	GCCount                 float64 // GC pauses per second
	GCPauseSeconds          float64 // seconds paused per second
	HTTPRequests            float64 // application requests finished per second
	DBPoolActive            float64
	DBPoolAwaiting          float64
	DBPoolMaxUsed           float64
	WorkerActive            float64 // busy HTTP worker threads
	WorkerQueue             float64 // requests queued for a worker thread
	CacheRealms             float64 // entries in the realms cache
	CacheUsers              float64 // entries in the users cache
	CacheSessions           float64 // entries in the sessions cache

	// PostgreSQL's pg_stat_database for Keycloak's database, per second.
	PGCommits       float64
	PGRollbacks     float64
	PGBlksRead      float64
	PGBlksHit       float64
	PGTuplesWritten float64 // inserted + updated + deleted
	PGDBSizeBytes   float64 // pg_database_size, not a rate
}

// observeColumn is one numeric field of ObserveSample, named as in observe.csv.
type observeColumn struct {
	name string
	get  func(*ObserveSample) *float64
}

// observeColumns lists ObserveSample's numeric fields in CSV order. Every generic
// operation (BlankObserveSample, Fill, the CSV, observe's Summary) goes through it.
var observeColumns = [...]observeColumn{
	{"kc_cpu_pct", func(s *ObserveSample) *float64 { return &s.KCCPUPct }},
	{"kc_rss_bytes", func(s *ObserveSample) *float64 { return &s.KCRSSBytes }},
	{"pg_cpu_pct", func(s *ObserveSample) *float64 { return &s.PGCPUPct }},
	{"pg_rss_bytes", func(s *ObserveSample) *float64 { return &s.PGRSSBytes }},
	{"heap_used_bytes", func(s *ObserveSample) *float64 { return &s.HeapUsed }},
	{"heap_committed_bytes", func(s *ObserveSample) *float64 { return &s.HeapCommitted }},
	{"gc_per_s", func(s *ObserveSample) *float64 { return &s.GCCount }},
	{"gc_pause_s_per_s", func(s *ObserveSample) *float64 { return &s.GCPauseSeconds }},
	{"http_req_per_s", func(s *ObserveSample) *float64 { return &s.HTTPRequests }},
	{"db_pool_active", func(s *ObserveSample) *float64 { return &s.DBPoolActive }},
	{"db_pool_awaiting", func(s *ObserveSample) *float64 { return &s.DBPoolAwaiting }},
	{"db_pool_max_used", func(s *ObserveSample) *float64 { return &s.DBPoolMaxUsed }},
	{"worker_active", func(s *ObserveSample) *float64 { return &s.WorkerActive }},
	{"worker_queue", func(s *ObserveSample) *float64 { return &s.WorkerQueue }},
	{"cache_realms_entries", func(s *ObserveSample) *float64 { return &s.CacheRealms }},
	{"cache_users_entries", func(s *ObserveSample) *float64 { return &s.CacheUsers }},
	{"cache_sessions_entries", func(s *ObserveSample) *float64 { return &s.CacheSessions }},
	{"pg_commits_per_s", func(s *ObserveSample) *float64 { return &s.PGCommits }},
	{"pg_rollbacks_per_s", func(s *ObserveSample) *float64 { return &s.PGRollbacks }},
	{"pg_blks_read_per_s", func(s *ObserveSample) *float64 { return &s.PGBlksRead }},
	{"pg_blks_hit_per_s", func(s *ObserveSample) *float64 { return &s.PGBlksHit }},
	{"pg_tuples_written_per_s", func(s *ObserveSample) *float64 { return &s.PGTuplesWritten }},
	{"pg_db_size_bytes", func(s *ObserveSample) *float64 { return &s.PGDBSizeBytes }},
}

// ObserveColumns returns the CSV header of observe.csv.
func ObserveColumns() []string {
	h := []string{"time", "phase"}
	for _, c := range observeColumns {
		h = append(h, c.name)
	}
	return h
}

// BlankObserveSample returns a ObserveSample at t with nothing observed (every value NaN).
// Sources start from it and fill what they see.
func BlankObserveSample(t time.Time) ObserveSample {
	s := ObserveSample{T: t}
	for _, c := range observeColumns {
		*c.get(&s) = math.NaN()
	}
	return s
}

// Value returns the value of the column named as in the CSV header, and
// false for an unknown name.
func (s ObserveSample) Value(name string) (float64, bool) {
	for _, c := range observeColumns {
		if c.name == name {
			return *c.get(&s), true
		}
	}
	return math.NaN(), false
}

// Fill copies into s every value src observed that s has not.
func (s *ObserveSample) Fill(src *ObserveSample) {
	for _, c := range observeColumns {
		if d, v := c.get(s), *c.get(src); math.IsNaN(*d) && !math.IsNaN(v) {
			*d = v
		}
	}
}

// WriteObserveCSV writes rows as observe.csv: a header (ObserveColumns), then one line
// per sample with the time in RFC 3339 with nanoseconds and empty cells
// for unobserved values.
func WriteObserveCSV(w io.Writer, rows []ObserveSample) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(ObserveColumns()); err != nil {
		return err
	}
	rec := make([]string, 2+len(observeColumns))
	for i := range rows {
		r := &rows[i]
		rec[0] = r.T.Format(time.RFC3339Nano)
		rec[1] = r.Phase
		for j, c := range observeColumns {
			rec[2+j] = formatObserveValue(*c.get(r))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func formatObserveValue(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ReadObserveCSV reads what WriteObserveCSV wrote. Columns are matched by header name,
// so files with fewer (older) or extra (newer) observeColumns still read: a
// missing column reads as NaN, an unknown one is ignored.
func ReadObserveCSV(r io.Reader) ([]ObserveSample, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("observe csv: empty file")
	}
	if err != nil {
		return nil, fmt.Errorf("observe csv: %w", err)
	}
	idx := map[string]int{}
	for i, h := range head {
		idx[h] = i
	}
	ti, ok := idx["time"]
	if !ok {
		return nil, errors.New("observe csv: no time column")
	}
	pi, hasPhase := idx["phase"]
	var rows []ObserveSample
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("observe csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		t, err := time.Parse(time.RFC3339Nano, rec[ti])
		if err != nil {
			return nil, fmt.Errorf("observe csv line %d: time: %w", line, err)
		}
		s := BlankObserveSample(t)
		if hasPhase {
			s.Phase = rec[pi]
		}
		for _, c := range observeColumns {
			i, ok := idx[c.name]
			if !ok || rec[i] == "" {
				continue
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				return nil, fmt.Errorf("observe csv line %d: %s: %w", line, c.name, err)
			}
			*c.get(&s) = v
		}
		rows = append(rows, s)
	}
}

// WarmWindow and WarmTolerance are how a workload's warm_after_s is
// judged (observe.WarmAfter): windows of 10 s, within 20 % of the warm
// cost.
const (
	WarmWindow    = 10 * time.Second
	WarmTolerance = 0.2
)
