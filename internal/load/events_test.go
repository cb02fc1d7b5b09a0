package load

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestEventRunner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var order []string
		do := func(name string, took time.Duration, err error) func(context.Context) error {
			return func(ctx context.Context) error {
				order = append(order, name)
				time.Sleep(took)
				return err
			}
		}
		r := NewEventRunner([]Event{
			{At: 3 * time.Second, Action: "start", Args: "node=2", Do: do("start", 5*time.Second, nil)},
			{At: time.Second, Action: "kill", Args: "node=2", Do: do("kill", 0, errors.New("no such node"))},
			{At: 4 * time.Second, Action: "restart", Do: do("restart", 0, nil)}, // waits for start
			{At: time.Minute, Action: "never", Do: do("never", 0, nil)},
		})
		ctx, cancel := context.WithCancel(t.Context())
		begin := time.Now()
		r.Start(ctx, t.Context(), begin.Add(-500*time.Millisecond)) // the run started before
		time.Sleep(30 * time.Second)
		cancel()
		r.Wait()
		got := r.Events(begin.Add(-time.Second)) // Stats.Start half a second before the runner's
		if len(got) != 3 || len(order) != 3 {
			t.Fatalf("ran %v, events %+v", order, got)
		}
		want := []struct {
			action string
			at     time.Duration
			err    string
		}{{"kill", 1500 * time.Millisecond, "no such node"}, {"start", 3500 * time.Millisecond, ""}, {"restart", 8500 * time.Millisecond, ""}}
		for i, w := range want {
			if got[i].Action != w.action || got[i].At != w.at || got[i].Err != w.err {
				t.Errorf("event %d: %+v, want %+v", i, got[i], w)
			}
		}
	})
}
