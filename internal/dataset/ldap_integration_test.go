//go:build integration

package dataset_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/directory"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// TestLDAPUsers seeds realms whose users live only in the shared stack's
// private slapd (tenant 1 by LDAP adds, tenant 2 by slapadd while slapd is
// stopped): Keycloak's database holds none of them, a password grant for a
// seeded user succeeds through the LDAP provider (a bind as the user,
// which costs slapd CPU) and a wrong password is refused as Keycloak
// refuses it. A third tenant with import on gets the user copied into the
// database on login.
func TestLDAPUsers(t *testing.T) {
	s := shared.Get(t)
	e := newEnv(t)
	d := e.tg.LDAP
	if d == nil {
		t.Skip("slapd not installed (apt-get install slapd): the shared stack has no directory")
	}
	if d.PID == 0 || d.URL == "" || d.Password == "" {
		t.Fatalf("directory %+v: want the private slapd's URL, pid and password", d)
	}
	sp := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 1, Content: dataset.Content{Clients: 2, RealmRoles: 1, Groups: 1, Users: 3},
		Prefix: "ldapu", Seed: 11}
	mf := filepath.Join(t.TempDir(), "ldap.json")
	if _, err := dataset.Seed(e.ctx, e.adm, sp, dataset.SeedOptions{ManifestPath: mf, Target: e.tg.BaseURL, LDAP: d, Strategy: dataset.Clone}); err != nil {
		t.Fatal(err)
	}
	sp.Tenants = 2
	res, err := dataset.Seed(e.ctx, e.adm, sp, dataset.SeedOptions{ManifestPath: mf, Target: e.tg.BaseURL, LDAP: d, LDAPLoad: s.BulkLoadLDAP})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tenants != 2 || res.Added != 1 {
		t.Fatalf("grow: %+v", res)
	}
	d = s.Target().LDAP // slapd restarted for slapadd: a new pid

	conn := directory.Conn{URL: d.URL, BindDN: d.BindDN, Password: d.Password.Reveal()}
	have, err := conn.ExistingDNs(e.ctx, sp.DatasetOU(d.BaseDN))
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 2 + 2*3; len(have) != want {
		t.Errorf("the directory holds %d entries of the dataset, want %d", len(have), want)
	}

	// Keycloak's database holds no user of the dataset.
	pg, err := pgx.Connect(e.ctx, e.db.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close(e.ctx)
	countUsers := func() int {
		var n int
		if err := pg.QueryRow(e.ctx, `SELECT count(*) FROM user_entity u JOIN realm r ON r.id = u.realm_id
WHERE r.name = ANY($1) AND u.service_account_client_link IS NULL`, []string{sp.RealmOf(1), sp.RealmOf(2)}).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := countUsers(); n != 0 {
		t.Errorf("Keycloak's database holds %d users of the LDAP dataset, want 0", n)
	}

	cpu0, err := stack.CPUTime(d.PID)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		realm, client := sp.RealmOf(i), kc.OAuthClient{ID: sp.BackendClient(i, 1), Secret: sp.ClientSecret(i, sp.BackendClient(i, 1))}
		for j := 1; j <= 3; j++ {
			tok, err := e.c.PasswordGrant(e.ctx, realm, client, sp.Username(i, j), sp.Password(), "openid")
			if err != nil || tok.AccessToken == "" {
				t.Fatalf("password grant for %s in %s (user in LDAP): %v", sp.Username(i, j), realm, err)
			}
		}
		_, err := e.c.PasswordGrant(e.ctx, realm, client, sp.Username(i, 1), sp.Password()+"x", "")
		var ae *kc.APIError
		if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Body, `"invalid_grant"`) || !strings.Contains(ae.Body, "Invalid user credentials") {
			// what Keycloak answers for a wrong password in its own database too
			t.Fatalf("wrong password in %s: %v, want 400 invalid_grant \"Invalid user credentials\"", realm, err)
		}
	}
	cpu1, _ := stack.CPUTime(d.PID)
	// 6 good and 2 bad binds with argon2id (t=5, m=7 MiB): tens of ms each.
	if cpu1-cpu0 < 20*time.Millisecond {
		t.Errorf("slapd used %v CPU for 8 logins: the binds did not reach it?", cpu1-cpu0)
	}
	t.Logf("slapd CPU for 8 logins: %v", cpu1-cpu0)
	if n := countUsers(); n != 0 {
		t.Errorf("after logins with import off, Keycloak's database holds %d users, want 0", n)
	}

	// --ldap-import on: a third tenant whose provider imports; a login
	// copies the user into Keycloak's database (the password is still
	// checked by a bind).
	imp := *d
	imp.Import = true
	sp.Tenants = 3
	if _, err := dataset.Seed(e.ctx, e.adm, sp, dataset.SeedOptions{ManifestPath: mf, Target: e.tg.BaseURL, LDAP: &imp}); err != nil {
		t.Fatal(err)
	}
	client := kc.OAuthClient{ID: sp.BackendClient(3, 1), Secret: sp.ClientSecret(3, sp.BackendClient(3, 1))}
	if _, err := e.c.PasswordGrant(e.ctx, sp.RealmOf(3), client, sp.Username(3, 1), sp.Password(), ""); err != nil {
		t.Fatalf("password grant with import on: %v", err)
	}
	if _, err := e.c.PasswordGrant(e.ctx, sp.RealmOf(3), client, sp.Username(3, 1), "wrong", ""); err == nil {
		t.Error("import on: a wrong password is accepted")
	}
	var imported int
	if err := pg.QueryRow(e.ctx, `SELECT count(*) FROM user_entity u JOIN realm r ON r.id = u.realm_id
WHERE r.name = $1 AND u.service_account_client_link IS NULL AND u.federation_link IS NOT NULL`, sp.RealmOf(3)).Scan(&imported); err != nil {
		t.Fatal(err)
	}
	if imported != 1 {
		t.Errorf("import on: %d federated users in Keycloak's database after one login, want 1", imported)
	}
}

