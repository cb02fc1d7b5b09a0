package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Model says how load was offered.
type Model string

const (
	// ModelClosed: a fixed population of VUs loops; a slow target slows the
	// load down, and latency is measured from the actual send.
	ModelClosed Model = "closed"
	// ModelOpen: arrivals follow a schedule whatever the target does;
	// latency is measured from each arrival's intended start.
	ModelOpen Model = "open"
)

// Stats is the result of one run.
//
// Durations and rates cover the measured window: from the end of the
// warm-up to the end of the regular duration. Iterations that started in it
// and finished during the graceful stop count; iterations cut off by the
// graceful stop or by cancellation are counted as Interrupted only.
type Stats struct {
	Scenario    string
	Executor    string // e.g. "constant-arrival-rate"
	Model       Model
	Start       time.Time
	Duration    time.Duration // measured window
	Warmup      time.Duration // discarded before the measured window
	Elapsed     time.Duration // wall time of the whole run, warm-up and graceful stop included
	Aborted     bool          // the run was cancelled before its end
	VUs         int           // peak number of VUs allocated
	Iterations  int64         // iterations finished in the measured window, failed ones included
	Dropped     int64         // open model: arrivals that found no free VU
	Interrupted int64         // iterations cut off by the graceful stop or cancellation
	Ops         []OpStats     // IterationOp first, then the scenario's operations by name
	Thresholds  []ThresholdResult
	Timeline    []TimelineRow // one row per interval, warm-up included; not in JSON (see WriteTimelineCSV)
	// ErrorExamples holds the first error message of each error class
	// (see Classify), warm-up included.
	ErrorExamples map[string]string
	// EndReason, when set, says why the run ended early, e.g. "Keycloak
	// exited 42 s into the run: OutOfMemoryError: Java heap space"; the
	// engine leaves it to its caller.
	EndReason string
	// Events are the things done to the system under test during the run
	// (a node killed, latency changed), in the order they happened.
	Events []Event
	// Timeout is the HTTP request time-out in force (0: not recorded), so
	// that requests cut off by it are a measured outcome: Timeouts
	// counts them.
	Timeout time.Duration
}

// ErrorClassTimeout is the error class of a request cut off by a
// deadline (the load engine's Classify).
const ErrorClassTimeout = "timeout"

// Timeouts counts the measured iterations that failed on a time-out.
func (s Stats) Timeouts() int64 {
	if o, ok := s.Op(IterationOp); ok {
		return o.ErrorClasses[ErrorClassTimeout]
	}
	return 0
}

// Event is one action on the system under test during a run, stamped on
// the run's timeline.
type Event struct {
	At     time.Duration // offset from the start of the run (Stats.Start), warm-up included
	Action string        // e.g. "kill", "start", "latency"
	Args   string        // e.g. "node=2", "node-db=50ms"
	Err    string        // why the action failed, if it did
	// Took is how long the action ran (a started node: until it was
	// ready, in the cluster and up in the balancer).
	Took time.Duration
	// Recovery is what the run went through after the event (nil: not
	// measured).
	Recovery *Recovery
}

type eventJSON struct {
	At       float64       `json:"at_s"`
	Action   string        `json:"action"`
	Args     string        `json:"args,omitempty"`
	Err      string        `json:"error,omitempty"`
	Took     float64       `json:"took_s,omitempty"`
	Recovery *recoveryJSON `json:"recovery,omitempty"`
}

