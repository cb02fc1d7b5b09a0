// Package directory is the LDAP side of kcbench's "users in LDAP" variant:
// entries (the dataset's users as inetOrgPerson), their LDIF form for an
// offline bulk load, writing them over LDAP in bulk, the password hashes a
// directory server checks on a simple bind, and the one check that a
// directory answers and the bind credentials are right.
//
// It knows nothing of Keycloak, datasets or stacks: dataset turns tenants
// into Entries, stack runs the private slapd; both import this package,
// never the other way.
package directory
