package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// adminSearch searches and pages a random tenant's users as the admin
// console's user list does (brief representation, pages of consolePage
// and a look at the next one):
//
//   - results.OpAdminSearchUsers: a search for one of the tenant's
//     usernames; an answer without that user is a check error, so that a
//     realm whose users were never made cannot pass as a fast one;
//   - results.OpAdminCountUsers: the count of the same search, at least 1
//     (Keycloak counts the users of its own database only: in a realm
//     whose users live in LDAP without import, 0);
//   - results.OpAdminUsersPage: a random page of the realm's user list
//     past the first, when the realm has more than one page (the second
//     page is where keycloak/keycloak#44860 slowed down).
type adminSearch struct {
	env       *Env
	federated sync.Map // realm → bool: its users come from a user storage provider
}

var _ load.Scenario = (*adminSearch)(nil)

// consolePage is the admin console's page of users; it asks for one more
// to know whether a next page exists.
const consolePage = 10

func newAdminSearch(env *Env) load.Scenario { return &adminSearch{env: env} }

func (s *adminSearch) Name() string { return results.ScenarioAdminSearch }

func (s *adminSearch) NewUser(_ context.Context, id int) (load.User, error) {
	return &adminSearchUser{s: s, rng: s.env.rng(results.ScenarioAdminSearch, id)}, nil
}

type adminSearchUser struct {
	s   *adminSearch
	rng *rand.Rand
}

func (u *adminSearchUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	p := u.s.env.Pool
	a := u.s.env.Admin
	t, username := p.pick(u.rng)
	start := time.Now()
	us, err := a.SearchUsers(ctx, t.Realm, username, 0, consolePage+1)
	if err == nil && !hasUser(us, username) {
		err = load.CheckError{Check: fmt.Sprintf("the search for %q in realm %s found %d users, not that one (is the dataset seeded?)", username, t.Realm, len(us))}
	}
	rec.Record(results.OpAdminSearchUsers, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	n, err := a.Count(ctx, kc.RealmPath(t.Realm, "users", "count")+"?"+url.Values{"search": {username}}.Encode())
	if err == nil && n < 1 {
		if fed, ferr := u.s.isFederated(ctx, t.Realm); ferr != nil {
			err = ferr
		} else if !fed {
			err = load.CheckError{Check: fmt.Sprintf("the count of the search for %q is %d", username, n)}
		}
	}
	rec.Record(results.OpAdminCountUsers, start, err)
	if err != nil {
		return err
	}
	pages := p.realmUsers(t) / consolePage
	if pages < 2 {
		return nil
	}
	first := consolePage * (1 + u.rng.IntN(pages-1))
	start = time.Now()
	us, err = a.Users(ctx, t.Realm, first, consolePage+1)
	if err == nil && len(us) == 0 {
		err = load.CheckError{Check: fmt.Sprintf("page from %d of realm %s's users is empty", first, t.Realm)}
	}
	rec.Record(results.OpAdminUsersPage, start, err)
	return err
}

// isFederated says whether realm has a user storage provider (LDAP):
// asked once per realm.
func (s *adminSearch) isFederated(ctx context.Context, realm string) (bool, error) {
	if v, ok := s.federated.Load(realm); ok {
		return v.(bool), nil
	}
	var cs []kc.ComponentRep
	p := kc.RealmPath(realm, "components") + "?" + url.Values{"type": {dataset.UserStorageType}}.Encode()
	if err := s.env.Admin.Do(ctx, http.MethodGet, p, nil, &cs); err != nil {
		return false, err
	}
	s.federated.Store(realm, len(cs) > 0)
	return len(cs) > 0, nil
}

func hasUser(us []kc.UserRep, username string) bool {
	for _, u := range us {
		if u.Username == username {
			return true
		}
	}
	return false
}
