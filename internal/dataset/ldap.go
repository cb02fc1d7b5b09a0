package dataset

import (
	"context"
	"crypto/sha256"
	"fmt"
	"runtime"
	"strconv"

	"github.com/kcbench/kcbench/internal/directory"
	"github.com/kcbench/kcbench/internal/kc"
)

// Users in LDAP (--ldap). The dataset's users go into the directory, one
// OU per tenant below one OU per dataset (ou=<prefix>,<base>), with the
// dataset password hashed as the directory checks it on a simple bind
// (see DirectoryScheme); Keycloak's realms hold no users of their own but
// an LDAP user-storage provider (read-only) that finds them there and
// checks a password by binding as the user.

// Component types of Keycloak's user federation.
const (
	UserStorageType = "org.keycloak.storage.UserStorageProvider"
	LDAPMapperType  = "org.keycloak.storage.ldap.mappers.LDAPStorageMapper"
)

// LDAPLoader writes entries into the directory (parents first; entries that
// exist are kept). The default writes over LDAP (directory.Conn.Add); a
// local stack can pass a bulk load (slapadd while its slapd is stopped).
type LDAPLoader func(ctx context.Context, entries []directory.Entry) (directory.AddResult, error)

// DirectoryScheme is how the directory stores the dataset password:
// argon2id with the realm policy's parameters for the default and argon2
// policies (a bind costs the directory what a login costs Keycloak), a
// salted SHA-1 ({SSHA}) for the pbkdf2 policies (slapd checks no PBKDF2
// without an extra module; say so when comparing).
func (s Spec) DirectoryScheme() (directory.Scheme, directory.Argon2Params) {
	switch s.Policy.Algorithm {
	case "", "argon2":
		p := directory.KeycloakArgon2
		if s.Policy.Iterations > 0 {
			p.Iterations = uint32(s.Policy.Iterations)
		}
		return directory.Argon2, p
	}
	return directory.SSHA, directory.Argon2Params{}
}

// DatasetOU is the OU holding the dataset's tenants below base.
func (s Spec) DatasetOU(base string) string { return "ou=" + directory.EscapeDN(s.Prefix) + "," + base }

// TenantOU is tenant i's OU (its users' parent).
func (s Spec) TenantOU(base string, i int) string {
	return "ou=" + TenantID(i) + "," + s.DatasetOU(base)
}

// UserDN is user j of tenant i's DN.
func (s Spec) UserDN(base string, i, j int) string {
	return "uid=" + directory.EscapeDN(s.Username(i, j)) + "," + s.TenantOU(base, i)
}

// directoryPassword is user j of tenant i's userPassword: one hash shared
// by every user unless the spec asks for unique salts (then salted as the
// user's Keycloak credential would be).
func (b builder) directoryPassword(i, j int) (string, error) {
	scheme, p := b.s.DirectoryScheme()
	var salt [32]byte
	if b.s.UniqueSalts {
		salt = sha256.Sum256([]byte(fmt.Sprintf("kcbench-salt|%d|%d|%d", b.s.Seed, i, j)))
	} else {
		salt = sha256.Sum256([]byte(fmt.Sprintf("kcbench-salt|%d", b.s.Seed)))
	}
	return directory.Hash(scheme, p, b.s.Password(), salt[:16])
}

// directoryEntries are the dataset OU (when withParent) and tenants' OUs
// and users, parents first.
func (b builder) directoryEntries(ctx context.Context, base string, tenants []int, withParent bool) ([]directory.Entry, error) {
	s := b.s
	n := s.Content.Users
	hashes := make([]string, len(tenants)*n)
	if b.s.UniqueSalts {
		err := Parallel(ctx, len(hashes), runtime.GOMAXPROCS(0), func(ctx context.Context, k int) error {
			h, err := b.directoryPassword(tenants[k/n], k%n+1)
			hashes[k] = h
			return err
		})
		if err != nil {
			return nil, err
		}
	} else {
		h, err := b.directoryPassword(0, 0)
		if err != nil {
			return nil, err
		}
		for k := range hashes {
			hashes[k] = h
		}
	}
	var es []directory.Entry
	if withParent {
		es = append(es, directory.OU(s.Prefix, base))
	}
	for _, i := range tenants {
		es = append(es, directory.OU(TenantID(i), s.DatasetOU(base)))
	}
	for k, i := range tenants {
		ou := s.TenantOU(base, i)
		for j := 1; j <= n; j++ {
			es = append(es, directory.Person{UID: s.Username(i, j), FirstName: "User", LastName: userLastName(i, j),
				Email: s.Email(i, j), Password: hashes[k*n+j-1]}.Entry(ou))
		}
	}
	return es, nil
}

// ldapComponent is the LDAP user-storage provider of tenant i's realm
// (users one level below the tenant's OU), with the mappers Keycloak would make
// for a non-AD directory (uid username, cn first name, sn last name, mail
// email): a realm import does not make them.
func (b builder) ldapComponent(d *kc.Directory, i int) kc.ComponentRep {
	usersDN := b.s.TenantOU(d.BaseDN, i)
	cache := d.CachePolicy
	if cache == "" {
		cache = "DEFAULT"
	}
	one := func(v string) []string { return []string{v} }
	mapper := func(name, ldapAttr, userAttr string) kc.ComponentRep {
		return kc.ComponentRep{Name: name, ProviderID: "user-attribute-ldap-mapper", Config: map[string][]string{
			"ldap.attribute": one(ldapAttr), "user.model.attribute": one(userAttr), "read.only": one("true"),
			"always.read.value.from.ldap": one("false"), "is.mandatory.in.ldap": one("true"),
			"attribute.force.default": one("false"), "is.binary.attribute": one("false"),
		}}
	}
	return kc.ComponentRep{Name: "kcbench-ldap", ProviderID: "ldap", Config: map[string][]string{
		"enabled": one("true"), "priority": one("0"),
		"vendor": one("other"), "editMode": one("READ_ONLY"),
		"connectionUrl": one(d.URL), "authType": one("simple"),
		"bindDn": one(d.BindDN), "bindCredential": one(d.Password.Reveal()),
		"startTls": one("false"), "connectionPooling": one("true"),
		"usersDn": one(usersDN), "searchScope": one("1"),
		"usernameLDAPAttribute": one("uid"), "rdnLDAPAttribute": one("uid"), "uuidLDAPAttribute": one("entryUUID"),
		"userObjectClasses": one("inetOrgPerson, organizationalPerson"),
		"importEnabled":     one(strconv.FormatBool(d.Import)), "syncRegistrations": one("false"),
		"trustEmail": one("true"), "validatePasswordPolicy": one("false"), "pagination": one("true"),
		"cachePolicy": one(cache), "fullSyncPeriod": one("-1"), "changedSyncPeriod": one("-1"),
	}, SubComponents: map[string][]kc.ComponentRep{LDAPMapperType: {
		mapper("username", "uid", "username"),
		mapper("first name", "cn", "firstName"),
		mapper("last name", "sn", "lastName"),
		mapper("email", "mail", "email"),
	}}}
}
