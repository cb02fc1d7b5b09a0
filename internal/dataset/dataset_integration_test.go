//go:build integration

package dataset_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

var shared stacktest.Shared

// TestMain shares one stack; with slapd installed it keeps a private
// directory too (TestLDAPUsers), and after down no slapd may be left.
func TestMain(m *testing.M) {
	if stacktest.SlapdInstalled() {
		shared.Configure = func(c *stack.Config) { c.LDAP.Server = stack.LDAPSlapd }
	}
	code := stacktest.Main(m, &shared)
	if code == 0 && shared.Stack != nil {
		if sl := shared.Stack.State().Slapd; sl != nil && sl.Proc.Alive() {
			fmt.Fprintf(os.Stderr, "slapd (pid %d) still runs after down\n", sl.Proc.PID)
			code = 1
		}
	}
	os.Exit(code)
}

type env struct {
	t   *testing.T
	ctx context.Context
	tg  kc.Target
	adm *kc.Admin
	c   *kc.Client
	db  kc.Secret
}

func newEnv(t *testing.T) *env { return envOf(t, shared.Get(t)) }

// envOf is the env of stack s.
func envOf(t *testing.T, s *stack.Stack) *env {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	tg := s.Target()
	// Seeding requests are long on a busy machine (a realm with tenants
	// inline on a Keycloak just booted): the CLI's seed client waits 30
	// minutes.
	c := kc.New(tg.BaseURL, tg.HTTPClient(5*time.Minute))
	db, err := s.DSN()
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ctx: ctx, tg: tg, adm: kc.NewAdmin(c, tg.Admin), c: c, db: db}
}

func spec(mode dataset.Mode, prefix string, tenants int) dataset.Spec {
	return dataset.Spec{Mode: mode, Tenants: tenants, Content: dataset.DefaultContent,
		Policy: dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, Prefix: prefix, Seed: 7}
}

// keyPool is the RSA key pool of the clone strategy's seeds (the fast
// strategy makes fresh keys, so that both ways are tested).
var keyPool = struct {
	once sync.Once
	p    *dataset.KeyPool
	err  error
}{}

func (e *env) pool() *dataset.KeyPool {
	e.t.Helper()
	keyPool.once.Do(func() {
		dir, err := os.MkdirTemp("", "kcbench-keys-")
		if err != nil {
			keyPool.err = err
			return
		}
		keyPool.p, keyPool.err = dataset.KeyPoolIn(dir)
	})
	if keyPool.err != nil {
		e.t.Fatal(keyPool.err)
	}
	return keyPool.p
}

func (e *env) seed(s dataset.Spec, strat dataset.Strategy, manifest string) *dataset.SeedResult {
	e.t.Helper()
	o := dataset.SeedOptions{Strategy: strat, ManifestPath: manifest, Target: e.tg.BaseURL}
	if strat == dataset.Clone {
		// The others read the target through the admin API only, as
		// against an external Keycloak.
		o.DB, o.Keys = e.db, e.pool()
	}
	res, err := dataset.Seed(e.ctx, e.adm, s, o)
	if err != nil {
		e.t.Fatalf("seed %s %s: %v", s.Mode, strat, err)
	}
	return res
}

