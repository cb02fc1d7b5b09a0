package scenario

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// JourneyOptions tune the user-journey scenario. Zero values mean the
// defaults.
type JourneyOptions struct {
	// Think is the mean pause before a login (drawn uniformly from 0 to
	// twice Think). Default DefaultThink.
	Think time.Duration
	// UserinfoEvery is how often a logged-in user calls userinfo.
	// Default DefaultUserinfoEvery.
	UserinfoEvery time.Duration
	// TokenLifetime, when shorter than the access tokens' own lifetime,
	// is used instead to plan silent refreshes and session lengths, so
	// that a short run sees whole sessions. 0: the tokens' own.
	TokenLifetime time.Duration
}

// User-journey defaults and constants.
const (
	DefaultThink         = 2 * time.Second
	DefaultUserinfoEvery = 5 * time.Second
	journeyRetries       = 3                      // a failed step is retried this many times
	journeyRetryBackoff  = 200 * time.Millisecond // times the attempt number
	journeyLogoutShare   = 0.25                   // sessions that end with a logout
	journeyMinLifetimes  = 1                      // a session lasts 1 to 3 token lifetimes
	journeyMaxLifetimes  = 3
)

func (o JourneyOptions) withDefaults() JourneyOptions {
	if o.Think == 0 {
		o.Think = DefaultThink
	}
	if o.UserinfoEvery == 0 {
		o.UserinfoEvery = DefaultUserinfoEvery
	}
	return o
}

func (o JourneyOptions) validate() error {
	var errs []error
	if o.Think < 0 {
		errs = append(errs, fmt.Errorf("journey think time %v: must not be negative", o.Think))
	}
	if o.UserinfoEvery < 0 {
		errs = append(errs, fmt.Errorf("journey userinfo interval %v: must not be negative", o.UserinfoEvery))
	}
	if o.TokenLifetime < 0 {
		errs = append(errs, fmt.Errorf("journey token lifetime %v: must not be negative", o.TokenLifetime))
	}
	return errors.Join(errs...)
}

// journey is a user of a web app, one session after another: think, log
// in through the login form, call userinfo every UserinfoEvery, refresh
// the access token silently before it expires, stay 1 to 3 token lifetimes,
// then log out (a quarter of the sessions) or just leave. A failed step is
// retried up to 3 times; a step that still fails ends the session.
//
// Each iteration is one step: a login (with the think time before it), a
// userinfo, a refresh or the end of the session, with the wait for it, so
// iterations end often and a run stops on time. Iteration latencies
// include the waits; the steps' own operations do not.
type journey struct{ env *Env }

var _ load.Scenario = (*journey)(nil)

func newJourney(env *Env) load.Scenario { return &journey{env: env} }

func (s *journey) Name() string { return results.ScenarioUserJourney }

func (s *journey) NewUser(_ context.Context, id int) (load.User, error) {
	return &journeyUser{env: s.env, o: s.env.Journey, rng: s.env.rng(results.ScenarioUserJourney, id), b: s.env.Client.NewBrowser()}, nil
}

type journeyUser struct {
	env *Env
	o   JourneyOptions
	rng *rand.Rand
	b   *kc.Browser

	s        *session // nil: logged out
	end      time.Time
	nextInfo time.Time
	logsOut  bool
}

func (u *journeyUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	if u.s == nil {
		return u.login(ctx, rec)
	}
	next := earliest(u.nextInfo, u.s.renewAt, u.end)
	if err := load.Sleep(ctx, time.Until(next)); err != nil {
		return err
	}
	now := time.Now()
	var err error
	switch {
	case !now.Before(u.end):
		return u.leave(ctx, rec)
	case u.s.due(now):
		err = retry(ctx, func() error { return u.s.renew(ctx, u.env.Client, rec) })
		u.capLifetime()
	default:
		u.nextInfo = now.Add(u.o.UserinfoEvery)
		err = retry(ctx, func() error {
			start := time.Now()
			_, err := u.env.Client.UserInfo(ctx, u.s.t.Realm, u.s.access)
			rec.Record(results.OpUserinfo, start, err)
			return err
		})
	}
	if err != nil {
		u.forget()
	}
	return err
}

func (u *journeyUser) login(ctx context.Context, rec load.OpRecorder) error {
	if err := load.Sleep(ctx, time.Duration(u.rng.Int64N(int64(2*u.o.Think)+1))); err != nil {
		return err
	}
	t, user := u.env.Pool.pick(u.rng)
	var tr *kc.TokenResponse
	err := retry(ctx, func() error {
		u.b.ClearCookies()
		var err error
		tr, err = browserLogin(ctx, u.env, u.b, t, user, kc.ScopeOpenID, nil, rec)
		return err
	})
	if err != nil {
		return err
	}
	now := time.Now()
	u.s = &session{t: t, cl: web(t), user: user}
	u.s.set(tr, now)
	u.capLifetime()
	span := journeyMinLifetimes + (journeyMaxLifetimes-journeyMinLifetimes)*u.rng.Float64()
	u.end = now.Add(time.Duration(span * float64(u.s.lifetime)))
	u.nextInfo = now.Add(u.o.UserinfoEvery)
	u.logsOut = u.rng.Float64() < journeyLogoutShare
	return nil
}

// capLifetime plans with JourneyOptions.TokenLifetime when it is shorter
// than the token's.
func (u *journeyUser) capLifetime() {
	if l := u.o.TokenLifetime; l > 0 && l < u.s.lifetime {
		issued := u.s.renewAt.Add(-(u.s.lifetime - min(tokenMargin, u.s.lifetime/4)))
		u.s.lifetime = l
		u.s.renewAt = issued.Add(l - min(tokenMargin, l/4))
	}
}

// leave ends the session, with a logout for some users.
func (u *journeyUser) leave(ctx context.Context, rec load.OpRecorder) error {
	s := u.s
	u.forget()
	if !u.logsOut {
		return nil
	}
	return retry(ctx, func() error {
		start := time.Now()
		err := u.env.Client.Logout(ctx, s.t.Realm, s.cl, s.refresh)
		rec.Record(results.OpLogout, start, err)
		return err
	})
}

func (u *journeyUser) forget() {
	u.s = nil
	u.b.ClearCookies()
}

// retry runs step until it succeeds, at most 1 + journeyRetries times,
// waiting a little longer before each new attempt.
func retry(ctx context.Context, step func() error) error {
	var err error
	for attempt := 0; attempt <= journeyRetries; attempt++ {
		if attempt > 0 {
			if load.Sleep(ctx, time.Duration(attempt)*journeyRetryBackoff) != nil {
				return err
			}
		}
		if err = step(); err == nil || ctx.Err() != nil {
			return err
		}
	}
	return err
}

func earliest(t time.Time, more ...time.Time) time.Time {
	for _, m := range more {
		if m.Before(t) {
			t = m
		}
	}
	return t
}
