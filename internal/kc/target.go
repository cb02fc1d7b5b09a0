package kc

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Secret is a string that never prints itself: fmt, %v, %s, slog and JSON all
// see "[redacted]". Call Reveal where the value is really needed.
type Secret string

// Reveal returns the secret value.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString implements fmt.GoStringer so %#v hides it too.
func (s Secret) GoString() string { return s.String() }

// MarshalText implements encoding.TextMarshaler (JSON, YAML).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Credentials authenticate against the master realm's admin API. With a
// ClientID and ClientSecret the client-credentials grant is used (a
// long-lived bootstrap admin client); otherwise the password grant on the
// public admin-cli client with Username and Password.
type Credentials struct {
	Username     string `json:"username,omitempty"`
	Password     Secret `json:"-"`
	ClientID     string `json:"client_id,omitempty"`
	ClientSecret Secret `json:"-"`
}

// Target is the Keycloak under test as every later stage sees it.
type Target struct {
	// BaseURL is the public HTTP URL, e.g. http://127.0.0.1:8080.
	BaseURL string `json:"base_url"`
	// ManagementURL serves /health and /metrics, e.g. http://127.0.0.1:9000.
	// Empty when unknown (an external Keycloak whose management port is
	// not reachable).
	ManagementURL string `json:"management_url,omitempty"`
	// MoreManagementURLs are the management URLs of the external
	// Keycloak's other pods: its server CPU is summed over ManagementURL
	// and these (health and the live view read ManagementURL only).
	MoreManagementURLs []string `json:"more_management_urls,omitempty"`
	// Admin authenticates admin REST calls.
	Admin Credentials `json:"admin"`
	// PID is the Keycloak JVM's pid when kcbench started it on this
	// machine, 0 otherwise. Observers read /proc/PID for CPU and RSS.
	PID int `json:"pid,omitempty"`
	// PIDs are the JVM pids of every node of a local cluster, PID first;
	// empty for a single node (then PID is the only one). Server cost is
	// the sum over them.
	PIDs []int `json:"pids,omitempty"`
	// DB is a postgres:// URL of Keycloak's database when kcbench knows
	// it (a local stack), for the database's cost per operation; never
	// written out. DBPID is its postmaster's pid when it runs on this
	// machine (0 otherwise).
	DB    Secret `json:"-"`
	DBPID int    `json:"db_pid,omitempty"`
	// DBKind is "mariadb" when Keycloak's database is MariaDB ("" for
	// PostgreSQL): DB is then empty (PostgreSQL's statistics and the
	// clone strategy do not apply) and DBPID is mariadbd's.
	DBKind string `json:"db_kind,omitempty"`
	// LDAP is the directory holding the dataset's users (--ldap), nil
	// when they live in Keycloak's database.
	LDAP *Directory `json:"ldap,omitempty"`
	// CAFile is a PEM file of the CA certificates that sign the target's
	// TLS certificate (a local stack's own CA; --ca-file); empty: the
	// system's roots.
	CAFile string `json:"ca_file,omitempty"`
	// InsecureSkipVerify trusts any certificate (--insecure-skip-verify).
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
}

// Directory is an LDAP directory whose users a realm reads through
// Keycloak's LDAP user-storage provider.
type Directory struct {
	// URL is ldap://HOST:PORT, as Keycloak reaches it.
	URL string `json:"url"`
	// BindDN and Password are what Keycloak (and the seeder) bind as.
	BindDN   string `json:"bind_dn"`
	Password Secret `json:"-"`
	// BaseDN is where the dataset's users go (one OU per tenant below it).
	BaseDN string `json:"base_dn"`
	// Import is the provider's importEnabled; CachePolicy its cachePolicy
	// ("" for Keycloak's DEFAULT).
	Import      bool   `json:"import"`
	CachePolicy string `json:"cache_policy,omitempty"`
	// PID is the directory server's pid when it runs on this machine
	// under kcbench (0 otherwise), for its CPU.
	PID int `json:"pid,omitempty"`
}

// Local reports whether the server runs on this machine under kcbench.
func (t Target) Local() bool { return t.PID > 0 }

// ServerPIDs lists the local Keycloak JVMs: every node of a cluster, or
// the one PID; nil for a remote target.
func (t Target) ServerPIDs() []int {
	if len(t.PIDs) > 0 {
		return t.PIDs
	}
	if t.PID > 0 {
		return []int{t.PID}
	}
	return nil
}

// ManagementURLs are ManagementURL and MoreManagementURLs: every pod's
// management interface given.
func (t Target) ManagementURLs() []string {
	if t.ManagementURL == "" {
		return nil
	}
	return append([]string{t.ManagementURL}, t.MoreManagementURLs...)
}

// Validate checks the URLs and that some admin credentials are present.
func (t Target) Validate() error {
	var errs []error
	if err := checkHTTPURL("base URL", t.BaseURL); err != nil {
		errs = append(errs, err)
	}
	for _, u := range t.ManagementURLs() {
		if err := checkHTTPURL("management URL", u); err != nil {
			errs = append(errs, err)
		}
	}
	if t.CAFile != "" {
		if _, err := LoadCAFile(t.CAFile); err != nil {
			errs = append(errs, err)
		}
	}
	a := t.Admin
	if a.ClientID == "" && a.Username == "" {
		errs = append(errs, errors.New("admin credentials: need a username (and password) or a client id (and secret)"))
	}
	if a.Username != "" && a.ClientID == "" && a.Password == "" {
		errs = append(errs, errors.New("admin credentials: the password is empty"))
	}
	if a.ClientID != "" && a.ClientSecret == "" {
		errs = append(errs, errors.New("admin credentials: the client secret is empty"))
	}
	return errors.Join(errs...)
}

func checkHTTPURL(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%s %q: scheme must be http or https", what, raw)
	}
	if u.Host == "" {
		return fmt.Errorf("%s %q: no host", what, raw)
	}
	return nil
}

// trimURL drops trailing slashes so paths can be appended.
func trimURL(s string) string { return strings.TrimRight(s, "/") }
