package results

import "time"

// RecoveryHold is how long the per-second p99 must stay under the SLO
// after an event for the run to count as recovered.
const RecoveryHold = 10 * time.Second

// recoveryBaseline is how much of the timeline before an event sets the
// throughput the dip is measured against.
const recoveryBaseline = 10 * time.Second

// Recovery is what a run went through after one event, measured on the
// per-second timeline of IterationOp.
type Recovery struct {
	// SLO is the p99 the run must come back under.
	SLO time.Duration
	// Recovered says the p99 came back under SLO and stayed there for
	// RecoveryHold (rows with finished iterations only); After is from
	// the event's start until the first row of that stretch.
	Recovered bool
	After     time.Duration
	// Window is what the figures below cover: from the event until the
	// run recovered, or until the next event or the run's end.
	Window time.Duration
	// Errors are the failed iterations in Window (in a user journey,
	// whose steps retry, its failed requests), and ErrorKinds the failed
	// operations by class (see Classify).
	Errors     int64
	ErrorKinds map[string]int64
	// BaselineRate is the successful iterations per second in the
	// RecoveryHold before the event; Dip is the successful iterations
	// missing in Window against it (the area between the baseline and
	// the throughput curve, where the curve is below).
	BaselineRate float64
	Dip          float64
}

type recoveryJSON struct {
	SLO          float64          `json:"slo_p99_ms"`
	Recovered    bool             `json:"recovered"`
	After        *float64         `json:"recovered_after_s,omitempty"`
	Window       float64          `json:"window_s"`
	Errors       int64            `json:"errors"`
	ErrorKinds   map[string]int64 `json:"error_kinds,omitempty"`
	BaselineRate float64          `json:"baseline_ok_per_s"`
	Dip          float64          `json:"throughput_dip_iterations"`
}

func (r Recovery) toJSON() recoveryJSON {
	j := recoveryJSON{SLO: ms(r.SLO), Recovered: r.Recovered, Window: r.Window.Seconds(), Errors: r.Errors,
		ErrorKinds: r.ErrorKinds, BaselineRate: r.BaselineRate, Dip: r.Dip}
	if r.Recovered {
		a := r.After.Seconds()
		j.After = &a
	}
	return j
}

func (j recoveryJSON) recovery() Recovery {
	r := Recovery{SLO: time.Duration(j.SLO * float64(time.Millisecond)), Recovered: j.Recovered, Window: fromSeconds(j.Window),
		Errors: j.Errors, ErrorKinds: j.ErrorKinds, BaselineRate: j.BaselineRate, Dip: j.Dip}
	if j.After != nil {
		r.After = fromSeconds(*j.After)
	}
	return r
}

// TimedError is one failed operation, when it ended (offset from the
// run's start) and its class.
type TimedError struct {
	At    time.Duration
	Class string
}

// MeasureRecovery fills each event's Recovery from the timeline (the
// iteration's per-second rows) and the failed operations errs, against
// a p99 SLO. Events are taken in order; an event's window ends at the
// next event at the latest.
func MeasureRecovery(s *Stats, slo time.Duration, errs []TimedError) {
	for k := range s.Events {
		end := s.Elapsed
		if k+1 < len(s.Events) {
			end = s.Events[k+1].At
		}
		r := measureOne(s.Timeline, s.Events[k].At, end, slo, s.Scenario == ScenarioUserJourney)
		if r.Window > 0 {
			for _, e := range errs {
				if e.At >= s.Events[k].At && e.At < s.Events[k].At+r.Window {
					if r.ErrorKinds == nil {
						r.ErrorKinds = map[string]int64{}
					}
					r.ErrorKinds[e.Class]++
				}
			}
		}
		s.Events[k].Recovery = &r
	}
}

// measureOne measures one event's recovery. The p99 and the errors are
// the iteration's, except where iterations include planned waits (the
// user journey's think times and pauses between steps): there they are
// its requests' (the worst p99 of any operation, errors summed over
// them), what a user waiting on Keycloak sees. The baseline and the dip
// count successful iterations either way.
func measureOne(rows []TimelineRow, at, end time.Duration, slo time.Duration, waits bool) Recovery {
	r := Recovery{SLO: slo}
	it := func(row TimelineRow) (OpInterval, bool) {
		for _, o := range row.Ops {
			if o.Op == IterationOp {
				return o, true
			}
		}
		return OpInterval{}, false
	}
	judged := it
	if waits {
		judged = func(row TimelineRow) (OpInterval, bool) {
			var w OpInterval
			found := false
			for _, o := range row.Ops {
				if o.Op == IterationOp {
					continue
				}
				found = true
				w.Count += o.Count
				w.Errors += o.Errors
				w.P99 = max(w.P99, o.P99)
			}
			if !found {
				return it(row)
			}
			return w, true
		}
	}
	// Baseline: successful iterations per second before the event.
	var okBefore int64
	var before time.Duration
	for _, row := range rows {
		if row.End <= at && row.Start >= at-recoveryBaseline {
			if o, ok := it(row); ok {
				okBefore += o.Count - o.Errors
			}
			before += row.End - row.Start
		}
	}
	if before > 0 {
		r.BaselineRate = float64(okBefore) / before.Seconds()
	}
	// Recovery: the first row after the event from which the p99 stays
	// under the SLO for RecoveryHold.
	var streakStart time.Duration
	streak := time.Duration(0)
	windowEnd := end
	for _, row := range rows {
		if row.End <= at || row.Start >= end {
			continue
		}
		o, ok := judged(row)
		good := ok && o.Count > o.Errors && o.Errors == 0 && o.P99 < slo
		if !good {
			streak = 0
			continue
		}
		if streak == 0 {
			streakStart = row.Start
		}
		streak += row.End - row.Start
		if streak >= RecoveryHold {
			r.Recovered = true
			r.After = max(streakStart-at, 0)
			windowEnd = streakStart
			break
		}
	}
	if windowEnd < at {
		windowEnd = at
	}
	r.Window = windowEnd - at
	// Errors and the dip over the window (rows that overlap it, pro rata).
	for _, row := range rows {
		lo, hi := max(row.Start, at), min(row.End, windowEnd)
		if hi <= lo || row.End <= row.Start {
			continue
		}
		o, _ := it(row)
		j, _ := judged(row)
		share := float64(hi-lo) / float64(row.End-row.Start)
		r.Errors += int64(float64(j.Errors)*share + 0.5)
		okRate := float64(o.Count-o.Errors) / (row.End - row.Start).Seconds()
		if gap := r.BaselineRate - okRate; gap > 0 {
			r.Dip += gap * (hi - lo).Seconds()
		}
	}
	return r
}
