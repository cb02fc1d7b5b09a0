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
// where Keycloak redeems the provider's code over the back channel and,
// the first time a user comes, makes and links a user of the tenant
// (results.OpBrokerFirstLogin; later visits results.OpBrokerLogin), and
// the code exchange (results.OpCodeExchange). Each iteration starts with
// an empty cookie jar. The users brokered logins made are deleted when
// the run ends (finish), so that the dataset keeps its size; a run starts
// with first visits. A user logs in through one browser at a time (two
// first visits at once race to make the same user, and Keycloak shows the
// second its "account exists" page): an iteration takes a user no other
// VU holds, or waits for one.
type brokerLogin struct {
	env     *Env
	mu      sync.Mutex
	touched map[string]bool // realms a brokered login made users in
	busy    map[[2]int]bool // tenant index, user: held by a VU
	freed   *sync.Cond
}

var _ load.Scenario = (*brokerLogin)(nil)

func newBrokerLogin(env *Env) load.Scenario {
	s := &brokerLogin{env: env, touched: map[string]bool{}, busy: map[[2]int]bool{}}
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
	user := p.spec.BrokerUsername(j)
	u.b.ClearCookies()
	cl := web(t)
	ar := kc.NewAuthRequest(cl.ID, p.redirect, kc.ScopeOpenID)
	start := time.Now()
	page, err := u.b.OpenBrokered(ctx, t.Realm, dataset.IdPAlias, ar)
	rec.Record(results.OpBrokerPage, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	endpoint, err := u.b.SubmitIdPLogin(ctx, page, user, p.password)
	var le *kc.LoginError
	if errors.As(err, &le) {
		err = load.CheckError{Check: "the identity provider's login form accepted the user (it said: " + le.Message + ")"}
	}
	rec.Record(results.OpIdPLogin, start, err)
	if err != nil {
		return err
	}
	u.s.touch(t.Realm)
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
	start = time.Now()
	_, err = env.Client.ExchangeCode(ctx, t.Realm, cl, code, ar.RedirectURI, ar.CodeVerifier)
	rec.Record(results.OpCodeExchange, start, err)
	return err
}

func (s *brokerLogin) touch(realm string) {
	s.mu.Lock()
	s.touched[realm] = true
	s.mu.Unlock()
}

// prepare checks that the tenants' identity providers send users to the
// target (a dataset restored on a stack at other ports, or seeded through
// another URL, names the old one) and points them there when not.
func (s *brokerLogin) prepare(ctx context.Context, _ int) error {
	env := s.env
	base := env.Client.BaseURL()
	for _, t := range env.Pool.tenants {
		path := kc.RealmPath(t.Realm, "identity-provider", "instances", dataset.IdPAlias)
		var idp kc.IdentityProviderRep
		if err := env.Admin.Do(ctx, http.MethodGet, path, nil, &idp); err != nil {
			if errors.Is(err, kc.ErrNotFound) {
				return fmt.Errorf("%s: realm %s has no identity provider %s: seed --broker-users N", results.ScenarioBrokerLogin, t.Realm, dataset.IdPAlias)
			}
			return fmt.Errorf("%s: realm %s: %w", results.ScenarioBrokerLogin, t.Realm, err)
		}
		if dataset.IdPURLs(idp, base) == nil {
			continue
		}
		idp.Config = dataset.RetargetIdP(idp.Config, base, env.Pool.spec.IdPRealm())
		if err := env.Admin.Do(ctx, http.MethodPut, path, idp, nil); err != nil {
			return fmt.Errorf("%s: realm %s: point the identity provider at the target: %w", results.ScenarioBrokerLogin, t.Realm, err)
		}
	}
	return nil
}

// finish deletes the users brokered logins made (those linked to the
// identity provider) in the realms the run logged users in to.
func (s *brokerLogin) finish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, finishWait)
	defer cancel()
	s.mu.Lock()
	realms := s.touched
	s.touched = map[string]bool{}
	s.mu.Unlock()
	var errs []error
	for realm := range realms {
		for {
			var us []kc.UserRep
			p := kc.RealmPath(realm, "users") + "?briefRepresentation=true&max=500&idpAlias=" + dataset.IdPAlias
			if err := s.env.Admin.Do(ctx, http.MethodGet, p, nil, &us); err != nil {
				errs = append(errs, fmt.Errorf("realm %s: list brokered users: %w", realm, err))
				break
			}
			err := dataset.Parallel(ctx, len(us), finishers, func(ctx context.Context, k int) error {
				err := s.env.Admin.DeleteUser(ctx, realm, us[k].ID)
				if errors.Is(err, kc.ErrNotFound) {
					return nil
				}
				return err
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("realm %s: delete brokered users: %w", realm, err))
				break
			}
			if len(us) < 500 {
				break
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", results.ScenarioBrokerLogin, errors.Join(errs[:min(len(errs), 3)]...))
	}
	return nil
}
