package load

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// Event is one timed action on the system under test during a run (a node
// killed, latency changed). The engine knows nothing of what Do does: it
// calls it at At and stamps the outcome on the run's timeline.
type Event struct {
	At     time.Duration // offset from the start of the run, warm-up included
	Action string        // e.g. "kill"
	Args   string        // e.g. "node=2"
	// Do performs the action; it may take a while (a node's boot), and
	// later events wait for it: events run one at a time, in order.
	Do func(context.Context) error
}

// EventRunner runs a list of events against a clock started by Start.
type EventRunner struct {
	events []Event

	mu    sync.Mutex
	start time.Time
	done  []results.Event
	wg    sync.WaitGroup
}

// NewEventRunner sorts events by At (stable: same-time events keep their
// order).
func NewEventRunner(events []Event) *EventRunner {
	evs := slices.Clone(events)
	slices.SortStableFunc(evs, func(a, b Event) int { return int(a.At - b.At) })
	return &EventRunner{events: evs}
}

// Start runs the events in the background, each at start+At, until ctx
// ends (the run's end: no event starts after it). Each action runs with
// doCtx, so that one under way when the run ends is finished rather than
// cut off (a node half started), while an interrupt (doCtx cancelled)
// stops it. Call Start once; Wait waits for the action under way.
func (r *EventRunner) Start(ctx, doCtx context.Context, start time.Time) {
	r.mu.Lock()
	r.start = start
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for _, e := range r.events {
			if err := Sleep(ctx, time.Until(start.Add(e.At))); err != nil {
				return
			}
			at := time.Since(start) // when the action began
			var err error
			if e.Do != nil {
				err = e.Do(doCtx)
			}
			re := results.Event{At: at, Action: e.Action, Args: e.Args, Took: time.Since(start) - at}
			if err != nil {
				re.Err = err.Error()
			}
			r.mu.Lock()
			r.done = append(r.done, re)
			r.mu.Unlock()
		}
	}()
}

// Wait waits until the running action, if any, returns (its context ends
// with the run's).
func (r *EventRunner) Wait() { r.wg.Wait() }

// Events returns the events that ran, with their offsets from the start
// given to Start, rebased to runStart (Stats.Start) when that is set.
func (r *EventRunner) Events(runStart time.Time) []results.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.done)
	if !runStart.IsZero() && !r.start.IsZero() {
		shift := r.start.Sub(runStart)
		for i := range out {
			out[i].At += shift
		}
	}
	return out
}
