package dataset

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/kcbench/kcbench/internal/kc"
)

// builder makes the representations of a spec's tenants. cred is the one
// password credential every user gets (pre-hashed once when possible)
// unless the spec asks for unique salts; creds then caches the users'
// own, made in parallel by prehash.
type builder struct {
	s     Spec
	cred  kc.CredentialRep
	creds *sync.Map // [2]int{tenant, user} → kc.CredentialRep
	// dir, when set, holds the users: realms get an LDAP provider and no
	// users of their own.
	dir *kc.Directory
	// head, when set, is how many of a tenant's users and clients the
	// admin API makes; the rest are copies of them (bulk.go).
	head bulkHead
	// base is the target's URL (the identity providers' URLs).
	base string
}

func newBuilder(s Spec) builder {
	salt := sha256.Sum256([]byte(fmt.Sprintf("kcbench-salt|%d", s.Seed)))
	return builder{s: s, cred: s.Policy.Credential(s.Password(), salt[:16]), creds: &sync.Map{}}
}

// credential is user j of tenant i's password credential: the shared one,
// or with unique salts its own, salted with 16 bytes derived from the
// seed, the tenant and the user (so a dataset is the same on every seed).
func (b builder) credential(i, j int) kc.CredentialRep {
	if !b.s.UniqueSalts {
		return b.cred
	}
	if c, ok := b.creds.Load([2]int{i, j}); ok {
		return c.(kc.CredentialRep)
	}
	c := b.ownCredential(i, j)
	b.creds.Store([2]int{i, j}, c)
	return c
}

// ownCredential computes user j of tenant i's own credential.
func (b builder) ownCredential(i, j int) kc.CredentialRep {
	salt := sha256.Sum256([]byte(fmt.Sprintf("kcbench-salt|%d|%d|%d", b.s.Seed, i, j)))
	return b.s.Policy.Credential(b.s.Password(), salt[:16])
}

// prehash computes the credentials of tenants' users in parallel (unique
// salts), so that building their representations does not hash one by
// one.
func (b builder) prehash(ctx context.Context, tenants []int) error {
	if !b.s.UniqueSalts || !b.s.Policy.CanPrehash() {
		return nil
	}
	n := b.apiUsers()
	return Parallel(ctx, len(tenants)*n, runtime.GOMAXPROCS(0), func(ctx context.Context, k int) error {
		b.credential(tenants[k/n], k%n+1)
		return nil
	})
}

// forget drops the cached credentials of tenants once they are written.
func (b builder) forget(tenants []int) {
	for _, i := range tenants {
		for j := 1; j <= b.apiUsers(); j++ {
			b.creds.Delete([2]int{i, j})
		}
	}
}

// displayName is tenant i's realm display name (realms mode).
func displayName(i int) string { return "kcbench tenant " + TenantID(i) }

