package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/kc"
)

// Mode is how tenants map onto Keycloak.
type Mode string

// Modes.
const (
	// ModeRealms gives each tenant its own realm.
	ModeRealms Mode = "realms"
	// ModeOrgs puts all tenants in one shared realm with organizations
	// enabled; each tenant is an organization whose users are members,
	// and its clients, roles and groups carry the tenant's prefix.
	ModeOrgs Mode = "orgs"
)

// ParseMode accepts "realms" and "orgs".
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case ModeRealms, ModeOrgs:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode %q: want realms or orgs", s)
}

// Content is what each tenant holds.
type Content struct {
	// Clients per tenant: the first is the public "web" client (standard
	// flow, PKCE S256); the others are confidential "backend" clients
	// (service account, direct access grants).
	Clients              int `json:"clients"`
	RealmRoles           int `json:"realm_roles"`
	ClientRolesPerClient int `json:"client_roles_per_client"`
	Groups               int `json:"groups"`
	Users                int `json:"users"`
	// OTPUsers are users beside Users, each with the dataset password and
	// a TOTP credential (Spec.OTPSecret): the otp-login workload's. Other
	// workloads never pick them, since Keycloak asks them for a code.
	OTPUsers int `json:"otp_users,omitempty"`
	// UMAResources, when not 0, gives each tenant a resource server (a
	// confidential client, Spec.UMAClient) with authorization services:
	// that many resources (UMAResource) with the scope UMAScope, a role
	// policy every user passes (the realm's default roles) and a scope
	// permission per resource. The uma workload's.
	UMAResources int `json:"uma_resources,omitempty"`
	// BrokerUsers, when not 0, gives the dataset an identity-provider
	// realm (Spec.IdPRealm) of that many users, which every tenant realm
	// brokers (IdPAlias): the broker-login workload's. Realms mode.
	BrokerUsers int `json:"broker_users,omitempty"`
	// SAMLClients are SAML clients per tenant (Spec.SAMLClient): the
	// saml-login workload's service providers, answering by the POST
	// binding with signed documents and assertions (the realm's keys),
	// the username as name id, unsigned requests accepted.
	SAMLClients int `json:"saml_clients,omitempty"`
	// Shape: how much each user, role and client carries (0: the default
	// shape, one realm role and one group a user, flat roles, no mappers).
	Shape
}

// Shape is what makes a token heavier to issue: roles, groups, composite
// roles and protocol mappers (seed --roles-per-user and the others; the
// yaml keys are experiment files').
type Shape struct {
	// RolesPerUser are the realm roles each user holds (0: 1), at most
	// RealmRoles.
	RolesPerUser int `json:"roles_per_user,omitempty" yaml:"roles_per_user"`
	// ClientRolesPerUser are the roles of the tenant's first backend
	// client each user holds, at most ClientRolesPerClient.
	ClientRolesPerUser int `json:"client_roles_per_user,omitempty" yaml:"client_roles_per_user"`
	// GroupsPerUser are the groups each user is in (0: 1), at most
	// Groups; with it the backend clients map the groups into tokens.
	GroupsPerUser int `json:"groups_per_user,omitempty" yaml:"groups_per_user"`
	// CompositeDepth and CompositeWidth make every realm role composite:
	// CompositeWidth roles of its own, each composite the same way, this
	// many levels deep (RealmRoles × (W + W² + … + W^D) roles more).
	CompositeDepth int `json:"composite_depth,omitempty" yaml:"composite_depth"`
	CompositeWidth int `json:"composite_width,omitempty" yaml:"composite_width"`
	// MappersPerClient are hard-coded claim mappers on each backend
	// client (claims kcb_1, kcb_2, … in its tokens).
	MappersPerClient int `json:"mappers_per_client,omitempty" yaml:"mappers_per_client"`
	// GroupDepth and GroupFanout make every group the root of a tree:
	// GroupFanout subgroups each, this many levels deep (Groups × (1 + F +
	// … + F^D) groups). A user is then a member of a leaf of each of its
	// groups' trees, and the backend clients' groups claim carries full
	// paths.
	GroupDepth  int `json:"group_depth,omitempty" yaml:"group_depth"`
	GroupFanout int `json:"group_fanout,omitempty" yaml:"group_fanout"`
	// ScopesPerClient are client scopes of the tenant (ClientScope), each
	// with a hard-coded claim mapper (kcb_scope_1 …), that are default
	// scopes of every backend client: each token evaluates them all.
	ScopesPerClient int `json:"scopes_per_client,omitempty" yaml:"scopes_per_client"`
}

