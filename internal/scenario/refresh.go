package scenario

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// refresh refreshes live sessions: each VU logs Env.SessionsPerVU random
// users in when it is created, then each iteration refreshes the next of
// its sessions in turn with the session's latest refresh token. With
// Env.RefreshesPerSession > 0 a session refreshed that often is replaced
// by a new login (recorded as results.OpSessionLogin), so that refreshes never
// exceed sessions × RefreshesPerSession; a session Keycloak no longer
// knows is replaced the same way.
type refresh struct{ env *Env }

var _ load.Scenario = (*refresh)(nil)

func newRefresh(env *Env) load.Scenario { return &refresh{env: env} }

func (s *refresh) Name() string { return results.ScenarioRefresh }

func (s *refresh) NewUser(ctx context.Context, id int) (load.User, error) {
	u := &refreshUser{env: s.env, rng: s.env.rng(results.ScenarioRefresh, id)}
	for range s.env.SessionsPerVU {
		sess, err := newSession(ctx, s.env, u.rng, "")
		if err != nil {
			return nil, err
		}
		u.sessions = append(u.sessions, sess)
	}
	return u, nil
}

type refreshUser struct {
	env      *Env
	rng      *rand.Rand
	sessions []*session
	next     int
}

func (u *refreshUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	i := u.next % len(u.sessions)
	u.next++
	s := u.sessions[i]
	if s.refresh == "" || (u.env.RefreshesPerSession > 0 && s.refreshes >= u.env.RefreshesPerSession) {
		start := time.Now()
		ns, err := newSession(ctx, u.env, u.rng, "")
		rec.Record(results.OpSessionLogin, start, err)
		if err != nil {
			return err
		}
		u.sessions[i], s = ns, ns
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