// names lists the values that name tenant i in Keycloak's database, in
// the same order for every tenant: its realm and what Keycloak derives
// from a realm's name (the realm's client and role in master, the account
// and admin console URLs), its organization and domain, and its clients,
// service accounts, secrets, roles, groups and users. The clone maps
// these, and only these, exactly.
func (b builder) names(i int) []string {
	s := b.s
	var n []string
	if s.Mode == ModeRealms {
		r := s.RealmOf(i)
		n = append(n, r, displayName(i), r+"-realm", r+" Realm", "default-roles-"+r,
			"/admin/"+r+"/console/", "/admin/"+r+"/console/*", "/realms/"+r+"/account/", "/realms/"+r+"/account/*")
	} else {
		o := b.org(i, false, false)
		n = append(n, o.Name, o.Alias, s.Domain(i))
	}
	for _, c := range b.clientNames(i) {
		n = append(n, c.ClientID, "service-account-"+strings.ToLower(c.ClientID))
		if c.Secret != "" {
			n = append(n, c.Secret)
		}
	}
	for k := 1; k <= s.Content.RealmRoles; k++ {
		for _, cr := range s.CompositeRoles(i, k) {
			n = append(n, cr.Name)
		}
	}
	n = append(n, s.GroupNames(i)...)
	for k := 1; k <= s.Content.ScopesPerClient; k++ {
		n = append(n, s.ClientScope(i, k))
	}
	for j := 1; j <= s.Content.Users; j++ {
		n = append(n, strings.ToLower(s.Username(i, j)), strings.ToLower(s.Email(i, j)), userLastName(i, j))
	}
	for j := 1; j <= s.Content.OTPUsers; j++ {
		n = append(n, strings.ToLower(s.OTPUsername(i, j)), strings.ToLower(s.OTPEmail(i, j)), otpLastName(i, j))
	}
	if s.Content.BrokerUsers > 0 {
		n = append(n, s.IdPAliasOf(i))
	}
	for j := 1; j <= s.Content.BrokerUsers; j++ {
		u := s.brokerUser(i, j)
		n = append(n, strings.ToLower(u.Username), strings.ToLower(u.Email), s.BrokerUserID(i, j))
	}
	return n
}

// userLastName is user j of tenant i's last name.
func userLastName(i, j int) string { return fmt.Sprintf("%s-%05d", TenantID(i), j) }

// clients returns the tenant i's clients the admin API makes.
func (b builder) clients(i int) []kc.ClientRep { return b.clientList(i, b.apiClients(), true) }

// clientNames returns all of tenant i's clients without the resource
// server's settings (resources and policies by the thousand): for their
// ids, secrets and switches.
func (b builder) clientNames(i int) []kc.ClientRep {
	return b.clientList(i, b.s.Content.Clients, false)
}

// clientList is tenant i's first n clients (web and backends), and its
// resource server.
func (b builder) clientList(i, n int, settings bool) []kc.ClientRep {
	s := b.s
	cs := []kc.ClientRep{{
		ClientID:            s.WebClient(i),
		Enabled:             kc.Bool(true),
		PublicClient:        true,
		StandardFlowEnabled: true,
		RedirectURIs:        []string{RedirectURI},
		WebOrigins:          []string{"+"},
		Attributes:          map[string]string{"pkce.code.challenge.method": "S256", "post.logout.redirect.uris": "+"},
	}}
	for k := 1; k < n; k++ {
		id := s.BackendClient(i, k)
		cs = append(cs, kc.ClientRep{
			ClientID:                  id,
			Enabled:                   kc.Bool(true),
			Secret:                    s.ClientSecret(i, id),
			StandardFlowEnabled:       true,
			DirectAccessGrantsEnabled: true,
			ServiceAccountsEnabled:    true,
			RedirectURIs:              []string{RedirectURI},
			// The token-exchange workload's exchanging client (a switch
			// that Keycloak before 26.2 stores and ignores).
			Attributes: map[string]string{"standard.token.exchange.enabled": "true"},
			// Introspection (and token exchange) needs the client in the
			// token's audience.
			ProtocolMappers: append([]kc.ProtocolMapperRep{{
				Name: "audience-self", Protocol: "openid-connect", ProtocolMapper: "oidc-audience-mapper",
				Config: map[string]string{"included.client.audience": id, "access.token.claim": "true", "introspection.token.claim": "true"},
			}}, s.shapeMappers()...),
		})
	}
	if s.Content.UMAResources > 0 {
		cs = append(cs, b.umaClient(i, settings))
	}
	for k := 1; k <= s.Content.SAMLClients; k++ {
		cs = append(cs, samlClient(s.SAMLClient(i, k)))
	}
	return cs
}

