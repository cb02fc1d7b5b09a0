package load

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

func TestConstantArrivalRate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{iterate: busy(9 * time.Millisecond)}
		e := ConstantArrivalRate{Rate: 200, Duration: 5 * time.Second, PreAllocatedVUs: 2, MaxVUs: 10, GracefulStop: time.Second}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Model != results.ModelOpen || s.Executor != NameConstantArrivalRate || s.Scenario != "fake" {
			t.Errorf("model, executor, scenario = %q, %q, %q", s.Model, s.Executor, s.Scenario)
		}
		if s.Iterations != 1000 || s.Dropped != 0 || s.Interrupted != 0 {
			t.Errorf("iterations, dropped, interrupted = %d, %d, %d; want 1000, 0, 0", s.Iterations, s.Dropped, s.Interrupted)
		}
		if s.Duration != 5*time.Second {
			t.Errorf("duration = %v, want 5s", s.Duration)
		}
		it, _ := s.Op(results.IterationOp)
		if it.Rate != 200 {
			t.Errorf("rate = %v, want 200", it.Rate)
		}
		op, _ := s.Op("op")
		if op.Count != 1000 || !near(op.Latency.P50, 9*time.Millisecond) || !near(op.Latency.Max, 9*time.Millisecond) {
			t.Errorf("op = %+v, want 1000 operations of 9ms", op)
		}
		// 9 ms iterations at 5 ms spacing need two VUs, and get no more.
		if s.VUs != 2 || sc.users.Load() != 2 {
			t.Errorf("VUs = %d, users = %d; want 2", s.VUs, sc.users.Load())
		}
		checkRows(t, s, func(start, end float64) float64 { return 200 * (end - start) }, 3)
	})
}

// near reports whether d is within the histogram's resolution (0.1%) of
// want.
func near(d, want time.Duration) bool {
	return absDur(d-want) <= want/1000
}

// checkRows checks that each full measured timeline row counts the
// iterations that want(start, end) expects, within tol.
func checkRows(t *testing.T, s results.Stats, want func(start, end float64) float64, tol float64) {
	t.Helper()
	full := 0
	for _, r := range s.Timeline {
		if r.End-r.Start != time.Second || r.End > s.Warmup+s.Duration {
			continue
		}
		full++
		w := want(r.Start.Seconds(), r.End.Seconds())
		if got := float64(r.Ops[0].Count); math.Abs(got-w) > tol {
			t.Errorf("row %v–%v: %v iterations, want %v±%v", r.Start, r.End, got, w, tol)
		}
	}
	if want := int((s.Duration + s.Warmup) / time.Second); full != want {
		t.Errorf("%d full timeline rows, want %d", full, want)
	}
}

func TestRampingArrivalRate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{iterate: busy(time.Millisecond)}
		e := RampingArrivalRate{
			StartRate:       0,
			Stages:          []Stage{{100, 10 * time.Second}, {100, 10 * time.Second}, {0, 10 * time.Second}},
			PreAllocatedVUs: 1,
			MaxVUs:          5,
		}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Iterations != 2000 || s.Dropped != 0 || s.Duration != 30*time.Second {
			t.Errorf("iterations, dropped, duration = %d, %d, %v; want 2000, 0, 30s", s.Iterations, s.Dropped, s.Duration)
		}
		// Expected arrivals per row: the area under the rate curve.
		area := func(t float64) float64 {
			switch {
			case t <= 10:
				return 5 * t * t
			case t <= 20:
				return 500 + 100*(t-10)
			default:
				u := t - 20
				return 1500 + 100*u - 5*u*u
			}
		}
		checkRows(t, s, func(a, b float64) float64 { return area(b) - area(a) }, 2)
	})
}

func TestDroppedWhenMaxVUsExhausted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Arrivals every 10 ms, iterations of 95 ms, 5 VUs: each 100 ms, five
		// arrivals find a VU and five are dropped.
		sc := &fakeScenario{iterate: busy(95 * time.Millisecond)}
		e := ConstantArrivalRate{Rate: 100, Duration: 2 * time.Second, PreAllocatedVUs: 5, MaxVUs: 5, GracefulStop: time.Second}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Iterations != 100 || s.Dropped != 100 {
			t.Errorf("iterations, dropped = %d, %d; want 100, 100", s.Iterations, s.Dropped)
		}
		var rows int64
		for _, r := range s.Timeline {
			rows += r.Dropped
		}
		if rows != 100 {
			t.Errorf("timeline counts %d dropped, want 100", rows)
		}
		// Dropped arrivals never show up as late iterations.
		if it, _ := s.Op(results.IterationOp); !near(it.Latency.Max, 95*time.Millisecond) {
			t.Errorf("max latency = %v, want 95ms", it.Latency.Max)
		}
	})
}

