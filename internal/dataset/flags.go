package dataset

import (
	"errors"
	"flag"
	"fmt"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// SpecFlags describe a dataset on the command line.
type SpecFlags struct {
	mode, Preset, policy, prefix  string
	Tenants                       int
	users, clients, roles, groups int
	clientRoles, otpUsers         int
	umaResources                  int
	brokerUsers, samlClients      int
	shape                         Shape
	Seed                          int64
	uniqueSalts                   bool
	fs                            *flag.FlagSet // the flags were registered on; nil: a value that is not unset was given
}

// RegisterFlags adds the dataset flags.
func (f *SpecFlags) RegisterFlags(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.mode, "mode", "realms", "tenant mode: realms (a realm per tenant) or orgs (organizations in one realm)")
	fs.IntVar(&f.Tenants, "tenants", 0, "number of tenants (default 1, or the preset's)")
	fs.StringVar(&f.Preset, "preset", "", "dataset preset: small (1 realm, 100 users, 10 clients), baseline (5 realms, 5,000 users, 500 clients), large (10 realms, 100,000 users, 10,000 clients)")
	fs.IntVar(&f.users, "users", 0, "users per tenant (default 10, or the preset's)")
	fs.IntVar(&f.clients, "clients", 0, "clients per tenant, >= 2: one public web client, the rest confidential backends (default 2)")
	fs.IntVar(&f.roles, "roles", 0, "realm roles per tenant (default 5)")
	fs.IntVar(&f.groups, "groups", 0, "groups per tenant (default 2)")
	fs.IntVar(&f.clientRoles, "client-roles", 0, "roles per client (default 2; 0 when given: none)")
	fs.IntVar(&f.otpUsers, "otp-users", 0, "users per tenant with a TOTP credential besides --users, for the otp-login workload (default 0)")
	fs.IntVar(&f.umaResources, "uma-resources", 0, "resources per tenant in a resource server with authorization services, for the uma workload (default 0: none)")
	fs.IntVar(&f.brokerUsers, "broker-users", 0, "users of an identity-provider realm (<prefix>-idp) that every tenant realm brokers as identity provider idp (orgs mode: per tenant, brokered by each organization as its own, chosen by email domain), for the broker-login workload (default 0: none)")
	fs.IntVar(&f.samlClients, "saml-clients", 0, "SAML clients per tenant (saml-1, saml-2, …), for the saml-login workload (default 0: none)")
	fs.IntVar(&f.shape.RolesPerUser, "roles-per-user", 0, "realm roles each user holds (default 1), at most --roles")
	fs.IntVar(&f.shape.ClientRolesPerUser, "client-roles-per-user", 0, "roles of the tenant's first backend client each user holds (default 0), at most --client-roles")
	fs.IntVar(&f.shape.GroupsPerUser, "groups-per-user", 0, "groups each user is in (default 1), at most --groups; the backend clients then put the groups in tokens")
	fs.IntVar(&f.shape.CompositeDepth, "composite-depth", 0, "make every realm role composite, this many levels deep (with --composite-width; default 0: flat roles)")
	fs.IntVar(&f.shape.CompositeWidth, "composite-width", 0, "roles each composite role is made of, at each level (with --composite-depth)")
	fs.IntVar(&f.shape.GroupDepth, "group-depth", 0, "make every group the root of a tree of subgroups, this many levels deep (with --group-fanout; users in its leaves; default 0: flat groups)")
	fs.IntVar(&f.shape.GroupFanout, "group-fanout", 0, "subgroups of each group of a tree (with --group-depth)")
	fs.IntVar(&f.shape.ScopesPerClient, "scopes-per-client", 0, "client scopes of each tenant (kcb-scope-1 …, a hard-coded claim each) that are default scopes of every backend client (default 0)")
	fs.IntVar(&f.shape.MappersPerClient, "mappers-per-client", 0, "hard-coded claim mappers on each backend client (claims kcb_1, kcb_2, …; default 0)")
	fs.StringVar(&f.policy, "password-policy", "default", "password hashing: default (argon2), argon2, pbkdf2-sha512:27500, pbkdf2-sha256:1, …")
	fs.StringVar(&f.prefix, "prefix", "kcb", "prefix of every realm the dataset creates")
	fs.Int64Var(&f.Seed, "secrets-seed", 1, "seed deriving passwords and client secrets")
	cliutil.Renamed(fs, "seed", "secrets-seed")
	fs.BoolVar(&f.uniqueSalts, "unique-salts", false, "give every user its own password salt and hash, computed by kcbench in parallel (default: one salt and hash shared by all users, computed once; a login costs the same either way, see README)")
}

// Bounds of the dataset flags (Content.Validate checks the
// totals too).
const (
	maxSeedUsers   = 10_000_000
	maxSeedClients = 1_000_000
	maxSeedCount   = 100_000
	MaxConcurrency = 1_000
)

