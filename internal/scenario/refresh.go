package scenario

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// refresh refreshes live sessions: each iteration takes the session of
// the scenario's pool (sessionPool) idle longest, refreshes it with its
// latest refresh token and gives it back. The pool holds
// Env.SessionsPerVU sessions per VU allocated up front, logged in before
// the run's clock starts when the run prepares it (prepare), else as the
// VUs first need them. With Env.RefreshesPerSession > 0 a session
// refreshed that often is replaced by a new login (recorded as
// results.OpSessionLogin), so that refreshes never exceed sessions ×
// RefreshesPerSession; a session Keycloak no longer knows is replaced the
// same way.
type refresh struct {
	env      *Env
	pool     *sessionPool
	prepared atomic.Bool
}

var _ load.Scenario = (*refresh)(nil)

func newRefresh(env *Env) load.Scenario {
	return &refresh{env: env, pool: env.sessions.get(results.ScenarioRefresh, env)}
}

func (s *refresh) Name() string { return results.ScenarioRefresh }

// prepare logs the pool's sessions in for a run of vus VUs.
func (s *refresh) prepare(ctx context.Context, vus int) error {
	s.prepared.Store(true)
	s.pool.grow(s.env.SessionsPerVU * max(vus, 1))
	return s.pool.fill(ctx)
}

func (s *refresh) NewUser(ctx context.Context, id int) (load.User, error) {
	if !s.prepared.Load() {
		s.pool.add(s.env.SessionsPerVU)
	}
	return &refreshUser{env: s.env, pool: s.pool, rng: s.env.rng(results.ScenarioRefresh, id)}, nil
}

type refreshUser struct {
	env  *Env
	pool *sessionPool
	rng  *rand.Rand // for the logins that replace sessions
}

func (u *refreshUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	s, err := u.pool.take(ctx)
	if err != nil {
		return err
	}
	defer func() { u.pool.put(s) }()
	if s.refresh == "" || (u.env.RefreshesPerSession > 0 && s.refreshes >= u.env.RefreshesPerSession) {
		start := time.Now()
		ns, err := newSession(ctx, u.env, u.rng, "")
		rec.Record(results.OpSessionLogin, start, err)
		if err != nil {
			return err
		}
		s = ns
	}
	start := time.Now()
	tr, err := u.env.Client.Refresh(ctx, s.t.Realm, s.cl, s.refresh)
	rec.Record(results.OpRefresh, start, err)
	if err != nil {
		if isStatus(err, 400) {
			s.refresh = "" // the session is gone: replace it next time
		}
		return err
	}
	s.refreshes++
	s.set(tr, time.Now())
	return nil
}