func (e *env) verify(manifest string, tenants int) {
	e.t.Helper()
	m, err := dataset.ReadManifest(manifest)
	if err != nil {
		e.t.Fatal(err)
	}
	if m.Tenants() != tenants {
		e.t.Fatalf("manifest says %d tenants, want %d", m.Tenants(), tenants)
	}
	var (
		mu    sync.Mutex
		last  [2]int
		calls atomic.Int64
	)
	v, err := dataset.Verify(e.ctx, e.adm, m, func(done, total int) {
		calls.Add(1)
		mu.Lock()
		if done > last[0] {
			last = [2]int{done, total}
		}
		mu.Unlock()
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if calls.Load() == 0 || last[0] != last[1] {
		e.t.Errorf("progress: %d calls, last %d/%d", calls.Load(), last[0], last[1])
	}
	if !v.OK() {
		e.t.Fatalf("counts differ:\nexpected %+v\nactual   %+v", v.Expected, v.Actual)
	}
}

// login does a password grant as user j of tenant i with the manifest's
// credentials.
func (e *env) login(m *dataset.Manifest, i, j int) error {
	t := m.Tenant(i)
	_, err := e.c.Token(e.ctx, t.Realm, url.Values{
		"grant_type": {"password"}, "client_id": {t.Backend}, "client_secret": {t.BackendSecret},
		"username": {m.Username(i, j)}, "password": {m.Password},
	})
	return err
}

// poolHas reports whether modulus (base64url) is one of tenant i's keys
// in the key pool.
func (e *env) poolHas(i int, modulus string) bool {
	for j := range 2 {
		k, err := e.pool().Key(dataset.TenantKeyIndex(i, j))
		if err == nil && base64.RawURLEncoding.EncodeToString(k.N.Bytes()) == modulus {
			return true
		}
	}
	return false
}

// modesAndStrategies runs f for each mode with the fast and clone
// strategies.
func modesAndStrategies(t *testing.T, f func(t *testing.T, mode dataset.Mode, strat dataset.Strategy)) {
	for _, mode := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		for _, strat := range []dataset.Strategy{dataset.Fast, dataset.Clone} {
			t.Run(string(mode)+"/"+string(strat), func(t *testing.T) { f(t, mode, strat) })
		}
	}
}

func TestSeedBothModesVerifyAndLogin(t *testing.T) {
	e := newEnv(t)
	modesAndStrategies(t, func(t *testing.T, mode dataset.Mode, strat dataset.Strategy) {
		{
			e.t = t
			mf := filepath.Join(t.TempDir(), "m.json")
			s := spec(mode, "v"+string(mode[0])+string(strat[0]), 3)
			res := e.seed(s, strat, mf)
			if res.Added != 3 || res.Tenants != 3 {
				t.Fatalf("result %+v", res)
			}
			e.verify(mf, 3)
			m, _ := dataset.ReadManifest(mf)
			for i := 1; i <= 3; i++ {
				if err := e.login(m, i, 1+i%m.Spec.Content.Users); err != nil {
					t.Errorf("tenant %d: login: %v", i, err)
				}
			}
			if mode == dataset.ModeRealms {
				// The keys kcbench made are the realm's only RSA keys
				// (Keycloak made none of its own), one signing and one
				// encryption pair, each realm its own; the logins above
				// signed with them.
				kids := map[string]string{}
				for i := 1; i <= 3; i++ {
					realm := m.Tenant(i).Realm
					k, err := e.c.JWKS(e.ctx, realm)
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, key := range k.Keys {
						if key.KeyType == "RSA" {
							if strat == dataset.Clone && !e.poolHas(i, key.Modulus) {
								t.Errorf("realm %s: key %s %s is not one of tenant %d's from the key pool", realm, key.Use, key.KeyID, i)
							}
							got = append(got, key.Use+" "+key.Algorithm)
							if other, dup := kids[key.KeyID]; dup {
								t.Errorf("realms %s and %s share key %s", other, realm, key.KeyID)
							}
							kids[key.KeyID] = realm
						}
					}
					sort.Strings(got)
					if strings.Join(got, ", ") != "enc RSA-OAEP, sig RS256" {
						t.Errorf("realm %s RSA keys: %v", realm, got)
					}
				}
			}
			// The wrong password is refused (Keycloak: 401 invalid_grant).
			bad := *m
			bad.Password = "wrong"
			err := e.login(&bad, 1, 1)
			var ae *kc.APIError
			if !errors.As(err, &ae) || ae.Status/100 != 4 || !strings.Contains(ae.Body, "invalid_grant") {
				t.Errorf("wrong password: %v", err)
			}
			if mode == dataset.ModeOrgs {
				orgs, err := e.adm.Organizations(e.ctx, m.Spec.SharedRealm(), "t00002", 0, 5)
				if err != nil || len(orgs) != 1 {
					t.Fatalf("org t00002: %v %v", orgs, err)
				}
				members, err := e.adm.OrganizationMembers(e.ctx, m.Spec.SharedRealm(), orgs[0].ID, 0, 100)
				if err != nil || len(members) != m.Spec.Content.Users {
					t.Fatalf("members: %d, %v", len(members), err)
				}
				for _, u := range members {
					if !strings.HasPrefix(u.Username, "t00002-") {
						t.Errorf("member %s is not tenant 2's", u.Username)
					}
				}
			}
		}
	})
}

func TestGrowth(t *testing.T) {
	e := newEnv(t)
	modesAndStrategies(t, func(t *testing.T, mode dataset.Mode, strat dataset.Strategy) {
		{
			e.t = t
			mf := filepath.Join(t.TempDir(), "m.json")
			p := "g" + string(mode[0]) + string(strat[0])
			e.seed(spec(mode, p, 3), strat, mf)
			// Ask for a user to come before it exists (orgs mode: the
			// same realm), so that a server caching "not found" would
			// fail the login after growth.
			m3, _ := dataset.ReadManifest(mf)
			early := func() error {
				t1 := m3.Tenant(1)
				_, err := e.c.Token(e.ctx, m3.Tenant(5).Realm, url.Values{
					"grant_type": {"password"}, "client_id": {t1.Backend}, "client_secret": {t1.BackendSecret},
					"username": {m3.Username(5, 3)}, "password": {m3.Password},
				})
				return err
			}
			if mode == dataset.ModeOrgs {
				if err := early(); err == nil {
					t.Fatal("tenant 5's user logged in before it was seeded")
				}
			}
			res := e.seed(spec(mode, p, 5), strat, mf)
			if mode == dataset.ModeOrgs {
				if err := early(); err != nil {
					t.Fatalf("tenant 5's user, looked for before growth, cannot log in after: %v", err)
				}
			}
			if res.Existing != 3 || res.Added != 2 {
				t.Fatalf("growth 3→5: %+v", res)
			}
			e.verify(mf, 5)
			m, _ := dataset.ReadManifest(mf)
			if err := e.login(m, 5, 3); err != nil {
				t.Fatalf("login in a grown tenant: %v", err)
			}
			// A grown tenant's backend client has its service account.
			for _, i := range []int{1, 5} {
				tn := m.Tenant(i)
				if _, err := e.c.ClientCredentials(e.ctx, tn.Realm, kc.OAuthClient{ID: tn.Backend, Secret: tn.BackendSecret}, ""); err != nil {
					t.Fatalf("client credentials in tenant %d: %v", i, err)
				}
			}
			// Same arguments again: nothing to do.
			if res := e.seed(spec(mode, p, 5), strat, mf); res.Added != 0 || res.Existing != 5 {
				t.Fatalf("reseed: %+v", res)
			}
			// The 3-tenant manifest of before does not see tenants 4 and
			// 5 in its counts; verify names them.
			if v, err := dataset.Verify(e.ctx, e.adm, m3, nil); err != nil || v.Beyond != 2 || v.OK() {
				t.Errorf("verify of the 3-tenant manifest on 5 tenants: %+v, %v", v, err)
			}
		}
	})
}

func TestInterruptedSeedResumes(t *testing.T) {
	e := newEnv(t)
	for _, mode := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		// Cut off, then resumed with: rest leaves tenants half-made (it
		// makes a tenant in many calls); clone resumes them the fast way;
		// an interrupted clone leaves whole batches or nothing.
		for _, c := range []struct{ cut, resume dataset.Strategy }{
			{dataset.Rest, dataset.Rest}, {dataset.Rest, dataset.Clone}, {dataset.Clone, dataset.Clone},
		} {
			t.Run(fmt.Sprintf("%s/%s-then-%s", mode, c.cut, c.resume), func(t *testing.T) {
				e.t = t
				mf := filepath.Join(t.TempDir(), "m.json")
				s := spec(mode, "i"+string(mode[0])+string(c.cut[0])+string(c.resume[0]), 6)
				// Cancel as soon as one tenant is complete.
				ctx, cancel := context.WithCancel(e.ctx)
				_, err := dataset.Seed(ctx, e.adm, s, dataset.SeedOptions{Strategy: c.cut, Concurrency: 3, ManifestPath: mf, Target: e.tg.BaseURL, DB: e.db,
					Progress: func(done, total int) {
						if done >= 1 {
							cancel()
						}
					}})
				cancel()
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("interrupted seed: %v", err)
				}
				if mode == dataset.ModeOrgs && c.cut == dataset.Rest {
					// A rest seed makes a tenant's organization before
					// its users: a resume tells a tenant with users for
					// half-made by its organization.
					for i := 1; i <= s.Tenants; i++ {
						u, err := e.adm.FindUser(e.ctx, s.SharedRealm(), s.Username(i, 1))
						if err != nil || u == nil {
							continue
						}
						orgs, err := e.adm.Organizations(e.ctx, s.SharedRealm(), dataset.TenantID(i), 0, 2)
						if err != nil || len(orgs) == 0 {
							t.Fatalf("tenant %d has users but no organization (%v)", i, err)
						}
					}
				}
				if m, err := dataset.ReadManifest(mf); err == nil {
					v, _ := dataset.Verify(e.ctx, e.adm, &dataset.Manifest{Spec: m.Spec}, nil)
					if v.Actual.Users < v.Expected.Users {
						t.Fatalf("the manifest claims %d tenants that are not all there: %+v", m.Tenants(), v)
					}
				}
				res := e.seed(s, c.resume, mf)
				if res.Tenants != 6 {
					t.Fatalf("resumed: %+v", res)
				}
				e.verify(mf, 6)
				m, _ := dataset.ReadManifest(mf)
				for i := 1; i <= 6; i++ {
					if err := e.login(m, i, 2); err != nil {
						t.Errorf("tenant %d: login: %v", i, err)
					}
				}
				t.Logf("resume: %d existing, %d added, %d redone", res.Existing, res.Added, res.Redone)
			})
		}
	}
}