// TestLatencyFromIntendedStart: a stall of the target and a slow VU
// allocation both count towards latency from the intended start, while
// service time only covers the send.
func TestLatencyFromIntendedStart(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		stallFrom, stallTo := start.Add(time.Second), start.Add(2*time.Second)
		sc := &fakeScenario{
			newUser: func(ctx context.Context, _ int) error {
				return Sleep(ctx, 50*time.Millisecond) // slow login while creating a VU
			},
			iterate: func(ctx context.Context, _ int, _ int64, rec OpRecorder) error {
				begin := time.Now()
				d := 5 * time.Millisecond
				if !begin.Before(stallFrom) && begin.Before(stallTo) {
					d += stallTo.Sub(begin) // the target stalls until stallTo
				}
				err := Sleep(ctx, d)
				rec.Record("req", begin, err)
				return err
			},
		}
		rec := NewRecorder()
		e := ConstantArrivalRate{Rate: 100, Duration: 3 * time.Second, PreAllocatedVUs: 5, MaxVUs: 300}
		s, err := e.Run(t.Context(), sc, rec)
		if err != nil {
			t.Fatal(err)
		}
		if s.Iterations != 300 || s.Dropped != 0 {
			t.Fatalf("iterations, dropped = %d, %d; want 300, 0", s.Iterations, s.Dropped)
		}
		req, _ := s.Op("req")
		if req.Latency.Max < time.Second {
			t.Errorf("max latency %v, want at least the 1s stall", req.Latency.Max)
		}
		// 100 arrivals fall into the stall; the VUs allocated for them start
		// late, which only latency shows.
		slow := countAtLeast(rec, "req", 100*time.Millisecond)
		if slow < 85 || slow > 100 {
			t.Errorf("%d operations took ≥100ms, want about 90 (those arriving in the stall)", slow)
		}
		// About 100 VUs were allocated late by 50 ms each: 5000 ms of lag
		// over 300 operations.
		if lag := req.Latency.Mean - req.Service.Mean; lag < 10*time.Millisecond {
			t.Errorf("latency mean %v only %v above service time mean %v despite late VUs", req.Latency.Mean, lag, req.Service.Mean)
		}
		if s.VUs < 90 || int64(s.VUs) != sc.users.Load() {
			t.Errorf("VUs = %d, users created = %d; want about 100, equal", s.VUs, sc.users.Load())
		}
	})
}

// countAtLeast counts the recorded latencies of op that are at least d.
func countAtLeast(rec *Recorder, op string, d time.Duration) int64 {
	rec.mergeMu.Lock()
	defer rec.mergeMu.Unlock()
	for _, a := range rec.ops {
		if a.name != op {
			continue
		}
		var n int64
		for _, b := range a.tLat.Distribution() {
			if b.From >= d.Microseconds() {
				n += b.Count
			}
		}
		return n
	}
	return 0
}

func TestNewUserLagIsLatencyNotService(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{
			newUser: func(ctx context.Context, _ int) error { return Sleep(ctx, 200*time.Millisecond) },
			iterate: busy(time.Millisecond),
		}
		e := ConstantArrivalRate{Rate: 10, Duration: time.Second, MaxVUs: 10}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		op, _ := s.Op("op")
		if op.Count != 10 || !near(op.Latency.Max, 201*time.Millisecond) || !near(op.Service.Max, time.Millisecond) {
			t.Errorf("op = %d ops, latency max %v, service max %v; want 10, 201ms, 1ms", op.Count, op.Latency.Max, op.Service.Max)
		}
	})
}

func TestOpenCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		sc := &fakeScenario{iterate: func(ctx context.Context, _ int, n int64, _ OpRecorder) error {
			if n == 50 {
				cancel()
			}
			<-ctx.Done()
			return ctx.Err()
		}}
		e := ConstantArrivalRate{Rate: 100, Duration: time.Hour, PreAllocatedVUs: 10, MaxVUs: 1000, GracefulStop: time.Hour}
		begin := time.Now()
		s, err := e.Run(ctx, sc, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run error = %v, want context.Canceled", err)
		}
		if took := time.Since(begin); took > time.Second {
			t.Errorf("Run returned after %v", took)
		}
		if !s.Aborted || s.Interrupted != 50 || s.Iterations != 0 {
			t.Errorf("aborted, interrupted, iterations = %v, %d, %d; want true, 50, 0", s.Aborted, s.Interrupted, s.Iterations)
		}
	})
}

