package scenario

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
)

// Pool is the tenants, users and clients a scenario draws from. It is
// read-only once built and shared by all VUs.
type Pool struct {
	single   bool // one tenant and user given by hand
	tenants  []dataset.Tenant
	orgs     bool
	password string
	redirect string
	username func(tenant, user int) string
	skew     float64
	zipf     *zipf // nil: tenants are picked uniformly
	// userLo[i] is the 0-based index of tenants[i]'s first user in the
	// pool, whose Users count from there (Slice); nil: from the first.
	userLo []int
	// spec names a generated dataset's clients (nil for realm files and
	// a Single pool); spread > 0 spreads the grants over each tenant's
	// first spread confidential clients (SpreadClients).
	spec   *dataset.Spec
	spread int
	// offline is how many offline sessions the dataset seeded over its
	// allTenants tenants (seed --offline-sessions); they do not idle out
	// in a run's time.
	offline, allTenants int
}

// Single is one realm, client and user given by hand, for a run without a
// dataset manifest.
type Single struct {
	Realm        string
	ClientID     string // used for every grant and for the login form
	ClientSecret string // "" for a public client
	Username     string
	Password     string
	RedirectURI  string // for the login form; "" means dataset.RedirectURI
}

// Validate reports what is missing. Only the realm is required; which
// scenarios need a client and a user is checked when one is built.
func (s Single) Validate() error {
	if s.Realm == "" {
		return errors.New("realm is empty")
	}
	return nil
}

// NewSinglePool returns a pool of one tenant with one user.
func NewSinglePool(s Single) (*Pool, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.RedirectURI == "" {
		s.RedirectURI = dataset.RedirectURI
	}
	t := dataset.Tenant{Index: 1, ID: s.Realm, Realm: s.Realm, WebClient: s.ClientID,
		Backend: s.ClientID, BackendSecret: s.ClientSecret, Users: 1}
	user := s.Username
	return &Pool{single: true, tenants: []dataset.Tenant{t}, password: s.Password, redirect: s.RedirectURI,
		username: func(int, int) string { return user }}, nil
}

// NewManifestPool returns the pool of a seeded dataset's tenants. skew is
// the zipf exponent of the tenant choice: 0 picks tenants uniformly; s > 0
// picks tenant k (1-based) with probability proportional to 1/k^s.
func NewManifestPool(m *dataset.Manifest, skew float64) (*Pool, error) {
	n := m.Tenants()
	if n < 1 {
		return nil, errors.New("the dataset has no tenants")
	}
	if err := checkSkew(skew); err != nil {
		return nil, err
	}
	p := &Pool{orgs: m.Spec.Mode == dataset.ModeOrgs, password: m.Password, redirect: dataset.RedirectURI,
		username: m.Username, skew: skew}
	if m.Files == nil {
		spec := m.Spec
		p.spec = &spec
	}
	if m.Sessions != nil {
		p.offline, p.allTenants = m.Sessions.Offline, n
	}
	p.tenants = make([]dataset.Tenant, n)
	for i := range n {
		p.tenants[i] = m.Tenant(i + 1)
		if p.tenants[i].Users < 1 {
			return nil, fmt.Errorf("tenant %s has no users", p.tenants[i].ID)
		}
	}
	if skew > 0 {
		p.zipf = newZipf(n, skew)
	}
	return p, nil
}

func checkSkew(s float64) error {
	if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 || s > 10 {
		return fmt.Errorf("tenant skew %v: want a number from 0 (uniform) to 10", s)
	}
	return nil
}

// missing says what a hand-given pool, or a dataset without OTP users,
// lacks for scenario name.
func (p *Pool) missing(name string) error {
	if name == results.ScenarioOTPLogin && p.otpUsers() == 0 {
		return fmt.Errorf("%s needs users with a TOTP credential, which the dataset has not: seed --otp-users N (a dataset of its own: the content differs)", name)
	}
	if name == results.ScenarioBrokerLogin && p.spec.Content.BrokerUsers == 0 {
		return fmt.Errorf("%s needs an identity provider in each tenant realm, which the dataset has not: seed --broker-users N (a dataset of its own: the content differs)", name)
	}
	if name == results.ScenarioSAMLLogin && p.spec.Content.SAMLClients == 0 {
		return fmt.Errorf("%s needs a SAML client in each tenant, which the dataset has not: seed --saml-clients N (a dataset of its own: the content differs)", name)
	}
	if name == results.ScenarioUMA && p.umaResources() == 0 {
		return fmt.Errorf("%s needs a resource server with authorization services in each tenant, which the dataset has not: seed --uma-resources N (a dataset of its own: the content differs)", name)
	}
	if !p.single {
		return nil
	}
	t := p.tenants[0]
	var errs []error
	switch name {
	case results.ScenarioJWKS, results.ScenarioDiscovery, results.ScenarioAdminAPI, results.ScenarioAdminWrite, results.ScenarioRegistration,
		results.ScenarioAdminConsole, results.ScenarioMix:
		return nil
	case results.ScenarioAdminSearch:
		if p.username(1, 1) == "" {
			return fmt.Errorf("%s needs a username to search for", name)
		}
		return nil
	case results.ScenarioAdminSessions:
		if t.Backend == "" {
			return fmt.Errorf("%s needs a client id, whose sessions it lists", name)
		}
		return nil
	}
	if t.Backend == "" {
		errs = append(errs, fmt.Errorf("%s needs a client id", name))
	}
	if name != results.ScenarioClientCredentials && p.username(1, 1) == "" {
		errs = append(errs, fmt.Errorf("%s needs a username (and password)", name))
	}
	return errors.Join(errs...)
}

// Tenants is the number of tenants.
func (p *Pool) Tenants() int { return len(p.tenants) }

