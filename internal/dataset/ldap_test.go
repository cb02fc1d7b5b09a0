package dataset

import (
	"context"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/directory"
	"github.com/kcbench/kcbench/internal/kc"
)

func ldapSpec() Spec {
	return Spec{Mode: ModeRealms, Tenants: 3, Content: Content{Clients: 2, RealmRoles: 1, Groups: 1, Users: 4}, Prefix: "kcb", Seed: 7}
}

func TestDirectoryEntries(t *testing.T) {
	s := ldapSpec()
	b := newBuilder(s)
	es, err := b.directoryEntries(context.Background(), directory.Suffix, []int{2, 3}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1+2+2*4 {
		t.Fatalf("%d entries, want dataset OU + 2 tenant OUs + 8 users", len(es))
	}
	want := []string{"ou=kcb,dc=kcbench,dc=local", "ou=t00002,ou=kcb,dc=kcbench,dc=local", "ou=t00003,ou=kcb,dc=kcbench,dc=local",
		"uid=user-00001,ou=t00002,ou=kcb,dc=kcbench,dc=local"}
	for k, dn := range want {
		if es[k].DN != dn {
			t.Errorf("entry %d: %s, want %s", k, es[k].DN, dn)
		}
	}
	u := es[3]
	if u.DN != s.UserDN(directory.Suffix, 2, 1) || u.Get("uid") != s.Username(2, 1) || u.Get("mail") != s.Email(2, 1) ||
		u.Get("sn") != userLastName(2, 1) || u.Get("cn") == "" {
		t.Errorf("user entry %+v", u)
	}
	pw := u.Get("userPassword")
	if !strings.HasPrefix(pw, "{ARGON2}$argon2id$v=19$m=7168,t=5,p=1$") {
		t.Errorf("default policy: userPassword %q, want argon2id with Keycloak's parameters", pw)
	}
	if es[len(es)-1].Get("userPassword") != pw {
		t.Error("without unique salts the users do not share one hash")
	}

	s.UniqueSalts = true
	es, err = newBuilder(s).directoryEntries(context.Background(), directory.Suffix, []int{1}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1+4 || es[1].Get("userPassword") == es[2].Get("userPassword") {
		t.Errorf("unique salts: %d entries, hashes %q %q", len(es), es[1].Get("userPassword"), es[2].Get("userPassword"))
	}
}

func TestDirectoryScheme(t *testing.T) {
	for _, c := range []struct {
		policy string
		scheme directory.Scheme
		t      uint32
	}{
		{"default", directory.Argon2, 5},
		{"argon2:3", directory.Argon2, 3},
		{"pbkdf2-sha256:1", directory.SSHA, 0},
	} {
		p, _ := ParsePolicy(c.policy)
		s, a := Spec{Policy: p}.DirectoryScheme()
		if s != c.scheme || a.Iterations != c.t {
			t.Errorf("%s: %s t=%d, want %s t=%d", c.policy, s, a.Iterations, c.scheme, c.t)
		}
	}
}

func TestTenantRealmWithLDAP(t *testing.T) {
	s := ldapSpec()
	b := newBuilder(s)
	b.dir = &kc.Directory{URL: "ldap://127.0.0.1:3890", BindDN: directory.ManagerDN, Password: "pw", BaseDN: directory.Suffix, Import: true, CachePolicy: "NO_CACHE"}
	if r := b.tenantRealm(2); len(r.Users) != 0 {
		t.Errorf("with LDAP the realm holds %d users of its own", len(r.Users))
	}
	c := b.ldapComponent(b.dir, 2)
	for k, v := range map[string]string{
		"editMode": "READ_ONLY", "importEnabled": "true", "cachePolicy": "NO_CACHE", "usersDn": "ou=t00002,ou=kcb,dc=kcbench,dc=local",
		"connectionUrl": "ldap://127.0.0.1:3890", "bindDn": directory.ManagerDN, "bindCredential": "pw",
		"usernameLDAPAttribute": "uid", "rdnLDAPAttribute": "uid", "searchScope": "1",
	} {
		if got := c.Config[k]; len(got) != 1 || got[0] != v {
			t.Errorf("config %s = %v, want %s", k, got, v)
		}
	}
	if c.ProviderID != "ldap" {
		t.Errorf("provider %s", c.ProviderID)
	}
	attrs := map[string]string{}
	for _, m := range c.SubComponents[LDAPMapperType] {
		attrs[m.Config["user.model.attribute"][0]] = m.Config["ldap.attribute"][0]
	}
	for user, ldap := range map[string]string{"username": "uid", "firstName": "cn", "lastName": "sn", "email": "mail"} {
		if attrs[user] != ldap {
			t.Errorf("mapper %s ← %q, want %s", user, attrs[user], ldap)
		}
	}
	b.dir.Import, b.dir.CachePolicy = false, ""
	c = b.ldapComponent(b.dir, 1)
	if c.Config["importEnabled"][0] != "false" || c.Config["cachePolicy"][0] != "DEFAULT" {
		t.Errorf("import off: %v %v", c.Config["importEnabled"], c.Config["cachePolicy"])
	}
}

func TestSeedLDAPOrgsRefused(t *testing.T) {
	s := ldapSpec()
	s.Mode = ModeOrgs
	_, err := Seed(context.Background(), nil, s, SeedOptions{LDAP: &kc.Directory{URL: "ldap://127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), "realms mode") {
		t.Fatalf("err = %v, want a refusal naming realms mode", err)
	}
}
