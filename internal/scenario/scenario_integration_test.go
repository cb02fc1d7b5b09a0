//go:build integration

package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/dataset"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/observe"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// These tests run every scenario against a real Keycloak and PostgreSQL
// (one stack for the package) with small seeded datasets, at low rates and
// for a few seconds each.

var shared stacktest.Shared

// TestMain shares one stack; with slapd installed it keeps a private
// directory too (TestAdminSearchLDAP).
func TestMain(m *testing.M) {
	if stacktest.SlapdInstalled() {
		shared.Configure = func(c *stack.Config) { c.LDAP.Server = stack.LDAPSlapd }
	}
	os.Exit(stacktest.Main(m, &shared))
}

// fixture is the stack with its datasets, seeded once.
type fixture struct {
	tg     kc.Target
	admin  *kc.Admin
	client *kc.Client
	realms *dataset.Manifest // 2 tenants, pbkdf2-sha256:1
	orgs   *dataset.Manifest // 2 tenants in one realm, pbkdf2-sha256:1
	argon  *dataset.Manifest // 1 tenant, Keycloak's default policy (argon2id)
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func setup(t *testing.T) *fixture {
	t.Helper()
	s := shared.Get(t)
	fixOnce.Do(func() {
		tg := s.Target()
		f := &fixture{tg: tg, client: kc.New(tg.BaseURL, &http.Client{Transport: LoadTransport(tg, 30*time.Second, 16, netip.Addr{})})}
		f.admin = kc.NewAdmin(kc.NewFor(tg), tg.Admin)
		ctx := context.Background()
		db, err := s.DSN()
		if err != nil {
			fixErr = err
			return
		}
		seed := func(mode dataset.Mode, tenants int, pol dataset.Policy, prefix string) *dataset.Manifest {
			if fixErr != nil {
				return nil
			}
			spec := dataset.Spec{Mode: mode, Tenants: tenants, Content: dataset.DefaultContent, Policy: pol, Prefix: prefix, Seed: 1}
			res, err := dataset.Seed(ctx, f.admin, spec, dataset.SeedOptions{Strategy: dataset.Clone, DB: db, Target: tg.BaseURL})
			if err != nil {
				fixErr = fmt.Errorf("seed %s %s: %w", mode, pol, err)
				return nil
			}
			return res.Manifest
		}
		fast := dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}
		f.realms = seed(dataset.ModeRealms, 2, fast, "kcb")
		f.orgs = seed(dataset.ModeOrgs, 2, fast, "kco")
		f.argon = seed(dataset.ModeRealms, 1, dataset.Policy{}, "kca")
		fix = f
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func (f *fixture) env(t *testing.T, m *dataset.Manifest, skew float64) Env {
	t.Helper()
	p, err := NewManifestPool(m, skew)
	if err != nil {
		t.Fatal(err)
	}
	return Env{Client: f.client, Admin: f.admin, Pool: p, Seed: DefaultSeed}
}

// run runs sc and returns its stats, failing the test on an engine error.
func run(t *testing.T, sc load.Scenario, ex load.Executor) results.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := ex.Run(ctx, sc, nil)
	if err != nil {
		t.Fatalf("%s: %v", sc.Name(), err)
	}
	return s
}

// lowRate is a few seconds at 4 iterations per second.
var lowRate = load.ConstantArrivalRate{Rate: 4, Duration: 2500 * time.Millisecond, PreAllocatedVUs: 2, MaxVUs: 20, GracefulStop: 10 * time.Second}

// expectOps checks that the run had no errors and that each op ran n
// times per iteration (n < 0: at least once overall).
func expectOps(t *testing.T, s results.Stats, ops map[string]int) {
	t.Helper()
	it, _ := s.Op(results.IterationOp)
	if it.Count < 5 || it.Errors != 0 || s.Dropped != 0 {
		t.Errorf("%s: %d iterations, %d failed %v, %d dropped", s.Scenario, it.Count, it.Errors, it.ErrorClasses, s.Dropped)
	}
	for _, o := range s.Ops {
		if o.Errors != 0 {
			t.Errorf("%s: %s failed %d times: %v", s.Scenario, o.Name, o.Errors, o.ErrorClasses)
		}
	}
	for op, per := range ops {
		o, ok := s.Op(op)
		switch {
		case !ok:
			t.Errorf("%s: no %s", s.Scenario, op)
		case per > 0 && o.Count != int64(per)*it.Count:
			t.Errorf("%s: %d %s for %d iterations, want %d each", s.Scenario, o.Count, op, it.Count, per)
		}
	}
}

func TestScenariosRealms(t *testing.T) {
	f := setup(t)
	if !strings.HasPrefix(f.tg.BaseURL, "https://") {
		t.Fatalf("target %s: the stack serves HTTPS by default, every scenario runs over it", f.tg.BaseURL)
	}
	env := f.env(t, f.realms, 1.1)
	cases := map[string]map[string]int{
		results.ScenarioPasswordGrant:     {results.OpPasswordGrant: 1},
		results.ScenarioLoginForm:         {results.OpLoginPage: 1, results.OpLoginSubmit: 1, results.OpCodeExchange: 1},
		results.ScenarioClientCredentials: {results.OpClientCredentials: 1},
		results.ScenarioIntrospect:        {results.OpIntrospect: 1},
		results.ScenarioUserinfo:          {results.OpUserinfo: 1},
		results.ScenarioJWKS:              {results.OpJWKS: 1},
		results.ScenarioDiscovery:         {results.OpDiscovery: 1},
		results.ScenarioLogout:            {results.OpPasswordGrant: 1, results.OpLogout: 1},
		results.ScenarioOffline:           {results.OpOfflineGrant: 1, results.OpOfflineRefresh: 1},
		results.ScenarioAdminAPI:          {results.OpAdminListRealms: 1, results.OpAdminGetRealm: 1, results.OpAdminListUsers: 1},
		results.ScenarioAdminSearch:       {results.OpAdminSearchUsers: 1, results.OpAdminCountUsers: 1}, // 10 users: one page
		results.ScenarioAdminSessions:     {results.OpAdminSessionStats: 1, results.OpAdminRealmSessions: 1, results.OpAdminClientSessions: 1},
		results.ScenarioAdminConsole:      {results.OpConsoleUsers: 1, results.OpConsoleUser: 1, results.OpConsoleUserRoles: 1, results.OpConsoleClients: 1},
		results.ScenarioMix:               {results.OpRefresh: -1, results.OpClientCredentials: -1},
	}
	runCases(t, env, cases)
}

// runCases runs each scenario of cases briefly on env and checks the
// operations one iteration records.
func runCases(t *testing.T, env Env, cases map[string]map[string]int) {
	for name, ops := range cases {
		t.Run(name, func(t *testing.T) {
			sc, err := ByName(name, env)
			if err != nil {
				t.Fatal(err)
			}
			expectOps(t, run(t, sc, lowRate), ops)
		})
	}
}

// Refreshes never exceed sessions × refreshes per session: used-up
// sessions are replaced by new logins.
func TestRefreshPool(t *testing.T) {
	f := setup(t)
	env := f.env(t, f.realms, 0)
	env.SessionsPerVU, env.RefreshesPerSession = 2, 3
	sc, err := ByName(results.ScenarioRefresh, env)
	if err != nil {
		t.Fatal(err)
	}
	ex := load.ConstantVUs{VUs: 2, Duration: 2 * time.Second, GracefulStop: 10 * time.Second}
	s := run(t, sc, ex)
	expectOps(t, s, map[string]int{results.OpRefresh: 1})
	ref, _ := s.Op(results.OpRefresh)
	logins, _ := s.Op(results.OpSessionLogin)
	sessions := int64(ex.VUs*env.SessionsPerVU) + logins.OK
	if ref.OK > sessions*int64(env.RefreshesPerSession) || logins.OK == 0 {
		t.Fatalf("%d refreshes over %d sessions (%d replaced) of at most %d refreshes", ref.OK, sessions, logins.OK, env.RefreshesPerSession)
	}
	t.Logf("%d refreshes over %d sessions", ref.OK, sessions)
}

func TestScenariosOrgs(t *testing.T) {
	f := setup(t)
	env := f.env(t, f.orgs, 0)
	cases := map[string]map[string]int{
		// Organizations turn the login into identity-first: the username
		// form, then the password form, both in login_submit.
		results.ScenarioLoginForm:     {results.OpLoginPage: 1, results.OpLoginSubmit: 1, results.OpCodeExchange: 1},
		results.ScenarioPasswordGrant: {results.OpPasswordGrant: 1},
		results.ScenarioAdminAPI:      {results.OpAdminListOrgs: 1, results.OpAdminGetOrg: 1, results.OpAdminListMembers: 1, results.OpAdminFindOrg: -1},
		// 2 tenants of 10 users in one realm: a second page.
		results.ScenarioAdminSearch:   {results.OpAdminSearchUsers: 1, results.OpAdminCountUsers: 1, results.OpAdminUsersPage: 1},
		results.ScenarioAdminConsole:  {results.OpConsoleUsers: 1, results.OpConsoleUser: 1, results.OpConsoleUserRoles: 1, results.OpConsoleClients: 1},
		results.ScenarioAdminSessions: {results.OpAdminSessionStats: 1, results.OpAdminRealmSessions: 1, results.OpAdminClientSessions: 1},
	}
	runCases(t, env, cases)
}

// admin-sessions lists the offline sessions Keycloak made (the offline
// scenario's, in a tenant realm: every iteration passes the check that a
// realm with offline sessions lists some), and a realm without any, taken
// for one that holds seeded offline sessions, fails that check every
// iteration. The realm is made first: on 26.0.0 the first admin request
// after a run whose end cancelled a request on the same HTTP/2
// connection was answered with GOAWAY (PROTOCOL_ERROR, "Request stream N
// is not correct for server connection"); on 26.7.3 not.
func TestAdminSessions(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	const realm, client = "no-sessions", "backend"
	rep := map[string]any{"realm": realm, "enabled": true, "clients": []map[string]any{{"clientId": client, "secret": "s3cret-s3cret"}}}
	if err := f.admin.CreateRealm(ctx, rep); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.admin.DeleteRealm(context.WithoutCancel(ctx), realm); err != nil {
			t.Logf("delete realm %s: %v", realm, err)
		}
	})
	tn := f.realms.Tenant(1)
	one, err := NewSinglePool(Single{Realm: tn.Realm, ClientID: tn.Backend, ClientSecret: tn.BackendSecret,
		Username: f.realms.Username(1, 1), Password: f.realms.Password})
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Client: f.client, Admin: f.admin, Pool: one, Seed: DefaultSeed}
	off, err := ByName(results.ScenarioOffline, env)
	if err != nil {
		t.Fatal(err)
	}
	expectOps(t, run(t, off, lowRate), map[string]int{results.OpOfflineGrant: 1, results.OpOfflineRefresh: 1})
	one.offline, one.allTenants = 1, 1
	sc, err := ByName(results.ScenarioAdminSessions, env)
	if err != nil {
		t.Fatal(err)
	}
	s := run(t, sc, load.ConstantVUs{VUs: 1, Duration: 2 * time.Second})
	it, _ := s.Op(results.IterationOp)
	if it.Count == 0 || it.Errors != 0 {
		t.Fatalf("%d iterations, errors %v: want every one to find the offline sessions", it.Count, it.ErrorClasses)
	}

	p, err := NewSinglePool(Single{Realm: realm, ClientID: client, ClientSecret: "s3cret-s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	p.offline, p.allTenants = 1, 1
	if sc, err = ByName(results.ScenarioAdminSessions, Env{Client: f.client, Admin: f.admin, Pool: p}); err != nil {
		t.Fatal(err)
	}
	s = run(t, sc, load.ConstantVUs{VUs: 1, Duration: time.Second})
	it, _ = s.Op(results.IterationOp)
	// every iteration fails, by the check (on 26.0.0 the first request
	// after the run before, whose end cancelled a request on the same
	// HTTP/2 connection, may meet the GOAWAY above instead)
	if it.Count == 0 || it.Errors != it.Count || it.ErrorClasses[load.ClassCheck] < it.Count-1 {
		t.Errorf("%d iterations, errors %v: want every one a failed check (no sessions listed)", it.Count, it.ErrorClasses)
	}
}

// admin-search in a realm without the user it looks for (a dataset that
// was never made there): every iteration is a failed check, never a fast
// empty answer counted as a success.
func TestAdminSearchEmptyRealm(t *testing.T) {
	f := setup(t)
	p, err := NewSinglePool(Single{Realm: f.realms.Tenant(1).Realm, Username: "nobody-seeded-this"})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ByName(results.ScenarioAdminSearch, Env{Client: f.client, Admin: f.admin, Pool: p})
	if err != nil {
		t.Fatal(err)
	}
	s := run(t, sc, load.ConstantVUs{VUs: 1, Duration: time.Second})
	it, _ := s.Op(results.IterationOp)
	if it.Count == 0 || it.Errors != it.Count || it.ErrorClasses[load.ClassCheck] != it.Count {
		t.Errorf("%d iterations, errors %v: want every one a failed check", it.Count, it.ErrorClasses)
	}
}

func TestUserJourney(t *testing.T) {
	f := setup(t)
	env := f.env(t, f.realms, 0)
	// Tokens planned to live 2 s: sessions of 2–6 s with refreshes, so a
	// short run sees whole sessions.
	env.Journey = JourneyOptions{Think: 100 * time.Millisecond, UserinfoEvery: 500 * time.Millisecond, TokenLifetime: 2 * time.Second}
	sc, err := ByName(results.ScenarioUserJourney, env)
	if err != nil {
		t.Fatal(err)
	}
	s := run(t, sc, load.ConstantVUs{VUs: 4, Duration: 6 * time.Second, GracefulStop: 10 * time.Second})
	expectOps(t, s, map[string]int{results.OpLoginPage: -1, results.OpLoginSubmit: -1, results.OpCodeExchange: -1, results.OpUserinfo: -1, results.OpRefresh: -1})
	logins, _ := s.Op(results.OpCodeExchange)
	infos, _ := s.Op(results.OpUserinfo)
	refreshes, _ := s.Op(results.OpRefresh)
	if logins.OK < 4 || infos.OK < 2*logins.OK || refreshes.OK < logins.OK/2 {
		t.Errorf("%d logins, %d userinfo, %d refreshes", logins.OK, infos.OK, refreshes.OK)
	}
	t.Logf("%d logins, %d userinfo, %d refreshes, %d iterations", logins.OK, infos.OK, refreshes.OK, s.Iterations)
}

// A wrong password is Keycloak's HTTP error, not a crash: the password
// grant answers 400 invalid_grant in Keycloak 26; the login form shows the
// form again with a message, a failed check.
func TestWrongPassword(t *testing.T) {
	f := setup(t)
	tn := f.realms.Tenant(1)
	p, err := NewSinglePool(Single{Realm: tn.Realm, ClientID: tn.Backend, ClientSecret: tn.BackendSecret,
		Username: f.realms.Username(1, 1), Password: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Client: f.client, Pool: p}
	ex := load.ConstantVUs{VUs: 1, Duration: time.Second}
	for name, class := range map[string]string{results.ScenarioPasswordGrant: "http_400", results.ScenarioLoginForm: load.ClassCheck} {
		sc, err := ByName(name, env)
		if err != nil {
			t.Fatal(err)
		}
		s := run(t, sc, ex)
		it, _ := s.Op(results.IterationOp)
		if it.Count == 0 || it.Errors != it.Count || it.ErrorClasses[class] != it.Count {
			t.Errorf("%s: %d iterations, errors %v, want all %s", name, it.Count, it.ErrorClasses, class)
		}
	}
	// The login form in a realm whose web client is confidential.
	p2, _ := NewSinglePool(Single{Realm: tn.Realm, ClientID: tn.Backend, ClientSecret: tn.BackendSecret,
		Username: f.realms.Username(1, 1), Password: f.realms.Password})
	sc, _ := ByName(results.ScenarioLoginForm, Env{Client: f.client, Pool: p2})
	expectOps(t, run(t, sc, lowRate), map[string]int{results.OpCodeExchange: 1})
}

// The hashing policy dominates a login's cost: Keycloak's default argon2id
// costs several times the server CPU of one PBKDF2 iteration. Measured
// through Run, as kcbench load does: after a warm-up, from /proc.
func TestServerCPUPerLogin(t *testing.T) {
	f := setup(t)
	if !f.tg.Local() {
		t.Skip("needs a local server")
	}
	perLogin := func(m *dataset.Manifest) float64 {
		cfg := Config{Scenario: results.ScenarioPasswordGrant, VUs: 2, Duration: 3 * time.Second, Warmup: time.Second,
			Thresholds: []string{"errors<1%"}}
		res, err := Run(context.Background(), RunInput{Target: f.tg, Manifest: m, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		o, _ := res.Stats.Op(results.OpPasswordGrant)
		if o.OK < 10 || res.ThresholdErr != nil || !res.CPU.Available {
			t.Fatalf("%d logins, %d errors, thresholds %v, cpu %+v", o.OK, o.Errors, res.ThresholdErr, res.CPU)
		}
		t.Logf("%s: %d logins in 3 s (%.1f/s), %.1f ms server CPU each (%s)", m.Spec.Policy, o.OK, o.Rate, res.CPU.PerOp[results.OpPasswordGrant], res.CPU.Source)
		return res.CPU.PerOp[results.OpPasswordGrant]
	}
	fast := perLogin(f.realms)
	argon := perLogin(f.argon)
	if argon < 2*fast || argon < 20 {
		t.Fatalf("argon2: %.1f ms per login, pbkdf2-sha256:1: %.1f ms; want argon2 clearly dearer", argon, fast)
	}
}

// The database's cost per operation: logins write sessions (transactions,
// WAL), JWKS reads nothing from the database; the run's figures match a
// direct reading of pg_stat_database around it.
func TestDatabaseCostPerOperation(t *testing.T) {
	f := setup(t)
	if f.tg.DB == "" || f.tg.DBPID == 0 {
		t.Fatalf("the local stack's target has no database: %v, pid %d", f.tg.DB != "", f.tg.DBPID)
	}
	direct := &observe.DBUsageReader{DSN: f.tg.DB}
	defer direct.Close()
	cost := func(scen string, works bool) *results.DBCost {
		before, err := direct.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Scenario: scen, VUs: 2, Duration: 3 * time.Second, Warmup: time.Second, Thresholds: []string{"errors<1%"}}
		res, err := Run(context.Background(), RunInput{Target: f.tg, Manifest: f.realms, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		after, err := direct.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c := res.DB
		if c == nil || !c.Available || !c.CPUMeasured || c.Ops == 0 || res.ThresholdErr != nil {
			t.Fatalf("%s: database cost %+v, thresholds %v", scen, c, res.ThresholdErr)
		}
		// the whole run (warm-up included) as read directly bounds the
		// measured window's figures
		whole := observe.Cost(before, after, 0, c.Ops, 3)
		// PostgreSQL flushes a backend's statistics up to a second late
		// (10 s when idle): a few transactions of slack
		if c.Xacts > whole.Xacts+3 || float64(c.WALBytes) > 1.05*float64(whole.WALBytes)+8192 {
			t.Errorf("%s: window %d transactions, %d WAL bytes; the whole run read directly %d, %d", scen, c.Xacts, c.WALBytes, whole.Xacts, whole.WALBytes)
		}
		// and the 3 s window holds most of the 4 s run's work (a second
		// of statistics flushed late either side at most), where the run
		// does work of its own: a JWKS run's whole holds what the login
		// run before it left unflushed (CI saw 76 transactions and 94 KiB
		// of WAL, all before the window) and stray background writes,
		// which the window rightly does not
		if works && (2*c.Xacts < whole.Xacts || 2*c.WALBytes < whole.WALBytes) {
			t.Errorf("%s: window %d transactions, %d WAL bytes: less than half the whole run's %d, %d", scen, c.Xacts, c.WALBytes, whole.Xacts, whole.WALBytes)
		}
		var b strings.Builder
		c.Write(&b)
		t.Logf("%s: %d ops\n%s", scen, c.Ops, b.String())
		return c
	}
	login := cost(results.ScenarioPasswordGrant, true)
	if login.XactsPerOp < 0.5 || login.WALBytesPerOp < 100 || login.CPUMsPerOp <= 0 {
		t.Errorf("password grant: %.2f transactions, %.0f WAL bytes, %.3f ms database CPU per login; want a session written each",
			login.XactsPerOp, login.WALBytesPerOp, login.CPUMsPerOp)
	}
	jwks := cost(results.ScenarioJWKS, false)
	// PostgreSQL's own background writes (autovacuum, hint bits, the
	// login run's sessions expiring) land in any window: CI saw 93 KiB of
	// WAL and no transaction over a JWKS run, 57 B a request. What JWKS
	// must not do is write like a login.
	if jwks.XactsPerOp > 0.05 || jwks.XactsPerOp >= login.XactsPerOp/10 || jwks.WALBytesPerOp >= login.WALBytesPerOp/10 {
		t.Errorf("JWKS: %.3f transactions, %.0f WAL bytes per request; want about none (login: %.2f, %.0f)", jwks.XactsPerOp, jwks.WALBytesPerOp, login.XactsPerOp, login.WALBytesPerOp)
	}
}

// A database whose role may not read some statistics (an external
// database's user, say): as the superuser, pg_stat_wal and pg_stat_io are
// revoked from PUBLIC for the test, and the observer reads as a plain
// role. The run goes on; the figures of pg_stat_database and the CPU are
// measured, the WAL and data-write figures are missing with PostgreSQL's
// own error, said once in the summary.
func TestDatabaseCostWithoutPermission(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	su, err := pgx.Connect(ctx, f.tg.DB.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	defer su.Close(ctx)
	pw := fmt.Sprintf("%x", rand.Uint64())
	const role = "kcbench_nostats"
	restore := func() {
		su.Exec(ctx, "GRANT SELECT ON pg_stat_wal, pg_stat_io TO PUBLIC")
		su.Exec(ctx, "DROP ROLE IF EXISTS "+role)
	}
	restore()
	t.Cleanup(restore)
	for _, q := range []string{"CREATE ROLE " + role + " LOGIN PASSWORD '" + pw + "'", "REVOKE SELECT ON pg_stat_wal, pg_stat_io FROM PUBLIC"} {
		if _, err := su.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", strings.Split(q, " PASSWORD")[0], err)
		}
	}
	u, err := url.Parse(f.tg.DB.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, pw)
	tg := f.tg
	tg.DB = kc.Secret(u.String())

	// the role really is refused, and reads pg_stat_database
	plain, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := plain.QueryRow(ctx, "SELECT wal_bytes::bigint FROM pg_stat_wal").Scan(&n); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a plain role read pg_stat_wal after the revoke: %v", err)
	}
	if err := plain.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil || n == 0 {
		t.Errorf("a plain role cannot read pg_stat_database: %d, %v", n, err)
	}
	plain.Close(ctx)

	cfg := Config{Scenario: results.ScenarioPasswordGrant, VUs: 2, Duration: 3 * time.Second, Warmup: time.Second, Thresholds: []string{"errors<1%"}}
	res, err := Run(ctx, RunInput{Target: tg, Manifest: f.realms, Config: cfg})
	if err != nil || res.ThresholdErr != nil {
		t.Fatalf("the run failed: %v, thresholds %v", err, res.ThresholdErr)
	}
	c := res.DB
	if c == nil || !c.Available || c.Ops == 0 {
		t.Fatalf("database cost %+v", c)
	}
	var b strings.Builder
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d logins\n%s", c.Ops, b.String())
	if !c.CPUMeasured || c.CPUMsPerOp <= 0 || c.XactsPerOp < 0.5 || c.TuplesPerOp <= 0 || c.BlksHit <= 0 || c.PeakBackends <= 0 {
		t.Errorf("the readable figures: %.3f ms CPU, %.2f transactions, %.1f tuples per login, %d block hits, %d connections",
			c.CPUMsPerOp, c.XactsPerOp, c.TuplesPerOp, c.BlksHit, c.PeakBackends)
	}
	if !c.Has(results.DBViewDatabase) || c.Has(results.DBViewWAL) || c.Has(results.DBViewIO) || len(c.Unread) != 2 {
		t.Fatalf("unread %+v", c.Unread)
	}
	for _, u := range c.Unread {
		if !strings.Contains(u.Error, "permission denied") || !strings.Contains(u.Error, u.View) {
			t.Errorf("%s: error %q, want PostgreSQL's permission error", u.View, u.Error)
		}
	}
	if c.WALBytes != -1 || c.WALBytesPerOp != -1 || c.WALSyncs != -1 || c.DataWrites != -1 || c.WriteIOPSPerOp != 0 {
		t.Errorf("unread figures reported: WAL %d bytes (%.0f per op), %d syncs, %d data writes, %.3f IOPS per op",
			c.WALBytes, c.WALBytesPerOp, c.WALSyncs, c.DataWrites, c.WriteIOPSPerOp)
	}
	s := b.String()
	if strings.Count(s, "permission denied for view pg_stat_wal") != 1 || strings.Count(s, "permission denied for view pg_stat_io") != 1 {
		t.Errorf("the summary does not say once which figures are missing and why:\n%s", s)
	}
}

// Spread over a tenant's confidential clients, grants, refreshes and
// introspections succeed with every client's own secret (the dataset's),
// and Keycloak sees several clients in use.
func TestSpreadClientsRealKeycloak(t *testing.T) {
	f := setup(t)
	s := shared.Get(t)
	db, err := s.DSN()
	if err != nil {
		t.Fatal(err)
	}
	content := dataset.DefaultContent
	content.Clients = 5
	spec := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 1, Content: content, Policy: dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, Prefix: "kcc", Seed: 1}
	res, err := dataset.Seed(context.Background(), f.admin, spec, dataset.SeedOptions{Strategy: dataset.Clone, DB: db, Target: f.tg.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	env := f.env(t, res.Manifest, 0)
	if err := env.Pool.SpreadClients(); err != nil {
		t.Fatal(err)
	}
	runCases(t, env, map[string]map[string]int{
		results.ScenarioClientCredentials: {results.OpClientCredentials: 1},
		results.ScenarioPasswordGrant:     {results.OpPasswordGrant: 1},
		results.ScenarioIntrospect:        {results.OpIntrospect: 1},
		results.ScenarioLogout:            {results.OpPasswordGrant: 1, results.OpLogout: 1},
	})
	// the service accounts of the clients used logged in: their users exist
	// and Keycloak counted client-credentials grants for more than one
	n := 0
	for k := 1; k <= 4; k++ {
		id := spec.BackendClient(1, k)
		tok, err := f.client.ClientCredentials(context.Background(), spec.RealmOf(1), kc.OAuthClient{ID: id, Secret: spec.ClientSecret(1, id)}, "")
		if err == nil && tok.AccessToken != "" {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d of the 4 backends grant with the dataset's secret", n)
	}
}

// The connection policies against Keycloak over TLS: per-iteration makes
// one full handshake per iteration (counted), with resumption most of
// them resume, reuse makes one per VU at most.
func TestConnPolicies(t *testing.T) {
	f := setup(t)
	for _, c := range []struct {
		policy string
		resume bool
	}{{results.ConnPerIteration, false}, {results.ConnPerIteration, true}, {results.ConnReuse, false}, {results.ConnPerVU, false}} {
		t.Run(fmt.Sprintf("%s/resume=%v", c.policy, c.resume), func(t *testing.T) {
			cfg := Config{Scenario: results.ScenarioClientCredentials, VUs: 2, Duration: 2 * time.Second,
				ConnPolicy: c.policy, TLSResumption: c.resume}
			res, err := Run(context.Background(), RunInput{Target: f.tg, Manifest: f.realms, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			cn := res.Connections
			it, _ := res.Stats.Op(results.IterationOp)
			if cn == nil || !cn.TLS || cn.Version != "TLS 1.3" || cn.Policy != c.policy || it.OK < 5 || it.Errors > 0 {
				t.Fatalf("connections %+v, iterations %+v", cn, it)
			}
			t.Logf("%s", cn.Describe())
			switch {
			case c.policy == results.ConnPerIteration && cn.Handshakes != cn.Iterations:
				t.Errorf("per-iteration: %d handshakes for %d iterations, want one each", cn.Handshakes, cn.Iterations)
			case c.policy != results.ConnPerIteration && cn.Handshakes > int64(cfg.VUs):
				t.Errorf("%s: %d handshakes for %d VUs, want one per VU at most", c.policy, cn.Handshakes, cfg.VUs)
			case c.resume && cn.Resumed < cn.Handshakes/2:
				t.Errorf("resumption on: %d of %d handshakes resumed", cn.Resumed, cn.Handshakes)
			case !c.resume && cn.Resumed != 0:
				t.Errorf("resumption off: %d handshakes resumed", cn.Resumed)
			case cn.Failed != 0 || (cn.Handshakes > 0 && cn.HandshakeMs.P50 <= 0):
				t.Errorf("failed %d, handshake times %+v", cn.Failed, cn.HandshakeMs)
			}
		})
	}
}
