package scenario

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// Env is what scenarios are built from.
type Env struct {
	// Client makes the OIDC calls. Build it on an h1.Transport, with
	// at least as many connections as VUs.
	Client *kc.Client
	// Admin makes the admin-api scenario's calls; other scenarios ignore it.
	Admin *kc.Admin
	// Pool is the tenants, users and clients to draw from.
	Pool *Pool
	// Seed makes each VU's random choices reproducible: VU i of a
	// scenario always draws the same sequence.
	Seed uint64
	// Mix weighs the mix scenario's parts by scenario name; nil or empty
	// means DefaultMix.
	Mix map[string]int
	// SessionsPerVU sizes the refresh scenario's sessions: this many per
	// VU allocated up front (0: DefaultSessionsPerVU).
	SessionsPerVU int
	// RefreshesPerSession bounds how often a session is refreshed before
	// it is replaced by a new login (0: unbounded).
	RefreshesPerSession int
	// AdminWritePct is the percentage of admin-write's iterations that
	// write (the others read); 0 means 100.
	AdminWritePct float64
	// BrokerFirstPct is the percentage of broker-login's iterations that
	// are a user's first visit (its linked user deleted first).
	BrokerFirstPct float64
	// Journey tunes the user-journey scenario.
	Journey JourneyOptions
	// sessions, when set, keeps the refresh scenario's sessions from run
	// to run (UserCache); nil: each scenario has its own.
	sessions *sessionPools
	// registered, when set, keeps the registration scenario's users from
	// run to run with the VUs that made them (UserCache); nil: its own.
	registered *registered
}

// finisher is a scenario with work to do when a run ends (its proof's
// iteration included): Run calls finish after the last iteration.
type finisher interface {
	finish(ctx context.Context) error
}

// preparer is a scenario with work to do before a run's clock starts
// (Run calls prepare with the VUs the run allocates up front).
type preparer interface {
	prepare(ctx context.Context, vus int) error
}

// Defaults.
const (
	DefaultSessionsPerVU = 2
	// DefaultSeed is the Seed a CLI uses unless told otherwise.
	DefaultSeed = 1
	// tokenMargin: a VU renews an access token this long before it
	// expires, so that no request carries an expired one.
	tokenMargin = 30 * time.Second
)

// DefaultMix is the Keycloak sizing guide's mix: one login for eight
// refreshes and eight client-credential grants.
func DefaultMix() map[string]int {
	return map[string]int{results.ScenarioLoginForm: 1, results.ScenarioRefresh: 8, results.ScenarioClientCredentials: 8}
}

