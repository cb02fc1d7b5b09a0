package dataset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kcbench/kcbench/internal/kc"
)

// Brokering (seed --broker-users N): the dataset gets an
// identity-provider realm of its own, IdPRealm, with a confidential client
// BrokerClientID and users (BrokerUsername, with ids of their own,
// BrokerUserID), brokered by every tenant as an OpenID Connect identity
// provider (IdPAliasOf), its users already linked (users of the same
// names, federated identities naming the provider's users by id), as
// returning users' are. In realms mode the identity-provider realm holds N
// users, which every tenant realm brokers as IdPAlias. In orgs mode each
// organization has an identity provider of its own (t00001-idp), linked
// to it, with its domain (kc.org.domain) and redirect when the email
// domain matches, so that Keycloak's identity-first login sends a user
// who types an email of the organization's domain to it; the
// identity-provider realm then holds N users per tenant, with emails of
// the tenant's domain (t00001-broker-00001, broker-00001@t00001.example.com),
// since a first visit's user is made from the provider's claims and must
// fit the organization, and its linked users are members.
// The broker-login workload logs users in to a tenant through it,
// Keycloak calling itself over the stack's https URL for the code
// exchange. The users of the identity-provider realm have the dataset
// password, hashed with one PBKDF2 iteration: in production another
// system's cost, so that the CPU Keycloak spends per brokered login is
// mostly the brokering realm's.

// IdPAlias is the alias of a tenant realm's identity provider (orgs mode:
// after the tenant's prefix), and BrokerClientID its client in the
// identity-provider realm.
const (
	IdPAlias       = "idp"
	BrokerClientID = "kcbench-broker"
	maxBrokerUsers = 10_000 // each tenant links as many
	brokerPart     = 500    // users per partial import
)

// IdPRealm is the dataset's identity-provider realm.
func (s Spec) IdPRealm() string { return s.Prefix + "-idp" }

// IdPAliasOf is tenant i's identity provider.
func (s Spec) IdPAliasOf(i int) string { return s.name(i, IdPAlias) }

// BrokerUsername is the j-th user (from 1) of the identity-provider realm
// that tenant i brokers (realms mode: the same for every tenant).
func (s Spec) BrokerUsername(i, j int) string { return s.name(i, fmt.Sprintf("broker-%05d", j)) }

// BrokerUserID is the id of BrokerUsername(i, j): the subject its tokens
// carry, which a tenant's linked user names. Ids are unique in a
// Keycloak, so the prefix is in it.
func (s Spec) BrokerUserID(i, j int) string {
	key := fmt.Sprintf("broker-user|%s|%d", s.Prefix, j)
	if s.Mode == ModeOrgs {
		key += fmt.Sprintf("|%d", i)
	}
	h := derive(s.Seed, key)
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

// brokerUser is the identity-provider realm's user BrokerUsername(i, j)
// (its own realm's copy, or a tenant's linked user).
func (s Spec) brokerUser(i, j int) kc.UserRep {
	return kc.UserRep{Username: s.BrokerUsername(i, j), Enabled: true, Email: s.BrokerEmail(i, j), EmailVerified: true,
		FirstName: "Broker", LastName: fmt.Sprintf("User %05d", j)}
}

// BrokerEmail is the email of BrokerUsername(i, j): at idp.example.com in
// realms mode, at the tenant's domain in orgs mode (where Keycloak
// chooses the identity provider by it).
func (s Spec) BrokerEmail(i, j int) string {
	domain := "idp.example.com"
	if s.Mode == ModeOrgs {
		domain = s.Domain(i)
	}
	return fmt.Sprintf("broker-%05d@%s", j, domain)
}

// LinkedUser is tenant i's user linked to the identity-provider realm's
// j-th user.
func (s Spec) LinkedUser(i, j int) kc.UserRep {
	u := s.brokerUser(i, j)
	u.RealmRoles = []string{"default-roles-" + s.RealmOf(i)}
	u.FederatedIdentities = []kc.FederatedIdentityRep{{IdentityProvider: s.IdPAliasOf(i), UserID: s.BrokerUserID(i, j), UserName: u.Username}}
	return u
}

// linkedUsers are tenant i's users linked to the identity-provider
// realm's (all of them, when the spec has one), with Keycloak's default
// roles.
func (s Spec) linkedUsers(i int) []kc.UserRep {
	var us []kc.UserRep
	for j := 1; j <= s.Content.BrokerUsers; j++ {
		us = append(us, s.LinkedUser(i, j))
	}
	return us
}

// BrokerSecret is the secret of BrokerClientID.
func (s Spec) BrokerSecret() string { return derive(s.Seed, "broker-secret")[:32] }

// brokerPolicy hashes the identity-provider realm's passwords.
var brokerPolicy = Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}

