//go:build integration

package dataset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// The Keycloak lines the clone is checked on, and the database schemas.
// `make test` takes the oldest line on a stack whose Keycloak keeps its
// tables in a schema of their own (--db-schema), the newest in the default
// schema (the shared stack); `make test-long` adds the newest in its own
// schema. `make test-matrix` sets
// KCBENCH_TEST_KC_VERSIONS to every supported line and
// KCBENCH_TEST_DB_SCHEMAS to "default,kcbench" (a stack each).
const (
	defaultTestVersions = "26.0.0,26.7.3"
	defaultTestSchemas  = "kcbench"
)

func envList(name, def string) []string {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestCloneLikeFast seeds 3 tenants with the fast strategy and 3 with the
// clone strategy, in both modes, and checks through the admin API, the
// token endpoint and the database that a cloned tenant cannot be told from
// a fast one: every tenant's signing keys (kid and public key) and client
// secrets are its own; unique salts are distinct in the database and
// shared ones are what the manifest says; a password grant, a
// client-credentials grant and a login through the form work in every
// cloned tenant; the dataset verifies. On the shared stack (default
// schema, default version), then on a stack per Keycloak line and schema.
func TestCloneLikeFast(t *testing.T) {
	t.Run("shared-stack", func(t *testing.T) { cloneLikeFast(t, newEnv(t)) })
	if testing.Short() {
		return
	}
	for _, v := range envList("KCBENCH_TEST_KC_VERSIONS", defaultTestVersions) {
		for _, schema := range envList("KCBENCH_TEST_DB_SCHEMAS", defaultTestSchemas) {
			t.Run(v+"/"+schema, func(t *testing.T) {
				if v == stack.DefaultKeycloakVersion {
					stacktest.Long(t) // the shared stack's line, in its default schema
				}
				e := versionEnv(t, v, schema)
				cloneLikeFast(t, e)
				if !t.Failed() {
					t.Logf("Keycloak %s, schema %s: cloned tenants are like fast ones", v, schema)
				}
			})
		}
	}
}

// versionEnv starts a stack of Keycloak version v whose tables are in
// schema ("default": Keycloak's default), stopped when the test ends.
func versionEnv(t *testing.T, v, schema string) *env {
	d, cleanup, err := stacktest.Dirs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	cfg := stacktest.Config(d, "v"+strings.ReplaceAll(v, ".", ""))
	cfg.Keycloak.Version = v
	cfg.Keycloak.ReadyTimeout = 12 * time.Minute // a first boot on a busy 2-core machine took over 5
	if schema != "default" {
		cfg.Keycloak.ExtraOptions = []string{"--db-schema=" + schema}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	s, err := stack.Start(ctx, cfg)
	if s != nil {
		t.Cleanup(func() {
			if err := s.Down(context.Background()); err != nil {
				t.Errorf("down: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatalf("stack %s: %v", v, err)
	}
	return envOf(t, s)
}

func cloneLikeFast(t *testing.T, e *env) {
	pol := dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}
	for _, mode := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		t.Run(string(mode), func(t *testing.T) {
			e.t = t
			dir := t.TempDir()
			content := dataset.DefaultContent
			content.UMAResources = 2 // authorization services' tables cloned too
			content.SAMLClients = 1  // a SAML client, its attributes cloned
			content.BrokerUsers = 2  // identity providers (orgs mode: an organization's, by domain), linked users
			// a shape: composite roles, several roles and groups a user,
			// client roles, claim mappers (their rows cloned too)
			content.Shape = dataset.Shape{RolesPerUser: 2, ClientRolesPerUser: 1, GroupsPerUser: 2, CompositeDepth: 2, CompositeWidth: 2, MappersPerClient: 3, GroupDepth: 2, GroupFanout: 2, ScopesPerClient: 2}
			fs := dataset.Spec{Mode: mode, Tenants: 3, Content: content, Policy: pol, Prefix: "lf" + string(mode[0]), Seed: 11}
			cs := fs
			cs.Prefix, cs.UniqueSalts = "lc"+string(mode[0]), true
			e.seed(fs, dataset.Fast, filepath.Join(dir, "fast.json"))
			e.seed(cs, dataset.Clone, filepath.Join(dir, "clone.json"))
			e.verify(filepath.Join(dir, "fast.json"), 3)
			e.verify(filepath.Join(dir, "clone.json"), 3)
			fm, _ := dataset.ReadManifest(filepath.Join(dir, "fast.json"))
			cm, _ := dataset.ReadManifest(filepath.Join(dir, "clone.json"))

			// Keys and client secrets: every realm its own.
			realms := map[string]bool{}
			for _, m := range []*dataset.Manifest{fm, cm} {
				for _, r := range m.Realms {
					realms[r] = true
				}
			}
			e.distinctKeys(realms)
			e.distinctSecrets(realms)

			// Salts, read from the database.
			if fm.Salts != dataset.SaltsShared || cm.Salts != dataset.SaltsPerUser {
				t.Errorf("manifests say salts %q (fast, shared) and %q (clone, unique)", fm.Salts, cm.Salts)
			}
			if n, users := e.salts(fs); n != 1 || users != 30 {
				t.Errorf("fast, shared salts: %d distinct salts among %d users, want 1 among 30", n, users)
			}
			if n, users := e.salts(cs); n != 30 || users != 30 {
				t.Errorf("clone, unique salts: %d distinct salts among %d users, want 30", n, users)
			}

			// Every cloned tenant: password grant, client credentials, the
			// login form.
			for i := 1; i <= 3; i++ {
				tn := cm.Tenant(i)
				if err := e.login(cm, i, 1+i%10); err != nil {
					t.Errorf("cloned tenant %d: password grant: %v", i, err)
				}
				if _, err := e.c.ClientCredentials(e.ctx, tn.Realm, kc.OAuthClient{ID: tn.Backend, Secret: tn.BackendSecret}, ""); err != nil {
					t.Errorf("cloned tenant %d: client credentials: %v", i, err)
				}
				// The resource server: its role policy names the realm's
				// default role by id, remapped in realms mode.
				tr, err := e.c.PasswordGrant(e.ctx, tn.Realm, kc.OAuthClient{ID: tn.Backend, Secret: tn.BackendSecret}, cm.Username(i, 1), cm.Password, "")
				if err == nil {
					shapeInToken(t, cs, i, 1, tn.Backend, tr.AccessToken)
					_, err = e.c.UMAGrant(e.ctx, tn.Realm, tr.AccessToken, cs.UMAClient(i), dataset.UMAResource(2)+"#"+dataset.UMAScope)
				}
				if err != nil {
					t.Errorf("cloned tenant %d: uma grant: %v", i, err)
				}
				ar := kc.NewAuthRequest(tn.WebClient, dataset.RedirectURI, "openid")
				if _, err := e.c.NewBrowser().Login(e.ctx, tn.Realm, kc.OAuthClient{ID: tn.WebClient}, ar, cm.Username(i, 2), cm.Password); err != nil {
					t.Errorf("cloned tenant %d: login form: %v", i, err)
				}
				if err := e.samlLogin(cs, i, cm.Username(i, 3), cm.Password); err != nil {
					t.Errorf("cloned tenant %d: SAML login: %v", i, err)
				}
				if i == 3 {
					e.brokered(cs, tn)
				}
			}
			e.seededSessions(cm, filepath.Join(dir, "clone.json"))
			if mode == dataset.ModeRealms {
				e.bulkLikeFast(pol)
			}
		})
	}
}

// bulkLikeFast seeds one realms-mode tenant past a part's users and
// clients both ways: by clone the admin API makes its first 10 users and
// 3 clients and the others are copies of them. Read back through the admin
// API the two are the same (every user's roles and groups, every client's
// switches and mappers); the last user (a copy, with its own salt) logs
// in and its token carries the shape; the last client's service account
// gets a token.
func (e *env) bulkLikeFast(pol dataset.Policy) {
	t := e.t
	dir := t.TempDir()
	content := dataset.DefaultContent
	content.Users, content.Clients = 130, 53 // 120 users and 50 clients copied
	content.BrokerUsers = 2                  // an identity-provider realm, its provider copied
	content.Shape = dataset.Shape{RolesPerUser: 2, ClientRolesPerUser: 1, GroupsPerUser: 2, CompositeDepth: 2, CompositeWidth: 2, MappersPerClient: 3, GroupDepth: 2, GroupFanout: 2, ScopesPerClient: 2}
	fs := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 1, Content: content, Policy: pol, Prefix: "bf", Seed: 13}
	cs := fs
	cs.Prefix, cs.UniqueSalts = "bc", true
	e.seed(fs, dataset.Fast, filepath.Join(dir, "fast.json"))
	res := e.seed(cs, dataset.Clone, filepath.Join(dir, "clone.json"))
	if res.Added != 1 {
		t.Fatalf("clone: %+v", res)
	}
	e.verify(filepath.Join(dir, "clone.json"), 1)
	if f, c := e.normalized(fs), e.normalized(cs); !reflect.DeepEqual(f, c) {
		t.Errorf("copies differ from users and clients made through the admin API:\nfast:  %s\nclone: %s", strings.Join(f, "\n       "), strings.Join(c, "\n       "))
	}
	if n, users := e.salts(cs); n != 130 || users != 130 {
		t.Errorf("clone, unique salts: %d distinct salts among %d users, want 130", n, users)
	}
	cm := mustManifest(t, filepath.Join(dir, "clone.json"))
	tn := cm.Tenant(1)
	last := kc.OAuthClient{ID: cs.BackendClient(1, content.Clients-1), Secret: cs.ClientSecret(1, cs.BackendClient(1, content.Clients-1))}
	if tr, err := e.c.ClientCredentials(e.ctx, tn.Realm, last, ""); err != nil {
		t.Errorf("the last client (a copy): client credentials: %v", err)
	} else {
		var c struct {
			Scope1 string `json:"kcb_scope_1"`
		}
		if err := kc.TokenClaims(tr.AccessToken, &c); err != nil || c.Scope1 != "value-1" {
			t.Errorf("the last client (a copy): its token's claim of client scope 1: %q, %v", c.Scope1, err)
		}
	}
	tr, err := e.c.PasswordGrant(e.ctx, tn.Realm, kc.OAuthClient{ID: tn.Backend, Secret: tn.BackendSecret}, cm.Username(1, content.Users), cm.Password, "")
	if err != nil {
		t.Fatalf("the last user (a copy): password grant: %v", err)
	}
	shapeInToken(t, cs, 1, content.Users, tn.Backend, tr.AccessToken)
	e.brokered(cs, tn)
}

// brokered logs identity-provider user 1 in to tenant tn through its
// identity provider, each time in a new browser: as the linked user the
// dataset holds, then (that user deleted) through first-broker-login,
// then as the user that made and linked. In orgs mode the provider is
// the organization's, which Keycloak's identity-first login chooses by
// the email's domain, and the user made by first-broker-login is a
// member of the organization.
func (e *env) brokered(s dataset.Spec, tn dataset.Tenant) {
	t := e.t
	for k, wantFirst := range []bool{false, true, false} {
		if wantFirst {
			u, err := e.adm.FindUser(e.ctx, tn.Realm, s.BrokerUsername(tn.Index, 1))
			if err == nil && u != nil {
				err = e.adm.DeleteUser(e.ctx, tn.Realm, u.ID)
			}
			if err != nil || u == nil {
				t.Fatalf("the linked user: %v, %v", u, err)
			}
		}
		b := e.c.NewBrowser()
		ar := kc.NewAuthRequest(tn.WebClient, dataset.RedirectURI, kc.ScopeOpenID)
		var page *kc.LoginPage
		var err error
		if s.Mode == dataset.ModeOrgs {
			if page, err = b.OpenLogin(e.ctx, tn.Realm, ar); err == nil {
				page, err = b.SubmitEmailForIdP(e.ctx, page, ar, s.BrokerEmail(tn.Index, 1))
			}
		} else {
			page, err = b.OpenBrokered(e.ctx, tn.Realm, dataset.IdPAlias, ar)
		}
		if err != nil {
			t.Fatalf("brokered login %d: page: %v", k+1, err)
		}
		endpoint, err := b.SubmitIdPLogin(e.ctx, page, s.BrokerUsername(tn.Index, 1), s.Password())
		if err != nil {
			t.Fatalf("brokered login %d: identity provider's form: %v", k+1, err)
		}
		code, first, err := b.FinishBrokered(e.ctx, endpoint, ar)
		if err == nil {
			_, err = e.c.ExchangeCode(e.ctx, tn.Realm, kc.OAuthClient{ID: tn.WebClient}, code, ar.RedirectURI, ar.CodeVerifier)
		}
		if err != nil || first != wantFirst {
			t.Fatalf("brokered login %d: first-broker-login %v (want %v), %v", k+1, first, wantFirst, err)
		}
	}
	if s.Mode == dataset.ModeOrgs {
		orgs, err := e.adm.Organizations(e.ctx, tn.Realm, tn.Org, 0, 2)
		if err != nil || len(orgs) != 1 {
			t.Fatalf("organization %s: %v, %v", tn.Org, orgs, err)
		}
		n, err := e.adm.Count(e.ctx, kc.RealmPath(tn.Realm, "organizations", orgs[0].ID, "members", "count"))
		if want := s.Content.Users + s.Content.BrokerUsers; err != nil || n != want {
			t.Errorf("organization %s after a first visit: %d members, %v; want %d (the user first-broker-login made is one)", tn.Org, n, err, want)
		}
	}
}

// samlLogin logs user in to tenant i's SAML client and verifies the
// response (signed with the tenant realm's key, the user its subject).
func (e *env) samlLogin(s dataset.Spec, i int, user, password string) error {
	acs, _ := url.Parse(dataset.SAMLConsumerURL)
	idp, err := e.c.SAMLIdP(e.ctx, s.RealmOf(i))
	if err != nil {
		return err
	}
	sp := idp.ServiceProvider(s.SAMLClient(i, 1), acs)
	req, err := sp.NewRequest("")
	if err != nil {
		return err
	}
	b := e.c.NewBrowser()
	page, err := b.OpenSAML(e.ctx, sp, req)
	if err != nil {
		return err
	}
	resp, err := b.SubmitSAMLLogin(e.ctx, page, user, password)
	if err != nil {
		return err
	}
	name, err := sp.Verify(resp, req.ID)
	if err == nil && !strings.EqualFold(name, user) {
		err = fmt.Errorf("the subject is %q", name)
	}
	return err
}

// shapeInToken checks that user j of tenant i's access token carries
// the shape: its 2 roles and their composites 2 levels deep, its client
// role, its 2 groups, the 3 claims of the backend's mappers.
func shapeInToken(t *testing.T, s dataset.Spec, i, j int, backend, token string) {
	t.Helper()
	var c struct {
		Realm struct {
			Roles []string `json:"roles"`
		} `json:"realm_access"`
		Resource map[string]struct {
			Roles []string `json:"roles"`
		} `json:"resource_access"`
		Groups []string `json:"groups"`
		Kcb1   string   `json:"kcb_1"`
		Kcb3   string   `json:"kcb_3"`
		Scope2 string   `json:"kcb_scope_2"`
	}
	if err := kc.TokenClaims(token, &c); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range s.UserRoles(i, j) {
		want = append(want, r, r+"-c1", r+"-c2", r+"-c1-1", r+"-c2-2")
	}
	for _, r := range want {
		if !slices.Contains(c.Realm.Roles, r) {
			t.Errorf("tenant %d: the token's realm roles %v lack %s", i, c.Realm.Roles, r)
		}
	}
	groups := s.UserGroupNames(i, j) // the leaves' names, or with trees their full paths
	if s.Content.GroupDepth > 0 {
		groups = s.UserGroupPaths(i, j)
	}
	slices.Sort(groups)
	slices.Sort(c.Groups)
	if !slices.Contains(c.Resource[backend].Roles, dataset.ClientRole(1)) || !slices.Equal(c.Groups, groups) || c.Kcb1 != "value-1" || c.Kcb3 != "value-3" {
		t.Errorf("tenant %d: client roles %v, groups %v (want %v), claims %q %q", i, c.Resource[backend].Roles, c.Groups, groups, c.Kcb1, c.Kcb3)
	}
	if s.Content.ScopesPerClient >= 2 && c.Scope2 != "value-2" {
		t.Errorf("tenant %d: the claim of client scope 2: %q", i, c.Scope2)
	}
}

// seededSessions seeds online and offline sessions into the dataset of
// manifest m (at mpath), then checks that Keycloak counts them, that a
// seeded session of the last (cloned) tenant refreshes with a token
// signed as Keycloak signs its own, online and offline, that a token for
// a session nobody seeded does not, that the dataset verifies, and that
// seeding again writes nothing.
func (e *env) seededSessions(m *dataset.Manifest, mpath string) {
	t := e.t
	want := dataset.SessionSpec{Online: 30, Offline: 30}
	o := dataset.SessionOptions{DB: e.db, ManifestPath: mpath}
	res, err := dataset.SeedSessions(e.ctx, e.adm, m, want, o)
	if err != nil {
		t.Fatalf("seed sessions: %v", err)
	}
	t.Logf("sessions: found %+v, wrote %+v in %s", res.Found, res.Written, res.Duration)
	var counted dataset.SessionSpec
	for _, r := range m.Realms {
		on, off, err := e.adm.SessionStats(e.ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		counted.Online, counted.Offline = counted.Online+on, counted.Offline+off
	}
	if counted.Online < want.Online || counted.Offline != want.Offline {
		t.Errorf("Keycloak counts %+v sessions, want %+v", counted, want)
	}
	if v, err := dataset.Verify(e.ctx, e.adm, mustManifest(t, mpath), nil); err != nil || !v.OK() || v.Sessions == nil {
		t.Errorf("verify after seeding sessions: %v %+v", err, v.Sessions)
	}
	if res, err := dataset.SeedSessions(e.ctx, e.adm, mustManifest(t, mpath), want, o); err != nil || res.Written != (dataset.SessionSpec{}) {
		t.Errorf("seeding the same sessions again: %v, wrote %+v", err, res)
	}
	tn := m.Tenant(m.Tenants())
	cl := kc.OAuthClient{ID: tn.Backend, Secret: tn.BackendSecret}
	for _, offline := range []bool{false, true} {
		var sid string
		err := e.withDB(func(conn *pgx.Conn) error {
			return conn.QueryRow(e.ctx, `SELECT u.user_session_id FROM offline_user_session u
				JOIN offline_client_session cs ON cs.user_session_id = u.user_session_id AND cs.offline_flag = u.offline_flag
				JOIN client c ON c.id = cs.client_id JOIN realm r ON r.id = u.realm_id
				WHERE r.name = $1 AND c.client_id = $2 AND u.offline_flag = $3 ORDER BY u.created_on LIMIT 1`,
				tn.Realm, tn.Backend, map[bool]string{false: "0", true: "1"}[offline]).Scan(&sid)
		})
		if err != nil {
			t.Fatalf("a seeded session (offline %v) of %s: %v", offline, tn.Realm, err)
		}
		st, err := dataset.MintSessionToken(e.ctx, e.db, e.tg.BaseURL, tn.Realm, sid)
		if err != nil {
			t.Fatal(err)
		}
		if tr, err := e.c.Refresh(e.ctx, tn.Realm, cl, st.Token); err != nil || tr.AccessToken == "" {
			t.Errorf("a seeded session (offline %v) of %s does not refresh: %v", offline, tn.Realm, err)
		}
		// Ended, the session's token is refused.
		if err := e.adm.DeleteSession(e.ctx, tn.Realm, sid, offline); err != nil {
			t.Fatal(err)
		}
		if _, err := e.c.Refresh(e.ctx, tn.Realm, cl, st.Token); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
			t.Errorf("the token of an ended session (offline %v): %v, want invalid_grant", offline, err)
		}
	}
	// Seeding again makes up for the two ended.
	if res, err := dataset.SeedSessions(e.ctx, e.adm, mustManifest(t, mpath), want, o); err != nil || res.Written != (dataset.SessionSpec{Online: 1, Offline: 1}) {
		t.Errorf("seeding again after two sessions ended: %v, wrote %+v, want one of each", err, res)
	}
	// A session table with a column the writer does not know (another
	// Keycloak line): refused, nothing written.
	alter := func(sql string) {
		if err := e.withDB(func(conn *pgx.Conn) error { _, err := conn.Exec(e.ctx, sql); return err }); err != nil {
			t.Fatal(err)
		}
	}
	alter("ALTER TABLE offline_user_session ADD COLUMN kcbench_unknown integer")
	res, err = dataset.SeedSessions(e.ctx, e.adm, mustManifest(t, mpath), dataset.SessionSpec{Online: 40, Offline: 40}, o)
	alter("ALTER TABLE offline_user_session DROP COLUMN kcbench_unknown")
	if err == nil || !strings.Contains(err.Error(), "columns kcbench does not know (kcbench_unknown)") || res != nil {
		t.Errorf("a session table with an unknown column: %v, %+v", err, res)
	}
	// Exactly fewer: the online ones ended and written again, the surplus
	// of offline ones deleted.
	o.Exact = true
	fewer := dataset.SessionSpec{Online: 6, Offline: 6}
	if res, err := dataset.SeedSessions(e.ctx, e.adm, mustManifest(t, mpath), fewer, o); err != nil || res.Written.Offline != 0 {
		t.Errorf("exactly %+v: %v, wrote %+v", fewer, err, res)
	}
	// (counted in the database: Keycloak 26.0 counts the online sessions
	// it holds in its cache too, until it restarts)
	var after dataset.SessionSpec
	err = e.withDB(func(conn *pgx.Conn) error {
		return conn.QueryRow(e.ctx, `SELECT count(*) FILTER (WHERE u.offline_flag = '0'), count(*) FILTER (WHERE u.offline_flag = '1')
			FROM offline_user_session u JOIN realm r ON r.id = u.realm_id WHERE r.name = ANY($1)`, m.Realms).Scan(&after.Online, &after.Offline)
	})
	if err != nil || after != fewer {
		t.Errorf("exactly %+v: the database holds %+v (%v)", fewer, after, err)
	}
}

func mustManifest(t *testing.T, path string) *dataset.Manifest {
	t.Helper()
	m, err := dataset.ReadManifest(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withDB calls f with a connection to Keycloak's database.
func (e *env) withDB(f func(conn *pgx.Conn) error) error {
	conn, err := pgx.Connect(e.ctx, string(e.db))
	if err != nil {
		return err
	}
	defer conn.Close(e.ctx)
	return f(conn)
}

// distinctKeys checks that no two realms share a key id or a public key
// (the admin API's keys: RSA signing and encryption, HMAC, AES).
func (e *env) distinctKeys(realms map[string]bool) {
	e.t.Helper()
	seen := map[string]string{}
	for r := range realms {
		var keys struct {
			Keys []struct {
				Kid, Type, ProviderID, PublicKey, Algorithm string
			} `json:"keys"`
		}
		if err := e.adm.Do(e.ctx, "GET", kc.RealmPath(r, "keys"), nil, &keys); err != nil {
			e.t.Fatal(err)
		}
		kinds := map[string]bool{}
		for _, k := range keys.Keys {
			kinds[k.Type] = true
			for _, v := range []string{"kid " + k.Kid, "public key " + k.PublicKey} {
				if v == "public key " {
					continue
				}
				if other, dup := seen[v]; dup {
					e.t.Errorf("realms %s and %s share %s key's %s", other, r, k.Algorithm, v)
				}
				seen[v] = r
			}
		}
		if !kinds["RSA"] || !kinds["OCT"] {
			e.t.Errorf("realm %s keys: %+v", r, keys.Keys)
		}
	}
}

// distinctSecrets checks that no two confidential clients of the realms
// share a secret (kcbench's backends and Keycloak's own, read through
// the admin API).
func (e *env) distinctSecrets(realms map[string]bool) {
	e.t.Helper()
	seen := map[string]string{}
	n := 0
	for r := range realms {
		var clients []struct {
			ID, ClientID             string
			PublicClient, BearerOnly bool
			ClientAuthenticatorType  string
		}
		if err := e.adm.Do(e.ctx, "GET", kc.RealmPath(r, "clients")+"?first=0&max=1000", nil, &clients); err != nil {
			e.t.Fatal(err)
		}
		for _, c := range clients {
			if c.PublicClient || c.ClientAuthenticatorType != "client-secret" {
				continue
			}
			var sec struct{ Value string }
			if err := e.adm.Do(e.ctx, "GET", kc.RealmPath(r, "clients", c.ID, "client-secret"), nil, &sec); err != nil {
				e.t.Fatal(err)
			}
			if sec.Value == "" {
				continue
			}
			n++
			who := r + "/" + c.ClientID
			if other, dup := seen[sec.Value]; dup {
				e.t.Errorf("clients %s and %s share a secret", other, who)
			}
			seen[sec.Value] = who
		}
	}
	if n < len(realms) {
		e.t.Errorf("%d client secrets in %d realms", n, len(realms))
	}
}

// salts reads the password salts of the users of s's tenants from the
// database: distinct salts and users.
func (e *env) salts(s dataset.Spec) (distinct, users int) {
	e.t.Helper()
	conn, err := pgx.Connect(e.ctx, string(e.db))
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Close(e.ctx)
	var names []string
	for i := 1; i <= s.Tenants; i++ {
		for j := 1; j <= s.Content.Users; j++ {
			names = append(names, strings.ToLower(s.Username(i, j)))
		}
	}
	realms := map[string]bool{}
	for i := 1; i <= s.Tenants; i++ {
		realms[s.RealmOf(i)] = true
	}
	var realmList []string
	for r := range realms {
		realmList = append(realmList, r)
	}
	rows, err := conn.Query(e.ctx, `SELECT c.secret_data FROM credential c JOIN user_entity u ON u.id = c.user_id
JOIN realm r ON r.id = u.realm_id WHERE c.type = 'password' AND r.name = ANY($1) AND u.username = ANY($2)`, realmList, names)
	if err != nil {
		e.t.Fatal(err)
	}
	data, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		e.t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range data {
		var sd struct{ Salt string }
		if err := json.Unmarshal([]byte(d), &sd); err != nil || sd.Salt == "" {
			e.t.Fatalf("secret data %q: %v", d, err)
		}
		seen[sd.Salt] = true
	}
	return len(seen), len(data)
}

// TestCloneRefusesUnknownSchema copies Keycloak's schema with its data,
// adds a column (then a table) the copy rules do not know, and seeds a
// grown dataset by clone against the copy: the clone stops, naming the
// column (the table), and writes nothing.
func TestCloneRefusesUnknownSchema(t *testing.T) {
	e := newEnv(t)
	s := spec(dataset.ModeRealms, "us", 1)
	mf := filepath.Join(t.TempDir(), "m.json")
	e.seed(s, dataset.Fast, mf)
	conn, err := pgx.Connect(e.ctx, string(e.db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(e.ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(e.ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`DROP SCHEMA IF EXISTS kcbench_probe CASCADE`)
	exec(`CREATE SCHEMA kcbench_probe`)
	t.Cleanup(func() { conn.Exec(context.Background(), `DROP SCHEMA IF EXISTS kcbench_probe CASCADE`) })
	rows, err := conn.Query(e.ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema()`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		id := pgx.Identifier{tb}.Sanitize()
		exec(`CREATE TABLE kcbench_probe.` + id + ` AS TABLE ` + id)
	}
	u, err := url.Parse(string(e.db))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", "kcbench_probe")
	u.RawQuery = q.Encode()
	probe := kc.Secret(u.String())
	grow := spec(dataset.ModeRealms, "us", 2)
	for _, c := range []struct{ change, want string }{
		{`ALTER TABLE kcbench_probe.client ADD COLUMN kcbench_extra text`, "column client.kcbench_extra"},
		{`ALTER TABLE kcbench_probe.client DROP COLUMN kcbench_extra; CREATE TABLE kcbench_probe.kcbench_new (id text)`, "table kcbench_new"},
	} {
		exec(c.change)
		_, err := dataset.Seed(e.ctx, e.adm, grow, dataset.SeedOptions{Strategy: dataset.Clone, DB: probe, ManifestPath: filepath.Join(t.TempDir(), "p.json")})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("after %q: err = %v, want one naming %s", c.change, err, c.want)
		}
		t.Logf("%s: %v", c.want, err)
	}
	if realms, err := e.adm.Realms(e.ctx); err != nil {
		t.Fatal(err)
	} else {
		for _, r := range realms {
			if r.Realm == grow.RealmOf(2) {
				t.Fatalf("realm %s was made", r.Realm)
			}
		}
	}
}