// normalized reads the dataset back through the admin API, without ids and
// secrets, so that two strategies' output can be compared.
func (e *env) normalized(s dataset.Spec) []string {
	e.t.Helper()
	var out []string
	realms := map[string]bool{}
	for i := 1; i <= s.Tenants; i++ {
		realms[s.RealmOf(i)] = true
	}
	strip := func(name string) string { return strings.Replace(name, s.Prefix, "P", 1) }
	for r := range realms {
		rr, err := e.adm.GetRealm(e.ctx, r)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("realm %s policy=%q orgs=%v", strip(r), rr.PasswordPolicy, rr.OrganizationsEnabled != nil && *rr.OrganizationsEnabled))
		cs, _ := e.adm.Clients(e.ctx, r, "")
		for _, c := range cs {
			if strings.Contains(c.ClientID, "web") || strings.Contains(c.ClientID, "backend") {
				// kcbench's mappers: Keycloak 26.0.0 gives a client with a
				// service account three mappers of its own in a realm
				// import, none in a partial import.
				ours := 0
				for _, m := range c.ProtocolMappers {
					if m.Name == "audience-self" || m.Name == "groups" || strings.HasPrefix(m.Name, "claim-") {
						ours++
					}
				}
				out = append(out, fmt.Sprintf("client %s %s public=%v std=%v dag=%v sa=%v redirect=%v mappers=%d", strip(r), c.ClientID, c.PublicClient, c.StandardFlowEnabled, c.DirectAccessGrantsEnabled, c.ServiceAccountsEnabled, c.RedirectURIs, ours))
			}
		}
		rs, _ := e.adm.RealmRoles(e.ctx, r)
		for _, x := range rs {
			out = append(out, "role "+strip(r)+" "+strip(x.Name))
		}
		gs, _ := e.adm.Groups(e.ctx, r)
		for _, g := range gs {
			out = append(out, "group "+strip(r)+" "+g.Name)
		}
		us, _ := e.adm.Users(e.ctx, r, 0, 1000)
		for _, u := range us {
			var groups []kc.GroupRep
			e.adm.Do(e.ctx, "GET", kc.RealmPath(r, "users", u.ID, "groups"), nil, &groups)
			var roles []kc.RoleRep
			e.adm.Do(e.ctx, "GET", kc.RealmPath(r, "users", u.ID, "role-mappings", "realm"), nil, &roles)
			var names []string
			for _, x := range roles {
				names = append(names, strings.Replace(x.Name, r, "R", 1))
			}
			sort.Strings(names)
			out = append(out, fmt.Sprintf("user %s %s %s %s %s groups=%d roles=%v", strip(r), u.Username, u.Email, u.FirstName, u.LastName, len(groups), names))
		}
	}
	sort.Strings(out)
	return out
}

