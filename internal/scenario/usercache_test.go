package scenario

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kcbench/kcbench/internal/load"
)

// countingScenario counts the users it makes (a refresh VU's logins).
type countingScenario struct{ made atomic.Int64 }

func (c *countingScenario) Name() string { return "counting" }

func (c *countingScenario) NewUser(context.Context, int) (load.User, error) {
	c.made.Add(1)
	return &countingUser{}, nil
}

type countingUser struct{ iterations int }

func (u *countingUser) Iterate(context.Context, load.OpRecorder) error { u.iterations++; return nil }

// A run takes the users earlier runs made before it makes new ones, each
// user once per run, also when VUs are made concurrently.
func TestUserCacheReusesAcrossRuns(t *testing.T) {
	var c UserCache
	sc := &countingScenario{}
	take := func(n int) map[load.User]bool {
		run := c.Reuse(sc)
		var (
			mu   sync.Mutex
			seen = map[load.User]bool{}
			wg   sync.WaitGroup
		)
		for id := range n {
			wg.Go(func() {
				u, err := run.NewUser(t.Context(), id)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if seen[u] {
					t.Errorf("a user handed out twice in one run")
				}
				seen[u] = true
			})
		}
		wg.Wait()
		return seen
	}
	first := take(10)
	if sc.made.Load() != 10 || c.Made() != 10 {
		t.Fatalf("first run: %d users made (%d said), want 10", sc.made.Load(), c.Made())
	}
	second := take(25)
	if sc.made.Load() != 25 || c.Made() != 15 {
		t.Fatalf("second run of 25 VUs: %d users made in all (%d in it), want 25 (15)", sc.made.Load(), c.Made())
	}
	for u := range first {
		if !second[u] {
			t.Fatal("the second run did not take a user the first made")
		}
	}
	take(5)
	if sc.made.Load() != 25 || c.Made() != 0 {
		t.Fatalf("third run of 5 VUs: %d users made in all (%d in it), want 25 (0)", sc.made.Load(), c.Made())
	}
}
