package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// ConstantVUs runs VUs virtual users in a loop for Duration (closed model).
type ConstantVUs struct {
	VUs          int
	Duration     time.Duration
	GracefulStop time.Duration // how long iterations running at the end may finish
}

// Validate implements Executor.
func (e ConstantVUs) Validate() error {
	var errs []error
	if e.VUs < 1 {
		errs = append(errs, fmt.Errorf("vus must be at least 1, got %d", e.VUs))
	}
	if e.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration must be positive, got %v", e.Duration))
	}
	return errors.Join(checkGraceful(errs, e.GracefulStop)...)
}

// Run implements Executor.
func (e ConstantVUs) Run(ctx context.Context, sc Scenario, rec *Recorder) (results.Stats, error) {
	if err := e.Validate(); err != nil {
		return results.Stats{}, fmt.Errorf("load: %s: %w", NameConstantVUs, err)
	}
	return runClosed(ctx, sc, rec, NameConstantVUs, e.VUs, e.Duration, e.GracefulStop,
		func(reg, hard context.Context, v *vu) {
			for live(reg, hard) {
				v.iterate(hard, sc, time.Time{})
			}
		}, nil)
}

// PerVUIterations has each of VUs virtual users run Iterations iterations
// (closed model). The run ends when all are done or after MaxDuration, when
// no new iteration starts; GracefulStop later, running ones are cancelled.
type PerVUIterations struct {
	VUs          int
	Iterations   int
	MaxDuration  time.Duration
	GracefulStop time.Duration
}

// Validate implements Executor.
func (e PerVUIterations) Validate() error {
	var errs []error
	if e.VUs < 1 {
		errs = append(errs, fmt.Errorf("vus must be at least 1, got %d", e.VUs))
	}
	if e.Iterations < 1 {
		errs = append(errs, fmt.Errorf("iterations must be at least 1, got %d", e.Iterations))
	}
	if e.MaxDuration <= 0 {
		errs = append(errs, fmt.Errorf("maxDuration must be positive, got %v", e.MaxDuration))
	}
	return errors.Join(checkGraceful(errs, e.GracefulStop)...)
}

// Run implements Executor.
func (e PerVUIterations) Run(ctx context.Context, sc Scenario, rec *Recorder) (results.Stats, error) {
	if err := e.Validate(); err != nil {
		return results.Stats{}, fmt.Errorf("load: %s: %w", NamePerVUIterations, err)
	}
	return runClosed(ctx, sc, rec, NamePerVUIterations, e.VUs, e.MaxDuration, e.GracefulStop,
		func(reg, hard context.Context, v *vu) {
			for range e.Iterations {
				if !live(reg, hard) {
					return
				}
				v.iterate(hard, sc, time.Time{})
			}
		}, nil)
}

// RampingVUs moves the number of looping VUs linearly through Stages,
// starting from StartVUs (closed model). When the count goes down, the VUs
// that stop finish their current iteration first.
type RampingVUs struct {
	StartVUs     int
	Stages       []VUStage
	GracefulStop time.Duration
}

// Validate implements Executor.
func (e RampingVUs) Validate() error {
	var errs []error
	if e.StartVUs < 0 {
		errs = append(errs, fmt.Errorf("startVUs must not be negative, got %d", e.StartVUs))
	}
	if len(e.Stages) == 0 {
		errs = append(errs, errors.New("at least one stage is required"))
	}
	var total time.Duration
	for i, s := range e.Stages {
		if s.Target < 0 {
			errs = append(errs, fmt.Errorf("stages[%d].target must not be negative, got %d", i, s.Target))
		}
		if s.Duration < 0 {
			errs = append(errs, fmt.Errorf("stages[%d].duration must not be negative, got %v", i, s.Duration))
		}
		total += s.Duration
	}
	if len(e.Stages) > 0 && total <= 0 {
		errs = append(errs, errors.New("stages must last longer than zero"))
	}
	if e.maxVUs() < 1 {
		errs = append(errs, errors.New("at least one stage or startVUs must have a VU"))
	}
	return errors.Join(checkGraceful(errs, e.GracefulStop)...)
}

func (e RampingVUs) maxVUs() int {
	n := e.StartVUs
	for _, s := range e.Stages {
		n = max(n, s.Target)
	}
	return n
}

// Run implements Executor.
func (e RampingVUs) Run(ctx context.Context, sc Scenario, rec *Recorder) (results.Stats, error) {
	if err := e.Validate(); err != nil {
		return results.Stats{}, fmt.Errorf("load: %s: %w", NameRampingVUs, err)
	}
	var total time.Duration
	for _, s := range e.Stages {
		total += s.Duration
	}
	n := e.maxVUs()
	gates := make([]gate, n)
	for i := range gates {
		gates[i].wake = make(chan struct{}, 1)
	}
	loop := func(reg, hard context.Context, v *vu) {
		g := &gates[v.id]
		for live(reg, hard) {
			if !g.open.Load() {
				select {
				case <-g.wake:
				case <-reg.Done():
				}
				continue
			}
			v.iterate(hard, sc, time.Time{})
		}
	}
	control := func(reg context.Context, start time.Time, rec *Recorder) {
		active := 0
		t := time.NewTimer(0)
		defer t.Stop()
		for _, step := range vuSteps(e.StartVUs, e.Stages) {
			t.Reset(time.Until(start.Add(step.At)))
			select {
			case <-t.C:
			case <-reg.Done():
				return
			}
			for i := active; i < step.VUs; i++ {
				gates[i].set(true)
			}
			for i := step.VUs; i < active; i++ {
				gates[i].set(false)
			}
			active = step.VUs
			rec.setVUs(int64(active))
		}
	}
	return runClosed(ctx, sc, rec, NameRampingVUs, n, total, e.GracefulStop, loop, control)
}

// gate lets the RampingVUs controller start and stop one VU.
type gate struct {
	open atomic.Bool
	wake chan struct{} // capacity 1
}

func (g *gate) set(open bool) {
	g.open.Store(open)
	if open {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// runClosed is the closed-model run shared by the VU executors: create n
// users, run loop in one goroutine per VU until it returns, and, if not
// nil, control alongside. It waits for the regular duration to end unless
// every VU finished before.
func runClosed(ctx context.Context, sc Scenario, rec *Recorder, name string, n int,
	regular, graceful time.Duration,
	loop func(reg, hard context.Context, v *vu),
	control func(reg context.Context, start time.Time, rec *Recorder),
) (results.Stats, error) {
	if rec == nil {
		rec = NewRecorder()
	}
	users, err := newUsers(ctx, sc, n)
	if err != nil {
		return results.Stats{}, err
	}
	start, err := rec.begin(ctx, runInfo{scenario: sc.Name(), executor: name, model: results.ModelClosed})
	if err != nil {
		return results.Stats{}, err
	}
	reg, hard, cancel := durationContexts(ctx, start, regular, graceful)
	defer cancel()

	var wg sync.WaitGroup
	for i, u := range users {
		v := &vu{id: i, user: u, rec: rec.newVU(hard)}
		wg.Go(func() { loop(reg, hard, v) })
	}
	if control != nil {
		rec.allocated.Store(0) // the controller sets both
		rec.peak.Store(0)
		wg.Go(func() { control(reg, start, rec) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-reg.Done():
		rec.endRegular(start.Add(regular))
		<-done
	case <-done:
		rec.endRegular(start.Add(regular))
	}
	return finishRun(ctx, rec)
}
