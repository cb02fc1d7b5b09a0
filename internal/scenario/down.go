package scenario

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// DefaultDownAfter is how long every iteration must fail at connect
// before a run counts its target as unreachable and stops.
const DefaultDownAfter = 5 * time.Second

// alivePoll is how often RunInput.Alive is asked.
const alivePoll = 500 * time.Millisecond

// DownError says that the target went away during a run (its process
// exited, it logged an OutOfMemoryError, it lost readiness, or every
// iteration failed at connect for a while), or that no iteration
// succeeded at all. The run's results hold what ran.
type DownError struct {
	// At is how far into the run (warm-up included) the target was seen
	// to go; 0 when the run ended without a single success.
	At     time.Duration
	Reason string
}

// Error reads "42 s into the run: Keycloak exited: OutOfMemoryError:
// Java heap space (log: …)", or the reason alone when At is 0.
func (e *DownError) Error() string {
	if e.At > 0 {
		return fmt.Sprintf("%.0f s into the run: %s", e.At.Seconds(), e.Reason)
	}
	return e.Reason
}

// downWatch watches a run for a target that went away: Alive polled, and
// the engine's progress for iterations that all fail at connect.
type downWatch struct {
	after time.Duration
	stop  func(error) // cancels the run with its cause; nil: keep going
	start time.Time
	// noConnectRule: every iteration failing at connect does not count as
	// the target down (a run with fault events).
	noConnectRule bool

	mu    sync.Mutex
	ticks []load.Progress // the last ticks, enough to span after
	down  *DownError
}

// observe takes one progress tick.
func (w *downWatch) observe(p load.Progress) {
	w.mu.Lock()
	w.ticks = append(w.ticks, p)
	// Keep the newest tick at least w.after old, and all after it.
	i := 0
	for i+1 < len(w.ticks) && p.Elapsed-w.ticks[i+1].Elapsed >= w.after {
		i++
	}
	w.ticks = w.ticks[i:]
	old := w.ticks[0]
	w.mu.Unlock()
	if w.noConnectRule || p.Elapsed-old.Elapsed < w.after {
		return
	}
	n, refused := p.Iterations-old.Iterations, p.ConnectErrors-old.ConnectErrors
	if n > 0 && refused == n {
		w.found(&DownError{At: old.Elapsed, Reason: fmt.Sprintf("the target is unreachable: every iteration for %.0f s failed to connect (%d connections refused)",
			(p.Elapsed - old.Elapsed).Seconds(), refused)})
	}
}

// poll asks alive every alivePoll until ctx ends or it reports an error.
func (w *downWatch) poll(ctx context.Context, alive func(context.Context) error) {
	t := time.NewTicker(alivePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := alive(ctx); err != nil && ctx.Err() == nil {
				w.found(&DownError{At: time.Since(w.start), Reason: err.Error()})
				return
			}
		}
	}
}

// found records the first finding and stops the run.
func (w *downWatch) found(d *DownError) {
	w.mu.Lock()
	first := w.down == nil
	if first {
		w.down = d
	}
	w.mu.Unlock()
	if first && w.stop != nil {
		w.stop(d)
	}
}

func (w *downWatch) result() *DownError {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.down
}

// noSuccess returns a DownError when iterations ran and none succeeded,
// naming the error classes with an example of each, or when iterations
// started and none ended before the graceful stop cut them off (a target
// that accepts connections and never answers): a run that measured
// nothing says so.
func noSuccess(s results.Stats) *DownError {
	it, ok := s.Op(results.IterationOp)
	if ok && it.Count == 0 && s.Interrupted > 0 {
		return &DownError{Reason: fmt.Sprintf("no iteration completed: %d interrupted at the end of the run (a target that accepts connections and never answers?)", s.Interrupted)}
	}
	if !ok || it.Count == 0 || it.OK > 0 {
		return nil
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(it.ErrorClasses)) {
		part := fmt.Sprintf("%s %d", c, it.ErrorClasses[c])
		if ex := s.ErrorExamples[c]; ex != "" {
			part += ": " + ex
		}
		parts = append(parts, part)
	}
	return &DownError{Reason: fmt.Sprintf("no iteration succeeded: %d failed (%s)", it.Count, strings.Join(parts, "; "))}
}
