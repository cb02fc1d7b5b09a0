package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// uma asks authorization services, as a user, for a requesting party
// token (results.OpUMAGrant: grant type uma-ticket) holding the scope
// dataset.UMAScope on a random resource of its tenant's resource server
// (seed --uma-resources N): Keycloak evaluates the resource's permission
// and its policy for the user and signs an RPT. The user's access token is
// the VU's (obtained at VU creation, renewed as results.OpRefresh shortly
// before it expires). A denial (HTTP 403) is an error like any other.
type uma struct{ env *Env }

var _ load.Scenario = (*uma)(nil)

func newUMA(env *Env) load.Scenario { return &uma{env: env} }

func (s *uma) Name() string { return results.ScenarioUMA }

func (s *uma) NewUser(ctx context.Context, id int) (load.User, error) {
	rng := s.env.rng(results.ScenarioUMA, id)
	sess, err := newSession(ctx, s.env, rng, "")
	if err != nil {
		return nil, err
	}
	return &umaUser{env: s.env, s: sess, rng: rng}, nil
}

type umaUser struct {
	env *Env
	s   *session
	rng *rand.Rand
}

func (u *umaUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	if err := u.s.renew(ctx, u.env.Client, rec); err != nil {
		return err
	}
	audience, permission := u.env.Pool.umaPermission(u.s.t, u.rng)
	start := time.Now()
	_, err := u.env.Client.UMAGrant(ctx, u.s.t.Realm, u.s.access, audience, permission)
	if isStatus(err, http.StatusBadRequest) {
		err = fmt.Errorf("%w (the tenant's resource server %s lacks resource %s: a dataset seeded with other --uma-resources, or changed by hand)", err, audience, permission)
	}
	rec.Record(results.OpUMAGrant, start, err)
	return err
}

// umaPermission draws one of tenant t's resources: its resource server
// and the permission asked ("resource#scope").
func (p *Pool) umaPermission(t *dataset.Tenant, r *rand.Rand) (audience, permission string) {
	k := 1 + r.IntN(p.spec.Content.UMAResources)
	return p.spec.UMAClient(t.Index), dataset.UMAResource(k) + "#" + dataset.UMAScope
}
