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

// loginForm logs a random user in as a browser does: the authorization
// endpoint's login form (results.OpLoginPage), the credentials posted with the
// VU's cookies (results.OpLoginSubmit, answered by a redirect carrying the code)
// and the code exchanged for tokens with the PKCE verifier
// (results.OpCodeExchange), on the tenant's public web client. Each iteration
// starts with an empty cookie jar, so it is a full login, not SSO.
type loginForm struct{ env *Env }

var _ load.Scenario = (*loginForm)(nil)

func newLoginForm(env *Env) load.Scenario { return &loginForm{env: env} }

func (s *loginForm) Name() string { return results.ScenarioLoginForm }

func (s *loginForm) NewUser(_ context.Context, id int) (load.User, error) {
	return &loginFormUser{env: s.env, rng: s.env.rng(results.ScenarioLoginForm, id), b: s.env.Client.NewBrowser()}, nil
}

type loginFormUser struct {
	env *Env
	rng *rand.Rand
	b   *kc.Browser
}

func (u *loginFormUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t, user := u.env.Pool.pick(u.rng)
	u.b.ClearCookies()
	_, err := browserLogin(ctx, u.env, u.b, t, user, kc.ScopeOpenID, nil, rec)
	return err
}

// browserLogin runs the browser flow for user of t, recording each step.
// Refused credentials (the form shown again) fail a check. otp, when not
// nil, gives the one-time code Keycloak asks for after the password
// (results.OpOTPSubmit); without it, a code asked for fails the check.
func browserLogin(ctx context.Context, env *Env, b *kc.Browser, t *dataset.Tenant, user, scope string, otp func() (string, error), rec load.OpRecorder) (*kc.TokenResponse, error) {
	cl := web(t)
	ar := kc.NewAuthRequest(cl.ID, env.Pool.redirect, scope)
	start := time.Now()
	page, err := b.OpenLogin(ctx, t.Realm, ar)
	rec.Record(results.OpLoginPage, start, err)
	if err != nil {
		return nil, err
	}
	start = time.Now()
	code, err := b.SubmitLogin(ctx, page, ar, user, env.Pool.password)
	var need *kc.NeedOTP
	if otp != nil && errors.As(err, &need) {
		rec.Record(results.OpLoginSubmit, start, nil)
		start = time.Now()
		if code, err = submitOTP(ctx, b, need.Page, ar, otp); err != nil {
			rec.Record(results.OpOTPSubmit, start, err)
			return nil, err
		}
		rec.Record(results.OpOTPSubmit, start, nil)
	} else {
		var le *kc.LoginError
		switch {
		case errors.As(err, &le):
			err = load.CheckError{Check: "the login form accepted the credentials (it said: " + le.Message + ")"}
		case errors.As(err, &need):
			err = load.CheckError{Check: "the login form took the password without asking for a one-time code (the user has OTP configured: seed --otp-users users are otp-login's)"}
		case err == nil && otp != nil:
			err = load.CheckError{Check: "the login form asked for no one-time code (is OTP configured for the user?)"}
		}
		rec.Record(results.OpLoginSubmit, start, err)
		if err != nil {
			return nil, err
		}
	}
	start = time.Now()
	tr, err := env.Client.ExchangeCode(ctx, t.Realm, cl, code, ar.RedirectURI, ar.CodeVerifier)
	rec.Record(results.OpCodeExchange, start, err)
	return tr, err
}

// submitOTP posts otp's code to the OTP form; a refused code fails a check.
func submitOTP(ctx context.Context, b *kc.Browser, page *kc.LoginPage, ar kc.AuthRequest, otp func() (string, error)) (string, error) {
	c, err := otp()
	if err != nil {
		return "", err
	}
	code, err := b.SubmitOTP(ctx, page, ar, c)
	var le *kc.LoginError
	if errors.As(err, &le) {
		err = load.CheckError{Check: "the OTP form accepted the code (it said: " + le.Message + ")"}
	}
	return code, err
}
