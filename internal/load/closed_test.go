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

func TestConstantVUs(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// 10 VUs looping over 100 ms iterations start at 0, 0.1, … 10.0 s:
		// 101 iterations each before the 10.05 s duration ends.
		sc := &fakeScenario{iterate: busy(100 * time.Millisecond)}
		e := ConstantVUs{VUs: 10, Duration: 10*time.Second + 50*time.Millisecond, GracefulStop: time.Second}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Model != results.ModelClosed || s.Executor != NameConstantVUs {
			t.Errorf("model, executor = %q, %q", s.Model, s.Executor)
		}
		if s.Iterations != 1010 || s.Interrupted != 0 || s.VUs != 10 || sc.users.Load() != 10 {
			t.Errorf("iterations, interrupted, VUs, users = %d, %d, %d, %d; want 1010, 0, 10, 10",
				s.Iterations, s.Interrupted, s.VUs, sc.users.Load())
		}
		if s.Elapsed != 10100*time.Millisecond {
			t.Errorf("elapsed = %v, want 10.1s (the last iteration finishes in the graceful stop)", s.Elapsed)
		}
		op, _ := s.Op("op")
		if op.Latency != op.Service {
			t.Errorf("closed model: latency %+v != service %+v", op.Latency, op.Service)
		}
	})
}

func TestPerVUIterations(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{iterate: busy(10 * time.Millisecond)}
		e := PerVUIterations{VUs: 4, Iterations: 25, MaxDuration: time.Minute}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Iterations != 100 || s.Elapsed != 250*time.Millisecond || s.Duration != 250*time.Millisecond {
			t.Errorf("iterations, elapsed, duration = %d, %v, %v; want 100, 250ms, 250ms", s.Iterations, s.Elapsed, s.Duration)
		}
		if it, _ := s.Op(results.IterationOp); it.Rate != 400 {
			t.Errorf("rate = %v, want 400", it.Rate)
		}
	})
}

func TestPerVUIterationsMaxDuration(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		graceful                time.Duration
		iterations, interrupted int64
	}{
		{0, 22, 2},                      // the 12th iterations, started at 0.99 s, are cut at 1 s
		{100 * time.Millisecond, 24, 0}, // and finish at 1.08 s
	} {
		synctest.Test(t, func(t *testing.T) {
			sc := &fakeScenario{iterate: busy(90 * time.Millisecond)}
			e := PerVUIterations{VUs: 2, Iterations: 100, MaxDuration: time.Second, GracefulStop: tt.graceful}
			s, err := e.Run(t.Context(), sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			if s.Iterations != tt.iterations || s.Interrupted != tt.interrupted {
				t.Errorf("graceful %v: iterations, interrupted = %d, %d; want %d, %d",
					tt.graceful, s.Iterations, s.Interrupted, tt.iterations, tt.interrupted)
			}
		})
	}
}

func TestRampingVUs(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{iterate: busy(100 * time.Millisecond)}
		e := RampingVUs{
			StartVUs:     0,
			Stages:       []VUStage{{10, 10 * time.Second}, {10, 5 * time.Second}, {0, 5 * time.Second}},
			GracefulStop: time.Second,
		}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		// VUs at each whole second: up by one per second (changes at k−0.5 s),
		// hold at 10, then down by two per second (changes every 0.25 s
		// from 15.25 s).
		want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 10, 10, 8, 6, 4, 2}
		for i, r := range s.Timeline[:len(want)] {
			if r.VUs != want[i] {
				t.Errorf("row ending %v: %d VUs, want %d", r.End, r.VUs, want[i])
			}
		}
		if s.VUs != 10 || sc.users.Load() != 10 {
			t.Errorf("peak VUs, users = %d, %d; want 10, 10", s.VUs, sc.users.Load())
		}
		// 125 VU-seconds of 100 ms iterations.
		if math.Abs(float64(s.Iterations)-1250) > 25 {
			t.Errorf("iterations = %d, want about 1250", s.Iterations)
		}
	})
}

func TestClosedCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		sc := &fakeScenario{iterate: func(ctx context.Context, _ int, n int64, _ OpRecorder) error {
			if n == 5 {
				cancel()
			}
			<-ctx.Done()
			return ctx.Err()
		}}
		e := ConstantVUs{VUs: 5, Duration: time.Hour, GracefulStop: time.Hour}
		s, err := e.Run(ctx, sc, nil)
		if !errors.Is(err, context.Canceled) || !s.Aborted || s.Interrupted != 5 || s.Elapsed != 0 {
			t.Errorf("Run = aborted %v, interrupted %d, elapsed %v, %v; want an immediate cancellation",
				s.Aborted, s.Interrupted, s.Elapsed, err)
		}
	})
}

func TestNewUserError(t *testing.T) {
	t.Parallel()
	boom := errors.New("login failed")
	sc := &fakeScenario{newUser: func(_ context.Context, id int) error {
		if id == 3 {
			return boom
		}
		return nil
	}}
	for _, e := range []Executor{
		ConstantVUs{VUs: 10, Duration: time.Second},
		ConstantArrivalRate{Rate: 1, Duration: time.Second, PreAllocatedVUs: 10},
	} {
		_, err := e.Run(t.Context(), sc, nil)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "new user 3") {
			t.Errorf("%T: Run error = %v, want the user's error", e, err)
		}
	}
}

func TestOpenNewUserErrorDuringRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{newUser: func(context.Context, int) error { return StatusError{Code: 401} }}
		e := ConstantArrivalRate{Rate: 10, Duration: time.Second, MaxVUs: 2}
		s, err := e.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		it, _ := s.Op(results.IterationOp)
		if it.Errors != 10 || it.ErrorClasses["http_401"] != 10 {
			t.Errorf("iteration errors = %d %v; want 10 http_401", it.Errors, it.ErrorClasses)
		}
	})
}

func TestClosedValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e    Executor
		want []string
	}{
		{ConstantVUs{VUs: 0, Duration: -1, GracefulStop: -1}, []string{"vus", "duration", "gracefulStop"}},
		{PerVUIterations{}, []string{"vus", "iterations", "maxDuration"}},
		{RampingVUs{StartVUs: -1}, []string{"startVUs", "at least one stage", "a VU"}},
		{RampingVUs{Stages: []VUStage{{-1, -time.Second}, {0, 0}}}, []string{"stages[0].target", "stages[0].duration", "longer than zero", "a VU"}},
	}
	for _, tt := range tests {
		err := tt.e.Validate()
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%#v.Validate() = %v, want a problem with %s", tt.e, err, w)
			}
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != len(tt.want) {
			t.Errorf("%#v.Validate() reports %d problems, want %d: %v", tt.e, n, len(tt.want), err)
		}
	}
	for _, e := range []Executor{
		ConstantVUs{VUs: 1, Duration: time.Second},
		PerVUIterations{VUs: 1, Iterations: 1, MaxDuration: time.Second},
		RampingVUs{Stages: []VUStage{{1, time.Second}}},
	} {
		if err := e.Validate(); err != nil {
			t.Errorf("%#v.Validate() = %v", e, err)
		}
	}
}

// nilUserScenario returns neither a User nor an error.
type nilUserScenario struct{}

func (nilUserScenario) Name() string                               { return "nil" }
func (nilUserScenario) NewUser(context.Context, int) (User, error) { return nil, nil }

func TestNilUser(t *testing.T) {
	t.Parallel()
	if _, err := (ConstantVUs{VUs: 1, Duration: time.Second}).Run(t.Context(), nilUserScenario{}, nil); !errors.Is(err, errNilUser) {
		t.Errorf("closed Run = %v, want errNilUser", err)
	}
	synctest.Test(t, func(t *testing.T) {
		s, err := ConstantArrivalRate{Rate: 10, Duration: time.Second, MaxVUs: 1}.Run(t.Context(), nilUserScenario{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if it, _ := s.Op(results.IterationOp); it.Errors != 10 {
			t.Errorf("open run: %d failed iterations, want 10", it.Errors)
		}
	})
}
