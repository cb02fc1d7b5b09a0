package scenario

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// passwordGrant logs a random user in with the password grant: the
// cheapest full login, dominated by password hashing.
type passwordGrant struct{ env *Env }

var _ load.Scenario = (*passwordGrant)(nil)

func newPasswordGrant(env *Env) load.Scenario { return &passwordGrant{env: env} }

func (s *passwordGrant) Name() string { return results.ScenarioPasswordGrant }

func (s *passwordGrant) NewUser(_ context.Context, id int) (load.User, error) {
	return &passwordGrantUser{env: s.env, rng: s.env.rng(results.ScenarioPasswordGrant, id)}, nil
}

type passwordGrantUser struct {
	env *Env
	rng *rand.Rand
}

func (u *passwordGrantUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t, user := u.env.Pool.pick(u.rng)
	start := time.Now()
	_, err := u.env.Client.PasswordGrant(ctx, t.Realm, u.env.Pool.client(u.rng, t), user, u.env.Pool.password, "")
	rec.Record(results.OpPasswordGrant, start, err)
	return err
}
