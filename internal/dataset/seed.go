package dataset

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/directory"
	"github.com/kcbench/kcbench/internal/kc"
)

// Strategy is how tenants are written into Keycloak.
type Strategy string

// Strategies.
const (
	// Fast writes a tenant with as few calls as possible: in realms mode
	// one realm representation with everything inline (one transaction),
	// its RSA keys made by kcbench (see keyProviders);
	// in orgs mode the shared realm with every tenant inline when it is
	// new, else a partial import per batch of tenants plus one call per
	// organization and member. Passwords are hashed once by kcbench with
	// the realm's policy, so Keycloak does not hash during seeding.
	Fast Strategy = "fast"
	// Rest makes one admin REST call per entity with plain passwords, 50
	// in parallel: a stand-in for the usual admin-client seeder.
	Rest Strategy = "rest"
	// Clone makes one tenant the fast way and writes the others into
	// Keycloak's database as copies of it (see clone.go): it needs the
	// database (SeedOptions.DB).
	Clone Strategy = "clone"
)

// ParseStrategy accepts "clone", "fast" and "rest".
func ParseStrategy(s string) (Strategy, error) {
	switch Strategy(s) {
	case Clone, Fast, Rest:
		return Strategy(s), nil
	}
	return "", fmt.Errorf("strategy %q: want clone, fast or rest", s)
}

// ParseHow reads the seed command's --strategy ("": the default) and
// --concurrency; its errors are usage errors.
func ParseHow(strategy string, concurrency int) (Strategy, error) {
	if concurrency < 0 || concurrency > MaxConcurrency {
		return "", cliutil.Usagef("--concurrency: %d: must be between 0 and %d", concurrency, MaxConcurrency)
	}
	if strategy == "" {
		return "", nil
	}
	st, err := ParseStrategy(strategy)
	if err != nil {
		return "", cliutil.Usage(err)
	}
	return st, nil
}

// DefaultConcurrency per strategy: rest keeps 50 requests in flight, as
// the usual seeders do; fast requests are each heavy on the server, and a
// few in parallel saturate it.
func DefaultConcurrency(s Strategy) int {
	if s == Rest {
		return 50
	}
	return 4
}

// SeedOptions tune Seed.
type SeedOptions struct {
	Strategy    Strategy
	Concurrency int
	// Progress is called with tenants done (complete) out of total.
	Progress func(done, total int)
	Logf     func(format string, args ...any)
	// ManifestPath is where the manifest is read and written ("" for
	// none).
	ManifestPath string
	// Target is the base URL recorded in the manifest.
	Target string
	// ServerCPU, when set, reads the server's CPU time so that the seed's
	// server cost is recorded (local stacks).
	ServerCPU func() (time.Duration, error)
	// MachineCPU, when set, reads the whole machine's busy and total CPU
	// time, so that the seed says how much of what the other processes
	// (the database, kcbench) left the server it used.
	MachineCPU func() (busy, total time.Duration, err error)
	// DB is a postgres:// URL of Keycloak's database, for the clone
	// strategy.
	DB kc.Secret
	// DBKind is the target's kc.Target.DBKind: "mariadb" makes the clone
	// strategy (PostgreSQL's SQL) fall back to fast, with a note.
	DBKind string
	// Keys, when set, is the RSA key pool realms' keys come from (realms
	// mode); without it every realm's keys are generated.
	Keys *KeyPool
	// LDAP, when set, keeps the dataset's users in this directory instead
	// of Keycloak's database (see ldap.go); only the fast strategy does
	// that (clone and rest fall back to it).
	LDAP *kc.Directory
	// LDAPLoad writes the users' entries into LDAP (default: LDAP adds
	// over LDAP.URL).
	LDAPLoad LDAPLoader
	// Sessions, when any, are written after the tenants (SeedSessions;
	// refused before anything is seeded when they cannot be), with
	// SessionsInMemory, DBDir and SessionProgress as SessionOptions'
	// OnlineInMemory, DataDir and Progress.
	Sessions         SessionSpec
	SessionsInMemory bool
	DBDir            string
	SessionProgress  func(done, total int)
}

// SeedResult says what Seed did.
type SeedResult struct {
	Strategy Strategy
	Tenants  int // complete tenants now
	Existing int // complete before
	Added    int // made by this run
	Redone   int // half-made tenants found and redone
	Duration time.Duration
	// ServerCPU is the server CPU time spent (0 when unknown).
	ServerCPU time.Duration
	// MachineBusy and MachineTotal are the machine's busy and total CPU
	// time over the seed, every core summed (0 when unknown).
	MachineBusy, MachineTotal time.Duration
	Manifest                  *Manifest
	// Sessions is what writing SeedOptions.Sessions did (nil: none asked).
	Sessions *SessionResult
}

