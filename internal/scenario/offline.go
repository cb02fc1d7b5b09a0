package scenario

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// offline asks for an offline token (password grant with scope
// offline_access) and refreshes it once. Each iteration leaves an offline
// session behind, stored in the database until it expires, as an app that
// keeps offline tokens does.
type offline struct{ env *Env }

var _ load.Scenario = (*offline)(nil)

func newOffline(env *Env) load.Scenario { return &offline{env: env} }

func (s *offline) Name() string { return results.ScenarioOffline }

func (s *offline) NewUser(_ context.Context, id int) (load.User, error) {
	return &offlineUser{env: s.env, rng: s.env.rng(results.ScenarioOffline, id)}, nil
}

type offlineUser struct {
	env *Env
	rng *rand.Rand
}

var errNotOffline = load.CheckError{Check: "the token has scope offline_access"}

func (u *offlineUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t, user := u.env.Pool.pick(u.rng)
	cl := u.env.Pool.client(u.rng, t)
	start := time.Now()
	tr, err := u.env.Client.PasswordGrant(ctx, t.Realm, cl, user, u.env.Pool.password, kc.ScopeOfflineAccess)
	if err == nil && !hasScope(tr.Scope, kc.ScopeOfflineAccess) {
		err = errNotOffline
	}
	rec.Record(results.OpOfflineGrant, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	_, err = u.env.Client.Refresh(ctx, t.Realm, cl, tr.RefreshToken)
	rec.Record(results.OpOfflineRefresh, start, err)
	return err
}

// hasScope reports whether the space-separated scopes hold s.
func hasScope(scopes, s string) bool {
	for f := range strings.FieldsSeq(scopes) {
		if f == s {
			return true
		}
	}
	return false
}
