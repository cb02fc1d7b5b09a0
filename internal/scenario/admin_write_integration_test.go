//go:build integration

package scenario

import (
	"context"
	"testing"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// realmTotals are everything a realm holds of what admin-write makes:
// users, top-level groups and clients, the built-in ones included.
type realmTotals struct{ users, groups, clients int }

func totals(t *testing.T, adm *kc.Admin, realm string) realmTotals {
	t.Helper()
	ctx := context.Background()
	users, err := adm.Count(ctx, kc.RealmPath(realm, "users", "count"))
	if err != nil {
		t.Fatal(err)
	}
	groups, err := adm.Groups(ctx, realm)
	if err != nil {
		t.Fatal(err)
	}
	clients, err := adm.Clients(ctx, realm, "")
	if err != nil {
		t.Fatal(err)
	}
	return realmTotals{users, len(groups), len(clients)}
}

// admin-write makes and removes users (with a role and a group), groups
// and clients, and reads when told to, in both tenant modes; the realms
// hold afterwards what they held before and the dataset verifies; a realm
// that does not exist is an HTTP 404, not a success.
func TestAdminWrite(t *testing.T) {
	f := setup(t)
	for _, m := range []*dataset.Manifest{f.realms, f.orgs} {
		t.Run(string(m.Spec.Mode), func(t *testing.T) {
			before := map[string]realmTotals{}
			for _, r := range m.Realms {
				before[r] = totals(t, f.admin, r)
			}
			env := f.env(t, m, 0)
			env.AdminWritePct = 50
			sc, err := ByName(results.ScenarioAdminWrite, env)
			if err != nil {
				t.Fatal(err)
			}
			// 3 VUs: each begins with another kind of object.
			s := run(t, sc, load.PerVUIterations{VUs: 3, Iterations: 12, MaxDuration: lowRate.Duration * 6})
			expectOps(t, s, map[string]int{
				results.OpAdminCreateUser: -1, results.OpAdminUpdateUser: -1, results.OpAdminMapRole: -1, results.OpAdminJoinGroup: -1, results.OpAdminDeleteUser: -1,
				results.OpAdminCreateGroup: -1, results.OpAdminUpdateGroup: -1, results.OpAdminDeleteGroup: -1,
				results.OpAdminCreateClient: -1, results.OpAdminUpdateClient: -1, results.OpAdminDeleteClient: -1,
				results.OpAdminGetUser: -1, results.OpAdminGetClient: -1,
			})
			for r, b := range before {
				if now := totals(t, f.admin, r); now != b {
					t.Errorf("realm %s: %+v after, %+v before", r, now, b)
				}
			}
			v, err := dataset.Verify(context.Background(), f.admin, m, nil)
			if err != nil || !v.OK() {
				t.Errorf("dataset verify after admin-write: %+v, %v", v, err)
			}
		})
	}

	p, err := NewSinglePool(Single{Realm: "kcbench-no-such-realm"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ByName(results.ScenarioAdminWrite, Env{Client: f.client, Admin: f.admin, Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	u, err := sc.NewUser(t.Context(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Iterate(t.Context(), &firstError{}); load.Classify(err) != "http_404" {
		t.Errorf("a realm that does not exist: %v (class %s), want HTTP 404", err, load.Classify(err))
	}
}