// TenantsPerSecond is Added over Duration.
func (r *SeedResult) TenantsPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Added) / r.Duration.Seconds()
}

// ErrForeign means the Target holds realms or organizations kcbench would
// create but that belong to another dataset (or to no kcbench dataset).
var ErrForeign = errors.New("target holds a different dataset")

// ErrShrink refuses a seed of fewer tenants than the manifest holds: the
// tenants above would stay in Keycloak, unseen by the manifest, verify
// and every load.
var ErrShrink = errors.New("a dataset does not shrink")

// Seed makes the Target hold exactly tenants 1..spec.Tenants of spec,
// complete. Tenants already there are kept, half-made ones (an interrupted
// seed) are completed or redone, missing ones are added. The manifest is
// written at the end, and on interruption with the tenants that are
// complete.
func Seed(ctx context.Context, adm *kc.Admin, spec Spec, o SeedOptions) (*SeedResult, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	o, err := o.resolve(spec)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var cpu0, busy0, total0 time.Duration
	if o.ServerCPU != nil {
		cpu0, _ = o.ServerCPU()
	}
	if o.MachineCPU != nil {
		busy0, total0, _ = o.MachineCPU()
	}
	sd := &seeder{adm: adm, s: spec, b: newBuilder(spec), o: o}
	sd.b.dir = o.LDAP
	sd.b.base = o.Target
	res := &SeedResult{Strategy: o.Strategy}
	if o.Strategy == Clone {
		sd.b.head = bulkHeadOf(spec)
		// A run cut off between a commit and the cache clear left
		// Keycloak with stale caches.
		if err := sd.clearCaches(ctx); err != nil && !errors.Is(err, kc.ErrNotFound) {
			return nil, err
		}
	}
	todo, redo, err := sd.scan(ctx)
	if err != nil {
		return nil, err
	}
	res.Existing = spec.Tenants - len(todo)
	res.Redone = redo
	o.Logf("seed: %d of %d tenants complete, %d to make (%d half-made), strategy %s, %d in parallel",
		res.Existing, spec.Tenants, len(todo), redo, o.Strategy, o.Concurrency)
	sd.done.Store(int64(res.Existing))
	o.Progress(res.Existing, spec.Tenants)
	if err := sd.ensureIdPRealm(ctx); err != nil {
		return nil, err
	}
	if spec.Mode == ModeOrgs { // the identity-provider realm's users of the tenants to make
		if err := sd.ensureIdPUsers(ctx, todo); err != nil {
			return nil, err
		}
	}
	var runErr error
	if len(todo) > 0 {
		switch o.Strategy {
		case Rest:
			runErr = sd.rest(ctx, todo)
		case Clone:
			runErr = sd.clone(ctx, todo)
		default:
			if runErr = sd.loadDirectory(ctx, todo); runErr == nil {
				runErr = sd.fast(ctx, todo)
			}
		}
	}
	res.Duration = time.Since(start)
	if o.ServerCPU != nil {
		if cpu1, err := o.ServerCPU(); err == nil && cpu1 >= cpu0 {
			res.ServerCPU = cpu1 - cpu0
		}
	}
	if o.MachineCPU != nil && total0 > 0 {
		if busy1, total1, err := o.MachineCPU(); err == nil && total1 > total0 && busy1 >= busy0 {
			res.MachineBusy, res.MachineTotal = busy1-busy0, total1-total0
		}
	}
	res.Added = int(sd.done.Load()) - res.Existing
	// The manifest counts only the complete prefix 1..n.
	res.Tenants = spec.Tenants
	if runErr != nil {
		res.Tenants = sd.completePrefix(res.Existing, todo)
	}
	m, err := sd.writeManifest(res, start)
	res.Manifest = m
	if err != nil {
		return res, errors.Join(runErr, err)
	}
	if runErr != nil || !o.Sessions.Any() {
		return res, runErr
	}
	res.Sessions, err = SeedSessions(ctx, adm, m, o.Sessions, o.sessionOptions())
	return res, err
}

// sessionOptions are o's for writing its sessions.
func (o SeedOptions) sessionOptions() SessionOptions {
	return SessionOptions{DB: o.DB, DBKind: o.DBKind, ManifestPath: o.ManifestPath, Logf: o.Logf, Progress: o.SessionProgress,
		OnlineInMemory: o.SessionsInMemory, DataDir: o.DBDir}
}