// Spec is the dataset the flags describe; its problems are usage errors.
func (f *SpecFlags) Spec() (Spec, error) {
	var errs []error
	mode, err := ParseMode(f.mode)
	if err != nil {
		errs = append(errs, err)
	}
	pol, err := ParsePolicy(f.policy)
	if err != nil {
		errs = append(errs, err)
	}
	s := Spec{Mode: mode, Tenants: 1, Content: DefaultContent, Policy: pol, Prefix: f.prefix, Seed: f.Seed, UniqueSalts: f.uniqueSalts}
	if f.Preset != "" {
		p, err := LookupPreset(f.Preset)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.Tenants, s.Content = p.Tenants, p.Content
		}
	}
	set := func(dst *int, name string, v, unset int) {
		if f.given(name, v, unset) {
			*dst = v
		}
	}
	set(&s.Tenants, "tenants", f.Tenants, 0)
	set(&s.Content.Users, "users", f.users, 0)
	set(&s.Content.Clients, "clients", f.clients, 0)
	set(&s.Content.RealmRoles, "roles", f.roles, 0)
	set(&s.Content.Groups, "groups", f.groups, 0)
	set(&s.Content.ClientRolesPerClient, "client-roles", f.clientRoles, 0)
	set(&s.Content.OTPUsers, "otp-users", f.otpUsers, 0)
	set(&s.Content.UMAResources, "uma-resources", f.umaResources, 0)
	set(&s.Content.BrokerUsers, "broker-users", f.brokerUsers, 0)
	set(&s.Content.SAMLClients, "saml-clients", f.samlClients, 0)
	set(&s.Content.RolesPerUser, "roles-per-user", f.shape.RolesPerUser, 0)
	set(&s.Content.ClientRolesPerUser, "client-roles-per-user", f.shape.ClientRolesPerUser, 0)
	set(&s.Content.GroupsPerUser, "groups-per-user", f.shape.GroupsPerUser, 0)
	set(&s.Content.CompositeDepth, "composite-depth", f.shape.CompositeDepth, 0)
	set(&s.Content.CompositeWidth, "composite-width", f.shape.CompositeWidth, 0)
	set(&s.Content.MappersPerClient, "mappers-per-client", f.shape.MappersPerClient, 0)
	set(&s.Content.GroupDepth, "group-depth", f.shape.GroupDepth, 0)
	set(&s.Content.ScopesPerClient, "scopes-per-client", f.shape.ScopesPerClient, 0)
	set(&s.Content.GroupFanout, "group-fanout", f.shape.GroupFanout, 0)
	for _, c := range []struct {
		flag     string
		v, unset int
		lo, hi   int
	}{
		{"tenants", f.Tenants, 0, 1, MaxTenants},
		{"users", f.users, 0, 1, maxSeedUsers},
		{"clients", f.clients, 0, 2, maxSeedClients},
		{"roles", f.roles, 0, 1, maxSeedCount},
		{"groups", f.groups, 0, 1, maxSeedCount},
		{"client-roles", f.clientRoles, 0, 0, maxSeedCount},
		{"otp-users", f.otpUsers, 0, 0, maxSeedUsers},
		{"uma-resources", f.umaResources, 0, 0, maxUMAResources},
		{"broker-users", f.brokerUsers, 0, 0, maxBrokerUsers},
		{"saml-clients", f.samlClients, 0, 0, maxSAMLClients},
		{"roles-per-user", f.shape.RolesPerUser, 0, 1, maxSeedCount},
		{"client-roles-per-user", f.shape.ClientRolesPerUser, 0, 0, maxSeedCount},
		{"groups-per-user", f.shape.GroupsPerUser, 0, 1, maxSeedCount},
		{"composite-depth", f.shape.CompositeDepth, 0, 0, 10},
		{"composite-width", f.shape.CompositeWidth, 0, 0, 1000},
		{"mappers-per-client", f.shape.MappersPerClient, 0, 0, 1000},
		{"group-depth", f.shape.GroupDepth, 0, 0, 10},
		{"scopes-per-client", f.shape.ScopesPerClient, 0, 0, maxScopesPerClient},
		{"group-fanout", f.shape.GroupFanout, 0, 0, 1000},
	} {
		if f.given(c.flag, c.v, c.unset) && (c.v < c.lo || c.v > c.hi) {
			errs = append(errs, fmt.Errorf("--%s: %d: must be between %d and %d", c.flag, c.v, c.lo, c.hi))
		}
	}
	if len(errs) == 0 {
		if err := s.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return s, cliutil.Usage(err)
	}
	return s, nil
}

// given tells whether flag name was given: on the command line when the
// flags were registered (so --tenants 0 is refused, not taken for "the
// default"), else whether v differs from unset.
func (f *SpecFlags) given(name string, v, unset int) bool {
	if f.fs == nil {
		return v != unset
	}
	found := false
	f.fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

// SpecFlagNames are the names of the dataset flags.
func SpecFlagNames() map[string]bool {
	names := map[string]bool{}
	probe := flag.NewFlagSet("", flag.ContinueOnError)
	(&SpecFlags{}).RegisterFlags(probe)
	probe.VisitAll(func(fl *flag.Flag) { names[fl.Name] = true })
	return names
}

// ExportSpec is the dataset kcbench dataset export writes: manifest's
// (--manifest), else the flags' if any was set, else the manifest
// localManifest gives (the local stack's; "" when none).
func (f *SpecFlags) ExportSpec(manifest string, localManifest func() string) (Spec, error) {
	if manifest == "" && !f.given("tenants", f.Tenants, 0) && f.Preset == "" {
		manifest = localManifest()
	}
	if manifest != "" {
		m, err := ReadManifest(manifest)
		if err != nil {
			return Spec{}, err
		}
		return m.Spec, nil
	}
	return f.Spec()
}
