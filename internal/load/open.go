package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// ConstantArrivalRate starts Rate iterations per second for Duration
// (open model), whatever the target's response time.
//
// PreAllocatedVUs are created before the run; when none is free at an
// arrival, another is allocated up to MaxVUs (0 means PreAllocatedVUs), its
// creation counting towards that iteration's latency. Past MaxVUs the
// arrival is dropped and counted in Stats.Dropped.
type ConstantArrivalRate struct {
	Rate            float64 // iterations per second
	Duration        time.Duration
	PreAllocatedVUs int
	MaxVUs          int
	GracefulStop    time.Duration
	// Segment, when set, makes this agent's share of a split run: every
	// Count-th arrival of Rate's schedule (Strided).
	Segment Segment
}

// Validate implements Executor.
func (e ConstantArrivalRate) Validate() error {
	var errs []error
	if !(e.Rate > 0) || math.IsInf(e.Rate, 0) {
		errs = append(errs, fmt.Errorf("rate must be a positive number, got %v", e.Rate))
	}
	if e.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration must be positive, got %v", e.Duration))
	}
	errs = checkVUs(errs, e.PreAllocatedVUs, e.MaxVUs)
	if err := e.Segment.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(checkGraceful(errs, e.GracefulStop)...)
}

// Schedule returns the arrival schedule of e.
func (e ConstantArrivalRate) Schedule() Schedule {
	return stride(Constant{Rate: e.Rate, Duration: e.Duration}, e.Segment)
}

// Run implements Executor.
func (e ConstantArrivalRate) Run(ctx context.Context, sc Scenario, rec *Recorder) (results.Stats, error) {
	if err := e.Validate(); err != nil {
		return results.Stats{}, fmt.Errorf("load: %s: %w", NameConstantArrivalRate, err)
	}
	return openRun{
		name:     NameConstantArrivalRate,
		schedule: e.Schedule(),
		duration: e.Duration,
		graceful: e.GracefulStop,
		pre:      e.PreAllocatedVUs,
		max:      maxVUs(e.PreAllocatedVUs, e.MaxVUs),
	}.run(ctx, sc, rec)
}

// RampingArrivalRate moves the arrival rate linearly through Stages,
// starting from StartRate iterations per second (open model). VUs are
// allocated and arrivals dropped as in ConstantArrivalRate.
type RampingArrivalRate struct {
	StartRate       float64
	Stages          []Stage
	PreAllocatedVUs int
	MaxVUs          int
	GracefulStop    time.Duration
	// Segment, when set, makes this agent's share of a split run (see
	// ConstantArrivalRate.Segment).
	Segment Segment
}

// Validate implements Executor.
func (e RampingArrivalRate) Validate() error {
	var errs []error
	if !(e.StartRate >= 0) || math.IsInf(e.StartRate, 0) {
		errs = append(errs, fmt.Errorf("startRate must be a non-negative number, got %v", e.StartRate))
	}
	if len(e.Stages) == 0 {
		errs = append(errs, errors.New("at least one stage is required"))
	}
	for i, s := range e.Stages {
		if !(s.Target >= 0) || math.IsInf(s.Target, 0) {
			errs = append(errs, fmt.Errorf("stages[%d].target must be a non-negative number, got %v", i, s.Target))
		}
		if s.Duration < 0 {
			errs = append(errs, fmt.Errorf("stages[%d].duration must not be negative, got %v", i, s.Duration))
		}
	}
	if len(e.Stages) > 0 && e.Schedule().Duration() <= 0 {
		errs = append(errs, errors.New("stages must last longer than zero"))
	}
	errs = checkVUs(errs, e.PreAllocatedVUs, e.MaxVUs)
	if err := e.Segment.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(checkGraceful(errs, e.GracefulStop)...)
}

// Schedule returns the arrival schedule of e.
func (e RampingArrivalRate) Schedule() Ramp {
	return Ramp{Start: e.StartRate, Stages: e.Stages}
}

