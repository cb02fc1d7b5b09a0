package experiment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/stack"
)

// events turns workload w's faults (times scaled) into the engine's
// events acting on the point's stack.
func (r *Runner) events(w Workload) ([]load.Event, error) {
	fs, err := w.Faults(r.Scale)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	return faultEvents(r.Logf, r.st, fs, "    ", false), nil
}

// EventHelp is the help of --event.
const EventHelp = "timed fault `EVENT`, repeatable: \"AT ACTION [node=N]\" with ACTION one of " + stack.FaultActions +
	", e.g. --event \"30s kill node=2\" --event \"60s start node=2\" (local stack only; AT from the start of the run, warm-up included)"

// parseEvents reads --event values (and a run file's events) and checks
// them against the stack's topology and the run's length, before anything
// starts.
func parseEvents(specs []string, topo stack.Topology, runLen time.Duration) ([]stack.Fault, error) {
	var fs []stack.Fault
	var errs []error
	for _, s := range specs {
		f, err := stack.ParseFault(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fs = append(fs, f)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := stack.CheckFaults(fs, topo, runLen); err != nil {
		return nil, err
	}
	return fs, nil
}

// faultEvents turns checked faults into the engine's events, each acting
// on st (the stack whose Watch watches the run), logging as it goes
// (indented by indent; its start too when announce).
func faultEvents(logf func(string, ...any), st *stack.Stack, fs []stack.Fault, indent string, announce bool) []load.Event {
	var evs []load.Event
	for _, f := range fs {
		evs = append(evs, load.Event{At: f.At, Action: f.Action, Args: f.Args(), Do: func(ctx context.Context) error {
			start := time.Now()
			if announce {
				logf("%sevent: %s", indent, f)
			}
			err := st.ApplyFault(ctx, f)
			if err != nil {
				logf("%sevent %s failed after %s: %v", indent, f, time.Since(start).Round(time.Millisecond), err)
				return err
			}
			logf("%sevent %s done in %s", indent, f, time.Since(start).Round(time.Millisecond))
			return nil
		}})
	}
	return evs
}

// EventsFor checks --event values for a run against the local stack
// (nil when there are none) and returns the engine's events.
func EventsFor(logf func(string, ...any), specs []string, st *stack.Stack, runLen time.Duration) ([]load.Event, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	if st == nil {
		return nil, cliutil.Usagef("--event: fault events act on the local stack; an external --target cannot take them")
	}
	fs, err := parseEvents(specs, st.State().Topology, runLen)
	if err != nil {
		return nil, cliutil.Usage(fmt.Errorf("--event: %w", err))
	}
	for _, f := range fs {
		if f.Action == stack.FaultLatency && !st.HoldsLatencyProxy() {
			return nil, cliutil.Usagef("--event %q: the stack's latency proxy lives in the process that started it; change latency from an experiment's events", f.String())
		}
	}
	return faultEvents(logf, st, fs, "", true), nil
}
