//go:build integration

package scenario

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// A dataset with an identity-provider realm of 3 users (orgs mode: 3 a
// tenant, each organization brokering its own provider by email domain),
// linked in each of 2 tenants, the second tenant cloned from the first (its identity
// provider and links copied): it verifies; a tenant's provider that names
// another URL is pointed at the target before the run; broker-login's
// iterations all succeed as linked users' logins, and with half of them
// first visits (the linked user deleted, made again by first-broker-login)
// as both; the dataset then verifies again (every link there); a wrong
// password at the identity provider is a check error.
func TestBrokerLogin(t *testing.T) {
	for _, mode := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		t.Run(string(mode), func(t *testing.T) { brokerLogin1(t, mode) })
	}
}

func brokerLogin1(t *testing.T, mode dataset.Mode) {
	f := setup(t)
	ctx := context.Background()
	db, err := shared.Get(t).DSN()
	if err != nil {
		t.Fatal(err)
	}
	content := dataset.DefaultContent
	content.BrokerUsers = 3
	spec := dataset.Spec{Mode: mode, Tenants: 2, Content: content, Policy: dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, Prefix: "kb" + string(mode[0]), Seed: 1}
	brokerUsers := 3 // the identity-provider realm's: orgs mode, 3 a tenant
	if mode == dataset.ModeOrgs {
		brokerUsers = 6
	}
	res, err := dataset.Seed(ctx, f.admin, spec, dataset.SeedOptions{Strategy: dataset.Clone, DB: db, Target: f.tg.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(when string) {
		t.Helper()
		v, err := dataset.Verify(ctx, f.admin, res.Manifest, nil)
		if err != nil || !v.OK() || v.Actual.IdentityProviders != 2 || v.Actual.BrokerUsers != brokerUsers || v.Actual.LinkedUsers != 6 || v.Actual.Users != 20 {
			t.Fatalf("verify %s: %+v, %v", when, v.Actual, err)
		}
	}
	verify("after the seed")

	// Tenant 2's provider moved elsewhere: prepare points it back.
	path := kc.RealmPath(spec.RealmOf(2), "identity-provider", "instances", spec.IdPAliasOf(2))
	var idp kc.IdentityProviderRep
	if err := f.admin.Do(ctx, http.MethodGet, path, nil, &idp); err != nil {
		t.Fatal(err)
	}
	idp.Config = dataset.RetargetIdP(idp.Config, "https://127.0.0.1:1", spec.IdPRealm())
	if err := f.admin.Do(ctx, http.MethodPut, path, idp, nil); err != nil {
		t.Fatal(err)
	}
	env := f.env(t, res.Manifest, 0)
	sc, err := ByName(results.ScenarioBrokerLogin, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.(preparer).prepare(ctx, 1); err != nil {
		t.Fatal(err)
	}
	s := run(t, sc, lowRate)
	expectOps(t, s, map[string]int{results.OpBrokerPage: 1, results.OpIdPLogin: 1, results.OpBrokerLogin: 1, results.OpCodeExchange: 1})
	if _, ok := s.Op(results.OpBrokerFirstLogin); ok {
		t.Errorf("first visits among the linked users' logins")
	}
	env.BrokerFirstPct = 50
	if sc, err = ByName(results.ScenarioBrokerLogin, env); err != nil {
		t.Fatal(err)
	}
	s = run(t, sc, lowRate)
	expectOps(t, s, map[string]int{results.OpBrokerPage: 1, results.OpIdPLogin: 1, results.OpCodeExchange: 1,
		results.OpBrokerFirstLogin: -1, results.OpBrokerLogin: -1})
	if err := sc.(finisher).finish(ctx); err != nil {
		t.Fatal(err)
	}
	verify("after the run")

	// A wrong password at the identity provider.
	b := f.client.NewBrowser()
	if mode == dataset.ModeRealms {
		tn := res.Manifest.Tenant(1)
		ar := kc.NewAuthRequest(tn.WebClient, dataset.RedirectURI, kc.ScopeOpenID)
		page, err := b.OpenBrokered(ctx, tn.Realm, dataset.IdPAlias, ar)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.SubmitIdPLogin(ctx, page, spec.BrokerUsername(1, 1), "wrong")
		var le *kc.LoginError
		if !errors.As(err, &le) {
			t.Errorf("a wrong password at the identity provider: %v, want a login error", err)
		}
	}
	var rec firstError
	u := &brokerUser{s: sc.(*brokerLogin), rng: env.rng("t", 1), b: b}
	env.Pool.password = "wrong"
	if err := u.Iterate(ctx, &rec); load.Classify(err) != load.ClassCheck {
		t.Errorf("an iteration with a wrong password: %v, want a check error", err)
	}
}