// Run implements Executor.
func (e RampingArrivalRate) Run(ctx context.Context, sc Scenario, rec *Recorder) (results.Stats, error) {
	if err := e.Validate(); err != nil {
		return results.Stats{}, fmt.Errorf("load: %s: %w", NameRampingArrivalRate, err)
	}
	s := e.Schedule()
	return openRun{
		name:     NameRampingArrivalRate,
		schedule: stride(s, e.Segment),
		duration: s.Duration(),
		graceful: e.GracefulStop,
		pre:      e.PreAllocatedVUs,
		max:      maxVUs(e.PreAllocatedVUs, e.MaxVUs),
	}.run(ctx, sc, rec)
}

func maxVUs(pre, max int) int {
	if max == 0 {
		return pre
	}
	return max
}

func checkVUs(errs []error, pre, max int) []error {
	if pre < 0 {
		errs = append(errs, fmt.Errorf("preAllocatedVUs must not be negative, got %d", pre))
	}
	if max < 0 {
		errs = append(errs, fmt.Errorf("maxVUs must not be negative, got %d", max))
	}
	if max > 0 && max < pre {
		errs = append(errs, fmt.Errorf("maxVUs (%d) must not be less than preAllocatedVUs (%d)", max, pre))
	}
	if max == 0 && pre == 0 {
		errs = append(errs, errors.New("preAllocatedVUs or maxVUs must be at least 1"))
	}
	return errs
}

// openRun is the one scheduler loop behind the open-model executors.
type openRun struct {
	name     string
	schedule Schedule
	duration time.Duration // regular duration; arrivals at or after it are not made
	graceful time.Duration
	pre, max int
}

// openVU is a VU of an open run: it waits for intended start times on jobs.
type openVU struct {
	vu
	jobs chan time.Time // capacity 1
}

// run makes every arrival of the schedule at its intended time: it hands
// the arrival to a free VU, allocates a new VU when none is free and MaxVUs
// allows, and otherwise drops it. Arrival times are absolute offsets from
// the start, so a late wake-up is caught up on and never shifts later
// arrivals; the VU measures latency from the intended time.
func (o openRun) run(ctx context.Context, sc Scenario, rec *Recorder) (results.Stats, error) {
	if rec == nil {
		rec = NewRecorder()
	}
	users, err := newUsers(ctx, sc, o.pre)
	if err != nil {
		return results.Stats{}, err
	}
	start, err := rec.begin(ctx, runInfo{scenario: sc.Name(), executor: o.name, model: results.ModelOpen})
	if err != nil {
		return results.Stats{}, err
	}
	reg, hard, cancel := durationContexts(ctx, start, o.duration, o.graceful)
	defer cancel()

	var wg sync.WaitGroup
	free := make(chan *openVU, o.max) // never full: it holds at most every VU
	vus := make([]*openVU, 0, o.max)
	spawn := func(u User) *openVU {
		v := &openVU{vu: vu{id: len(vus), user: u, rec: rec.newVU(hard)}, jobs: make(chan time.Time, 1)}
		vus = append(vus, v)
		wg.Go(func() {
			for intended := range v.jobs {
				v.iterate(hard, sc, intended)
				free <- v
			}
		})
		return v
	}
	for _, u := range users {
		free <- spawn(u)
	}

	t := time.NewTimer(0)
	defer t.Stop()
arrivals:
	for i := uint64(0); ; i++ {
		off, ok := o.schedule.At(i)
		if !ok || off >= o.duration {
			break
		}
		intended := start.Add(off)
		if wait := time.Until(intended); wait > 0 {
			t.Reset(wait)
			select {
			case <-t.C:
			case <-reg.Done():
				break arrivals
			case <-rec.early:
				break arrivals
			}
		} else if reg.Err() != nil {
			break
		}
		select {
		case <-rec.early:
			break arrivals
		default:
		}
		select {
		case v := <-free:
			v.jobs <- intended
		default:
			if len(vus) < o.max {
				spawn(nil).jobs <- intended
			} else {
				rec.drop()
			}
		}
	}
	select {
	case <-rec.early: // an early end: the regular duration ends now
	case <-reg.Done(): // the schedule may end before the regular duration
	}
	rec.endRegular(start.Add(o.duration)) // now, or the deadline if that passed
	for _, v := range vus {
		close(v.jobs)
	}
	wg.Wait()
	return finishRun(ctx, rec)
}
