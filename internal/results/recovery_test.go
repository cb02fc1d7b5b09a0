package results

import (
	"encoding/json"
	"testing"
	"time"
)

func TestMeasureRecovery(t *testing.T) {
	// 60 one-second rows at 10 iterations/s, p99 100 ms; a kill at 20 s:
	// 3 s with 5 errors and 4 successes a second, then 4 s slow (p99 2 s),
	// then healthy again from 27 s.
	var rows []TimelineRow
	for i := range 60 {
		o := OpInterval{Op: IterationOp, Count: 10, P99: 100 * time.Millisecond}
		switch {
		case i >= 20 && i < 23:
			o.Count, o.Errors = 9, 5
		case i >= 23 && i < 27:
			o.P99 = 2 * time.Second
		}
		rows = append(rows, TimelineRow{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Ops: []OpInterval{o}})
	}
	s := Stats{Timeline: rows, Elapsed: time.Minute, Events: []Event{
		{At: 20 * time.Second, Action: "kill", Args: "node=2"},
		{At: 55 * time.Second, Action: "start", Args: "node=2"}, // too near the end to recover
	}}
	errs := []TimedError{{20500 * time.Millisecond, "connect"}, {21 * time.Second, "http_5xx"}, {22 * time.Second, "http_5xx"}, {40 * time.Second, "timeout"}}
	MeasureRecovery(&s, 500*time.Millisecond, errs)
	r := s.Events[0].Recovery
	if r == nil || !r.Recovered || r.After != 7*time.Second || r.Window != 7*time.Second || r.Errors != 15 ||
		r.BaselineRate != 10 || r.Dip != 3*6 || r.ErrorKinds["http_5xx"] != 2 || r.ErrorKinds["connect"] != 1 || len(r.ErrorKinds) != 2 {
		t.Fatalf("kill: %+v", r)
	}
	if r2 := s.Events[1].Recovery; r2 == nil || r2.Recovered || r2.Window != 5*time.Second || r2.Errors != 0 || r2.Dip != 0 {
		t.Fatalf("start: %+v", r2)
	}
	// summary.json round trip.
	b, err := json.Marshal(s.Events[0])
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back.Recovery == nil || back.Recovery.After != r.After || back.Recovery.Dip != r.Dip {
		t.Fatalf("%s → %+v, %v", b, back.Recovery, err)
	}
}

// A user journey's iterations include its planned waits (seconds), so its
// recovery is judged on its requests: a kill at 10 s makes its requests
// fail for 2 s and slow for 3 s; the iteration's p99 (5 s of waits)
// never passes and does not count.
func TestMeasureRecoveryJourney(t *testing.T) {
	var rows []TimelineRow
	for i := range 40 {
		it := OpInterval{Op: IterationOp, Count: 6, P99: 5 * time.Second}
		login := OpInterval{Op: OpLoginPage, Count: 2, P99: 80 * time.Millisecond}
		info := OpInterval{Op: OpUserinfo, Count: 4, P99: 20 * time.Millisecond}
		switch {
		case i >= 10 && i < 12:
			info.Errors = 2
		case i >= 12 && i < 15:
			login.P99 = 3 * time.Second
		}
		rows = append(rows, TimelineRow{Start: time.Duration(i) * time.Second, End: time.Duration(i+1) * time.Second, Ops: []OpInterval{it, login, info}})
	}
	s := Stats{Scenario: ScenarioUserJourney, Timeline: rows, Elapsed: 40 * time.Second, Events: []Event{{At: 10 * time.Second, Action: "kill", Args: "node=2"}}}
	MeasureRecovery(&s, time.Second, nil)
	if r := s.Events[0].Recovery; r == nil || !r.Recovered || r.After != 5*time.Second || r.Errors != 4 {
		t.Fatalf("journey: %+v", r)
	}
	// the same rows judged as another scenario's iterations never recover
	s.Scenario = ScenarioClientCredentials
	MeasureRecovery(&s, time.Second, nil)
	if r := s.Events[0].Recovery; r.Recovered || r.Errors != 0 {
		t.Fatalf("iterations: %+v", r)
	}
}