// MarshalJSON writes e with its offset in seconds.
func (e Event) MarshalJSON() ([]byte, error) {
	j := eventJSON{At: e.At.Seconds(), Action: e.Action, Args: e.Args, Err: e.Err, Took: e.Took.Seconds()}
	if e.Recovery != nil {
		r := e.Recovery.toJSON()
		j.Recovery = &r
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j eventJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Event{At: fromSeconds(j.At), Action: j.Action, Args: j.Args, Err: j.Err, Took: fromSeconds(j.Took)}
	if j.Recovery != nil {
		r := j.Recovery.recovery()
		e.Recovery = &r
	}
	return nil
}

// Op returns the stats of operation name, and whether there are any.
func (s Stats) Op(name string) (OpStats, bool) {
	for _, o := range s.Ops {
		if o.Name == name {
			return o, true
		}
	}
	return OpStats{}, false
}

// OpStats summarises one operation over the measured window.
type OpStats struct {
	Name         string
	Count        int64            // finished operations, failed ones included
	OK           int64            // operations without error
	Errors       int64            // failed operations
	ErrorClasses map[string]int64 // failed operations by class (see Classify)
	OutOfRange   int64            // latencies above the histogram's 60 s, recorded as 60 s
	Rate         float64          // Count per second of the measured window
	Latency      Dist             // open model: from the intended start; closed: equal to Service
	Service      Dist             // from the actual send to the end
}

// ErrorRate returns Errors/Count, or 0 without operations.
func (o OpStats) ErrorRate() float64 {
	if o.Count == 0 {
		return 0
	}
	return float64(o.Errors) / float64(o.Count)
}

// ErrorRateBesidesTimeouts is the share of iterations that failed other
// than by the request time-out: an admin API that answers after the
// time-out is slow, a measured outcome (Stats.Timeouts), not broken.
func (o OpStats) ErrorRateBesidesTimeouts() float64 {
	if o.Count == 0 {
		return 0
	}
	return float64(o.Errors-o.ErrorClasses[ErrorClassTimeout]) / float64(o.Count)
}

// Dist summarises a latency distribution, at microsecond resolution.
type Dist struct {
	Min, Mean, P50, P90, P95, P99, P999, Max time.Duration
}

// TimelineRow is one interval of the run.
type TimelineRow struct {
	Start, End time.Duration // offsets from the start of the run
	Warmup     bool          // the row belongs to the warm-up
	VUs        int           // VUs allocated at the end of the row
	ActiveVUs  int           // VUs in an iteration at the end of the row
	Dropped    int64         // arrivals dropped during the row
	Ops        []OpInterval  // one per operation, IterationOp first, then by name
}

// OpInterval is one operation's share of a TimelineRow; percentiles are of
// latency.
type OpInterval struct {
	Op                 string
	Count, Errors      int64
	P50, P95, P99, Max time.Duration
}

// JSON encoding: durations as floating-point milliseconds (distributions)
// or seconds (run lengths), with explicit units in the names.

type distJSON struct {
	Min  float64 `json:"min_ms"`
	Mean float64 `json:"mean_ms"`
	P50  float64 `json:"p50_ms"`
	P90  float64 `json:"p90_ms"`
	P95  float64 `json:"p95_ms"`
	P99  float64 `json:"p99_ms"`
	P999 float64 `json:"p99_9_ms"`
	Max  float64 `json:"max_ms"`
}

// MarshalJSON writes the distribution in milliseconds.
func (d Dist) MarshalJSON() ([]byte, error) {
	return json.Marshal(distJSON{ms(d.Min), ms(d.Mean), ms(d.P50), ms(d.P90), ms(d.P95), ms(d.P99), ms(d.P999), ms(d.Max)})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (d *Dist) UnmarshalJSON(b []byte) error {
	var j distJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if err := j.check(); err != nil {
		return err
	}
	*d = Dist{fromMs(j.Min), fromMs(j.Mean), fromMs(j.P50), fromMs(j.P90), fromMs(j.P95), fromMs(j.P99), fromMs(j.P999), fromMs(j.Max)}
	return nil
}

type opStatsJSON struct {
	Name         string           `json:"name"`
	Count        int64            `json:"count"`
	OK           int64            `json:"ok"`
	Errors       int64            `json:"errors"`
	ErrorClasses map[string]int64 `json:"error_classes,omitempty"`
	OutOfRange   int64            `json:"out_of_range"`
	Rate         float64          `json:"rate_per_s"`
	Latency      Dist             `json:"latency"`
	Service      Dist             `json:"service"`
}

// MarshalJSON writes o with snake_case names.
func (o OpStats) MarshalJSON() ([]byte, error) { return json.Marshal(opStatsJSON(o)) }

// UnmarshalJSON reads what MarshalJSON wrote.
func (o *OpStats) UnmarshalJSON(b []byte) error {
	var w struct {
		opStatsJSON
		Latency json.RawMessage `json:"latency"`
		Service json.RawMessage `json:"service"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	j := w.opStatsJSON
	for _, d := range []struct {
		name string
		raw  json.RawMessage
		dst  *Dist
	}{{"latency", w.Latency, &j.Latency}, {"service", w.Service, &j.Service}} {
		if len(d.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(d.raw, d.dst); err != nil {
			return fmt.Errorf("op %q: %s: %w", j.Name, d.name, err)
		}
	}
	if err := j.check(); err != nil {
		return err
	}
	*o = OpStats(j)
	return nil
}

type statsJSON struct {
	Scenario    string            `json:"scenario"`
	Executor    string            `json:"executor"`
	Model       Model             `json:"model"`
	Start       time.Time         `json:"start"`
	Duration    float64           `json:"duration_s"`
	Warmup      float64           `json:"warmup_s"`
	Elapsed     float64           `json:"elapsed_s"`
	Aborted     bool              `json:"aborted"`
	VUs         int               `json:"vus"`
	Iterations  int64             `json:"iterations"`
	Dropped     int64             `json:"dropped_iterations"`
	Interrupted int64             `json:"interrupted_iterations"`
	Ops         []OpStats         `json:"ops"`
	Thresholds  []ThresholdResult `json:"thresholds,omitempty"`

	ErrorExamples map[string]string `json:"error_examples,omitempty"`
	EndReason     string            `json:"end_reason,omitempty"`
	Events        []Event           `json:"events,omitempty"`
	Timeout       float64           `json:"http_timeout_s,omitempty"`
}

// MarshalJSON writes s without its timeline, run lengths in seconds.
func (s Stats) MarshalJSON() ([]byte, error) { return json.Marshal(s.toJSON()) }

func (s Stats) toJSON() statsJSON {
	return statsJSON{
		Scenario: s.Scenario, Executor: s.Executor, Model: s.Model, Start: s.Start,
		Duration: s.Duration.Seconds(), Warmup: s.Warmup.Seconds(), Elapsed: s.Elapsed.Seconds(),
		Aborted: s.Aborted, VUs: s.VUs, Iterations: s.Iterations, Dropped: s.Dropped,
		Interrupted: s.Interrupted, Ops: s.Ops, Thresholds: s.Thresholds,
		ErrorExamples: s.ErrorExamples, EndReason: s.EndReason, Events: s.Events, Timeout: s.Timeout.Seconds(),
	}
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *Stats) UnmarshalJSON(b []byte) error {
	var j statsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	return j.stats(s)
}

// stats checks j and sets s from it.
func (j statsJSON) stats(s *Stats) error {
	if err := j.check(); err != nil {
		return err
	}
	*s = Stats{
		Scenario: j.Scenario, Executor: j.Executor, Model: j.Model, Start: j.Start,
		Duration: fromSeconds(j.Duration), Warmup: fromSeconds(j.Warmup), Elapsed: fromSeconds(j.Elapsed),
		Aborted: j.Aborted, VUs: j.VUs, Iterations: j.Iterations, Dropped: j.Dropped,
		Interrupted: j.Interrupted, Ops: j.Ops, Thresholds: j.Thresholds,
		ErrorExamples: j.ErrorExamples, EndReason: j.EndReason, Events: j.Events, Timeout: fromSeconds(j.Timeout),
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fromMs(f float64) time.Duration {
	return time.Duration(math.Round(f*1000)) * time.Microsecond
}

func fromSeconds(f float64) time.Duration { return time.Duration(math.Round(f * 1e9)) }

// IterationOp is the operation name under which the engine records whole
// iterations. A threshold without an operation prefix applies to it.
const IterationOp = "iteration"

// WriteStatsJSON writes s as indented JSON (see Stats.MarshalJSON).
func WriteStatsJSON(w io.Writer, s Stats) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// WriteTimelineCSV writes rows as CSV, one line per row and operation, with
// phase "warmup" or "measure".
func WriteTimelineCSV(w io.Writer, rows []TimelineRow) error {
	cw := csv.NewWriter(w)
	header := []string{
		"start_s", "end_s", "phase", "vus", "active_vus", "dropped",
		"op", "count", "errors", "rate_per_s", "p50_ms", "p95_ms", "p99_ms", "max_ms",
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range rows {
		phase := "measure"
		if r.Warmup {
			phase = "warmup"
		}
		length := (r.End - r.Start).Seconds()
		for _, o := range r.Ops {
			var rate float64
			if length > 0 {
				rate = float64(o.Count) / length
			}
			rec := []string{
				f(r.Start.Seconds()), f(r.End.Seconds()), phase,
				strconv.Itoa(r.VUs), strconv.Itoa(r.ActiveVUs), strconv.FormatInt(r.Dropped, 10),
				o.Op, strconv.FormatInt(o.Count, 10), strconv.FormatInt(o.Errors, 10),
				strconv.FormatFloat(rate, 'f', 3, 64),
				f(ms(o.P50)), f(ms(o.P95)), f(ms(o.P99)), f(ms(o.Max)),
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadTimelineCSV reads what WriteTimelineCSV wrote: one row per run of
// lines that starts with IterationOp's.
func ReadTimelineCSV(r io.Reader) ([]TimelineRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 14
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	if head[0] != "start_s" || head[6] != "op" {
		return nil, errors.New("timeline: not a timeline.csv (no start_s, op columns)")
	}
	var rows []TimelineRow
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("timeline: %w", err)
		}
		var p numParser
		start, end := p.float(rec[0]), p.float(rec[1])
		vus, active, dropped := p.int(rec[3]), p.int(rec[4]), p.int(rec[5])
		o := OpInterval{Op: rec[6], Count: p.int(rec[7]), Errors: p.int(rec[8]),
			P50: fromMs(p.float(rec[10])), P95: fromMs(p.float(rec[11])), P99: fromMs(p.float(rec[12])), Max: fromMs(p.float(rec[13]))}
		if p.err != nil {
			return nil, fmt.Errorf("timeline: line %d: %w", line, p.err)
		}
		if rec[2] != "measure" && rec[2] != "warmup" {
			return nil, fmt.Errorf("timeline: line %d: phase %q", line, rec[2])
		}
		if o.Op == IterationOp || len(rows) == 0 {
			rows = append(rows, TimelineRow{Start: fromSeconds(start), End: fromSeconds(end), Warmup: rec[2] == "warmup",
				VUs: int(vus), ActiveVUs: int(active), Dropped: dropped})
		}
		r := &rows[len(rows)-1]
		r.Ops = append(r.Ops, o)
	}
}

// numParser parses numbers, keeping the first error.
type numParser struct{ err error }

func (p *numParser) float(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
		err = fmt.Errorf("%q: not a finite number ≥ 0 (every figure of a timeline is one)", s)
	}
	if p.err == nil {
		p.err = err
	}
	return v
}

func (p *numParser) int(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err == nil && v < 0 {
		err = fmt.Errorf("%q: a count cannot be negative", s)
	}
	if p.err == nil {
		p.err = err
	}
	return v
}
