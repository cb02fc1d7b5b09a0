package experiment

import (
	"context"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

// events turns workload w's faults (times scaled) into the engine's
// events acting on the point's stack.
func (r *Runner) events(w Workload) ([]load.Event, error) {
	fs, err := w.Faults(r.Scale)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	var evs []load.Event
	for _, f := range fs {
		evs = append(evs, load.Event{At: f.At, Action: f.Action, Args: f.Args(), Do: func(ctx context.Context) error {
			start := time.Now()
			err := r.st.ApplyFault(ctx, f)
			if err != nil {
				r.Logf("    event %s failed after %s: %v", f, time.Since(start).Round(time.Millisecond), err)
			} else {
				r.Logf("    event %s done in %s", f, time.Since(start).Round(time.Millisecond))
			}
			return err
		}})
	}
	return evs, nil
}