// samlClient is a SAML client (Content.SAMLClients) whose attributes say
// all that the saml-login workload relies on, so that one made through
// the admin API (which fills in defaults, some the other way: signed
// requests required) and one imported are the same: the POST binding,
// documents and assertions signed with the realm's RS256 key, nothing
// encrypted, the username as name id, requests taken unsigned.
func samlClient(id string) kc.ClientRep {
	return kc.ClientRep{ClientID: id, Protocol: "saml", Enabled: kc.Bool(true), StandardFlowEnabled: true,
		RedirectURIs: []string{SAMLConsumerURL},
		Attributes: map[string]string{
			"saml_assertion_consumer_url_post":       SAMLConsumerURL,
			"saml.force.post.binding":                "true",
			"saml.server.signature":                  "true",
			"saml.assertion.signature":               "true",
			"saml.signature.algorithm":               "RSA_SHA256",
			"saml_signature_canonicalization_method": "http://www.w3.org/2001/10/xml-exc-c14n#",
			"saml.client.signature":                  "false",
			"saml.encrypt":                           "false",
			"saml.authnstatement":                    "true",
			"saml_name_id_format":                    "username",
			"saml_force_name_id_format":              "false",
		}}
}

// umaClient is tenant i's resource server (Content.UMAResources): a
// confidential client with a service account, as Keycloak's admin API
// needs for authorization services, whose settings give every user of
// the realm (its default roles) the scope UMAScope on each resource, one
// scope permission per resource.
func (b builder) umaClient(i int, settings bool) kc.ClientRep {
	s := b.s
	id := s.UMAClient(i)
	c := kc.ClientRep{ClientID: id, Enabled: kc.Bool(true), Secret: s.ClientSecret(i, id), ServiceAccountsEnabled: true,
		AuthorizationServicesEnabled: true}
	if !settings {
		return c
	}
	rs := &kc.ResourceServerRep{PolicyEnforcementMode: "ENFORCING", DecisionStrategy: "UNANIMOUS",
		Scopes: []kc.AuthzScopeRep{{Name: UMAScope}}}
	const users = "users"
	rs.Policies = append(rs.Policies, kc.AuthzPolicyRep{Name: users, Type: "role", Logic: "POSITIVE", DecisionStrategy: "UNANIMOUS",
		Config: map[string]string{"roles": `[{"id":"default-roles-` + s.RealmOf(i) + `","required":false}]`}})
	for k := 1; k <= s.Content.UMAResources; k++ {
		r := UMAResource(k)
		rs.Resources = append(rs.Resources, kc.AuthzResourceRep{Name: r, Type: "urn:kcbench:doc", URIs: []string{"/" + r},
			Scopes: []kc.AuthzScopeRep{{Name: UMAScope}}})
		rs.Policies = append(rs.Policies, kc.AuthzPolicyRep{Name: r + " " + UMAScope, Type: "scope", DecisionStrategy: "UNANIMOUS",
			Config: map[string]string{"resources": `["` + r + `"]`, "scopes": `["` + UMAScope + `"]`, "applyPolicies": `["` + users + `"]`}})
	}
	c.AuthorizationSettings = rs
	return c
}

// roles returns tenant i's realm roles and client roles.
func (b builder) roles(i int) *kc.RolesRep {
	s := b.s
	r := &kc.RolesRep{}
	for k := 1; k <= s.Content.RealmRoles; k++ {
		for _, cr := range s.CompositeRoles(i, k) {
			rr := kc.RoleRep{Name: cr.Name}
			if len(cr.Composites) > 0 {
				rr.Composite, rr.Composites = true, &kc.RoleComposites{Realm: cr.Composites}
			}
			r.Realm = append(r.Realm, rr)
		}
	}
	if s.Content.ClientRolesPerClient > 0 {
		r.Client = map[string][]kc.RoleRep{}
		for _, c := range b.clientNames(i) {
			if c.AuthorizationServicesEnabled || c.Protocol == "saml" {
				continue // a resource server's role is UMAProtection, below; SAML clients have none
			}
			for k := 1; k <= s.Content.ClientRolesPerClient; k++ {
				r.Client[c.ClientID] = append(r.Client[c.ClientID], kc.RoleRep{Name: ClientRole(k), ClientRole: true})
			}
		}
	}
	if s.Content.UMAResources > 0 {
		// The role Keycloak's admin API gives a resource server (an
		// import does not): the same roles whichever way it is made.
		if r.Client == nil {
			r.Client = map[string][]kc.RoleRep{}
		}
		r.Client[s.UMAClient(i)] = []kc.RoleRep{{Name: UMAProtection, ClientRole: true}}
	}
	return r
}

