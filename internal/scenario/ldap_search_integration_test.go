//go:build integration

package scenario

import (
	"context"
	"testing"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/results"
)

// admin-search on realms whose users live in LDAP (the shared stack's
// private slapd, no import): Keycloak searches, counts and pages through
// its LDAP provider, and every iteration finds the user it looks for.
func TestAdminSearchLDAP(t *testing.T) {
	f := setup(t)
	d := f.tg.LDAP
	if d == nil {
		t.Skip("slapd not installed (apt-get install slapd): the shared stack has no directory")
	}
	content := dataset.DefaultContent
	content.Users = 25 // a later page: 2 pages of 10 or more
	spec := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 2, Content: content, Prefix: "kls", Seed: 1}
	res, err := dataset.Seed(context.Background(), f.admin, spec, dataset.SeedOptions{Target: f.tg.BaseURL, LDAP: d})
	if err != nil {
		t.Fatal(err)
	}
	// (Users in LDAP without import have no group memberships in
	// Keycloak: verify counts the users, which admin-search looks for.)
	if v, err := dataset.Verify(context.Background(), f.admin, res.Manifest, nil); err != nil || v.Actual.Users != 50 {
		t.Fatalf("verify: %+v, %v: want the 50 users in the directory counted", v.Actual, err)
	}
	env := f.env(t, res.Manifest, 0)
	runCases(t, env, map[string]map[string]int{
		results.ScenarioAdminSearch: {results.OpAdminSearchUsers: 1, results.OpAdminCountUsers: 1, results.OpAdminUsersPage: 1},
	})
}
