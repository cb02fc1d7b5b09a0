//go:build integration

package scenario

import (
	"context"
	"encoding/base32"
	"errors"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// A dataset with OTP users and unique salts, the second tenant cloned from
// the first (each user its own password hash, OTP users too): both
// verify (the OTP users counted), every otp-login iteration asks for and
// takes a TOTP code, the ordinary users still log in without one, and a
// wrong code is refused (a check error, not a success).
func TestOTPLogin(t *testing.T) {
	f := setup(t)
	db, err := shared.Get(t).DSN()
	if err != nil {
		t.Fatal(err)
	}
	content := dataset.DefaultContent
	content.Users, content.OTPUsers = 2, 2
	spec := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 2, Content: content, Policy: dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, Prefix: "kcp", Seed: 1, UniqueSalts: true}
	res, err := dataset.Seed(context.Background(), f.admin, spec, dataset.SeedOptions{Strategy: dataset.Clone, DB: db, Target: f.tg.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	v, err := dataset.Verify(context.Background(), f.admin, res.Manifest, nil)
	if err != nil || !v.OK() || v.Actual.Users != 8 {
		t.Fatalf("verify: %+v, %v: want 8 users (2 and 2 OTP users in each of 2 tenants)", v, err)
	}
	env := f.env(t, res.Manifest, 0)
	runCases(t, env, map[string]map[string]int{
		results.ScenarioOTPLogin:  {results.OpLoginPage: 1, results.OpLoginSubmit: 1, results.OpOTPSubmit: 1, results.OpCodeExchange: 1},
		results.ScenarioLoginForm: {results.OpLoginPage: 1, results.OpLoginSubmit: 1, results.OpCodeExchange: 1},
	})

	// A wrong code: the OTP form comes back, a check error.
	b := f.client.NewBrowser()
	tn := res.Manifest.Tenant(2)
	wrong := func() (string, error) {
		key := base32.StdEncoding.EncodeToString([]byte(spec.OTPSecret()))
		c, err := totp.GenerateCodeCustom(key, time.Now().Add(-time.Hour), totpOpts)
		return c, err
	}
	var rec firstError
	_, err = browserLogin(t.Context(), &env, b, &tn, spec.OTPUsername(2, 1), kc.ScopeOpenID, wrong, &rec)
	var ce load.CheckError
	if !errors.As(err, &ce) || load.Classify(err) != load.ClassCheck {
		t.Errorf("a wrong code: %v, want a check error", err)
	}
}