// identityProviders are tenant i's identity providers: the dataset's
// identity-provider realm at base (the target's URL), when the spec has
// one; in orgs mode with the organization's domain and its redirect.
func (b builder) identityProviders(i int) []kc.IdentityProviderRep {
	s := b.s
	if s.Content.BrokerUsers == 0 {
		return nil
	}
	cfg := map[string]string{
		"clientId": BrokerClientID, "clientSecret": s.BrokerSecret(), "clientAuthMethod": "client_secret_post",
		"useJwksUrl": "true", "validateSignature": "true", "defaultScope": "openid profile email", "syncMode": "IMPORT", "pkceEnabled": "false",
	}
	if s.Mode == ModeOrgs {
		cfg[OrgDomainKey], cfg[OrgRedirectKey] = s.Domain(i), "true"
	}
	return []kc.IdentityProviderRep{{Alias: s.IdPAliasOf(i), ProviderID: "oidc", Enabled: true, TrustEmail: true,
		Config: RetargetIdP(cfg, b.base, s.IdPRealm())}}
}

// An organization's identity provider's config: its domain, and whether
// Keycloak sends a user whose email is of that domain to it (Keycloak 26.0
// to 26.7; 26.8 moves both to the organization's domain).
const (
	OrgDomainKey   = "kc.org.domain"
	OrgRedirectKey = "kc.org.broker.redirect.mode.email-matches"
)

// RetargetIdP sets the URLs of an identity provider's config to those of
// realm idpRealm at base, and returns it.
func RetargetIdP(cfg map[string]string, base, idpRealm string) map[string]string {
	issuer := strings.TrimRight(base, "/") + "/realms/" + idpRealm
	oidc := issuer + "/protocol/openid-connect/"
	for k, v := range map[string]string{"issuer": issuer, "authorizationUrl": oidc + "auth", "tokenUrl": oidc + "token",
		"userInfoUrl": oidc + "userinfo", "jwksUrl": oidc + "certs", "logoutUrl": oidc + "logout"} {
		cfg[k] = v
	}
	return cfg
}

// CheckIdPTarget checks that a tenant's identity provider (as Keycloak
// returns it) sends users to base: its authorization URL is on it.
func CheckIdPTarget(p kc.IdentityProviderRep, base string) error {
	want := strings.TrimRight(base, "/") + "/realms/"
	if got := p.Config["authorizationUrl"]; !strings.HasPrefix(got, want) {
		return fmt.Errorf("identity provider %s sends users to %s, not to the target %s", p.Alias, got, base)
	}
	return nil
}

// ensureIdPRealm makes the identity-provider realm when the spec has one
// and it is not there complete: the realm, its client, its users in
// partial imports, then the mark that it is complete.
func (sd *seeder) ensureIdPRealm(ctx context.Context) error {
	s := sd.s
	n := s.Content.BrokerUsers
	if n == 0 {
		return nil
	}
	name := s.IdPRealm()
	r := sd.b.realmBase(name, false)
	r.PasswordPolicy = brokerPolicy.Keycloak()
	r.RegistrationAllowed = kc.Bool(false)
	r.DisplayName = "kcbench identity provider"
	r.Clients = []kc.ClientRep{{ClientID: BrokerClientID, Enabled: kc.Bool(true), Secret: s.BrokerSecret(), StandardFlowEnabled: true,
		RedirectURIs: []string{"*"}}}
	complete, err := sd.createRealm(ctx, name, r)
	if err != nil || complete {
		return err
	}
	if s.Mode == ModeRealms {
		if err := sd.ensureIdPUsers(ctx, []int{1}); err != nil {
			return err
		}
	}
	return sd.markRealmComplete(ctx, name)
}

// ensureIdPUsers makes the identity-provider realm's users of tenants
// (realms mode: its N users, whatever the tenant), in partial imports
// that skip the users already there.
func (sd *seeder) ensureIdPUsers(ctx context.Context, tenants []int) error {
	s := sd.s
	if s.Content.BrokerUsers == 0 {
		return nil
	}
	cred := brokerPolicy.Credential(s.Password(), []byte("kcbench-broker-1"))
	var parts []kc.PartialImportRep
	var us []kc.UserRep
	for _, i := range tenants {
		for j := 1; j <= s.Content.BrokerUsers; j++ {
			u := s.brokerUser(i, j)
			u.ID, u.Credentials = s.BrokerUserID(i, j), []kc.CredentialRep{cred}
			if us = append(us, u); len(us) == brokerPart {
				parts = append(parts, kc.PartialImportRep{IfResourceExists: "SKIP", Users: us})
				us = nil
			}
		}
	}
	if len(us) > 0 {
		parts = append(parts, kc.PartialImportRep{IfResourceExists: "SKIP", Users: us})
	}
	if err := sd.importParts(ctx, s.IdPRealm(), parts); err != nil {
		return fmt.Errorf("identity-provider realm %s: %w", s.IdPRealm(), err)
	}
	return nil
}

// checkBroker refuses brokering where kcbench does not seed it.
func checkBroker(spec Spec, o SeedOptions) error {
	n := spec.Content.BrokerUsers
	switch {
	case n == 0:
		return nil
	case o.LDAP != nil:
		return errors.New("--broker-users with users in LDAP (--ldap): the users a brokered login makes would be written to the directory; seed them without --ldap")
	case o.Strategy == Rest:
		return errors.New("--broker-users: the rest strategy does not seed identity providers; use --strategy fast or clone")
	case o.Target == "":
		return errors.New("--broker-users: the identity providers need the target's URL")
	}
	return nil
}
