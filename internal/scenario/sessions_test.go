package scenario

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// tokenServer answers a token endpoint's password and refresh grants
// (the pool's bookkeeping, not Keycloak's behaviour, is under test) and
// counts them; refreshes[t] counts the refreshes of the session whose
// first refresh token was t.
type tokenServer struct {
	logins    atomic.Int64
	mu        sync.Mutex
	refreshes map[string]int
	origin    map[string]string // refresh token → the session's first
	next      int
}

func newTokenServer(t *testing.T) (*tokenServer, *httptest.Server) {
	ts := &tokenServer{refreshes: map[string]int{}, origin: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		ts.mu.Lock()
		ts.next++
		tok := fmt.Sprintf("r%d", ts.next)
		switch r.PostForm.Get("grant_type") {
		case "password":
			ts.logins.Add(1)
			ts.origin[tok] = tok
		case "refresh_token":
			first, ok := ts.origin[r.PostForm.Get("refresh_token")]
			if !ok {
				ts.mu.Unlock()
				http.Error(w, `{"error":"invalid_grant"}`, 400)
				return
			}
			ts.refreshes[first]++
			ts.origin[tok] = first
		}
		ts.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"a","refresh_token":%q,"expires_in":300}`, tok)
	}))
	t.Cleanup(srv.Close)
	return ts, srv
}

func tokenEnv(t *testing.T, url string, pools *sessionPools) Env {
	pool, err := NewSinglePool(Single{Realm: "r", ClientID: "c", Username: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	return Env{Client: kc.New(url, nil), Pool: pool, SessionsPerVU: 2, sessions: pools}
}

// iterate runs n iterations of sc by vus users, concurrently.
func iterate(t *testing.T, sc load.Scenario, vus, n int) {
	t.Helper()
	var users []load.User
	for id := range vus {
		u, err := sc.NewUser(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	var wg sync.WaitGroup
	var left atomic.Int64
	left.Store(int64(n))
	for _, u := range users {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := u.Iterate(t.Context(), nopRecorder{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

type nopRecorder struct{}

func (nopRecorder) Record(string, time.Time, error) {}

// A prepared refresh run logs SessionsPerVU × its VUs in before its first
// iteration and no more however many VUs it makes; every session is
// refreshed in turn; a later run keeps them and logs in only what its
// larger size adds.
func TestRefreshSessionPool(t *testing.T) {
	ts, srv := newTokenServer(t)
	var pools sessionPools
	sc, err := ByName(results.ScenarioRefresh, tokenEnv(t, srv.URL, &pools))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := sc.(preparer)
	if !ok {
		t.Fatal("refresh has no prepare")
	}
	if err := p.prepare(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	if got := ts.logins.Load(); got != 10 {
		t.Fatalf("prepared for 5 VUs: %d logins, want 10", got)
	}
	// fewer VUs than sessions: some are always idle, taken oldest first
	iterate(t, sc, 5, 200)
	if got := ts.logins.Load(); got != 10 {
		t.Fatalf("after 200 refreshes by 5 VUs: %d logins, want 10", got)
	}
	ts.mu.Lock()
	lo, hi := 1<<30, 0
	for _, n := range ts.refreshes {
		lo, hi = min(lo, n), max(hi, n)
	}
	sessions := len(ts.refreshes)
	ts.mu.Unlock()
	// every one in turn (a VU descheduled while it holds one on a busy
	// machine makes its share uneven; taking the newest idle one would
	// leave half of them unused)
	if sessions != 10 || lo < 2 {
		t.Fatalf("%d sessions refreshed, %d to %d times each: want all 10, each in turn", sessions, lo, hi)
	}
	// more VUs than sessions: they wait for one, and no more are logged in
	iterate(t, sc, 40, 200)
	if got := ts.logins.Load(); got != 10 {
		t.Fatalf("after 200 refreshes by 40 VUs: %d logins, want 10", got)
	}

	// the next run (a capacity search's next step) keeps the sessions
	sc2, err := ByName(results.ScenarioRefresh, tokenEnv(t, srv.URL, &pools))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc2.(preparer).prepare(t.Context(), 4); err != nil {
		t.Fatal(err)
	}
	if got := ts.logins.Load(); got != 10 {
		t.Fatalf("a smaller run after it: %d logins in all, want 10", got)
	}
	if err := sc2.(preparer).prepare(t.Context(), 8); err != nil {
		t.Fatal(err)
	}
	if got := ts.logins.Load(); got != 16 {
		t.Fatalf("a run of 8 VUs after it: %d logins in all, want 16", got)
	}
	iterate(t, sc2, 3, 30)
	if got := ts.logins.Load(); got != 16 {
		t.Fatalf("after its refreshes: %d logins in all, want 16", got)
	}
}

// Driven without prepare (as the scenario tests drive it), each VU made
// adds SessionsPerVU sessions, logged in when first needed.
func TestRefreshSessionPoolUnprepared(t *testing.T) {
	ts, srv := newTokenServer(t)
	sc, err := ByName(results.ScenarioRefresh, tokenEnv(t, srv.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	iterate(t, sc, 3, 1)
	if got := ts.logins.Load(); got != 1 {
		t.Fatalf("one refresh: %d logins, want 1", got)
	}
	if want, made := sc.(*refresh).pool.size(); want != 6 || made != 1 {
		t.Fatalf("3 VUs: size %d, %d made; want 6, 1", want, made)
	}
}

// A session taken is not handed out again until it is put back; a taker
// waiting for one gives up when its context ends.
func TestSessionPoolWaits(t *testing.T) {
	ts, srv := newTokenServer(t)
	env := tokenEnv(t, srv.URL, nil)
	p := &sessionPool{env: &env}
	p.grow(1)
	s, err := p.take(t.Context())
	if err != nil || ts.logins.Load() != 1 {
		t.Fatalf("first take: %v, %d logins", err, ts.logins.Load())
	}
	got := make(chan *session)
	go func() {
		s2, err := p.take(t.Context())
		if err != nil {
			t.Error(err)
		}
		got <- s2
	}()
	select {
	case <-got:
		t.Fatal("a second taker got a session while the only one was out")
	case <-time.After(50 * time.Millisecond):
	}
	p.put(s)
	select {
	case s2 := <-got:
		if s2 != s {
			t.Fatal("the waiting taker got another session")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting taker did not get the session put back")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.take(ctx); err == nil {
		t.Fatal("a take with every session out returned without one")
	}
	if ts.logins.Load() != 1 {
		t.Fatalf("%d logins for a pool of 1", ts.logins.Load())
	}
}

// size is the pool's size and the sessions logged in so far.
func (p *sessionPool) size() (want, made int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.want, p.made
}