func (b builder) groups(i int) []kc.GroupRep {
	var gs []kc.GroupRep
	for k := 1; k <= b.s.Content.Groups; k++ {
		gs = append(gs, b.s.GroupTree(i, k))
	}
	return gs
}

// users returns tenant i's users, each with the dataset password, one group
// and one realm role, then its OTP users. default-roles-<realm> is listed
// explicitly: an import with explicit realmRoles would otherwise lose it
// (and with it offline_access).
func (b builder) users(i int) []kc.UserRep {
	return append(b.userRange(i, 1, b.apiUsers()), b.otpUsers(i)...)
}

// otpUsers returns tenant i's OTP users: the dataset password and a TOTP
// credential (Spec.OTPSecret), Keycloak's default roles, no group.
func (b builder) otpUsers(i int) []kc.UserRep {
	s := b.s
	us := make([]kc.UserRep, 0, s.Content.OTPUsers)
	for j := 1; j <= s.Content.OTPUsers; j++ {
		us = append(us, kc.UserRep{
			Username: s.OTPUsername(i, j), Enabled: true, Email: s.OTPEmail(i, j), EmailVerified: true,
			FirstName: "OTP", LastName: otpLastName(i, j),
			Credentials: []kc.CredentialRep{b.credential(i, s.Content.Users+j), s.OTPCredential()},
			RealmRoles:  []string{"default-roles-" + s.RealmOf(i)},
		})
	}
	return us
}

// otpLastName is OTP user j of tenant i's last name.
func otpLastName(i, j int) string { return fmt.Sprintf("%s-otp-%05d", TenantID(i), j) }

// OTPCredential is an OTP user's TOTP credential as Keycloak stores it:
// 6 digits, 30 s, HMAC-SHA1, the secret's bytes as the key.
func (s Spec) OTPCredential() kc.CredentialRep {
	secret, _ := json.Marshal(map[string]string{"value": s.OTPSecret()})
	return kc.CredentialRep{Type: "otp", SecretData: string(secret),
		CredentialData: `{"subType":"totp","digits":6,"counter":0,"period":30,"algorithm":"HmacSHA1"}`}
}

// userRange returns tenant i's users lo..hi.
func (b builder) userRange(i, lo, hi int) []kc.UserRep {
	if b.dir != nil {
		return nil // in LDAP
	}
	s := b.s
	realm := s.RealmOf(i)
	us := make([]kc.UserRep, 0, max(0, hi-lo+1))
	for j := lo; j <= hi; j++ {
		us = append(us, kc.UserRep{
			Username:      s.Username(i, j),
			Enabled:       true,
			Email:         s.Email(i, j),
			EmailVerified: true,
			FirstName:     "User",
			LastName:      userLastName(i, j),
			Credentials:   []kc.CredentialRep{b.credential(i, j)},
			RealmRoles:    append(s.UserRoles(i, j), "default-roles-"+realm),
			Groups:        s.UserGroupPaths(i, j),
			ClientRoles:   s.userClientRoles(i),
		})
	}
	return us
}

// userClientRoles are the client roles every user of tenant i holds
// (Shape.ClientRolesPerUser): of its first backend client.
func (s Spec) userClientRoles(i int) map[string][]string {
	if s.Content.ClientRolesPerUser == 0 {
		return nil
	}
	var rs []string
	for k := 1; k <= s.Content.ClientRolesPerUser; k++ {
		rs = append(rs, ClientRole(k))
	}
	return map[string][]string{s.BackendClient(i, 1): rs}
}