// Any reports whether the shape differs from the default one.
func (h Shape) Any() bool { return h != Shape{} }

// String is the shape in the fingerprint's words ("" for the default).
func (h Shape) String() string {
	if !h.Any() {
		return ""
	}
	s := fmt.Sprintf("roles-per-user=%d,client-roles-per-user=%d,groups-per-user=%d,composite=%dx%d,mappers-per-client=%d",
		h.RolesPerUser, h.ClientRolesPerUser, h.GroupsPerUser, h.CompositeDepth, h.CompositeWidth, h.MappersPerClient)
	if h.GroupDepth > 0 { // absent before group trees: fingerprints stay
		s += fmt.Sprintf(",group-tree=%dx%d", h.GroupDepth, h.GroupFanout)
	}
	if h.ScopesPerClient > 0 {
		s += fmt.Sprintf(",scopes-per-client=%d", h.ScopesPerClient)
	}
	return s
}

// subgroupsPerGroup is how many groups a group's tree adds below it
// (F + F² + … + F^D), as a float (see compositesPerRole).
func (h Shape) subgroupsPerGroup() float64 { return geometric(h.GroupFanout, h.GroupDepth) }

// groupLeaves is how many leaves a group's tree has (1: no tree).
func (h Shape) groupLeaves() int {
	n := 1
	for range h.GroupDepth {
		n *= h.GroupFanout
	}
	return n
}

// geometric is w + w² + … + w^d.
func geometric(w, d int) float64 {
	n, level := 0.0, 1.0
	for range d {
		level *= float64(w)
		n += level
	}
	return n
}

// compositesPerRole is how many roles a realm role's composites add
// (W + W² + … + W^D), as a float: validate bounds it before anything
// counts it as an int (1000 wide and 10 deep would overflow one).
func (h Shape) compositesPerRole() float64 { return geometric(h.CompositeWidth, h.CompositeDepth) }

// MaxShapeRoles bounds the realm roles a tenant's composites make, and
// MaxShapeGroups the groups its group trees make.
const (
	MaxShapeRoles  = 100_000
	MaxShapeGroups = 100_000
)

