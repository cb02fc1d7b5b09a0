package dataset

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// Manifest records a seeded dataset: what it holds and how its passwords
// and client secrets are derived, so that the load stage can pick valid
// users and clients without asking the admin API. It is written only after
// the tenants it counts exist complete, so it never claims what is not
// there. It holds benchmark credentials, so it is written with mode 0600.
type Manifest struct {
	Schema int `json:"schema"`
	// Target is the base URL the dataset was seeded into.
	Target string `json:"target"`
	Spec   Spec   `json:"spec"`
	// Fingerprint identifies the dataset (Spec without Tenants).
	Fingerprint string `json:"fingerprint"`
	// PasswordRule and SecretRule say in words how credentials are made.
	PasswordRule string `json:"password_rule"`
	SecretRule   string `json:"secret_rule"`
	// Password is every user's password.
	Password string `json:"password"`
	// Salts says whether users' password credentials share one salt and
	// hash ("shared": kcbench hashed the password once and every user got
	// that credential), each have their own ("per-user": --unique-salts,
	// or Keycloak hashed plain passwords), or differ between seeding runs
	// ("mixed"). Verifying a password costs the same either way; see the
	// README for the measurement.
	Salts string `json:"password_salts"`
	// Realms lists the realm of every tenant, in tenant order (one entry,
	// the shared realm, in orgs mode).
	Realms []string `json:"realms"`
	// Files lists the realms of a dataset seeded from realm files (nil
	// for generated datasets).
	Files []FileRealm `json:"files,omitempty"`
	Seeds []SeedEvent `json:"seeds,omitempty"`
	// Sessions are the user sessions seeded (seed --sessions,
	// --offline-sessions; nil: none).
	Sessions *SessionState `json:"sessions,omitempty"`
	Updated  time.Time     `json:"updated"`
}

// SeedEvent is one seeding run.
type SeedEvent struct {
	At           time.Time `json:"at"`
	Strategy     string    `json:"strategy"`
	From         int       `json:"from_tenants"`
	To           int       `json:"to_tenants"`
	Added        int       `json:"added"`
	Redone       int       `json:"redone"`
	Seconds      float64   `json:"seconds"`
	ServerCPUSec float64   `json:"server_cpu_s,omitempty"`
	// Salts is what this run gave its users (see Manifest.Salts).
	Salts string `json:"password_salts,omitempty"`
}

// SeedRunTo is the latest seeding run that brought the dataset to n
// tenants by adding some.
func (m *Manifest) SeedRunTo(n int) (SeedEvent, bool) {
	for i := len(m.Seeds) - 1; i >= 0; i-- {
		if ev := m.Seeds[i]; ev.To == n && ev.Added > 0 {
			return ev, true
		}
	}
	return SeedEvent{}, false
}

// saltsOf is what the seeds say of the users' salts.
func saltsOf(seeds []SeedEvent, spec Spec) string {
	out := ""
	for _, ev := range seeds {
		if ev.Added == 0 && ev.Redone == 0 {
			continue
		}
		s := cmp.Or(ev.Salts, SaltsShared) // runs before salts were recorded shared them
		if out != "" && out != s {
			return SaltsMixed
		}
		out = s
	}
	return cmp.Or(out, spec.Salts())
}

const manifestSchema = 1

// NewManifest describes spec seeded into target.
func NewManifest(spec Spec, target string) *Manifest {
	m := &Manifest{Schema: manifestSchema, Target: target, Spec: spec, Fingerprint: spec.Fingerprint(),
		PasswordRule: "every user has the dataset password (field password), derived from the seed; password_salts says whether their credentials share one salt and hash",
		SecretRule:   "confidential client secrets are Spec.ClientSecret(tenant, clientId): sha256 of seed, realm and clientId",
		Password:     spec.Password(), Salts: spec.Salts(), Updated: time.Now().UTC()}
	m.setTenants(spec.Tenants)
	return m
}

func (m *Manifest) setTenants(n int) {
	m.Spec.Tenants = n
	m.Realms = m.Realms[:0]
	if m.Files != nil {
		for _, f := range m.Files[:min(n, len(m.Files))] {
			m.Realms = append(m.Realms, f.Realm)
		}
		return
	}
	if m.Spec.Mode == ModeOrgs {
		if n > 0 {
			m.Realms = append(m.Realms, m.Spec.SharedRealm())
		}
		return
	}
	for i := 1; i <= n; i++ {
		m.Realms = append(m.Realms, m.Spec.RealmOf(i))
	}
}

// ErrNoManifest means there is no manifest file.
var ErrNoManifest = errors.New("no dataset manifest")

// ReadManifest reads a manifest file.
func ReadManifest(path string) (*Manifest, error) {
	b, err := fileutil.ReadFile(path, fileutil.MaxConfigFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s (seed first: kcbench seed)", ErrNoManifest, path)
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if m.Schema != manifestSchema {
		return nil, fmt.Errorf("manifest %s: schema %d, this kcbench reads %d", path, m.Schema, manifestSchema)
	}
	if err := m.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if m.Fingerprint != m.Spec.Fingerprint() {
		return nil, fmt.Errorf("manifest %s: fingerprint %s does not match its spec", path, m.Fingerprint)
	}
	return &m, nil
}

// Write saves the manifest atomically with mode 0600.
func (m *Manifest) Write(path string) error {
	m.Updated = time.Now().UTC()
	return fileutil.WriteJSON(path, m, 0o600)
}

// Tenant is what the load stage needs to act as one tenant's users and
// clients.
type Tenant struct {
	Index int
	ID    string // t00001
	Realm string
	// Org is the organization alias in orgs mode, "" in realms mode.
	Org string
	// WebClient is the public client (standard flow, PKCE S256).
	WebClient string
	// Backend is the first confidential client (password grant, client
	// credentials, introspection).
	Backend       string
	BackendSecret string
	Users         int

	backendHasGrants bool
}

// Tenant returns tenant i (1-based).
func (m *Manifest) Tenant(i int) Tenant {
	if m.Files != nil {
		return m.fileTenant(i)
	}
	s := m.Spec
	t := Tenant{Index: i, ID: TenantID(i), Realm: s.RealmOf(i), WebClient: s.WebClient(i), Backend: s.BackendClient(i, 1), Users: s.Content.Users}
	t.BackendSecret = s.ClientSecret(i, t.Backend)
	if s.Mode == ModeOrgs {
		t.Org = TenantID(i)
	}
	return t
}

// Username is user j (1-based) of tenant i.
func (m *Manifest) Username(i, j int) string {
	if m.Files != nil {
		return m.Files[i-1].Users[j-1]
	}
	return m.Spec.Username(i, j)
}

// fileTenant picks, in a realm file, the first public standard-flow client
// as the web client and the first confidential client with direct grants
// (else any confidential one) as the backend.
func (m *Manifest) fileTenant(i int) Tenant {
	f := m.Files[i-1]
	t := Tenant{Index: i, ID: f.Realm, Realm: f.Realm, Users: len(f.Users)}
	for _, c := range f.Clients {
		switch {
		case c.Public && c.StandardFlow && t.WebClient == "":
			t.WebClient = c.ClientID
		case !c.Public && c.DirectGrants && (t.Backend == "" || !t.backendHasGrants):
			t.Backend, t.BackendSecret, t.backendHasGrants = c.ClientID, c.Secret, true
		case !c.Public && t.Backend == "":
			t.Backend, t.BackendSecret = c.ClientID, c.Secret
		}
	}
	return t
}

// Tenants is the number of complete tenants.
func (m *Manifest) Tenants() int { return m.Spec.Tenants }
