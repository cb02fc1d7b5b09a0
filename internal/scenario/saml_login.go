package scenario

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// samlLogin logs a random user in to a random SAML client of its tenant
// (seed --saml-clients) as a browser does, SP-initiated with the POST
// binding: kcbench, as the client's service provider, posts an
// AuthnRequest to the realm's SAML endpoint, which shows the login form
// (results.OpSAMLPage); the credentials posted there are answered by the
// page that posts the signed SAMLResponse to the service provider
// (results.OpSAMLLogin). The response is then checked as a service
// provider checks it (github.com/crewjam/saml: the signature against the
// realm's descriptor, issuer, audience, destination, the request it
// answers, its times; the subject is the user), outside the operation's
// time; a response that fails is a check error. Each iteration starts
// with an empty cookie jar. The realms' descriptors are read before the
// run.
type samlLogin struct {
	env *Env
	acs *url.URL
	mu  sync.Mutex
	idp map[string]*kc.SAMLIdP // by realm
}

var _ load.Scenario = (*samlLogin)(nil)

func newSAMLLogin(env *Env) load.Scenario {
	acs, err := url.Parse(dataset.SAMLConsumerURL)
	if err != nil {
		panic(err) // a constant
	}
	return &samlLogin{env: env, acs: acs, idp: map[string]*kc.SAMLIdP{}}
}

func (s *samlLogin) Name() string { return results.ScenarioSAMLLogin }

func (s *samlLogin) NewUser(_ context.Context, id int) (load.User, error) {
	return &samlUser{s: s, rng: s.env.rng(results.ScenarioSAMLLogin, id), b: s.env.Client.NewBrowser()}, nil
}

// prepare reads the descriptor of every realm of the pool's tenants.
func (s *samlLogin) prepare(ctx context.Context, _ int) error {
	var realms []string
	seen := map[string]bool{}
	for _, t := range s.env.Pool.tenants {
		if !seen[t.Realm] {
			seen[t.Realm] = true
			realms = append(realms, t.Realm)
		}
	}
	return dataset.Parallel(ctx, len(realms), 4, func(ctx context.Context, k int) error {
		_, err := s.realmIdP(ctx, realms[k])
		return err
	})
}

// realmIdP is realm's descriptor, read once.
func (s *samlLogin) realmIdP(ctx context.Context, realm string) (*kc.SAMLIdP, error) {
	s.mu.Lock()
	p := s.idp[realm]
	s.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := s.env.Client.SAMLIdP(ctx, realm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", results.ScenarioSAMLLogin, err)
	}
	s.mu.Lock()
	s.idp[realm] = p
	s.mu.Unlock()
	return p, nil
}

type samlUser struct {
	s   *samlLogin
	rng *rand.Rand
	b   *kc.Browser
	n   int // iterations, for the relay state
}

func (u *samlUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	env := u.s.env
	t, user := env.Pool.pick(u.rng)
	client := env.Pool.spec.SAMLClient(t.Index, 1+u.rng.IntN(env.Pool.spec.Content.SAMLClients))
	idp, err := u.s.realmIdP(ctx, t.Realm)
	if err != nil {
		return err
	}
	sp := idp.ServiceProvider(client, u.s.acs)
	u.n++
	req, err := sp.NewRequest(strconv.Itoa(u.n))
	if err != nil {
		return err
	}
	u.b.ClearCookies()
	start := time.Now()
	page, err := u.b.OpenSAML(ctx, sp, req)
	rec.Record(results.OpSAMLPage, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	resp, err := u.b.SubmitSAMLLogin(ctx, page, user, env.Pool.password)
	var le *kc.LoginError
	if errors.As(err, &le) {
		err = load.CheckError{Check: "the login form accepted the credentials (it said: " + le.Message + ")"}
	}
	if err != nil {
		rec.Record(results.OpSAMLLogin, start, err)
		return err
	}
	end := time.Now()
	err = checkSAML(sp, resp, req.ID, user)
	rec.Record(results.OpSAMLLogin, start.Add(time.Since(end)), err) // the check's time left out
	return err
}

// checkSAML verifies a SAML response to request id as the service
// provider does, and that its subject is user: a check error when not.
func checkSAML(sp *kc.SAMLServiceProvider, resp []byte, id, user string) error {
	name, err := sp.Verify(resp, id)
	if err != nil {
		return load.CheckError{Check: "the SAML response verified (" + err.Error() + ")"}
	}
	if !strings.EqualFold(name, user) {
		return load.CheckError{Check: fmt.Sprintf("the SAML assertion's subject is the user who logged in (%q, not %q)", name, user)}
	}
	return nil
}