// validate checks the shape against the content's counts.
func (h Shape) validate(c Content) []error {
	var errs []error
	for _, k := range []struct {
		name   string
		v, max int
		of     string
	}{
		{"roles per user", h.RolesPerUser, c.RealmRoles, "realm roles"},
		{"client roles per user", h.ClientRolesPerUser, c.ClientRolesPerClient, "client roles per client"},
		{"groups per user", h.GroupsPerUser, c.Groups, "groups"},
	} {
		if k.v < 0 || k.v > k.max {
			errs = append(errs, fmt.Errorf("%s = %d: must be between 0 and the %s (%d)", k.name, k.v, k.of, k.max))
		}
	}
	if h.CompositeDepth < 0 || h.CompositeWidth < 0 || h.MappersPerClient < 0 || h.MappersPerClient > 1000 {
		errs = append(errs, fmt.Errorf("composite depth %d, width %d, mappers per client %d: must be >= 0 (mappers at most 1000)", h.CompositeDepth, h.CompositeWidth, h.MappersPerClient))
	} else if (h.CompositeDepth > 0) != (h.CompositeWidth > 0) {
		errs = append(errs, fmt.Errorf("composite depth %d and width %d: set both or neither", h.CompositeDepth, h.CompositeWidth))
	} else if extra := float64(c.RealmRoles) * h.compositesPerRole(); extra > MaxShapeRoles {
		errs = append(errs, fmt.Errorf("composite roles %d deep, %d wide: %.3g realm roles a tenant (at most %d; about 1 KB of database each)",
			h.CompositeDepth, h.CompositeWidth, float64(c.RealmRoles)+extra, MaxShapeRoles))
	}
	if h.ScopesPerClient < 0 || h.ScopesPerClient > maxScopesPerClient {
		errs = append(errs, fmt.Errorf("client scopes per client = %d: must be between 0 and %d", h.ScopesPerClient, maxScopesPerClient))
	}
	if h.GroupDepth < 0 || h.GroupFanout < 0 {
		errs = append(errs, fmt.Errorf("group depth %d, fan-out %d: must be >= 0", h.GroupDepth, h.GroupFanout))
	} else if (h.GroupDepth > 0) != (h.GroupFanout > 0) {
		errs = append(errs, fmt.Errorf("group depth %d and fan-out %d: set both or neither", h.GroupDepth, h.GroupFanout))
	} else if n := float64(c.Groups) * (1 + h.subgroupsPerGroup()); n > MaxShapeGroups {
		errs = append(errs, fmt.Errorf("group trees %d deep, %d wide: %.3g groups a tenant (at most %d)", h.GroupDepth, h.GroupFanout, n, MaxShapeGroups))
	}
	return errs
}

// DefaultContent is a tenant's content unless told otherwise.
var DefaultContent = Content{Clients: 2, RealmRoles: 5, ClientRolesPerClient: 2, Groups: 2, Users: 10}

// Validate checks the counts.
func (c Content) Validate() error {
	var errs []error
	if c.Clients < 2 {
		errs = append(errs, fmt.Errorf("clients per tenant = %d: need at least 2 (web and backend)", c.Clients))
	}
	if c.RealmRoles < 1 {
		errs = append(errs, fmt.Errorf("realm roles per tenant = %d: need at least 1", c.RealmRoles))
	}
	if c.ClientRolesPerClient < 0 {
		errs = append(errs, fmt.Errorf("client roles per client = %d: must be >= 0", c.ClientRolesPerClient))
	}
	if c.Groups < 1 {
		errs = append(errs, fmt.Errorf("groups per tenant = %d: need at least 1", c.Groups))
	}
	if c.Users < 1 {
		errs = append(errs, fmt.Errorf("users per tenant = %d: need at least 1", c.Users))
	}
	if c.OTPUsers < 0 {
		errs = append(errs, fmt.Errorf("OTP users per tenant = %d: must be >= 0", c.OTPUsers))
	}
	if c.UMAResources < 0 {
		errs = append(errs, fmt.Errorf("UMA resources per tenant = %d: must be >= 0", c.UMAResources))
	}
	if c.SAMLClients < 0 || c.SAMLClients > maxSAMLClients {
		errs = append(errs, fmt.Errorf("SAML clients per tenant = %d: must be between 0 and %d", c.SAMLClients, maxSAMLClients))
	}
	if c.BrokerUsers < 0 || c.BrokerUsers > maxBrokerUsers {
		errs = append(errs, fmt.Errorf("identity-provider users = %d: must be between 0 and %d", c.BrokerUsers, maxBrokerUsers))
	}
	errs = append(errs, c.Shape.validate(c)...)
	const maxUsers = 10_000_000
	if c.Users > maxUsers || c.OTPUsers > maxUsers || c.Clients > 1_000_000 || c.UMAResources > maxUMAResources {
		errs = append(errs, errors.New("content too large"))
	}
	return errors.Join(errs...)
}

// Preset is a named dataset shape for sizing runs.
type Preset struct {
	Name    string
	Tenants int
	Content Content
}

