package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// adminAPI makes an administrator's reads for a random tenant. In realms
// mode: list the realms (results.OpAdminListRealms), get the tenant's realm
// (results.OpAdminGetRealm), list its first page of users (results.OpAdminListUsers). In
// orgs mode: list the first page of organizations (results.OpAdminListOrgs), get
// the tenant's organization (results.OpAdminGetOrg; its id is looked up once per
// tenant, results.OpAdminFindOrg) and list its first page of members
// (results.OpAdminListMembers). The admin token is shared and renewed by kc.Admin
// before it expires.
type adminAPI struct {
	env    *Env
	orgIDs sync.Map // tenant index → organization id
}

var _ load.Scenario = (*adminAPI)(nil)

// adminPage is the page size of the listings, Keycloak's admin console's.
const adminPage = 20

func newAdminAPI(env *Env) load.Scenario { return &adminAPI{env: env} }

func (s *adminAPI) Name() string { return results.ScenarioAdminAPI }

func (s *adminAPI) NewUser(_ context.Context, id int) (load.User, error) {
	return &adminAPIUser{s: s, rng: s.env.rng(results.ScenarioAdminAPI, id)}, nil
}

type adminAPIUser struct {
	s   *adminAPI
	rng *rand.Rand
}

func (u *adminAPIUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t := u.s.env.Pool.pickTenant(u.rng)
	if u.s.env.Pool.orgs {
		return u.orgs(ctx, t, rec)
	}
	a := u.s.env.Admin
	start := time.Now()
	_, err := a.Realms(ctx)
	rec.Record(results.OpAdminListRealms, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	_, err = a.GetRealm(ctx, t.Realm)
	rec.Record(results.OpAdminGetRealm, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	_, err = a.Users(ctx, t.Realm, 0, adminPage)
	rec.Record(results.OpAdminListUsers, start, err)
	return err
}

func (u *adminAPIUser) orgs(ctx context.Context, t *dataset.Tenant, rec load.OpRecorder) error {
	a := u.s.env.Admin
	start := time.Now()
	_, err := a.Organizations(ctx, t.Realm, "", 0, adminPage)
	rec.Record(results.OpAdminListOrgs, start, err)
	if err != nil {
		return err
	}
	id, err := u.orgID(ctx, t, rec)
	if err != nil {
		return err
	}
	start = time.Now()
	var org kc.OrganizationRep
	err = a.Do(ctx, http.MethodGet, kc.RealmPath(t.Realm, "organizations", id), nil, &org)
	rec.Record(results.OpAdminGetOrg, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	_, err = a.OrganizationMembers(ctx, t.Realm, id, 0, adminPage)
	rec.Record(results.OpAdminListMembers, start, err)
	return err
}

// orgID returns the id of t's organization, looking it up by its exact
// name the first time.
func (u *adminAPIUser) orgID(ctx context.Context, t *dataset.Tenant, rec load.OpRecorder) (string, error) {
	if id, ok := u.s.orgIDs.Load(t.Index); ok {
		return id.(string), nil
	}
	start := time.Now()
	orgs, err := u.s.env.Admin.Organizations(ctx, t.Realm, t.Org, 0, 1)
	if err == nil && (len(orgs) == 0 || orgs[0].ID == "") {
		err = load.CheckError{Check: fmt.Sprintf("organization %s exists", t.Org)}
	}
	rec.Record(results.OpAdminFindOrg, start, err)
	if err != nil {
		return "", err
	}
	u.s.orgIDs.Store(t.Index, orgs[0].ID)
	return orgs[0].ID, nil
}
