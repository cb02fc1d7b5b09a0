package scenario

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// session is one user's tokens, as a VU keeps them between iterations.
type session struct {
	t         *dataset.Tenant
	cl        kc.OAuthClient // the client the tokens were issued to
	user      string
	access    string
	refresh   string
	lifetime  time.Duration // of the access token
	renewAt   time.Time     // renew the access token from then on
	refreshes int           // refresh grants so far
}

// set stores tr, received at now.
func (s *session) set(tr *kc.TokenResponse, now time.Time) {
	s.access = tr.AccessToken
	if tr.RefreshToken != "" {
		s.refresh = tr.RefreshToken
	}
	s.lifetime = time.Duration(tr.ExpiresIn) * time.Second
	s.renewAt = now.Add(s.lifetime - min(tokenMargin, s.lifetime/4))
}

// due reports whether the access token should be renewed.
func (s *session) due(now time.Time) bool { return !now.Before(s.renewAt) }

// newSession logs a random user in with the password grant (not recorded:
// it is a VU's setup).
func newSession(ctx context.Context, env *Env, r *rand.Rand, scope string) (*session, error) {
	s := &session{}
	s.t, s.user = env.Pool.pick(r)
	s.cl = env.Pool.client(r, s.t)
	tr, err := env.Client.PasswordGrant(ctx, s.t.Realm, s.cl, s.user, env.Pool.password, scope)
	if err != nil {
		return nil, err
	}
	s.set(tr, time.Now())
	return s, nil
}

// renew refreshes the session's access token if it is due, recording the
// refresh as results.OpRefresh.
func (s *session) renew(ctx context.Context, c *kc.Client, rec load.OpRecorder) error {
	start := time.Now()
	if !s.due(start) {
		return nil
	}
	tr, err := c.Refresh(ctx, s.t.Realm, s.cl, s.refresh)
	rec.Record(results.OpRefresh, start, err)
	if err != nil {
		return err
	}
	s.refreshes++
	s.set(tr, time.Now())
	return nil
}

// isStatus reports whether err is Keycloak answering with HTTP code.
func isStatus(err error, code int) bool {
	var ae *kc.APIError
	return errors.As(err, &ae) && ae.Status == code
}