// Presets, by name. small: 1 realm, 100 users, 10 clients; baseline: 5
// realms, 5,000 users, 500 clients; large: 10 realms, 100,000 users, 10,000
// clients.
func Presets() []Preset {
	with := func(users, clients int) Content {
		c := DefaultContent
		c.Users, c.Clients = users, clients
		return c
	}
	return []Preset{
		{"small", 1, with(100, 10)},
		{"baseline", 5, with(1000, 100)},
		{"large", 10, with(10000, 1000)},
	}
}

// LookupPreset finds a preset by name.
func LookupPreset(name string) (Preset, error) {
	var names []string
	for _, p := range Presets() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("preset %q: unknown (known: %s)", name, strings.Join(names, ", "))
}

// Spec says what a dataset is. Two seeds with the same Spec (Tenants
// aside) produce the same dataset; Tenants may grow.
type Spec struct {
	Mode    Mode    `json:"mode"`
	Tenants int     `json:"tenants"`
	Content Content `json:"content"`
	// Policy is the realms' password policy.
	Policy Policy `json:"password_policy"`
	// Prefix starts every realm name (default "kcb").
	Prefix string `json:"prefix"`
	// Seed derives passwords and client secrets.
	Seed int64 `json:"seed"`
	// UniqueSalts gives every user its own salt and hash (kcbench hashes
	// the password once per user, in parallel); without it, where kcbench
	// hashes (the fast and clone strategies with a policy it can hash),
	// every user carries the same salt and hash, computed once. See
	// Spec.Salts.
	UniqueSalts bool `json:"unique_salts,omitempty"`
}

// Salts says whether users share a password salt: "per-user" or
// "shared" (one salt and hash, computed once, for every user of the
// dataset). The rest strategy and policies kcbench cannot hash send
// plain passwords, which Keycloak salts per user: see SeedEvent.Salts.
func (s Spec) Salts() string {
	if s.UniqueSalts || !s.Policy.CanPrehash() {
		return SaltsPerUser
	}
	return SaltsShared
}

// What Spec.Salts and Manifest.Salts say.
const (
	SaltsShared  = "shared"
	SaltsPerUser = "per-user"
	SaltsMixed   = "mixed"
)

// MaxTenants bounds a dataset (tenant ids have five digits).
const MaxTenants = 99_999

// Validate checks a spec.
func (s Spec) Validate() error {
	var errs []error
	if _, err := ParseMode(string(s.Mode)); err != nil {
		errs = append(errs, err)
	}
	if s.Tenants < 1 || s.Tenants > MaxTenants {
		errs = append(errs, fmt.Errorf("tenants = %d: must be between 1 and %d", s.Tenants, MaxTenants))
	}
	if err := s.Content.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := s.Policy.Validate(); err != nil {
		errs = append(errs, err)
	}
	if n := s.Tenants * s.Content.BrokerUsers; s.Mode == ModeOrgs && n > maxOrgBrokerUsers {
		errs = append(errs, fmt.Errorf("identity-provider users: %d a tenant × %d tenants = %d (orgs mode gives each tenant its own): at most %d", s.Content.BrokerUsers, s.Tenants, n, maxOrgBrokerUsers))
	}
	if s.Prefix == "" || strings.ContainsAny(s.Prefix, " /\\?#%") {
		errs = append(errs, fmt.Errorf("prefix %q: must be non-empty, without spaces or URL characters", s.Prefix))
	}
	return errors.Join(errs...)
}

// SameDataset reports whether two specs describe the same dataset (they may
// differ in tenant count only).
func (s Spec) SameDataset(o Spec) bool {
	return s.Mode == o.Mode && s.Content == o.Content && s.Policy == o.Policy && s.Prefix == o.Prefix && s.Seed == o.Seed &&
		s.UniqueSalts == o.UniqueSalts
}

