package scenario

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// clientCredentials gets a service-account token for a random tenant's
// backend client: machine-to-machine traffic, no user and no hashing.
type clientCredentials struct{ env *Env }

var _ load.Scenario = (*clientCredentials)(nil)

func newClientCredentials(env *Env) load.Scenario { return &clientCredentials{env: env} }

func (s *clientCredentials) Name() string { return results.ScenarioClientCredentials }

func (s *clientCredentials) NewUser(_ context.Context, id int) (load.User, error) {
	return &clientCredentialsUser{env: s.env, rng: s.env.rng(results.ScenarioClientCredentials, id)}, nil
}

type clientCredentialsUser struct {
	env *Env
	rng *rand.Rand
}

func (u *clientCredentialsUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t := u.env.Pool.pickTenant(u.rng)
	start := time.Now()
	_, err := u.env.Client.ClientCredentials(ctx, t.Realm, u.env.Pool.client(u.rng, t), "")
	rec.Record(results.OpClientCredentials, start, err)
	return err
}
