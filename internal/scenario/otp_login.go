package scenario

import (
	"context"
	"encoding/base32"
	"math/rand/v2"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// otpLogin logs a random OTP user (seed --otp-users) in as a browser
// does, with a second factor: the login form (results.OpLoginPage), the
// password (results.OpLoginSubmit, answered by the OTP form), the TOTP
// code kcbench computes from the dataset's secret (results.OpOTPSubmit,
// answered by the redirect with the code) and the code exchange
// (results.OpCodeExchange). Each iteration starts with an empty cookie
// jar. The dataset's realms let a code be used again within its period
// (many logins of one user per 30 s).
type otpLogin struct {
	env    *Env
	secret string // base32, as authenticator apps take it
}

var _ load.Scenario = (*otpLogin)(nil)

func newOTPLogin(env *Env) load.Scenario {
	return &otpLogin{env: env, secret: base32.StdEncoding.EncodeToString([]byte(env.Pool.spec.OTPSecret()))}
}

func (s *otpLogin) Name() string { return results.ScenarioOTPLogin }

func (s *otpLogin) NewUser(_ context.Context, id int) (load.User, error) {
	return &otpLoginUser{s: s, rng: s.env.rng(results.ScenarioOTPLogin, id), b: s.env.Client.NewBrowser()}, nil
}

type otpLoginUser struct {
	s   *otpLogin
	rng *rand.Rand
	b   *kc.Browser
}

// totpOpts is Keycloak's default OTP policy, which the dataset's realms
// keep: 6 digits, 30 s, HMAC-SHA1.
var totpOpts = totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

func (u *otpLoginUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t, user := u.s.env.Pool.pickOTP(u.rng)
	u.b.ClearCookies()
	code := func() (string, error) { return totp.GenerateCodeCustom(u.s.secret, time.Now(), totpOpts) }
	_, err := browserLogin(ctx, u.s.env, u.b, t, user, kc.ScopeOpenID, code, rec)
	return err
}
