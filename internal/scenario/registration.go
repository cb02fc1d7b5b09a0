package scenario

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// registration signs a new user up through a random tenant's registration
// form, as a browser does: the registration page (results.OpRegisterPage),
// the form posted (results.OpRegisterSubmit, answered by the redirect with
// a code: the new user is logged in) and the code exchange
// (results.OpCodeExchange). The users it makes (kcbr-…, a random part so
// that agents never collide) are deleted through the admin API when the
// run ends (finish), so that the dataset keeps its size. Keycloak answers
// a realm with registration off with HTTP 400, which the setup check
// refuses.
type registration struct {
	env  *Env
	mu   sync.Mutex
	made map[string][]string // usernames by realm
}

var _ load.Scenario = (*registration)(nil)

func newRegistration(env *Env) load.Scenario {
	return &registration{env: env, made: map[string][]string{}}
}

func (s *registration) Name() string { return results.ScenarioRegistration }

func (s *registration) NewUser(_ context.Context, id int) (load.User, error) {
	return &registrationUser{s: s, rng: s.env.rng(results.ScenarioRegistration, id), b: s.env.Client.NewBrowser()}, nil
}

type registrationUser struct {
	s   *registration
	rng *rand.Rand
	b   *kc.Browser
}

func (u *registrationUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	env := u.s.env
	t := env.Pool.pickTenant(u.rng)
	u.b.ClearCookies()
	cl := web(t)
	ar := kc.NewAuthRequest(cl.ID, env.Pool.redirect, kc.ScopeOpenID)
	start := time.Now()
	page, err := u.b.OpenRegistration(ctx, t.Realm, ar)
	if isStatus(err, http.StatusBadRequest) {
		err = fmt.Errorf("%w (is registration on in realm %s? kcbench's datasets turn it on: re-seed a dataset made before, or turn on \"User registration\")", err, t.Realm)
	}
	rec.Record(results.OpRegisterPage, start, err)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("kcbr-%s-%08x", strings.ToLower(t.ID), rand.Uint32())
	start = time.Now()
	code, err := u.b.SubmitRegistration(ctx, page, ar, kc.Registration{Username: name, Email: name + "@example.com",
		FirstName: "Registered", LastName: "User", Password: env.Pool.password})
	if err == nil {
		u.s.remember(t.Realm, name)
	}
	var le *kc.LoginError
	if errors.As(err, &le) {
		err = load.CheckError{Check: "the registration form accepted the new user (it said: " + le.Message + ")"}
	}
	rec.Record(results.OpRegisterSubmit, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	_, err = env.Client.ExchangeCode(ctx, t.Realm, cl, code, ar.RedirectURI, ar.CodeVerifier)
	rec.Record(results.OpCodeExchange, start, err)
	return err
}

func (s *registration) remember(realm, username string) {
	s.mu.Lock()
	s.made[realm] = append(s.made[realm], username)
	s.mu.Unlock()
}

// finish deletes the users the run registered.
func (s *registration) finish(ctx context.Context) error {
	s.mu.Lock()
	made := s.made
	s.made = map[string][]string{}
	s.mu.Unlock()
	var errs []error
	for realm, names := range made {
		for _, n := range names {
			u, err := s.env.Admin.FindUser(ctx, realm, n)
			if err == nil && u != nil {
				err = s.env.Admin.DeleteUser(ctx, realm, u.ID)
			}
			if err != nil && !errors.Is(err, kc.ErrNotFound) {
				errs = append(errs, fmt.Errorf("user %s of realm %s: %w", n, realm, err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("registration: %d registered users not deleted: %w", len(errs), errors.Join(errs[:min(len(errs), 3)]...))
	}
	return nil
}