func TestGracefulStop(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                    string
		graceful                time.Duration
		iterations, interrupted int64
		elapsed                 time.Duration
	}{
		{"cut", 100 * time.Millisecond, 6, 4, 1100 * time.Millisecond}, // arrivals from 0.6 s end after 1.1 s
		{"finish", time.Second, 10, 0, 1450 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Arrivals at 0, 0.1, … 0.9 s, each taking 550 ms: five run past
				// the 1 s duration, the last one until 1.45 s.
				sc := &fakeScenario{iterate: busy(550 * time.Millisecond)}
				e := ConstantArrivalRate{Rate: 10, Duration: time.Second, PreAllocatedVUs: 10, GracefulStop: tt.graceful}
				s, err := e.Run(t.Context(), sc, nil)
				if err != nil {
					t.Fatal(err)
				}
				if s.Iterations != tt.iterations || s.Interrupted != tt.interrupted || s.Elapsed != tt.elapsed || s.Duration != time.Second {
					t.Errorf("iterations, interrupted, elapsed, duration = %d, %d, %v, %v; want %d, %d, %v, 1s",
						s.Iterations, s.Interrupted, s.Elapsed, s.Duration, tt.iterations, tt.interrupted, tt.elapsed)
				}
			})
		})
	}
}

func TestOpenValidate(t *testing.T) {
	t.Parallel()
	err := ConstantArrivalRate{Rate: -1, Duration: 0, PreAllocatedVUs: 5, MaxVUs: 2, GracefulStop: -1}.Validate()
	for _, want := range []string{"rate", "duration", "maxVUs (2)", "gracefulStop"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want a problem with %s", err, want)
		}
	}
	if err := (ConstantArrivalRate{Rate: 1, Duration: time.Second}).Validate(); err == nil {
		t.Error("Validate() accepted zero VUs")
	}
	if err := (ConstantArrivalRate{Rate: 1, Duration: time.Second, MaxVUs: 1}).Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	err = RampingArrivalRate{StartRate: math.NaN(), Stages: []Stage{{-1, 0}, {math.Inf(1), -time.Second}}, PreAllocatedVUs: 1}.Validate()
	for _, want := range []string{"startRate", "stages[0].target", "stages[1].target", "stages[1].duration", "longer than zero"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want a problem with %s", err, want)
		}
	}
	if _, err := (RampingArrivalRate{}).Run(t.Context(), &fakeScenario{}, nil); err == nil || !strings.Contains(err.Error(), "at least one stage") {
		t.Errorf("Run() = %v, want a validation error", err)
	}
}

// TestOpenEarlyEnd: an early end stops the arrivals at the interval whose
// fn gave a reason; the measured window ends there, the iterations already
// running finish, and the reason is the run's EndReason.
func TestOpenEarlyEnd(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{iterate: busy(9 * time.Millisecond)}
		seen := 0
		rec := NewRecorder(WithEarlyEnd(func(iv Interval) string {
			if iv.Ops[0].Name != results.IterationOp {
				t.Errorf("first op %q", iv.Ops[0].Name)
			}
			seen++
			if iv.End >= 2*time.Second {
				return "doomed"
			}
			return ""
		}))
		e := ConstantArrivalRate{Rate: 100, Duration: 10 * time.Second, PreAllocatedVUs: 2, MaxVUs: 10, GracefulStop: time.Second}
		s, err := e.Run(t.Context(), sc, rec)
		if err != nil {
			t.Fatal(err)
		}
		if s.EndReason != "doomed" || s.Aborted {
			t.Errorf("end reason %q, aborted %v", s.EndReason, s.Aborted)
		}
		// the arrival due at 2 s, the instant the interval closes, may be
		// made before the end is seen
		if s.Duration != 2*time.Second || s.Iterations < 200 || s.Iterations > 201 || s.Interrupted != 0 {
			t.Errorf("duration %v, iterations %d, interrupted %d; want 2s, 200 (or 201), 0", s.Duration, s.Iterations, s.Interrupted)
		}
		if it, _ := s.Op(results.IterationOp); it.Rate < 100 || it.Rate > 100.5 {
			t.Errorf("rate %v, want 100 (over the shortened window)", it.Rate)
		}
		if seen != 2 {
			t.Errorf("fn saw %d intervals, want 2 (none after the end)", seen)
		}
	})
	// Without a reason the run goes its whole length.
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder(WithEarlyEnd(func(Interval) string { return "" }))
		e := ConstantArrivalRate{Rate: 100, Duration: 3 * time.Second, PreAllocatedVUs: 2, MaxVUs: 10}
		s, err := e.Run(t.Context(), &fakeScenario{iterate: busy(time.Millisecond)}, rec)
		if err != nil || s.EndReason != "" || s.Iterations != 300 {
			t.Errorf("err %v, end reason %q, iterations %d", err, s.EndReason, s.Iterations)
		}
	})
}
