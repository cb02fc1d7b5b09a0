package scenario

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// logout logs a random user in with the password grant and logs the
// session out again through the back channel: both are recorded, so the
// cost of a logout is this scenario's less password-grant's.
type logout struct{ env *Env }

var _ load.Scenario = (*logout)(nil)

func newLogout(env *Env) load.Scenario { return &logout{env: env} }

func (s *logout) Name() string { return results.ScenarioLogout }

func (s *logout) NewUser(_ context.Context, id int) (load.User, error) {
	return &logoutUser{env: s.env, rng: s.env.rng(results.ScenarioLogout, id)}, nil
}

type logoutUser struct {
	env *Env
	rng *rand.Rand
}

func (u *logoutUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t, user := u.env.Pool.pick(u.rng)
	cl := u.env.Pool.client(u.rng, t)
	start := time.Now()
	tr, err := u.env.Client.PasswordGrant(ctx, t.Realm, cl, user, u.env.Pool.password, "")
	rec.Record(results.OpPasswordGrant, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	err = u.env.Client.Logout(ctx, t.Realm, cl, tr.RefreshToken)
	rec.Record(results.OpLogout, start, err)
	return err
}