// shapeMappers are a backend client's protocol mappers of the shape: a
// hard-coded claim each (kcb_1 …), and with more than one group a user
// the groups claim.
func (s Spec) shapeMappers() []kc.ProtocolMapperRep {
	var ms []kc.ProtocolMapperRep
	for k := 1; k <= s.Content.MappersPerClient; k++ {
		ms = append(ms, kc.ProtocolMapperRep{Name: fmt.Sprintf("claim-%d", k), Protocol: "openid-connect", ProtocolMapper: "oidc-hardcoded-claim-mapper",
			Config: map[string]string{"claim.name": fmt.Sprintf("kcb_%d", k), "claim.value": fmt.Sprintf("value-%d", k), "jsonType.label": "String",
				"access.token.claim": "true", "id.token.claim": "true", "introspection.token.claim": "true"}})
	}
	if s.Content.GroupsPerUser > 0 || s.Content.GroupDepth > 0 {
		// With group trees, full paths: a token's issuance walks each
		// group up to its root.
		ms = append(ms, kc.ProtocolMapperRep{Name: "groups", Protocol: "openid-connect", ProtocolMapper: "oidc-group-membership-mapper",
			Config: map[string]string{"claim.name": "groups", "full.path": strconv.FormatBool(s.Content.GroupDepth > 0), "access.token.claim": "true",
				"id.token.claim": "true", "introspection.token.claim": "true"}})
	}
	return ms
}

// org returns tenant i's organization (orgs mode); withMembers lists the
// members by username, for inline realm import.
func (b builder) org(i int, withMembers, complete bool) kc.OrganizationRep {
	s := b.s
	o := kc.OrganizationRep{Name: TenantID(i), Alias: TenantID(i), Enabled: true,
		Domains:    []kc.OrgDomainRep{{Name: s.Domain(i)}},
		Attributes: map[string][]string{AttrDataset: {s.Fingerprint()}}}
	if complete {
		o.Attributes[AttrComplete] = []string{"true"}
	}
	if withMembers {
		for _, u := range s.orgMembers(i) {
			o.Members = append(o.Members, kc.OrgMemberRep{Username: u})
		}
		for _, p := range b.identityProviders(i) {
			o.IdentityProviders = append(o.IdentityProviders, kc.OrgIdPRep{Alias: p.Alias})
		}
	}
	return o
}

// orgMembers are the usernames of tenant i's organization's members (orgs
// mode): its users and the users linked to its identity provider.
func (s Spec) orgMembers(i int) []string {
	var us []string
	for j := 1; j <= s.Content.Users; j++ {
		us = append(us, s.Username(i, j))
	}
	for j := 1; j <= s.Content.BrokerUsers; j++ {
		us = append(us, s.BrokerUsername(i, j))
	}
	return us
}

// realmBase is a realm with kcbench's marks and the password policy.
func (b builder) realmBase(name string, complete bool) kc.RealmRep {
	attrs := map[string]string{AttrDataset: b.s.Fingerprint()}
	if complete {
		attrs[AttrComplete] = "true"
	} else {
		attrs[AttrComplete] = "false"
	}
	// Registration on: the registration workload's form (a link more on
	// the login page).
	r := kc.RealmRep{Realm: name, Enabled: kc.Bool(true), PasswordPolicy: b.s.Policy.Keycloak(), Attributes: attrs,
		RegistrationAllowed: kc.Bool(true)}
	if b.s.Mode == ModeOrgs {
		r.OrganizationsEnabled = kc.Bool(true)
		r.DisplayName = "kcbench organizations"
	}
	if b.s.Content.OTPUsers > 0 {
		// Keycloak's policy, but a code may be used again within its
		// period: the load logs the same users in many times a period.
		r.OTPPolicyType, r.OTPPolicyAlgorithm, r.OTPPolicyDigits, r.OTPPolicyPeriod = "totp", "HmacSHA1", 6, 30
		r.OTPPolicyLookAhead, r.OTPPolicyCodeReusable = 1, kc.Bool(true)
	}
	return r
}

