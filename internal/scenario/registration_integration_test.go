//go:build integration

package scenario

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
)

// registration signs users up in both tenant modes, each iteration through
// the form to the code exchange, and deletes them when it finishes: the
// realms hold as many users after as before. A realm with registration off
// is refused by the setup check, naming the switch.
func TestRegistration(t *testing.T) {
	f := setup(t)
	for _, m := range []*struct {
		name string
		env  Env
	}{{"realms", f.env(t, f.realms, 0)}, {"orgs", f.env(t, f.orgs, 0)}} {
		t.Run(m.name, func(t *testing.T) {
			before := map[string]realmTotals{}
			for _, r := range m.env.Pool.tenants {
				before[r.Realm] = totals(t, f.admin, r.Realm)
			}
			sc, err := ByName(results.ScenarioRegistration, m.env)
			if err != nil {
				t.Fatal(err)
			}
			s := run(t, sc, lowRate)
			expectOps(t, s, map[string]int{results.OpRegisterPage: 1, results.OpRegisterSubmit: 1, results.OpCodeExchange: 1})
			if err := sc.(finisher).finish(context.Background()); err != nil {
				t.Fatal(err)
			}
			for r, b := range before {
				if now := totals(t, f.admin, r); now != b {
					t.Errorf("realm %s: %+v after the users were deleted, %+v before", r, now, b)
				}
			}
		})
	}

	realm := f.argon.Spec.RealmOf(1)
	if err := f.admin.UpdateRealm(context.Background(), realm, kc.RealmRep{Realm: realm, RegistrationAllowed: kc.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.admin.UpdateRealm(context.Background(), realm, kc.RealmRep{Realm: realm, RegistrationAllowed: kc.Bool(true)})
	})
	sc, err := ByName(results.ScenarioRegistration, f.env(t, f.argon, 0))
	if err != nil {
		t.Fatal(err)
	}
	err = Prove(t.Context(), sc, "")
	var se *SetupError
	if !errors.As(err, &se) || !isStatus(err, http.StatusBadRequest) || !strings.Contains(err.Error(), "is registration on") {
		t.Errorf("registration off: %v, want a setup error (HTTP 400) that names it", err)
	}
}
