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
	made *registered
}

// registered are the usernames registration made, by realm.
type registered struct {
	mu    sync.Mutex
	names map[string][]string
}

func (r *registered) add(realm, username string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names == nil {
		r.names = map[string][]string{}
	}
	r.names[realm] = append(r.names[realm], username)
}

// take returns the names and forgets them.
func (r *registered) take() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.names
	r.names = nil
	return n
}

var _ load.Scenario = (*registration)(nil)

func newRegistration(env *Env) load.Scenario {
	made := env.registered
	if made == nil {
		made = &registered{}
	}
	return &registration{env: env, made: made}
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
		err = fmt.Errorf("%w (is registration on in realm %s? kcbench's datasets turn it on: a dataset or snapshot seeded before this kcbench lacks it: delete it and seed again, or turn on \"User registration\")", err, t.Realm)
	}
	rec.Record(results.OpRegisterPage, start, err)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("kcbr-%s-%016x", strings.ToLower(t.ID), rand.Uint64())
	// Remembered before: a submit that fails after Keycloak made the user
	// (a time-out) must not leave it behind; finish skips the missing.
	u.s.made.add(t.Realm, name)
	start = time.Now()
	code, err := u.b.SubmitRegistration(ctx, page, ar, kc.Registration{Username: name, Email: name + "@example.com",
		FirstName: "Registered", LastName: "User", Password: env.Pool.password})
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

// finishWait bounds the deletion of the users a run registered, and
// finishers delete them this many at a time.
const (
	finishWait = 2 * time.Minute
	finishers  = 4
)

// finish deletes the users the run registered (for finishWait at most).
func (s *registration) finish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, finishWait)
	defer cancel()
	type user struct{ realm, name string }
	todo := make(chan user)
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for range finishers {
		wg.Go(func() {
			for u := range todo {
				if err := s.delete(ctx, u.realm, u.name); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("user %s of realm %s: %w", u.name, u.realm, err))
					mu.Unlock()
				}
			}
		})
	}
	for realm, names := range s.made.take() {
		for _, n := range names {
			todo <- user{realm, n}
		}
	}
	close(todo)
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("registration: %d registered users not deleted: %w", len(errs), errors.Join(errs[:min(len(errs), 3)]...))
	}
	return nil
}

// delete deletes a registered user; one that is not there is no error.
func (s *registration) delete(ctx context.Context, realm, name string) error {
	u, err := s.env.Admin.FindUser(ctx, realm, name)
	if err == nil && u != nil {
		err = s.env.Admin.DeleteUser(ctx, realm, u.ID)
	}
	if errors.Is(err, kc.ErrNotFound) {
		return nil
	}
	return err
}
