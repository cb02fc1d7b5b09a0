package scenario

import (
	"context"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// userinfo reads the userinfo endpoint with an openid access token the VU
// holds (obtained at VU creation; refreshed, and recorded as results.OpRefresh,
// shortly before it expires).
type userinfo struct{ env *Env }

var _ load.Scenario = (*userinfo)(nil)

func newUserinfo(env *Env) load.Scenario { return &userinfo{env: env} }

func (s *userinfo) Name() string { return results.ScenarioUserinfo }

func (s *userinfo) NewUser(ctx context.Context, id int) (load.User, error) {
	sess, err := newSession(ctx, s.env, s.env.rng(results.ScenarioUserinfo, id), kc.ScopeOpenID)
	if err != nil {
		return nil, err
	}
	return &userinfoUser{env: s.env, s: sess}, nil
}

type userinfoUser struct {
	env *Env
	s   *session
}

var errNoSubject = load.CheckError{Check: "userinfo has a subject"}

func (u *userinfoUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	if err := u.s.renew(ctx, u.env.Client, rec); err != nil {
		return err
	}
	start := time.Now()
	ui, err := u.env.Client.UserInfo(ctx, u.s.t.Realm, u.s.access)
	if err == nil && ui.Subject == "" {
		err = errNoSubject
	}
	rec.Record(results.OpUserinfo, start, err)
	return err
}
