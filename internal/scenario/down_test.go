package scenario

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

func TestDownWatchObserve(t *testing.T) {
	tick := func(s int, iterations, refused int64) load.Progress {
		return load.Progress{Elapsed: time.Duration(s) * time.Second, Iterations: iterations, ConnectErrors: refused}
	}
	cases := []struct {
		name  string
		ticks []load.Progress
		down  time.Duration // when the failures began; 0: not down
	}{
		{"healthy", []load.Progress{tick(1, 10, 0), tick(2, 20, 0), tick(3, 30, 0), tick(4, 40, 0)}, 0},
		{"refused throughout", []load.Progress{tick(1, 10, 10), tick(2, 20, 20), tick(3, 30, 30), tick(4, 40, 40)}, time.Second},
		{"refused from the second tick", []load.Progress{tick(1, 10, 0), tick(2, 20, 10), tick(3, 30, 20), tick(4, 40, 30), tick(5, 50, 40)}, time.Second},
		{"one success in the window", []load.Progress{tick(1, 10, 0), tick(2, 20, 10), tick(3, 30, 19), tick(4, 40, 29)}, 0},
		{"not long enough", []load.Progress{tick(1, 10, 10), tick(2, 20, 20)}, 0},
		{"recovered", []load.Progress{tick(1, 10, 0), tick(2, 20, 5), tick(3, 30, 15), tick(4, 40, 20)}, 0},
		{"nothing sent", []load.Progress{tick(1, 0, 0), tick(2, 0, 0), tick(3, 0, 0), tick(4, 0, 0)}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stopped error
			w := &downWatch{after: 2 * time.Second, stop: func(err error) { stopped = err }}
			for _, p := range c.ticks {
				w.observe(p)
			}
			d := w.result()
			switch {
			case c.down == 0 && d != nil:
				t.Fatalf("down: %v", d)
			case c.down == 0:
			case d == nil:
				t.Fatal("not found down")
			case d.At != c.down || !strings.Contains(d.Reason, "unreachable") || stopped != d:
				t.Fatalf("%+v, stopped with %v", d, stopped)
			}
		})
	}
}

func TestNoSuccess(t *testing.T) {
	s := results.Stats{Ops: []results.OpStats{{Name: results.IterationOp, Count: 5, Errors: 5, ErrorClasses: map[string]int64{"http_404": 3, "timeout": 2}}},
		ErrorExamples: map[string]string{"http_404": "GET /x: HTTP 404"}}
	d := noSuccess(s)
	if d == nil || d.Error() != "no iteration succeeded: 5 failed (http_404 3: GET /x: HTTP 404; timeout 2)" {
		t.Fatalf("%v", d)
	}
	s.Ops[0].OK, s.Ops[0].Errors = 1, 4
	if d := noSuccess(s); d != nil {
		t.Fatalf("one success: %v", d)
	}
	if d := noSuccess(results.Stats{Ops: []results.OpStats{{Name: results.IterationOp}}}); d != nil {
		t.Fatalf("nothing ran: %v", d)
	}
	d = noSuccess(results.Stats{Interrupted: 2, Ops: []results.OpStats{{Name: results.IterationOp}}})
	if d == nil || !strings.HasPrefix(d.Error(), "no iteration completed: 2 interrupted at the end of the run") {
		t.Fatalf("all interrupted: %v", d)
	}
}

// jwksServer serves a realm's JWKS.
func jwksServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"keys":[]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunStopsWhenTargetDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for seconds")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	cfg := Config{Scenario: results.ScenarioJWKS, VUs: 2, Duration: time.Minute, Realm: "r"}
	cfg.ApplyDefaults()

	cases := []struct {
		name   string
		target string
		alive  func(context.Context) error
		keep   bool
		want   string
	}{
		{"every connection refused", closed, nil, false, "the target is unreachable: every iteration for 1 s failed to connect"},
		{"the process died", jwksServer(t).URL, diesAfter(3), false, "Keycloak exited: OutOfMemoryError: Java heap space"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res, err := Run(context.Background(), RunInput{Target: kc.Target{BaseURL: c.target}, Config: cfg, Alive: c.alive, DownAfter: time.Second})
			var d *DownError
			if !errors.As(err, &d) || !strings.HasPrefix(d.Reason, c.want) {
				t.Fatalf("%v", err)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("took %v", took)
			}
			if res == nil || !res.Stats.Aborted || res.Stats.EndReason != d.Error() {
				t.Fatalf("result: %+v", res)
			}
		})
	}

	// Asked to keep going, the run goes to its end and says what happened.
	short := cfg
	short.Duration = 2 * time.Second
	res, err := Run(context.Background(), RunInput{Target: kc.Target{BaseURL: jwksServer(t).URL}, Config: short, Alive: diesAfter(1), KeepGoing: true})
	if err != nil || res.Stats.Aborted || !strings.Contains(res.Stats.EndReason, "s into the run: Keycloak exited") {
		t.Fatalf("keep going: %v, %+v", err, res)
	}
}

// diesAfter is an Alive that answers n times, then says the server died.
func diesAfter(n int32) func(context.Context) error {
	var calls atomic.Int32
	return func(context.Context) error {
		if calls.Add(1) > n {
			return errors.New("Keycloak exited: OutOfMemoryError: Java heap space")
		}
		return nil
	}
}

// A run with fault events: the events run at their offsets and are
// stamped in the stats; a target that refuses every connection (the
// event took it down) does not stop the run.
func TestRunWithEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for seconds")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	cfg := Config{Scenario: results.ScenarioJWKS, VUs: 2, Duration: 3 * time.Second, Realm: "r"}
	cfg.ApplyDefaults()
	var ran atomic.Int32
	evs := []load.Event{
		{At: 2 * time.Second, Action: "start", Args: "node=1", Do: func(context.Context) error { ran.Add(1); return errors.New("no luck") }},
		{At: 500 * time.Millisecond, Action: "kill", Args: "node=1", Do: func(context.Context) error { ran.Add(1); return nil }},
	}
	res, err := Run(context.Background(), RunInput{Target: kc.Target{BaseURL: closed}, Config: cfg, DownAfter: time.Second, Events: evs})
	if res == nil || res.Stats.Aborted {
		t.Fatalf("%v, %+v", err, res)
	}
	ev := res.Stats.Events
	if ran.Load() != 2 || len(ev) != 2 || ev[0].Action != "kill" || ev[1].Err != "no luck" ||
		ev[0].At < 500*time.Millisecond || ev[0].At > 1500*time.Millisecond || ev[1].At < 2*time.Second {
		t.Fatalf("events: %+v", ev)
	}
	// Every request was refused: no recovery, connect errors counted.
	r := ev[0].Recovery
	if r == nil || r.Recovered || r.SLO != DefaultRecoverySLO || r.Errors == 0 || r.ErrorKinds["conn_refused"] == 0 {
		t.Fatalf("recovery: %+v", r)
	}
}