// Fingerprint identifies the dataset (not its size); it is stored on the
// realms kcbench creates.
func (s Spec) Fingerprint() string {
	c := s.Content
	// The content as it printed before OTP users: fingerprints stay.
	old := struct{ Clients, RealmRoles, ClientRolesPerClient, Groups, Users int }{c.Clients, c.RealmRoles, c.ClientRolesPerClient, c.Groups, c.Users}
	f := fmt.Sprintf("%s|%+v|%s|%s|%d", s.Mode, old, s.Policy, s.Prefix, s.Seed)
	if s.UniqueSalts { // absent before unique salts: fingerprints stay
		f += "|unique-salts"
	}
	if c.OTPUsers > 0 {
		f += fmt.Sprintf("|otp-users=%d", c.OTPUsers)
	}
	if c.UMAResources > 0 {
		f += fmt.Sprintf("|uma-resources=%d", c.UMAResources)
	}
	if c.Shape.Any() {
		f += "|shape=" + c.Shape.String()
	}
	if c.BrokerUsers > 0 {
		f += fmt.Sprintf("|broker-users=%d", c.BrokerUsers)
	}
	if c.SAMLClients > 0 {
		f += fmt.Sprintf("|saml-clients=%d", c.SAMLClients)
	}
	h := sha256.Sum256([]byte(f))
	return hex.EncodeToString(h[:8])
}

// Naming. Tenant numbers are 1-based.

// TenantID is the tenant's short name, e.g. "t00042".
func TenantID(i int) string { return fmt.Sprintf("t%05d", i) }

// RealmOf is the realm holding tenant i.
func (s Spec) RealmOf(i int) string {
	if s.Mode == ModeOrgs {
		return s.SharedRealm()
	}
	return s.Prefix + "-" + TenantID(i)
}

// SharedRealm is the orgs-mode realm.
func (s Spec) SharedRealm() string { return s.Prefix + "-orgs" }

// name prefixes an entity name with the tenant in orgs mode.
func (s Spec) name(i int, n string) string {
	if s.Mode == ModeOrgs {
		return TenantID(i) + "-" + n
	}
	return n
}

// WebClient is tenant i's public client.
func (s Spec) WebClient(i int) string { return s.name(i, "web") }

// BackendClient is tenant i's k-th confidential client (k from 1).
func (s Spec) BackendClient(i, k int) string {
	if k <= 1 {
		return s.name(i, "backend")
	}
	return s.name(i, fmt.Sprintf("backend-%d", k))
}

// SAMLClient is tenant i's SAML client k (1-based), its client id and
// the service provider's entity id.
func (s Spec) SAMLClient(i, k int) string { return s.name(i, fmt.Sprintf("saml-%d", k)) }

// maxOrgBrokerUsers bounds the identity-provider realm of an orgs-mode
// dataset (Content.BrokerUsers a tenant).
const maxOrgBrokerUsers = 1_000_000

// ClientScope is tenant i's k-th client scope (Shape.ScopesPerClient).
func (s Spec) ClientScope(i, k int) string { return s.name(i, fmt.Sprintf("kcb-scope-%d", k)) }

// maxScopesPerClient bounds Shape.ScopesPerClient.
const maxScopesPerClient = 100

// maxSAMLClients bounds Content.SAMLClients.
const maxSAMLClients = 1000

// UMAClient is tenant i's resource server (Content.UMAResources).
func (s Spec) UMAClient(i int) string { return s.name(i, "api") }

// UMAResource is the k-th resource of a tenant's resource server (k from
// 1), and UMAScope the scope each has.
func UMAResource(k int) string { return umaResourcePrefix + strconv.Itoa(k) }

const umaResourcePrefix = "doc-"

// UMAProtection is the client role Keycloak gives a resource server.
const UMAProtection = "uma_protection"

// UMAScope is the scope of every resource of a tenant's resource server.
const UMAScope = "read"

// maxUMAResources bounds Content.UMAResources: a resource server's
// settings go in one representation, imported in one transaction. On 2
// cores (26.7.3) 1,000 resources took 62 s to seed; 10,000 failed after
// 301 s ("Database operation failed": past Keycloak's 300-second
// transaction time-out). Bigger ones need making in parts.
const maxUMAResources = 2_000