// tenantRealm is the whole of tenant i in realms mode: one representation,
// imported by Keycloak in one transaction, so it exists complete or not at
// all.
func (b builder) tenantRealm(i int) kc.RealmRep {
	r := b.realmBase(b.s.RealmOf(i), true)
	r.DisplayName = displayName(i)
	r.Clients = b.clients(i)
	r.Roles = b.roles(i)
	r.Groups = b.groups(i)
	r.Users = append(b.users(i), b.s.linkedUsers(i)...)
	r.IdentityProviders = b.identityProviders(i)
	return r
}

// A realms-mode tenant with more users or clients than these is made in
// parts: its realm is created marked incomplete with the first of each,
// the rest follow by partial imports of at most as many, and the realm is
// marked complete last. One representation of 100,000 users is past the
// server's request-body limit (10 MiB: HTTP 413) and one transaction of
// it past its transaction time-out. Small parts also cost Keycloak less:
// its import flushes the transaction's entities as each user's roles are
// granted, so a part's cost grows with the square of its size.
const (
	partUsers   = 100
	partClients = 50
)

// big says whether the spec's realms-mode tenants are made in parts.
func (b builder) big() bool {
	c := b.s.Content
	// Client scopes come through the admin API after the import (a
	// realm import with clientScopes makes none of Keycloak's own), so
	// the realm is marked complete after them.
	return c.Users+c.OTPUsers+c.BrokerUsers > partUsers || c.Clients > partClients || c.ScopesPerClient > 0
}

// clientScopes are tenant i's client scopes (Shape.ScopesPerClient): a
// hard-coded claim each, in the access token.
func (s Spec) clientScopes(i int) []kc.ClientScopeRep {
	var cs []kc.ClientScopeRep
	for k := 1; k <= s.Content.ScopesPerClient; k++ {
		cs = append(cs, kc.ClientScopeRep{Name: s.ClientScope(i, k), Protocol: "openid-connect",
			Attributes: map[string]string{"include.in.token.scope": "true", "display.on.consent.screen": "false"},
			ProtocolMappers: []kc.ProtocolMapperRep{{Name: "claim", Protocol: "openid-connect", ProtocolMapper: "oidc-hardcoded-claim-mapper",
				Config: map[string]string{"claim.name": fmt.Sprintf("kcb_scope_%d", k), "claim.value": fmt.Sprintf("value-%d", k), "jsonType.label": "String",
					"access.token.claim": "true", "id.token.claim": "false", "introspection.token.claim": "true"}}}})
	}
	return cs
}

// tenantParts is tenant i in parts (see partUsers): the realm, marked
// incomplete, and the partial imports that follow it.
func (b builder) tenantParts(i int) (kc.RealmRep, []kc.PartialImportRep) {
	r := b.realmBase(b.s.RealmOf(i), false)
	r.DisplayName = displayName(i)
	r.Groups = b.groups(i)
	r.IdentityProviders = b.identityProviders(i)
	tr := b.roles(i)
	r.Roles = &kc.RolesRep{Realm: tr.Realm}
	cs := b.clients(i)
	first := cs[:min(len(cs), partClients)]
	r.Clients = first
	r.Roles.Client = clientRoles(tr, first)
	var parts []kc.PartialImportRep
	for lo := len(first); lo < len(cs); lo += partClients {
		part := cs[lo:min(lo+partClients, len(cs))]
		p := kc.PartialImportRep{IfResourceExists: "SKIP", Clients: part, Roles: &kc.RolesRep{Client: clientRoles(tr, part)}}
		p.Users = serviceAccounts(r.Realm, part)
		parts = append(parts, p)
	}
	n := b.apiUsers()
	if b.dir == nil {
		r.Users = b.userRange(i, 1, min(n, partUsers))
		for lo := partUsers + 1; lo <= n; lo += partUsers {
			parts = append(parts, kc.PartialImportRep{IfResourceExists: "SKIP", Users: b.userRange(i, lo, min(lo+partUsers-1, n))})
		}
		more := append(b.otpUsers(i), b.s.linkedUsers(i)...)
		for lo := 0; lo < len(more); lo += partUsers {
			parts = append(parts, kc.PartialImportRep{IfResourceExists: "SKIP", Users: more[lo:min(lo+partUsers, len(more))]})
		}
	}
	return r, parts
}