// resolve checks o against spec and fills its defaults: the strategy
// (fast where the one asked for cannot work, and says so), the
// concurrency, no-op callbacks; a manifest already at ManifestPath must
// describe the same dataset, no bigger.
func (o SeedOptions) resolve(spec Spec) (SeedOptions, error) {
	if o.Strategy == "" {
		o.Strategy = Fast
	}
	if _, err := ParseStrategy(string(o.Strategy)); err != nil {
		return o, err
	}
	if o.LDAP != nil && spec.Mode != ModeRealms {
		return o, errors.New("users in LDAP (--ldap) work in realms mode; orgs mode would need the organizations' members to be LDAP users, which kcbench does not seed yet")
	}
	if o.LDAP != nil && spec.Content.OTPUsers > 0 {
		return o, errors.New("OTP users (--otp-users) with users in LDAP (--ldap): kcbench seeds OTP credentials in Keycloak's own database only; seed them without --ldap")
	}
	if err := checkBroker(spec, o); err != nil {
		return o, err
	}
	if o.Sessions.Any() {
		if err := CheckSessions(spec, o.Sessions, o.DBKind, o.DB, o.SessionsInMemory); err != nil {
			return o, err
		}
	}
	if spec.Content.Shape.Any() && (o.Strategy == Rest || o.LDAP != nil) {
		return o, errors.New("the data shape flags (--roles-per-user, --groups-per-user, --client-roles-per-user, --composite-depth/--composite-width, --mappers-per-client, --group-depth/--group-fanout, --scopes-per-client) are seeded by the clone and fast strategies, into Keycloak's own users: not with --strategy rest or users in LDAP")
	}
	if o.LDAP != nil && o.Strategy != Fast {
		if o.Logf != nil {
			o.Logf("seed: with users in LDAP the %s strategy is not available; seeding the fast way", o.Strategy)
		}
		o.Strategy = Fast
	}
	if o.Strategy == Clone && o.DBKind != "" && o.DBKind != "postgres" {
		if o.Logf != nil {
			o.Logf("seed: the clone strategy copies tenants with PostgreSQL's SQL, not available on %s; seeding the fast way", o.DBKind)
		}
		o.Strategy = Fast
	}
	if o.Strategy == Clone && o.DB == "" {
		return o, errors.New("the clone strategy writes into Keycloak's database: it needs the local stack's private PostgreSQL (use --strategy fast for another target)")
	}
	if o.Strategy == Clone && spec.UniqueSalts && !spec.Policy.CanPrehash() {
		return o, fmt.Errorf("unique salts with the clone strategy need a password policy kcbench can hash (default, argon2, pbkdf2-*), not %s: use --strategy fast", spec.Policy)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency(o.Strategy)
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Progress == nil {
		o.Progress = func(int, int) {}
	}
	if o.ManifestPath != "" {
		if m, err := ReadManifest(o.ManifestPath); err == nil && !m.Spec.SameDataset(spec) {
			return o, fmt.Errorf("%w: the manifest %s describes dataset %s (%s, %d tenants, policy %s, prefix %s); reset the target or choose another --prefix",
				ErrForeign, o.ManifestPath, m.Fingerprint, m.Spec.Mode, m.Spec.Tenants, m.Spec.Policy, m.Spec.Prefix)
		} else if err == nil && m.Tenants() > spec.Tenants {
			return o, fmt.Errorf("%w: the manifest %s holds %d tenants; seeding %d would leave tenants %d–%d in Keycloak outside it: seed %d or more, or remove the dataset first (kcbench dataset delete)",
				ErrShrink, o.ManifestPath, m.Tenants(), spec.Tenants, spec.Tenants+1, m.Tenants(), m.Tenants())
		}
	}
	return o, nil
}

// writeManifest records the seed's result in a manifest, and writes it to
// ManifestPath (when set and any tenant is complete) after the seeds
// recorded there before.
func (sd *seeder) writeManifest(res *SeedResult, start time.Time) (*Manifest, error) {
	o, spec, n := sd.o, sd.s, res.Tenants
	m := NewManifest(spec, o.Target)
	m.setTenants(n)
	if o.ManifestPath == "" {
		return m, nil
	}
	if old, err := ReadManifest(o.ManifestPath); err == nil {
		m.Seeds, m.Sessions = old.Seeds, old.Sessions // sessions seeded earlier stay
	}
	salts := spec.Salts()
	switch {
	case o.Strategy == Rest: // plain passwords, salted by Keycloak
		salts = SaltsPerUser
	case o.Strategy == Clone && !spec.Policy.CanPrehash() && res.Added > 1:
		salts = SaltsShared // copies of the template's users' hashes
	}
	m.Seeds = append(m.Seeds, SeedEvent{At: start.UTC(), Strategy: string(o.Strategy), From: res.Existing, To: n,
		Added: res.Added, Redone: res.Redone, Seconds: res.Duration.Seconds(), ServerCPUSec: res.ServerCPU.Seconds(), Salts: salts})
	m.Salts = saltsOf(m.Seeds, spec)
	if n > 0 {
		if err := m.Write(o.ManifestPath); err != nil {
			return m, err
		}
	}
	return m, nil
}

type seeder struct {
	adm  *kc.Admin
	s    Spec
	b    builder
	o    SeedOptions
	done atomic.Int64

	mu       sync.Mutex
	finished map[int]bool
	orgIDs   map[string]string // orgs mode: alias → id
	complete map[int]bool      // tenants complete before this run
}

func (sd *seeder) markDone(i int) {
	sd.mu.Lock()
	if sd.finished == nil {
		sd.finished = map[int]bool{}
	}
	sd.finished[i] = true
	sd.mu.Unlock()
	sd.o.Progress(int(sd.done.Add(1)), sd.s.Tenants)
}

// completePrefix is the largest n such that tenants 1..n are complete.
func (sd *seeder) completePrefix(existing int, todo []int) int {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	missing := map[int]bool{}
	for _, i := range todo {
		if !sd.finished[i] {
			missing[i] = true
		}
	}
	n := 0
	for i := 1; i <= sd.s.Tenants && !missing[i]; i++ {
		n = i
	}
	return n
}

// scan finds which tenants are missing or half-made. Half-made realms
// (realms mode) are deleted here so they can be made anew.
func (sd *seeder) scan(ctx context.Context) (todo []int, redo int, err error) {
	if sd.s.Mode == ModeOrgs {
		return sd.scanOrgs(ctx)
	}
	states, err := sd.realmStates(ctx)
	if err != nil {
		return nil, 0, err
	}
	for i := 1; i <= sd.s.Tenants; i++ {
		name := sd.s.RealmOf(i)
		st, ok := states[name]
		switch {
		case !ok:
			todo = append(todo, i)
		case st.dataset != sd.s.Fingerprint():
			return nil, 0, sd.foreign(name, st.dataset)
		case st.complete != "true":
			sd.o.Logf("seed: realm %s is half-made; deleting it to make it anew", name)
			if err := sd.adm.DeleteRealm(ctx, name); err != nil && !errors.Is(err, kc.ErrNotFound) {
				return nil, 0, err
			}
			todo = append(todo, i)
			redo++
		}
	}
	return todo, redo, nil
}

// realmState is what a tenant realm's attributes say of it.
type realmState struct{ dataset, complete string }

// realmStates reads the states of the dataset's realms that exist: from
// the database when there is one (reading a realm through the admin API
// loads it whole, a tenth of a second of server CPU each), else through
// the admin API.
func (sd *seeder) realmStates(ctx context.Context) (map[string]realmState, error) {
	states := map[string]realmState{}
	var names []string
	for i := 1; i <= sd.s.Tenants; i++ {
		names = append(names, sd.s.RealmOf(i))
	}
	if sd.o.DB != "" {
		conn, err := pgx.Connect(ctx, string(sd.o.DB))
		if err != nil {
			return nil, fmt.Errorf("connect to Keycloak's database: %w", err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		rows, err := conn.Query(ctx, `SELECT r.name, coalesce(d.value, ''), coalesce(c.value, '') FROM realm r
LEFT JOIN realm_attribute d ON d.realm_id = r.id AND d.name = $2
LEFT JOIN realm_attribute c ON c.realm_id = r.id AND c.name = $3
WHERE r.name = ANY($1)`, names, AttrDataset, AttrComplete)
		if err != nil {
			return nil, fmt.Errorf("read realms: %w", err)
		}
		var name string
		var st realmState
		_, err = pgx.ForEachRow(rows, []any{&name, &st.dataset, &st.complete}, func() error {
			states[name] = st
			return nil
		})
		return states, err
	}
	realms, err := sd.adm.Realms(ctx)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var check []string
	for _, r := range realms {
		if want[r.Realm] {
			check = append(check, r.Realm)
		}
	}
	var mu sync.Mutex
	err = Parallel(ctx, len(check), 8, func(ctx context.Context, k int) error {
		r, err := sd.adm.GetRealm(ctx, check[k])
		if err != nil {
			return err
		}
		mu.Lock()
		states[r.Realm] = realmState{dataset: r.Attributes[AttrDataset], complete: r.Attributes[AttrComplete]}
		mu.Unlock()
		return nil
	})
	return states, err
}

func (sd *seeder) scanOrgs(ctx context.Context) (todo []int, redo int, err error) {
	realm := sd.s.SharedRealm()
	r, err := sd.adm.GetRealm(ctx, realm)
	if errors.Is(err, kc.ErrNotFound) {
		for i := 1; i <= sd.s.Tenants; i++ {
			todo = append(todo, i)
		}
		return todo, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if r.Attributes[AttrDataset] != sd.s.Fingerprint() {
		return nil, 0, sd.foreign(realm, r.Attributes[AttrDataset])
	}
	sd.orgIDs = map[string]string{}
	complete := map[string]bool{}
	orgs, err := sd.adm.AllOrganizations(ctx, realm)
	if err != nil {
		return nil, 0, err
	}
	for _, o := range orgs {
		sd.orgIDs[o.Alias] = o.ID
		if len(o.Attributes[AttrComplete]) > 0 && o.Attributes[AttrComplete][0] == "true" {
			complete[o.Alias] = true
		}
	}
	for i := 1; i <= sd.s.Tenants; i++ {
		id := TenantID(i)
		if complete[id] {
			continue
		}
		todo = append(todo, i)
		if sd.orgIDs[id] != "" {
			redo++
		}
	}
	return todo, redo, nil
}

// foreign is the error for a realm that holds something other than this
// dataset; got is its fingerprint attribute.
func (sd *seeder) foreign(realm, got string) error {
	return fmt.Errorf("%w: realm %s exists but is not part of this dataset (fingerprint %q, want %s); choose another --prefix",
		ErrForeign, realm, got, sd.s.Fingerprint())
}

// createRealm creates tenant realm name from rep. A 409 means a request of
// an interrupted run went through after this run looked: the realm is kept
// when it is ours and complete (complete is then true), made anew when it is
// ours and half-made, and refused when it is not ours.
func (sd *seeder) createRealm(ctx context.Context, name string, rep any) (complete bool, err error) {
	err = sd.adm.CreateRealm(ctx, rep)
	if !errors.Is(err, kc.ErrConflict) {
		return false, err
	}
	r, err := sd.adm.GetRealm(ctx, name)
	if err != nil {
		return false, err
	}
	switch {
	case r.Attributes[AttrDataset] != sd.s.Fingerprint():
		return false, sd.foreign(name, r.Attributes[AttrDataset])
	case r.Attributes[AttrComplete] == "true":
		return true, nil
	}
	sd.o.Logf("seed: realm %s appeared half-made (a request of an interrupted run); making it anew", name)
	if err := sd.adm.DeleteRealm(ctx, name); err != nil && !errors.Is(err, kc.ErrNotFound) {
		return false, err
	}
	return false, sd.adm.CreateRealm(ctx, rep)
}

// tenantKeys hands tenant k its RSA keys from the pool (nil without one:
// fresh keys).
func (sd *seeder) tenantKeys(k int) func(j int) (*rsa.PrivateKey, error) {
	if sd.o.Keys == nil {
		return nil
	}
	return func(j int) (*rsa.PrivateKey, error) { return sd.o.Keys.Key(TenantKeyIndex(k, j)) }
}

// ensureKeys fills the key pool for tenants todo (realms mode).
func (sd *seeder) ensureKeys(ctx context.Context, todo []int) error {
	if sd.o.Keys == nil || sd.s.Mode != ModeRealms || len(todo) == 0 {
		return nil
	}
	return sd.o.Keys.Ensure(ctx, TenantKeyIndex(slices.Max(todo)+1, 0), sd.o.Logf)
}

// fast seeds todo the fast way.
func (sd *seeder) fast(ctx context.Context, todo []int) error {
	if err := sd.ensureKeys(ctx, todo); err != nil {
		return err
	}
	if sd.s.Mode == ModeRealms {
		return Parallel(ctx, len(todo), sd.o.Concurrency, func(ctx context.Context, k int) error {
			return sd.fastRealm(ctx, todo[k])
		})
	}
	realm := sd.s.SharedRealm()
	if sd.orgIDs == nil {
		// No shared realm yet: the realm with the first tenants inline,
		// imported in one transaction. A few at most: one transaction
		// with hundreds of tenants runs into the server's transaction
		// timeout (300 s) on a small machine.
		first := todo[:min(len(todo), inlineTenants)]
		sd.o.Logf("seed: creating realm %s with %d tenants inline", realm, len(first))
		if err := sd.b.prehash(ctx, first); err != nil {
			return err
		}
		defer sd.b.forget(first)
		if err := sd.adm.CreateRealm(ctx, sd.b.sharedRealm(first)); err != nil {
			return fmt.Errorf("realm %s: %w", realm, err)
		}
		sd.orgIDs = map[string]string{}
		for _, i := range first {
			if sd.s.Content.ScopesPerClient > 0 { // the organization is complete after its client scopes
				if err := sd.completeOrg(ctx, i, nil); err != nil {
					return err
				}
				continue
			}
			sd.markDone(i)
		}
		todo = todo[len(first):]
	}
	// Growth: a partial import per batch, then organizations and members;
	// batches in parallel. Small batches: each query of a partial import
	// makes Hibernate check every entity the transaction has touched, so
	// its cost grows with the square of the batch.
	var batches [][]int
	for lo := 0; lo < len(todo); lo += growthBatch {
		batches = append(batches, todo[lo:min(lo+growthBatch, len(todo))])
	}
	return Parallel(ctx, len(batches), sd.o.Concurrency, func(ctx context.Context, k int) error {
		part := batches[k]
		if err := sd.b.prehash(ctx, part); err != nil {
			return err
		}
		defer sd.b.forget(part)
		for _, i := range part {
			if err := sd.clearHalfMadeUsers(ctx, i); err != nil {
				return err
			}
		}
		res, err := sd.adm.PartialImport(ctx, realm, sd.b.tenantPartial(part))
		if err != nil {
			return fmt.Errorf("partial import of tenants %s..%s: %w", TenantID(part[0]), TenantID(part[len(part)-1]), err)
		}
		ids := map[string]string{}
		for _, r := range res.Results {
			if r.ResourceType == "USER" && r.ID != "" {
				ids[r.ResourceName] = r.ID
			}
		}
		for _, i := range part {
			if err := sd.completeOrg(ctx, i, ids); err != nil {
				return err
			}
		}
		return nil
	})
}

// fastRealm makes realms-mode tenant i the fast way: its realm in one
// import, or in parts (big tenants: copies too, with the clone strategy),
// marked complete last.
func (sd *seeder) fastRealm(ctx context.Context, i int) error {
	if err := sd.b.prehash(ctx, []int{i}); err != nil {
		return err
	}
	defer sd.b.forget([]int{i})
	var rep kc.RealmRep
	var parts []kc.PartialImportRep
	if sd.b.big() {
		rep, parts = sd.b.tenantParts(i)
	} else {
		rep = sd.b.tenantRealm(i)
	}
	keys, err := keyProviders(rep.Realm, sd.tenantKeys(i))
	if err != nil {
		return fmt.Errorf("tenant %s: realm keys: %w", TenantID(i), err)
	}
	rep.Components = keys
	if sd.b.dir != nil {
		rep.Components[UserStorageType] = []kc.ComponentRep{sd.b.ldapComponent(sd.b.dir, i)}
	}
	complete, err := sd.createRealm(ctx, rep.Realm, rep)
	if err != nil {
		return fmt.Errorf("tenant %s: %w", TenantID(i), err)
	}
	if sd.b.big() && !complete {
		if err := sd.importParts(ctx, rep.Realm, parts); err != nil {
			return fmt.Errorf("tenant %s: %w", TenantID(i), err)
		}
		// Before the copies: a copy of a client copies its scopes.
		if err := sd.ensureClientScopes(ctx, rep.Realm, i); err != nil {
			return err
		}
		if err := sd.bulkCopy(ctx, i); err != nil {
			return err
		}
		if err := sd.markRealmComplete(ctx, rep.Realm); err != nil {
			return fmt.Errorf("tenant %s: %w", TenantID(i), err)
		}
	}
	sd.markDone(i)
	return nil
}

// importParts adds the parts of a big realms-mode tenant to its realm,
// o.Concurrency at a time, saying how far it got about every tenth.
func (sd *seeder) importParts(ctx context.Context, realm string, parts []kc.PartialImportRep) error {
	if len(parts) == 0 {
		return nil
	}
	t0 := time.Now()
	users, clients := 0, 0
	for _, p := range parts {
		users, clients = users+len(p.Users), clients+len(p.Clients)
	}
	sd.o.Logf("seed: realm %s: %d users (service accounts among them) and %d clients to add in %d partial imports",
		realm, users, clients, len(parts))
	var mu sync.Mutex
	done, said := 0, 0
	return Parallel(ctx, len(parts), sd.o.Concurrency, func(ctx context.Context, k int) error {
		if _, err := sd.adm.PartialImport(ctx, realm, parts[k]); err != nil {
			return fmt.Errorf("partial import %d of %d: %w", k+1, len(parts), err)
		}
		mu.Lock()
		defer mu.Unlock()
		done++
		if tenth := done * 10 / len(parts); tenth > said {
			said = tenth
			sd.o.Logf("seed: realm %s: %d of %d partial imports in %.0f s", realm, done, len(parts), time.Since(t0).Seconds())
		}
		return nil
	})
}

// markRealmComplete marks a realms-mode tenant's realm complete: its last
// write.
func (sd *seeder) markRealmComplete(ctx context.Context, realm string) error {
	return sd.adm.UpdateRealm(ctx, realm, map[string]any{"realm": realm,
		"attributes": map[string]string{AttrDataset: sd.s.Fingerprint(), AttrComplete: "true"}})
}

// clearHalfMadeUsers deletes the users an interrupted run made for
// tenant i when its organization is there but not complete: the partial
// import skips a user that exists, with the groups it was not yet put in
// (a rest seed cut off between making a user and adding it to its group
// left 58 of 60 group memberships after the resume).
func (sd *seeder) clearHalfMadeUsers(ctx context.Context, i int) error {
	sd.mu.Lock()
	halfMade := sd.orgIDs[TenantID(i)] != ""
	sd.mu.Unlock()
	if !halfMade {
		return nil
	}
	realm := sd.s.SharedRealm()
	for j := 1; j <= sd.s.Content.Users; j++ {
		u, err := sd.adm.FindUser(ctx, realm, sd.s.Username(i, j))
		if err != nil {
			return fmt.Errorf("tenant %s: look for a half-made user: %w", TenantID(i), err)
		}
		if u == nil {
			continue
		}
		if err := sd.adm.DeleteUser(ctx, realm, u.ID); err != nil && !errors.Is(err, kc.ErrNotFound) {
			return fmt.Errorf("tenant %s: delete half-made user %s: %w", TenantID(i), u.Username, err)
		}
	}
	return nil
}

// loadDirectory writes the users of tenants todo into the directory (with
// the dataset's OU), before their realms are made.
func (sd *seeder) loadDirectory(ctx context.Context, todo []int) error {
	d := sd.b.dir
	if d == nil {
		return nil
	}
	t0 := time.Now()
	es, err := sd.b.directoryEntries(ctx, d.BaseDN, todo, true)
	if err != nil {
		return err
	}
	load := sd.o.LDAPLoad
	if load == nil {
		conn := directory.Conn{URL: d.URL, BindDN: d.BindDN, Password: d.Password.Reveal()}
		load = func(ctx context.Context, es []directory.Entry) (directory.AddResult, error) {
			return conn.Add(ctx, es, directory.DefaultAddConcurrency)
		}
	}
	scheme, _ := sd.s.DirectoryScheme()
	sd.o.Logf("seed: writing %d entries (%d users, passwords %s) into LDAP %s", len(es), len(todo)*sd.s.Content.Users, scheme, d.URL)
	res, err := load(ctx, es)
	if err != nil {
		return fmt.Errorf("LDAP: %w", err)
	}
	sd.o.Logf("seed: LDAP: %d entries added, %d were there, in %.1f s", res.Added, res.Existing, time.Since(t0).Seconds())
	return nil
}

// Orgs-mode batch sizes: tenants inline in a new shared realm, and tenants
// per partial import when growing.
const (
	inlineTenants = 25
	growthBatch   = 1
)

// completeOrg makes tenant i's organization, adds its members and marks it
// complete. Every step tolerates an earlier, interrupted attempt. userIDs
// may carry known user ids (username → id).
func (sd *seeder) completeOrg(ctx context.Context, i int, userIDs map[string]string) error {
	realm := sd.s.SharedRealm()
	alias := TenantID(i)
	orgID, err := sd.ensureOrg(ctx, i)
	if err != nil {
		return err
	}
	for _, name := range sd.s.orgMembers(i) {
		uid := userIDs[name]
		if uid == "" {
			u, err := sd.adm.FindUser(ctx, realm, name)
			if err != nil {
				return err
			}
			if u == nil {
				return fmt.Errorf("tenant %s: user %s is missing", alias, name)
			}
			uid = u.ID
		}
		if err := sd.adm.AddOrganizationMember(ctx, realm, orgID, uid); err != nil && !errors.Is(err, kc.ErrConflict) {
			return fmt.Errorf("organization %s: add %s: %w", alias, name, err)
		}
	}
	for _, p := range sd.b.identityProviders(i) {
		if err := sd.adm.LinkOrganizationIdP(ctx, realm, orgID, p.Alias); err != nil && !errors.Is(err, kc.ErrConflict) {
			return fmt.Errorf("organization %s: link identity provider %s: %w", alias, p.Alias, err)
		}
	}
	if err := sd.ensureClientScopes(ctx, realm, i); err != nil {
		return err
	}
	done := sd.b.org(i, false, true)
	done.ID = orgID
	if err := sd.adm.Do(ctx, http.MethodPut, kc.RealmPath(realm, "organizations", orgID), done, nil); err != nil {
		return fmt.Errorf("organization %s: mark complete: %w", alias, err)
	}
	sd.markDone(i)
	return nil
}

// ensureClientScopes makes tenant i's client scopes in realm, when the
// shape has them (Shape.ScopesPerClient), and makes them default scopes
// of its backend clients that the admin API made (the copies of a big
// tenant's clients copy them). Every step tolerates an earlier attempt.
func (sd *seeder) ensureClientScopes(ctx context.Context, realm string, i int) error {
	want := sd.s.clientScopes(i)
	if len(want) == 0 {
		return nil
	}
	for _, c := range want { // one made by an earlier attempt: a conflict, taken
		if _, err := created(sd.adm.Create(ctx, kc.RealmPath(realm, "client-scopes"), c)); err != nil {
			return fmt.Errorf("tenant %s: client scope %s: %w", TenantID(i), c.Name, err)
		}
	}
	ids, err := sd.scopeIDs(ctx, realm)
	if err != nil {
		return err
	}
	for _, cl := range sd.b.clients(i) {
		if !cl.ServiceAccountsEnabled || cl.AuthorizationServicesEnabled {
			continue // not a backend client
		}
		cs, err := sd.adm.Clients(ctx, realm, cl.ClientID)
		if err != nil || len(cs) == 0 {
			return fmt.Errorf("tenant %s: client %s: %v", TenantID(i), cl.ClientID, err)
		}
		for _, c := range want {
			p := kc.RealmPath(realm, "clients", cs[0].ID, "default-client-scopes", ids[c.Name])
			if err := sd.adm.Do(ctx, http.MethodPut, p, nil, nil); err != nil {
				return fmt.Errorf("tenant %s: client %s: default scope %s: %w", TenantID(i), cl.ClientID, c.Name, err)
			}
		}
	}
	return nil
}

// scopeIDs are realm's client scopes' ids by name.
func (sd *seeder) scopeIDs(ctx context.Context, realm string) (map[string]string, error) {
	var have []kc.ClientScopeRep
	if err := sd.adm.Do(ctx, http.MethodGet, kc.RealmPath(realm, "client-scopes"), nil, &have); err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, c := range have {
		ids[c.Name] = c.ID
	}
	return ids, nil
}

// ensureOrg returns the id of tenant i's organization, made (not yet
// complete) when it is not there, and remembers it: a resumed seed takes a
// tenant whose organization is there but not complete for half-made.
func (sd *seeder) ensureOrg(ctx context.Context, i int) (string, error) {
	realm := sd.s.SharedRealm()
	alias := TenantID(i)
	sd.mu.Lock()
	orgID := sd.orgIDs[alias]
	sd.mu.Unlock()
	if orgID != "" {
		return orgID, nil
	}
	id, err := sd.adm.Create(ctx, kc.RealmPath(realm, "organizations"), sd.b.org(i, false, false))
	if errors.Is(err, kc.ErrConflict) {
		orgs, ferr := sd.adm.Organizations(ctx, realm, alias, 0, 2)
		if ferr != nil || len(orgs) == 0 {
			return "", fmt.Errorf("organization %s: %w", alias, err)
		}
		id, err = orgs[0].ID, nil
	}
	if err != nil {
		return "", fmt.Errorf("organization %s: %w", alias, err)
	}
	sd.mu.Lock()
	sd.orgIDs[alias] = id
	sd.mu.Unlock()
	return id, nil
}

// Parallel runs f(0..n-1) with at most c at a time and stops at the first
// error.
func Parallel(ctx context.Context, n, c int, f func(ctx context.Context, k int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for w := 0; w < min(c, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, k); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// seedTimeout allows the long requests of seeding (a realm with
// thousands of users inline).
const seedTimeout = 30 * time.Minute

// NewAdmin returns an admin client of tg for seeding and verifying: long
// timeouts, never through a proxy (loopback and known targets), enough
// idle connections for the seeders.
func NewAdmin(tg kc.Target) *kc.Admin {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConnsPerHost = 64
	tr.TLSClientConfig, _ = tg.TLSConfig() // a bad CA file: Validate said so
	return kc.NewAdmin(kc.New(tg.BaseURL, &http.Client{Timeout: seedTimeout, Transport: tr}), tg.Admin)
}

// DefaultStrategy is strat, or when "" the default: clone on the local
// stack (local: its PostgreSQL database is known), fast on a --target
// or on MariaDB. Clone elsewhere is a usage error.
func DefaultStrategy(strat Strategy, local bool) (Strategy, error) {
	if strat == "" {
		strat = Fast
		if local {
			strat = Clone
		}
	}
	if strat == Clone && !local {
		return strat, cliutil.Usagef("--strategy clone writes into Keycloak's PostgreSQL database: only on the local stack, on PostgreSQL (use fast against a --target or on MariaDB)")
	}
	return strat, nil
}