func TestRestFastAndCloneMakeTheSameDataset(t *testing.T) {
	e := newEnv(t)
	for _, mode := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		t.Run(string(mode), func(t *testing.T) {
			e.t = t
			var want []string
			for _, strat := range []dataset.Strategy{dataset.Fast, dataset.Rest, dataset.Clone} {
				s := spec(mode, "s"+string(strat[0])+string(mode[0]), 3)
				e.seed(s, strat, filepath.Join(t.TempDir(), string(strat)+".json"))
				got := e.normalized(s)
				if want == nil {
					want = got
				} else if !reflect.DeepEqual(want, got) {
					t.Errorf("datasets differ:\nfast: %s\n%s: %s", strings.Join(want, "\n      "), strat, strings.Join(got, "\n      "))
				}
			}
		})
	}
}

func TestPrehashedPasswordsAreNotRehashed(t *testing.T) {
	e := newEnv(t)
	for _, pol := range []string{"default", "pbkdf2-sha512:27500", "pbkdf2-sha256:1"} {
		t.Run(pol, func(t *testing.T) {
			e.t = t
			p, _ := dataset.ParsePolicy(pol)
			s := spec(dataset.ModeRealms, "h"+fmt.Sprint(len(pol)), 1)
			s.Policy = p
			s.Content.Users = 2
			mf := filepath.Join(t.TempDir(), "m.json")
			e.seed(s, dataset.Fast, mf)
			m, _ := dataset.ReadManifest(mf)
			realm := s.RealmOf(1)
			u, err := e.adm.FindUser(e.ctx, realm, s.Username(1, 1))
			if err != nil || u == nil {
				t.Fatal(u, err)
			}
			before, err := e.adm.UserCredentials(e.ctx, realm, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.login(m, 1, 1); err != nil {
				t.Fatalf("login with a pre-hashed %s password: %v", pol, err)
			}
			after, _ := e.adm.UserCredentials(e.ctx, realm, u.ID)
			if len(before) != 1 || len(after) != 1 || before[0].CredentialData != after[0].CredentialData || before[0].ID != after[0].ID {
				t.Errorf("credential changed on login (re-hash):\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

func TestForeignDatasetIsRefused(t *testing.T) {
	e := newEnv(t)
	mf := filepath.Join(t.TempDir(), "m.json")
	e.seed(spec(dataset.ModeRealms, "fx", 1), dataset.Fast, mf)
	other := spec(dataset.ModeRealms, "fx", 1)
	other.Seed = 99 // another dataset under the same names
	_, err := dataset.Seed(e.ctx, e.adm, other, dataset.SeedOptions{ManifestPath: filepath.Join(t.TempDir(), "o.json")})
	if !errors.Is(err, dataset.ErrForeign) {
		t.Fatalf("err = %v, want ErrForeign", err)
	}
}

func TestExportThenSeedFromFiles(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	s := spec(dataset.ModeRealms, "px", 2)
	if _, err := dataset.Export(s, dir, nil); err != nil {
		t.Fatal(err)
	}
	files, err := dataset.ReadRealmDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	mf := filepath.Join(t.TempDir(), "m.json")
	res, err := dataset.SeedFiles(e.ctx, e.adm, files, 5, dataset.SeedOptions{ManifestPath: mf, Target: e.tg.BaseURL})
	if err != nil || res.Added != 2 {
		t.Fatalf("seed from files: %+v %v", res, err)
	}
	e.verify(mf, 2)
	m, _ := dataset.ReadManifest(mf)
	// The password rule: every user has the manifest's password.
	if err := e.login(m, 2, 4); err != nil {
		t.Fatalf("login as a user from a realm file: %v", err)
	}
	// Again: nothing to import.
	if res, err := dataset.SeedFiles(e.ctx, e.adm, files, 5, dataset.SeedOptions{ManifestPath: mf}); err != nil || res.Added != 0 || res.Existing != 2 {
		t.Fatalf("reseed from files: %+v %v", res, err)
	}

	// dataset delete: a dry run lists the two realms and changes nothing;
	// then they and the manifest are gone, and only they.
	realms := m.SeededRealms()
	if len(realms) != 2 {
		t.Fatalf("seeded realms %v, want 2", realms)
	}
	var out strings.Builder
	if err := dataset.DeleteText(e.ctx, &out, e.adm, m, mf, true); err != nil || strings.Count(out.String(), "would delete") != 2 {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	if _, err := e.adm.GetRealm(e.ctx, realms[0]); err != nil {
		t.Fatalf("the dry run deleted %s: %v", realms[0], err)
	}
	before, err := e.adm.Realms(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := dataset.DeleteText(e.ctx, &out, e.adm, m, mf, false); err != nil {
		t.Fatalf("delete: %v\n%s", err, out.String())
	}
	after, err := e.adm.Realms(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)-2 {
		t.Errorf("%d realms before the delete, %d after; want 2 fewer\n%s", len(before), len(after), out.String())
	}
	for _, r := range realms {
		if _, err := e.adm.GetRealm(e.ctx, r); !errors.Is(err, kc.ErrNotFound) {
			t.Errorf("realm %s after the delete: %v", r, err)
		}
	}
	if _, err := os.Stat(mf); !os.IsNotExist(err) {
		t.Errorf("the manifest is still there: %v", err)
	}
}

// A request of an interrupted run may create a realm after the next run
// looked at the Target (the server finishes what the client gave up on).
// Seeding then meets the realm on creation: it remakes a half-made realm of
// this dataset and refuses a foreign one.
func TestRealmAppearingDuringSeed(t *testing.T) {
	e := newEnv(t)
	for _, strat := range []dataset.Strategy{dataset.Rest, dataset.Fast} {
		t.Run(string(strat), func(t *testing.T) {
			e.t = t
			prefix := "ap" + string(strat[0])
			s := spec(dataset.ModeRealms, prefix, 3)
			mf := filepath.Join(t.TempDir(), "m.json")
			appear := func(fingerprint string) func(done, total int) {
				var once bool
				return func(done, total int) {
					if once {
						return
					}
					once = true
					r := kc.RealmRep{Realm: s.RealmOf(3), Attributes: map[string]string{dataset.AttrDataset: fingerprint}}
					if err := e.adm.CreateRealm(e.ctx, r); err != nil {
						t.Errorf("make realm %s: %v", r.Realm, err)
					}
				}
			}
			opts := dataset.SeedOptions{Strategy: strat, Concurrency: 1, ManifestPath: mf, Target: e.tg.BaseURL}
			opts.Progress = appear(s.Fingerprint())
			res, err := dataset.Seed(e.ctx, e.adm, s, opts)
			if err != nil {
				t.Fatalf("seed with a half-made realm appearing: %v", err)
			}
			if res.Tenants != 3 {
				t.Fatalf("seeded: %+v", res)
			}
			e.verify(mf, 3)

			s4 := spec(dataset.ModeRealms, prefix, 4)
			s4r := s4
			opts.Progress = func(done, total int) {
				r := kc.RealmRep{Realm: s4r.RealmOf(4), Attributes: map[string]string{dataset.AttrDataset: "someone-else"}}
				if err := e.adm.CreateRealm(e.ctx, r); err != nil && !errors.Is(err, kc.ErrConflict) {
					t.Errorf("make realm %s: %v", r.Realm, err)
				}
			}
			_, err = dataset.Seed(e.ctx, e.adm, s4, opts)
			if !errors.Is(err, dataset.ErrForeign) {
				t.Fatalf("a foreign realm appearing: err = %v, want ErrForeign", err)
			}
		})
	}
}

// A realms-mode tenant past a part's users and clients is made in parts
// (a realm of 100,000 users in one request is refused with HTTP 413): the
// realm holds every user and client, the last user logs in, the last
// client (imported with its service account by a partial import) gets a
// client-credentials token, and the clone copies such a tenant whole.
func TestBigTenantInParts(t *testing.T) {
	e := newEnv(t)
	mf := filepath.Join(t.TempDir(), "m.json")
	s := spec(dataset.ModeRealms, "big", 2)
	s.Content.Users, s.Content.Clients = 201, 101 // parts of 100 users and 50 clients
	if res := e.seed(s, dataset.Clone, mf); res.Added != 2 {
		t.Fatalf("result %+v", res)
	}
	e.verify(mf, 2)
	m, err := dataset.ReadManifest(mf)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if err := e.login(m, i, s.Content.Users); err != nil {
			t.Errorf("tenant %d: the last user's login: %v", i, err)
		}
		id := s.BackendClient(i, s.Content.Clients-1) // the web client is the first
		if _, err := e.c.Token(e.ctx, m.Tenant(i).Realm, url.Values{"grant_type": {"client_credentials"},
			"client_id": {id}, "client_secret": {s.ClientSecret(i, id)}}); err != nil {
			t.Errorf("tenant %d: the last client's client-credentials grant: %v", i, err)
		}
		r, err := e.adm.GetRealm(e.ctx, m.Tenant(i).Realm)
		if err != nil {
			t.Fatal(err)
		}
		if r.Attributes[dataset.AttrComplete] != "true" {
			t.Errorf("tenant %d: realm attributes %v; want it marked complete", i, r.Attributes)
		}
	}
}

// cutTransport cancels a context once the n-th user has been created: a
// rest seed cut between making a user and putting it in its group.
type cutTransport struct {
	n      int32
	seen   atomic.Int32
	cancel context.CancelFunc
	rt     http.RoundTripper
}

func (c *cutTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/users") && resp.StatusCode == http.StatusCreated {
		if c.seen.Add(1) == c.n {
			c.cancel()
		}
	}
	return resp, err
}

func TestRestCutAfterAUserResumes(t *testing.T) {
	e := newEnv(t)
	for _, mode := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		t.Run(string(mode), func(t *testing.T) {
			e.t = t
			mf := filepath.Join(t.TempDir(), "m.json")
			s := spec(mode, "u"+string(mode[0]), 2)
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			cut := &cutTransport{n: 3, cancel: cancel, rt: e.tg.HTTPClient(time.Minute).Transport}
			adm := kc.NewAdmin(kc.New(e.tg.BaseURL, &http.Client{Transport: cut, Timeout: time.Minute}), e.tg.Admin)
			_, err := dataset.Seed(ctx, adm, s, dataset.SeedOptions{Strategy: dataset.Rest, Concurrency: 1, ManifestPath: mf, Target: e.tg.BaseURL})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("seed cut after the third user: %v", err)
			}
			if n := cut.seen.Load(); n != 3 {
				t.Fatalf("%d users made before the cut took, want 3", n)
			}
			res := e.seed(s, dataset.Clone, mf)
			if res.Tenants != 2 || res.Redone != 1 {
				t.Fatalf("resumed: %+v, want 2 tenants, 1 redone", res)
			}
			e.verify(mf, 2)
			m, _ := dataset.ReadManifest(mf)
			for j := 1; j <= 3; j++ {
				if err := e.login(m, 1, j); err != nil {
					t.Errorf("tenant 1 user %d: login: %v", j, err)
				}
			}
		})
	}
}