// Validate checks env for scenario name.
func (e *Env) validate(name string) error {
	var errs []error
	if e.Client == nil {
		errs = append(errs, errors.New("no Keycloak client"))
	}
	if e.Pool == nil {
		errs = append(errs, errors.New("no users and clients (no dataset manifest and no realm given)"))
	} else if err := e.Pool.missing(name); err != nil {
		errs = append(errs, err)
	}
	if adminScenario(name) && e.Admin == nil {
		errs = append(errs, fmt.Errorf("%s needs admin credentials", name))
	}
	if !(e.BrokerFirstPct >= 0 && e.BrokerFirstPct <= 100) {
		errs = append(errs, fmt.Errorf("broker first-visit percentage = %v: must be between 0 and 100", e.BrokerFirstPct))
	}
	if !(e.AdminWritePct >= 0 && e.AdminWritePct <= 100) {
		errs = append(errs, fmt.Errorf("admin write percentage = %v: must be between 0 and 100", e.AdminWritePct))
	}
	if e.SessionsPerVU < 0 {
		errs = append(errs, fmt.Errorf("sessions per VU = %d: must not be negative", e.SessionsPerVU))
	}
	if e.RefreshesPerSession < 0 {
		errs = append(errs, fmt.Errorf("refreshes per session = %d: must not be negative", e.RefreshesPerSession))
	}
	if err := e.Journey.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// adminScenario reports whether scenario name drives the admin API.
func adminScenario(name string) bool {
	return name == results.ScenarioAdminAPI || name == results.ScenarioAdminSearch || name == results.ScenarioAdminWrite ||
		name == results.ScenarioAdminSessions ||
		name == results.ScenarioRegistration || name == results.ScenarioAdminConsole || name == results.ScenarioBrokerLogin
}

// rng returns VU id's random source for the scenario called name.
func (e *Env) rng(name string, id int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return rand.New(rand.NewPCG(e.Seed^h.Sum64(), uint64(id)))
}

// Info describes a scenario.
type Info struct {
	Name        string
	Description string
}

type entry struct {
	desc  string
	build func(*Env) (load.Scenario, error)
}

// plain adapts a constructor that cannot fail.
func plain(f func(*Env) load.Scenario) func(*Env) (load.Scenario, error) {
	return func(e *Env) (load.Scenario, error) { return f(e), nil }
}

// registry is every scenario, by name: the one place they are listed.
func registry() map[string]entry {
	return map[string]entry{
		results.ScenarioPasswordGrant:     {"password grant (direct access) of a random user on the tenant's backend client", plain(newPasswordGrant)},
		results.ScenarioLoginForm:         {"browser login: authorization code + PKCE through the real login form, then the code exchange", plain(newLoginForm)},
		results.ScenarioClientCredentials: {"client-credentials grant of a random tenant's backend client", plain(newClientCredentials)},
		results.ScenarioRefresh:           {"refresh-token grant on a pool of live sessions (sessions per VU, refreshes per session)", plain(newRefresh)},
		results.ScenarioIntrospect:        {"token introspection by the backend client of an access token the VU holds", plain(newIntrospect)},
		results.ScenarioUserinfo:          {"userinfo with an openid access token the VU holds", plain(newUserinfo)},
		results.ScenarioJWKS:              {"the realm's JWKS (certs) document", plain(newJWKS)},
		results.ScenarioDiscovery:         {"the realm's OpenID discovery document", plain(newDiscovery)},
		results.ScenarioLogout:            {"a password-grant login, then its back-channel logout", plain(newLogout)},
		results.ScenarioOffline:           {"an offline_access password grant, then a refresh of the offline token", plain(newOffline)},
		results.ScenarioAdminAPI:          {"admin REST: list realms, get the realm, list users (orgs: list organizations, get one, list members)", plain(newAdminAPI)},
		results.ScenarioAdminSearch:       {"admin console's user list: search a user (brief, a page of 10), count the search, open a later page", plain(newAdminSearch)},
		results.ScenarioAdminSessions:     {"admin console's sessions: the realm's sessions per client, the first page of the realm's sessions screen (online and offline), a backend client's user sessions", plain(newAdminSessions)},
		results.ScenarioAdminConsole:      {"the admin console's requests (recorded from its UI in Chromium, per Keycloak line) for a realm's users list, one user, its role mapping tab, the clients list: a screen an operation", plain(newAdminConsole)},
		results.ScenarioAdminWrite:        {"admin REST writes: create, update and delete a user (with a role and a group), a group, a client; --admin-write-pct of iterations write, the others read", plain(newAdminWrite)},
		results.ScenarioOTPLogin:          {"browser login with a second factor: the login form, the password, a TOTP code (seed --otp-users), the code exchange", plain(newOTPLogin)},
		results.ScenarioRegistration:      {"self-registration through the registration form, then the code exchange; the users made are deleted when the run ends", plain(newRegistration)},
		results.ScenarioTokenExchange:     {"standard token exchange (26.2+) by the backend client of a user's access token the VU holds, for the account audience", plain(newTokenExchange)},
		results.ScenarioBrokerLogin:       {"brokered browser login: the tenant realm with kc_idp_hint (orgs mode: the email typed into the identity-first form picks the organization's provider), the identity provider's form (another realm, seed --broker-users), first-broker-login or the linked user, the code exchange", plain(newBrokerLogin)},
		results.ScenarioSAMLLogin:         {"SAML browser login, SP-initiated, POST binding: the AuthnRequest, the login form, the credentials, the signed response checked by kcbench as the client's service provider (seed --saml-clients)", plain(newSAMLLogin)},
		results.ScenarioUMA:               {"authorization services: a user's uma-ticket grant for a random resource's scope of the tenant's resource server (seed --uma-resources), an RPT", plain(newUMA)},
		results.ScenarioUserJourney:       {"a user's session: think, form login, userinfo every 5 s, silent refresh, 1–3 token lifetimes, 25 % log out", plain(newJourney)},
		results.ScenarioMix:               {"weighted mix of scenarios (default 1 login-form : 8 refresh : 8 client-credentials)", newMix},
	}
}

// List describes every scenario, by name.
func List() []Info {
	var out []Info
	for name, e := range registry() {
		out = append(out, Info{Name: name, Description: e.desc})
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// WriteList prints every scenario's name and description, a line each
// (kcbench scenarios).
func WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, i := range List() {
		fmt.Fprintf(tw, "%s\t%s\n", i.Name, i.Description)
	}
	return tw.Flush()
}

// ErrUnknown is wrapped by ByName's error for a name no scenario has.
var ErrUnknown = errors.New("unknown scenario")

// ByName builds scenario name on env. env is copied; the scenario keeps
// no reference to the caller's.
func ByName(name string, env Env) (load.Scenario, error) {
	e, ok := registry()[name]
	if !ok {
		return nil, fmt.Errorf("%w %q (see kcbench scenarios)", ErrUnknown, name)
	}
	if err := env.validate(name); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	if env.SessionsPerVU == 0 {
		env.SessionsPerVU = DefaultSessionsPerVU
	}
	env.Journey = env.Journey.withDefaults()
	sc, err := e.build(&env)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	return sc, nil
}

// ProbeEnv is an Env with the run's users and clients, to check a scenario
// before anything is sent.
func ProbeEnv(tg kc.Target, m *dataset.Manifest, c Config) Env {
	env := Env{Client: kc.NewFor(tg), Mix: c.Mix}
	if tg.Admin.ClientID != "" || tg.Admin.Username != "" {
		env.Admin = kc.NewAdmin(env.Client, tg.Admin)
	}
	if c.Realm != "" {
		env.Pool, _ = NewSinglePool(Single{Realm: c.Realm, ClientID: c.ClientID, Username: c.Username})
	} else if m != nil {
		env.Pool, _ = NewManifestPool(m, c.TenantSkew)
		if env.Pool != nil && c.SpreadClients {
			env.Pool.SpreadClients() // Run reports the error
		}
	}
	return env
}