// Orgs reports whether tenants are organizations in one shared realm.
func (p *Pool) Orgs() bool { return p.orgs }

// Password is the users' password.
func (p *Pool) Password() string { return p.password }

// RedirectURI is where the login form's redirect goes.
func (p *Pool) RedirectURI() string { return p.redirect }

// pick draws a tenant and one of its users.
func (p *Pool) pick(r *rand.Rand) (*dataset.Tenant, string) {
	i := p.pickIndex(r)
	t := &p.tenants[i]
	return t, p.username(t.Index, 1+p.firstUser(i)+r.IntN(t.Users))
}

func (p *Pool) pickTenant(r *rand.Rand) *dataset.Tenant { return &p.tenants[p.pickIndex(r)] }

// pickOTP picks a random tenant and one of its OTP users (the pool's
// dataset must have them: missing says so).
func (p *Pool) pickOTP(r *rand.Rand) (*dataset.Tenant, string) {
	t := p.pickTenant(r)
	return t, p.spec.OTPUsername(t.Index, 1+r.IntN(p.spec.Content.OTPUsers))
}

// otpUsers is how many OTP users each tenant has.
func (p *Pool) otpUsers() int {
	if p.spec == nil {
		return 0
	}
	return p.spec.Content.OTPUsers
}

// umaResources is how many resources each tenant's resource server has.
func (p *Pool) umaResources() int {
	if p.spec == nil {
		return 0
	}
	return p.spec.Content.UMAResources
}

// seededOffline reports whether t's realm holds offline sessions the
// dataset seeded: its tenant's share (dataset.TenantShare), or in orgs
// mode, where one realm holds every tenant, any.
func (p *Pool) seededOffline(t *dataset.Tenant) bool {
	if p.offline == 0 {
		return false
	}
	return p.orgs || dataset.TenantShare(p.offline, p.allTenants, t.Index) > 0
}

// clientsOf lists the clientIds of t's confidential clients that grants
// draw from (Pool.client).
func (p *Pool) clientsOf(t *dataset.Tenant) []string {
	if p.spread < 2 {
		return []string{t.Backend}
	}
	ids := make([]string, p.spread)
	for k := range ids {
		ids[k] = p.spec.BackendClient(t.Index, 1+k)
	}
	return ids
}

// realmUsers is how many of the dataset's users t's realm holds: the
// tenant's, or in orgs mode every tenant's (one realm holds them all).
func (p *Pool) realmUsers(t *dataset.Tenant) int {
	if p.spec == nil {
		return t.Users
	}
	if p.orgs {
		return p.spec.Content.Users * p.spec.Tenants
	}
	return p.spec.Content.Users
}

func (p *Pool) pickIndex(r *rand.Rand) int {
	switch {
	case len(p.tenants) == 1:
		return 0
	case p.zipf != nil:
		return p.zipf.pick(r.Float64())
	default:
		return r.IntN(len(p.tenants))
	}
}

// SpreadClients makes every grant (and the refreshes, introspections and
// logouts of its session) use one of its tenant's confidential clients at
// random instead of the first: a load that keeps many clients, and their
// service-account users, in use at once (the sizing guide's cache advice
// counts them). Only for a generated dataset with 2 or more confidential
// clients per tenant (seed --clients N: N-1 of them).
func (p *Pool) SpreadClients() error {
	if p.spec == nil {
		return errors.New("spread clients: needs a dataset kcbench generated (its clients' names and secrets)")
	}
	n := p.spec.Content.Clients - 1
	if n < 2 {
		return fmt.Errorf("spread clients: the dataset has %d confidential client per tenant; seed --clients 3 or more", max(n, 0))
	}
	p.spread = n
	return nil
}

// Clients is how many confidential clients per tenant the grants use.
func (p *Pool) Clients() int { return max(p.spread, 1) }

// client is the confidential client a grant for tenant t uses: its first,
// or with SpreadClients one drawn from r.
func (p *Pool) client(r *rand.Rand, t *dataset.Tenant) kc.OAuthClient {
	if p.spread < 2 {
		return backend(t)
	}
	id := p.spec.BackendClient(t.Index, 1+r.IntN(p.spread))
	return kc.OAuthClient{ID: id, Secret: p.spec.ClientSecret(t.Index, id)}
}

// backend is the tenant's confidential client (password grant, client
// credentials, introspection, logout).
func backend(t *dataset.Tenant) kc.OAuthClient {
	return kc.OAuthClient{ID: t.Backend, Secret: t.BackendSecret}
}

// web is the tenant's browser client (public in a dataset; in a Single
// pool, the one client, with its secret if any).
func web(t *dataset.Tenant) kc.OAuthClient {
	if t.WebClient == t.Backend {
		return backend(t)
	}
	return kc.OAuthClient{ID: t.WebClient}
}

// zipf draws ranks 0..n-1 with probability proportional to 1/(rank+1)^s,
// by inverting its cumulative distribution. Unlike math/rand's Zipf it
// accepts any s > 0, including the common s ≤ 1.
type zipf struct {
	cdf []float64 // cdf[k] = P(rank ≤ k); cdf[n-1] = 1
}

func newZipf(n int, s float64) *zipf {
	cdf := make([]float64, n)
	var sum float64
	for k := range n {
		sum += math.Pow(float64(k+1), -s)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	cdf[n-1] = 1
	return &zipf{cdf: cdf}
}

// pick maps u, uniform in [0, 1), to a rank.
func (z *zipf) pick(u float64) int {
	i := sort.SearchFloat64s(z.cdf, u)
	if i < len(z.cdf) && z.cdf[i] == u {
		i++ // P(rank ≤ i) = u: u falls into the next rank's interval [cdf[i], cdf[i+1])
	}
	return min(i, len(z.cdf)-1)
}