// TestLDAPBadInput: a missing slapd, an unreachable --ldap-url and a wrong
// bind password fail the start with one clear line, before anything runs.
func TestLDAPBadInput(t *testing.T) {
	s := shared.Get(t)
	d := s.Target().LDAP
	for _, c := range []struct {
		name string
		set  func(*stack.Config)
		want string
	}{
		{"slapd missing", func(c *stack.Config) {
			c.LDAP = stack.LDAPOptions{Server: stack.LDAPSlapd, Slapd: "/nonexistent/slapd"}
		}, "apt-get install slapd"},
		{"unreachable", func(c *stack.Config) {
			c.LDAP = stack.LDAPOptions{External: &stack.ExternalLDAP{URL: "ldap://127.0.0.1:1", BindDN: "cn=admin,dc=x", Password: "p", BaseDN: "dc=x"}}
		}, "unreachable"},
		{"wrong password", func(c *stack.Config) {
			if d == nil {
				t.Skip("no private slapd to bind to")
			}
			c.LDAP = stack.LDAPOptions{External: &stack.ExternalLDAP{URL: d.URL, BindDN: d.BindDN, Password: "wrong", BaseDN: d.BaseDN}}
		}, "invalid credentials"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := stacktest.Config(shared.Dirs, "ldapbad")
			c.set(&cfg)
			t0 := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := stack.Start(ctx, cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %v, want one line saying %q", err, c.want)
			}
			if time.Since(t0) > 20*time.Second {
				t.Errorf("the error took %v: it must come before anything starts", time.Since(t0))
			}
			if _, err := os.Stat(filepath.Join(shared.Dirs.State, "stacks", "ldapbad")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused start left a folder: %v", err)
			}
		})
	}
}