// RealmRole is tenant i's k-th realm role (k from 1).
func (s Spec) RealmRole(i, k int) string { return s.name(i, fmt.Sprintf("role-%d", k)) }

// ClientRole is the k-th role of a client (k from 1).
func ClientRole(k int) string { return fmt.Sprintf("crole-%d", k) }

// Group is tenant i's k-th group (k from 1).
func (s Spec) Group(i, k int) string { return s.name(i, fmt.Sprintf("group-%d", k)) }

// Username is tenant i's j-th user (j from 1).
func (s Spec) Username(i, j int) string { return s.name(i, fmt.Sprintf("user-%05d", j)) }

// OTPUsername is tenant i's j-th user with a TOTP credential (j from 1).
func (s Spec) OTPUsername(i, j int) string { return s.name(i, fmt.Sprintf("otp-user-%05d", j)) }

// OTPEmail is OTP user j's address.
func (s Spec) OTPEmail(i, j int) string { return fmt.Sprintf("otp-user-%05d@%s", j, s.Domain(i)) }

// OTPSecret is the TOTP secret of every OTP user, as Keycloak keeps it
// (its bytes are the HMAC key; an authenticator app gets them in base32).
func (s Spec) OTPSecret() string { return derive(s.Seed, "otp-secret")[:20] }

// Domain is tenant i's email (and organization) domain.
func (s Spec) Domain(i int) string { return TenantID(i) + ".example.com" }

// Email is user j's address.
func (s Spec) Email(i, j int) string { return fmt.Sprintf("user-%05d@%s", j, s.Domain(i)) }

// UserGroup and UserRole pick a user's group and role, round robin.
func (s Spec) UserGroup(i, j int) string { return s.Group(i, (j-1)%s.Content.Groups+1) }

// UserRole is user j's realm role (its first, with Shape.RolesPerUser).
func (s Spec) UserRole(i, j int) string { return s.RealmRole(i, (j-1)%s.Content.RealmRoles+1) }

// UserRoles are user j's realm roles: UserRole and the next ones, as many
// as Shape.RolesPerUser.
func (s Spec) UserRoles(i, j int) []string {
	rs := []string{}
	for m := range max(1, s.Content.RolesPerUser) {
		rs = append(rs, s.RealmRole(i, (j-1+m)%s.Content.RealmRoles+1))
	}
	return rs
}

// UserGroupPaths are the paths of the groups user j is a member of: those
// of UserGroups, or with group trees (Shape.GroupDepth) the leaf
// (j−1) mod leaves of each of their trees.
func (s Spec) UserGroupPaths(i, j int) []string {
	var ps []string
	for _, p := range s.userGroupTrails(i, j) {
		ps = append(ps, "/"+strings.Join(p, "/"))
	}
	return ps
}

// UserGroupNames are the names of the groups user j is a member of (the
// last names of UserGroupPaths).
func (s Spec) UserGroupNames(i, j int) []string {
	var ns []string
	for _, p := range s.userGroupTrails(i, j) {
		ns = append(ns, p[len(p)-1])
	}
	return ns
}

// userGroupTrails are, for each of UserGroups, the names from it down to
// the group user j is a member of.
func (s Spec) userGroupTrails(i, j int) [][]string {
	var ts [][]string
	for _, g := range s.UserGroups(i, j) {
		ts = append(ts, s.leafPath(g, (j-1)%s.Content.groupLeaves()))
	}
	return ts
}

// leafPath is the names from group top down to its tree's leaf m
// (0-based): top, top.d1, top.d1.d2, … (just top without a tree).
func (s Spec) leafPath(top string, m int) []string {
	d, f := s.Content.GroupDepth, s.Content.GroupFanout
	digits := make([]int, d)
	for l := d - 1; l >= 0; l-- {
		digits[l], m = m%f, m/f
	}
	names := []string{top}
	for _, x := range digits {
		names = append(names, subgroup(names[len(names)-1], x+1))
	}
	return names
}