// clientRoles is the part of roles' client roles that belongs to cs.
func clientRoles(roles *kc.RolesRep, cs []kc.ClientRep) map[string][]kc.RoleRep {
	m := map[string][]kc.RoleRep{}
	for _, c := range cs {
		if rs, ok := roles.Client[c.ClientID]; ok {
			m[c.ClientID] = rs
		}
	}
	return m
}

// serviceAccounts is the service-account users of cs for a partial import
// into realm: a realm import makes them, a partial import does not
// (Keycloak 26.7.3): without one, a client-credentials grant gets 401.
func serviceAccounts(realm string, cs []kc.ClientRep) []kc.UserRep {
	var us []kc.UserRep
	for _, c := range cs {
		if c.ServiceAccountsEnabled {
			us = append(us, kc.UserRep{Username: "service-account-" + c.ClientID, Enabled: true,
				ServiceAccountClientID: c.ClientID, RealmRoles: []string{"default-roles-" + realm}})
		}
	}
	return us
}

// sharedRealm is the orgs-mode realm with tenants inline.
func (b builder) sharedRealm(tenants []int) kc.RealmRep {
	r := b.realmBase(b.s.SharedRealm(), true)
	r.Roles = &kc.RolesRep{Client: map[string][]kc.RoleRep{}}
	for _, i := range tenants {
		r.Clients = append(r.Clients, b.clients(i)...)
		tr := b.roles(i)
		r.Roles.Realm = append(r.Roles.Realm, tr.Realm...)
		for c, rs := range tr.Client {
			r.Roles.Client[c] = rs
		}
		r.Groups = append(r.Groups, b.groups(i)...)
		r.Users = append(r.Users, b.users(i)...)
		r.Users = append(r.Users, b.s.linkedUsers(i)...)
		r.IdentityProviders = append(r.IdentityProviders, b.identityProviders(i)...)
		// Client scopes follow through the admin API: the organization is
		// complete after them.
		r.Organizations = append(r.Organizations, b.org(i, true, b.s.Content.ScopesPerClient == 0))
	}
	return r
}

// tenantPartial is tenant i's clients, roles, groups and users for a
// partial import into the shared realm.
func (b builder) tenantPartial(tenants []int) kc.PartialImportRep {
	p := kc.PartialImportRep{IfResourceExists: "SKIP", Roles: &kc.RolesRep{Client: map[string][]kc.RoleRep{}}}
	realm := b.s.SharedRealm()
	for _, i := range tenants {
		cs := b.clients(i)
		p.Clients = append(p.Clients, cs...)
		p.Users = append(p.Users, serviceAccounts(realm, cs)...)
		tr := b.roles(i)
		p.Roles.Realm = append(p.Roles.Realm, tr.Realm...)
		for c, rs := range tr.Client {
			p.Roles.Client[c] = rs
		}
		p.Groups = append(p.Groups, b.groups(i)...)
		p.Users = append(p.Users, b.users(i)...)
		p.Users = append(p.Users, b.s.linkedUsers(i)...)
		p.IdentityProviders = append(p.IdentityProviders, b.identityProviders(i)...)
	}
	return p
}
