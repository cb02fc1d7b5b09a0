package scenario

import (
	"context"
	"errors"
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

// brokerLogin logs a random user of the dataset's identity-provider realm
// (seed --broker-users) in to a random tenant through the tenant realm's
// identity provider, as a browser does: the tenant's authorization
// endpoint with kc_idp_hint, redirected to the identity provider's form
// (results.OpBrokerPage), the credentials posted there
// (results.OpIdPLogin, answered by the redirect to the tenant's broker
// endpoint), the broker endpoint through to the redirect with the code,
// where Keycloak redeems the provider's code over the back channel and
// finds the tenant's user linked to the provider's (results.OpBrokerLogin),
// and the code exchange (results.OpCodeExchange). In orgs mode the
// provider is the tenant organization's, which Keycloak chooses by the
// email the user types into its identity-first login form (see
// openBrokered). Each iteration starts with an empty cookie jar. The
// dataset links every provider user in
// every tenant, as returning users are; with Env.BrokerFirstPct that
// percentage of the iterations is a first visit instead: the linked user
// is deleted through the admin API (untimed), and Keycloak's
// first-broker-login flow makes and links it again
// (results.OpBrokerFirstLogin), so that the dataset keeps its size. A
// first visit that fails after the deletion leaves its user to finish,
// which makes it again. A user logs in through one browser at a time (two
// first visits at once race to make the same user, and Keycloak shows the
// second its "account exists" page): an iteration takes a user no other
// VU holds, or waits for one.
type brokerLogin struct {
	env     *Env
	mu      sync.Mutex
	missing map[[2]int]bool // tenant index, user: deleted, not made again yet
	busy    map[[2]int]bool // tenant index, user: held by a VU
	freed   *sync.Cond
}

var _ load.Scenario = (*brokerLogin)(nil)

func newBrokerLogin(env *Env) load.Scenario {
	s := &brokerLogin{env: env, missing: map[[2]int]bool{}, busy: map[[2]int]bool{}}
	s.freed = sync.NewCond(&s.mu)
	return s
}

// hold picks a random tenant and user that no other VU holds (waiting for
// one when every pick is held) and holds it; release lets it go.
func (s *brokerLogin) hold(ctx context.Context, rng *rand.Rand) (*dataset.Tenant, int, error) {
	p := s.env.Pool
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		for range 8 {
			t := p.pickTenant(rng)
			j := 1 + rng.IntN(p.spec.Content.BrokerUsers)
			if k := [2]int{t.Index, j}; !s.busy[k] {
				s.busy[k] = true
				return t, j, nil
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		s.freed.Wait()
	}
}

func (s *brokerLogin) release(t *dataset.Tenant, j int) {
	s.mu.Lock()
	delete(s.busy, [2]int{t.Index, j})
	s.mu.Unlock()
	s.freed.Broadcast()
}

func (s *brokerLogin) Name() string { return results.ScenarioBrokerLogin }

func (s *brokerLogin) NewUser(_ context.Context, id int) (load.User, error) {
	return &brokerUser{s: s, rng: s.env.rng(results.ScenarioBrokerLogin, id), b: s.env.Client.NewBrowser()}, nil
}

type brokerUser struct {
	s   *brokerLogin
	rng *rand.Rand
	b   *kc.Browser
}

func (u *brokerUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	env := u.s.env
	p := env.Pool
	t, j, err := u.s.hold(ctx, u.rng)
	if err != nil {
		return err
	}
	defer u.s.release(t, j)
	user := p.spec.BrokerUsername(t.Index, j)
	firstVisit := env.BrokerFirstPct > 0 && u.rng.Float64()*100 < env.BrokerFirstPct
	if firstVisit {
		if err := u.s.unlink(ctx, t, j); err != nil {
			return err
		}
	}
	u.b.ClearCookies()
	cl := web(t)
	ar := kc.NewAuthRequest(cl.ID, p.redirect, kc.ScopeOpenID)
	page, err := u.openBrokered(ctx, t, j, ar, rec)
	if err != nil {
		return err
	}
	start := time.Now()
	endpoint, err := u.b.SubmitIdPLogin(ctx, page, user, p.password)
	var le *kc.LoginError
	if errors.As(err, &le) {
		err = load.CheckError{Check: "the identity provider's login form accepted the user (it said: " + le.Message + ")"}
	}
	rec.Record(results.OpIdPLogin, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	code, first, err := u.b.FinishBrokered(ctx, endpoint, ar)
	op := results.OpBrokerLogin
	if first {
		op = results.OpBrokerFirstLogin
	}
	rec.Record(op, start, err)
	if err != nil {
		return err
	}
	if firstVisit {
		u.s.setMissing(t, j, false)
	}
	start = time.Now()
	_, err = env.Client.ExchangeCode(ctx, t.Realm, cl, code, ar.RedirectURI, ar.CodeVerifier)
	rec.Record(results.OpCodeExchange, start, err)
	return err
}

// openBrokered opens tenant t's login through its identity provider to
// the provider's login form: in realms mode the authorization endpoint
// with kc_idp_hint (results.OpBrokerPage); in orgs mode the
// identity-first login form (results.OpLoginPage), then the user's email,
// which Keycloak answers with a redirect to the provider of the
// organization of its domain (results.OpBrokerPage).
func (u *brokerUser) openBrokered(ctx context.Context, t *dataset.Tenant, j int, ar kc.AuthRequest, rec load.OpRecorder) (*kc.LoginPage, error) {
	spec := u.s.env.Pool.spec
	if spec.Mode == dataset.ModeRealms {
		start := time.Now()
		page, err := u.b.OpenBrokered(ctx, t.Realm, dataset.IdPAlias, ar)
		rec.Record(results.OpBrokerPage, start, err)
		return page, err
	}
	start := time.Now()
	page, err := u.b.OpenLogin(ctx, t.Realm, ar)
	if err == nil && page.Code != "" {
		err = fmt.Errorf("login page: Keycloak redirected with a code (an SSO session?)")
	}
	rec.Record(results.OpLoginPage, start, err)
	if err != nil {
		return nil, err
	}
	start = time.Now()
	page, err = u.b.SubmitEmailForIdP(ctx, page, ar, spec.BrokerEmail(t.Index, j))
	rec.Record(results.OpBrokerPage, start, err)
	return page, err
}

func (s *brokerLogin) setMissing(t *dataset.Tenant, j int, missing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if missing {
		s.missing[[2]int{t.Index, j}] = true
	} else {
		delete(s.missing, [2]int{t.Index, j})
	}
}

// unlink deletes tenant t's user linked to the provider's j-th user, so
// that the next login is its first visit.
func (s *brokerLogin) unlink(ctx context.Context, t *dataset.Tenant, j int) error {
	name := s.env.Pool.spec.BrokerUsername(t.Index, j)
	usr, err := s.env.Admin.FindUser(ctx, t.Realm, name)
	if err == nil && usr != nil {
		s.setMissing(t, j, true)
		err = s.env.Admin.DeleteUser(ctx, t.Realm, usr.ID)
	}
	if err != nil && !errors.Is(err, kc.ErrNotFound) {
		return fmt.Errorf("delete the linked user %s of realm %s for a first visit: %w", name, t.Realm, err)
	}
	return nil
}

// prepare checks that the tenants' identity providers send users to the
// target (a dataset restored on a stack at other ports, or seeded through
// another URL, names the old one) and points them there when not.
func (s *brokerLogin) prepare(ctx context.Context, _ int) error {
	env := s.env
	base := env.Client.BaseURL()
	for _, t := range env.Pool.tenants {
		alias := env.Pool.spec.IdPAliasOf(t.Index)
		path := kc.RealmPath(t.Realm, "identity-provider", "instances", alias)
		var idp kc.IdentityProviderRep
		if err := env.Admin.Do(ctx, http.MethodGet, path, nil, &idp); err != nil {
			if errors.Is(err, kc.ErrNotFound) {
				return fmt.Errorf("%s: realm %s has no identity provider %s: seed --broker-users N", results.ScenarioBrokerLogin, t.Realm, alias)
			}
			return fmt.Errorf("%s: realm %s: %w", results.ScenarioBrokerLogin, t.Realm, err)
		}
		if dataset.CheckIdPTarget(idp, base) == nil {
			continue
		}
		idp.Config = dataset.RetargetIdP(idp.Config, base, env.Pool.spec.IdPRealm())
		if err := env.Admin.Do(ctx, http.MethodPut, path, idp, nil); err != nil {
			return fmt.Errorf("%s: realm %s: point the identity provider at the target: %w", results.ScenarioBrokerLogin, t.Realm, err)
		}
	}
	return nil
}

// finish makes again the linked users that first visits deleted and did
// not make again (an iteration that failed or was cut off).
func (s *brokerLogin) finish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, finishWait)
	defer cancel()
	s.mu.Lock()
	missing := s.missing
	s.missing = map[[2]int]bool{}
	s.mu.Unlock()
	var errs []error
	p := s.env.Pool
	for _, t := range p.tenants {
		for k := range missing {
			if k[0] != t.Index {
				continue
			}
			if err := s.remake(ctx, &t, k[1]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", results.ScenarioBrokerLogin, errors.Join(errs[:min(len(errs), 3)]...))
	}
	return nil
}

// remake makes tenant t's user linked to the provider's j-th user again
// (a member of its organization, in orgs mode), unless a login made it.
func (s *brokerLogin) remake(ctx context.Context, t *dataset.Tenant, j int) error {
	u := s.env.Pool.spec.LinkedUser(t.Index, j)
	if usr, err := s.env.Admin.FindUser(ctx, t.Realm, u.Username); err == nil && usr != nil {
		return nil // made by a login after all
	}
	id, err := s.env.Admin.Create(ctx, kc.RealmPath(t.Realm, "users"), u)
	if err != nil && !errors.Is(err, kc.ErrConflict) {
		return fmt.Errorf("realm %s: make the linked user %s again: %w", t.Realm, u.Username, err)
	}
	if t.Org == "" || id == "" {
		return nil
	}
	orgs, err := s.env.Admin.Organizations(ctx, t.Realm, t.Org, 0, 2)
	if err == nil && len(orgs) == 0 {
		err = kc.ErrNotFound
	}
	if err == nil {
		err = s.env.Admin.AddOrganizationMember(ctx, t.Realm, orgs[0].ID, id)
	}
	if err != nil && !errors.Is(err, kc.ErrConflict) {
		return fmt.Errorf("organization %s: make %s a member again: %w", t.Org, u.Username, err)
	}
	return nil
}
