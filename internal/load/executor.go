package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// Executor decides how many VUs run a Scenario, and when. The executors of
// this package are plain value structs; Run validates them first.
//
// Users of the closed-model executors (all of RampingVUs' peak) and the
// open-model executors' PreAllocatedVUs are created before the run starts,
// so their creation is not measured; the run's clock starts after.
type Executor interface {
	// Validate reports every problem with the configuration at once.
	Validate() error
	// Run runs sc, recording into rec (a fresh Recorder when nil). When ctx
	// is cancelled Run stops within moments and returns the partial Stats
	// with an error wrapping ctx.Err().
	Run(ctx context.Context, sc Scenario, rec *Recorder) (results.Stats, error)
}

var (
	_ Executor = ConstantVUs{}
	_ Executor = RampingVUs{}
	_ Executor = PerVUIterations{}
	_ Executor = ConstantArrivalRate{}
	_ Executor = RampingArrivalRate{}
)

// Executor names as reported in Stats.Executor.
const (
	NameConstantVUs         = "constant-vus"
	NameRampingVUs          = "ramping-vus"
	NamePerVUIterations     = "per-vu-iterations"
	NameConstantArrivalRate = "constant-arrival-rate"
	NameRampingArrivalRate  = "ramping-arrival-rate"
)

// DefaultGracefulStop is the GracefulStop kcbench uses when a configuration
// does not set one. The executors themselves take zero to mean zero.
const DefaultGracefulStop = 30 * time.Second

// DefaultHTTPTimeout bounds one HTTP request of a scenario that sets no
// timeout of its own.
const DefaultHTTPTimeout = 30 * time.Second

// userInitParallelism bounds how many NewUser calls run at once.
const userInitParallelism = 16

// durationContexts derives the two contexts of a run, as k6 does. Once reg
// is done no new iteration starts; once hard is done, GracefulStop after
// reg, iterations still running are cancelled. Cancelling parent ends both.
func durationContexts(parent context.Context, start time.Time, regular, graceful time.Duration) (reg, hard context.Context, cancel context.CancelFunc) {
	hard, cancelHard := context.WithDeadline(parent, start.Add(regular+graceful))
	reg, cancelReg := context.WithDeadline(hard, start.Add(regular))
	return reg, hard, func() { cancelReg(); cancelHard() }
}

// live reports whether a VU may start another iteration. hard is checked
// too: a VU woken by hard's cancellation can run before the cancellation
// reaches reg, hard's child, and would spin through iterations that can
// only be interrupted.
func live(reg, hard context.Context) bool { return reg.Err() == nil && hard.Err() == nil }

var errNilUser = errors.New("load: NewUser returned no User and no error")

// newUsers creates users 0..n-1, a few at a time, stopping at the first
// error.
func newUsers(ctx context.Context, sc Scenario, n int) ([]User, error) {
	users := make([]User, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		sem   = make(chan struct{}, userInitParallelism)
	)
loop:
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		wg.Go(func() {
			defer func() { <-sem }()
			u, err := sc.NewUser(ctx, i)
			if err == nil && u == nil {
				err = errNilUser
			}
			if err != nil {
				once.Do(func() {
					first = fmt.Errorf("load: new user %d: %w", i, err)
					cancel()
				})
				return
			}
			users[i] = u
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("load: creating users: %w", err)
	}
	return users, nil
}

// vu is one virtual user as the executors see it.
type vu struct {
	id   int
	user User // nil until created, for VUs allocated during an open run
	rec  *vuRecorder
}

// iterate runs one iteration meant to start at intended; the zero time
// means now, as in the closed model. A VU allocated during an open run
// creates its user first: that delays the iteration, so it counts towards
// latency but not service time.
func (v *vu) iterate(ctx context.Context, sc Scenario, intended time.Time) {
	active := &v.rec.r.active
	active.Add(1)
	defer active.Add(-1)
	if v.user == nil {
		u, err := sc.NewUser(ctx, v.id)
		if err == nil && u == nil {
			err = errNilUser
		}
		if err != nil {
			now := time.Now()
			if intended.IsZero() {
				intended = now
			}
			v.rec.endIteration(intended, now, err)
			return
		}
		v.user = u
	}
	begin := time.Now()
	if intended.IsZero() {
		intended = begin
	}
	v.rec.startIteration(max(begin.Sub(intended), 0))
	err := v.user.Iterate(ctx, v.rec)
	v.rec.endIteration(intended, begin, err)
}

// finishRun ends a run: it collects the Stats and, when ctx was cancelled,
// an error saying so.
func finishRun(ctx context.Context, rec *Recorder) (results.Stats, error) {
	aborted := ctx.Err() != nil
	s := rec.finish(aborted)
	if aborted {
		return s, fmt.Errorf("load: run interrupted: %w", ctx.Err())
	}
	return s, nil
}

// checkGraceful appends a problem if d is negative.
func checkGraceful(errs []error, d time.Duration) []error {
	if d < 0 {
		errs = append(errs, fmt.Errorf("gracefulStop must not be negative, got %v", d))
	}
	return errs
}

// Sleep waits for d or until ctx is done, whichever is first; it returns
// ctx's error when ctx ended the wait (or was done already).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
