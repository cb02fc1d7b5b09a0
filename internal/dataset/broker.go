package dataset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kcbench/kcbench/internal/kc"
)

// Brokering (seed --broker-users N, realms mode): the dataset gets an
// identity-provider realm of its own, IdPRealm, holding N users
// (BrokerUsername, with ids of their own, BrokerUserID) and a
// confidential client BrokerClientID, and every tenant realm brokers it as
// the OpenID Connect identity provider IdPAlias, its N users already
// linked (users of the same names, federated identities naming the
// provider's users by id), as returning users' are:
// the broker-login workload logs users in to a tenant through it
// (kc_idp_hint), Keycloak calling itself over the stack's https URL for
// the code exchange. The users of the identity-provider realm have the
// dataset password, hashed with one PBKDF2 iteration: in production
// another system's cost, so that the CPU Keycloak spends per brokered
// login is mostly the brokering realm's.

// IdPAlias is the alias of a tenant realm's identity provider, and
// BrokerClientID its client in the identity-provider realm.
const (
	IdPAlias       = "idp"
	BrokerClientID = "kcbench-broker"
	maxBrokerUsers = 10_000 // each tenant links as many
	brokerPart     = 500    // users per partial import
)

// IdPRealm is the dataset's identity-provider realm.
func (s Spec) IdPRealm() string { return s.Prefix + "-idp" }

// BrokerUsername is the j-th user (from 1) of the identity-provider realm.
func (s Spec) BrokerUsername(j int) string { return fmt.Sprintf("broker-%05d", j) }

// BrokerUserID is the id of the identity-provider realm's j-th user: the
// subject its tokens carry, which a tenant's linked user names. Ids are
// unique in a Keycloak, so the prefix is in it.
func (s Spec) BrokerUserID(j int) string {
	h := derive(s.Seed, fmt.Sprintf("broker-user|%s|%d", s.Prefix, j))
	return h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:32]
}

// brokerUser is the identity-provider realm's j-th user (its own realm's
// copy, or a tenant's linked user).
func (s Spec) brokerUser(j int) kc.UserRep {
	u := s.BrokerUsername(j)
	return kc.UserRep{Username: u, Enabled: true, Email: u + "@idp.example.com", EmailVerified: true,
		FirstName: "Broker", LastName: fmt.Sprintf("User %05d", j)}
}

// LinkedUser is tenant realm's user linked to the identity-provider
// realm's j-th user.
func (s Spec) LinkedUser(realm string, j int) kc.UserRep {
	u := s.brokerUser(j)
	u.RealmRoles = []string{"default-roles-" + realm}
	u.FederatedIdentities = []kc.FederatedIdentityRep{{IdentityProvider: IdPAlias, UserID: s.BrokerUserID(j), UserName: u.Username}}
	return u
}

// linkedUsers are a tenant realm's users linked to the identity-provider
// realm's (all of them, when the spec has one), with Keycloak's default
// roles of realm.
func (s Spec) linkedUsers(realm string) []kc.UserRep {
	var us []kc.UserRep
	for j := 1; j <= s.Content.BrokerUsers; j++ {
		us = append(us, s.LinkedUser(realm, j))
	}
	return us
}

// BrokerSecret is the secret of BrokerClientID.
func (s Spec) BrokerSecret() string { return derive(s.Seed, "broker-secret")[:32] }

// brokerPolicy hashes the identity-provider realm's passwords.
var brokerPolicy = Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}

// identityProviders are a tenant realm's identity providers: the
// dataset's identity-provider realm at base (the target's URL), when the
// spec has one.
func (b builder) identityProviders() []kc.IdentityProviderRep {
	s := b.s
	if s.Content.BrokerUsers == 0 {
		return nil
	}
	cfg := map[string]string{
		"clientId": BrokerClientID, "clientSecret": s.BrokerSecret(), "clientAuthMethod": "client_secret_post",
		"useJwksUrl": "true", "validateSignature": "true", "defaultScope": "openid profile email", "syncMode": "IMPORT", "pkceEnabled": "false",
	}
	return []kc.IdentityProviderRep{{Alias: IdPAlias, ProviderID: "oidc", Enabled: true, TrustEmail: true,
		Config: RetargetIdP(cfg, b.base, s.IdPRealm())}}
}

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
	cred := brokerPolicy.Credential(s.Password(), []byte("kcbench-broker-1"))
	var parts []kc.PartialImportRep
	for lo := 1; lo <= n; lo += brokerPart {
		var us []kc.UserRep
		for j := lo; j <= min(n, lo+brokerPart-1); j++ {
			u := s.brokerUser(j)
			u.ID, u.Credentials = s.BrokerUserID(j), []kc.CredentialRep{cred}
			us = append(us, u)
		}
		parts = append(parts, kc.PartialImportRep{IfResourceExists: "SKIP", Users: us})
	}
	if err := sd.importParts(ctx, name, parts); err != nil {
		return fmt.Errorf("identity-provider realm %s: %w", name, err)
	}
	return sd.markRealmComplete(ctx, name)
}

// checkBroker refuses brokering where kcbench does not seed it.
func checkBroker(spec Spec, o SeedOptions) error {
	n := spec.Content.BrokerUsers
	switch {
	case n == 0:
		return nil
	case spec.Mode != ModeRealms:
		return errors.New("--broker-users: identity providers are seeded in realms mode (each tenant realm brokers the dataset's identity-provider realm); organizations with identity providers of their own are not seeded yet")
	case o.LDAP != nil:
		return errors.New("--broker-users with users in LDAP (--ldap): the users a brokered login makes would be written to the directory; seed them without --ldap")
	case o.Strategy == Rest:
		return errors.New("--broker-users: the rest strategy does not seed identity providers; use --strategy fast or clone")
	case o.Target == "":
		return errors.New("--broker-users: the identity providers need the target's URL")
	}
	return nil
}