// subgroup names group parent's k-th subgroup (from 1).
func subgroup(parent string, k int) string { return parent + "." + strconv.Itoa(k) }

// GroupTree is tenant i's group k (from 1) with its tree of subgroups.
func (s Spec) GroupTree(i, k int) kc.GroupRep {
	n := s.Group(i, k)
	return s.groupTree(n, "/"+n, s.Content.GroupDepth)
}

func (s Spec) groupTree(name, path string, depth int) kc.GroupRep {
	g := kc.GroupRep{Name: name, Path: path}
	for k := 1; depth > 0 && k <= s.Content.GroupFanout; k++ {
		c := subgroup(name, k)
		g.SubGroups = append(g.SubGroups, s.groupTree(c, path+"/"+c, depth-1))
	}
	return g
}

// GroupNames are the names of all of tenant i's groups, trees included.
func (s Spec) GroupNames(i int) []string {
	var ns []string
	var walk func(g kc.GroupRep)
	walk = func(g kc.GroupRep) {
		ns = append(ns, g.Name)
		for _, c := range g.SubGroups {
			walk(c)
		}
	}
	for k := 1; k <= s.Content.Groups; k++ {
		walk(s.GroupTree(i, k))
	}
	return ns
}

// UserGroups are user j's groups: UserGroup and the next ones, as many as
// Shape.GroupsPerUser.
func (s Spec) UserGroups(i, j int) []string {
	gs := []string{}
	for m := range max(1, s.Content.GroupsPerUser) {
		gs = append(gs, s.Group(i, (j-1+m)%s.Content.Groups+1))
	}
	return gs
}

// CompositeRole is a realm role and the realm roles it is composed of.
type CompositeRole struct {
	Name       string
	Composites []string
}

// CompositeRoles are realm role k and its composite roles, every level,
// each with its own composites (Shape.CompositeDepth, CompositeWidth):
// role-1 of role-1-c1 … role-1-cW, role-1-c1 of role-1-c1-1 …; without
// composites just the role.
func (s Spec) CompositeRoles(i, k int) []CompositeRole {
	top := CompositeRole{Name: s.RealmRole(i, k)}
	var out []CompositeRole
	var walk func(name, sep string, depth int) []string
	walk = func(name, sep string, depth int) []string {
		if depth > s.Content.CompositeDepth {
			return nil
		}
		kids := make([]string, s.Content.CompositeWidth)
		for w := range kids {
			kids[w] = fmt.Sprintf("%s%s%d", name, sep, w+1)
		}
		for _, kid := range kids {
			out = append(out, CompositeRole{Name: kid, Composites: walk(kid, "-", depth+1)})
		}
		return kids
	}
	top.Composites = walk(top.Name, "-c", 1)
	return append([]CompositeRole{top}, out...)
}

// Password is the password every user of the dataset has. One password
// for all users lets the fast strategy hash it once; the cost of a login
// is the same whatever the password.
func (s Spec) Password() string { return "Kcb-" + derive(s.Seed, "password")[:16] }

// ClientSecret is a confidential client's secret.
func (s Spec) ClientSecret(i int, clientID string) string {
	return derive(s.Seed, "client-secret|"+s.RealmOf(i)+"|"+clientID)[:32]
}

func derive(seed int64, what string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("kcbench|%d|%s", seed, what)))
	return hex.EncodeToString(h[:])
}

// RedirectURI is where the web client may redirect (nothing listens there:
// the login-form scenario reads the code from the Location header).
const RedirectURI = "http://127.0.0.1:9/callback"

// SAMLConsumerURL is the SAML clients' assertion consumer service, where
// nothing listens either: kcbench reads the response from the page that
// would post it there.
const SAMLConsumerURL = "http://127.0.0.1:9/saml/acs"

// Attribute keys kcbench stores on what it creates.
const (
	AttrDataset  = "kcbench.dataset"
	AttrComplete = "kcbench.complete"
)
