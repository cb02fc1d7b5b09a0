package scenario

import (
	"context"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// introspect has the backend client introspect an access token the VU
// holds (obtained at VU creation; refreshed, and recorded as results.OpRefresh,
// shortly before it expires). A token reported inactive fails a check.
// The dataset's backend clients put themselves in their tokens' audience,
// which Keycloak 26 requires of the introspecting client.
type introspect struct{ env *Env }

var _ load.Scenario = (*introspect)(nil)

func newIntrospect(env *Env) load.Scenario { return &introspect{env: env} }

func (s *introspect) Name() string { return results.ScenarioIntrospect }

func (s *introspect) NewUser(ctx context.Context, id int) (load.User, error) {
	sess, err := newSession(ctx, s.env, s.env.rng(results.ScenarioIntrospect, id), "")
	if err != nil {
		return nil, err
	}
	return &introspectUser{env: s.env, s: sess}, nil
}

type introspectUser struct {
	env *Env
	s   *session
}

var errInactive = load.CheckError{Check: "introspected token is active"}

func (u *introspectUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	if err := u.s.renew(ctx, u.env.Client, rec); err != nil {
		return err
	}
	start := time.Now()
	in, err := u.env.Client.Introspect(ctx, u.s.t.Realm, u.s.cl, u.s.access)
	if err == nil && !in.Active {
		err = errInactive
	}
	rec.Record(results.OpIntrospect, start, err)
	return err
}
