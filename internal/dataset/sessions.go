package dataset

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
)

// Sessions as dataset state (seed --sessions N --offline-sessions M).
//
// Keycloak 26 keeps every user session in its database: online sessions
// (persistent user sessions, on by default) and offline ones, one row per
// user session in offline_user_session (offline_flag "0" or "1") and one
// per client session in offline_client_session. kcbench writes such rows
// straight into those tables, as the clone strategy writes tenants: it
// first has Keycloak make one online and one offline session through the
// token endpoint (a password grant of the tenant's backend client, without
// and with the scope offline_access), reads the rows Keycloak wrote for
// them, and writes copies of those rows with their own session ids,
// users, clients, realms and times. What Keycloak wrote decides every
// column and encoding; kcbench changes only what differs from session to
// session, and refuses a table whose columns it does not know.

// MaxSessions bounds --sessions and --offline-sessions.
const MaxSessions = 10_000_000

// SessionSpec is how many sessions a dataset's realms hold: online user
// sessions (each with one client session) and offline ones.
type SessionSpec struct {
	Online  int `json:"online"`
	Offline int `json:"offline"`
}

// Validate checks the counts.
func (s SessionSpec) Validate() error {
	var errs []error
	for _, c := range []struct {
		flag string
		n    int
	}{{"sessions", s.Online}, {"offline-sessions", s.Offline}} {
		if c.n < 0 || c.n > MaxSessions {
			errs = append(errs, fmt.Errorf("--%s: %d: must be between 0 and %d", c.flag, c.n, MaxSessions))
		}
	}
	return errors.Join(errs...)
}

// RegisterSessionFlags adds --sessions and --offline-sessions to fs.
func RegisterSessionFlags(fs *flag.FlagSet) *SessionSpec {
	s := &SessionSpec{}
	fs.IntVar(&s.Online, "sessions", 0, "online user sessions the dataset's realms hold, spread over its tenants, users and clients, written into Keycloak's database (local stack; default 0: none)")
	fs.IntVar(&s.Offline, "offline-sessions", 0, "offline sessions the dataset's realms hold, written the same way (default 0: none)")
	return s
}

// Usage checks the flags' counts (fromDir: seed --from-dir was given);
// its errors are usage errors.
func (s SessionSpec) Usage(fromDir bool) error {
	if fromDir && s.Any() {
		return cliutil.Usagef("--sessions and --offline-sessions: seeded into generated datasets only, not with --from-dir")
	}
	if err := s.Validate(); err != nil {
		return cliutil.Usage(err)
	}
	return nil
}

// Any reports whether s asks for sessions.
func (s SessionSpec) Any() bool { return s.Online > 0 || s.Offline > 0 }

// SessionState is what the manifest records of the sessions seeded.
type SessionState struct {
	SessionSpec
	// At is when sessions were last written; online ones idle out over
	// the realms' SSO idle timeout after it (their last refreshes are
	// spread over it, as a steady state's would be).
	At time.Time `json:"at"`
	// Seconds the last writing took, and the rows it wrote.
	Seconds float64 `json:"seconds"`
	Written int     `json:"written"`
	// OnlineIdle is the first realm's SSO idle timeout.
	OnlineIdleSeconds int `json:"online_idle_s"`
}

// SessionOptions say where and how sessions are written.
type SessionOptions struct {
	// DB is a postgres:// URL of Keycloak's database.
	DB     kc.Secret
	DBKind string
	// ManifestPath is where the manifest is written ("" for none).
	ManifestPath string
	Logf         func(format string, args ...any)
	// Progress is called with sessions written out of those to write.
	Progress func(done, total int)
	// OnlineInMemory: the server keeps online sessions in memory only
	// (persistent sessions off); only offline ones can be seeded.
	OnlineInMemory bool
	// DataDir is the database's folder on this machine ("": unknown),
	// whose free space is checked before anything is written.
	DataDir string
	// Exact brings the realms to exactly the sessions wanted: a realm's
	// sessions beyond its tenants' shares are deleted from the database
	// (Keycloak may hold some in its caches until it restarts). Without
	// it what is there counts and more is only added.
	Exact bool
}

// SessionResult says what SeedSessions did.
type SessionResult struct {
	Want, Found, Written SessionSpec
	Duration             time.Duration
	// DBGrowth is how much the database grew (bytes; 0 when unknown).
	DBGrowth int64
}

// sessionsPerTx bounds the sessions written in one transaction.
const sessionsPerTx = 50_000

// SeedSessions brings the dataset's realms to want's online and offline
// sessions (those already there count), spread evenly over the tenants,
// their users and their clients.
func SeedSessions(ctx context.Context, adm *kc.Admin, m *Manifest, want SessionSpec, o SessionOptions) (*SessionResult, error) {
	if err := checkSessionRequest(m, want, o); err != nil {
		return nil, err
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Progress == nil {
		o.Progress = func(int, int) {}
	}
	start := time.Now()
	conn, err := pgx.Connect(ctx, string(o.DB))
	if err != nil {
		return nil, fmt.Errorf("sessions: connect to Keycloak's database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if err := checkSessionTables(ctx, conn); err != nil {
		return nil, err
	}
	tp, err := probeSessions(ctx, adm, conn, m, o.OnlineInMemory)
	if err != nil {
		return nil, err
	}
	realms, err := readSessionRealms(ctx, conn, m, tp)
	if err != nil {
		return nil, err
	}
	if o.Exact {
		if err := trimSessions(ctx, conn, m, realms, want, o.Logf); err != nil {
			return nil, err
		}
	}
	plan := planSessions(m, realms, want)
	res := &SessionResult{Want: want, Found: plan.found}
	total := plan.todo.Online + plan.todo.Offline
	size0 := dbSize(ctx, conn)
	if err := checkSessionSpace(o.DataDir, tp, total); err != nil {
		return nil, err
	}
	shape := "UUIDs"
	if tp.idLen != 36 {
		shape = fmt.Sprintf("base64url text of %d bytes", tp.idLen)
	}
	o.Logf("sessions: copies of the rows Keycloak wrote for a session of its own (ids: %s, %d columns a user session, %d a client session)",
		shape, len(tp.user["1"].cols), len(tp.client["1"].cols))
	o.Logf("sessions: %d online and %d offline there, %d online and %d offline to write into %d realm(s), %d per transaction",
		plan.found.Online, plan.found.Offline, plan.todo.Online, plan.todo.Offline, len(realms), sessionsPerTx)
	o.Progress(0, total)
	w := sessionWriter{tp: tp, now: time.Now().Unix(), rnd: newFastRand()}
	done := 0
	err = w.write(ctx, conn, plan.parts, func(n int) {
		done += n
		o.Progress(done, total)
	})
	res.Written = w.written
	res.Duration = time.Since(start)
	if size1 := dbSize(ctx, conn); size0 > 0 && size1 > size0 {
		res.DBGrowth = size1 - size0
	}
	if err != nil {
		return res, err
	}
	if m != nil && o.ManifestPath != "" && (res.Written.Any() || m.Sessions == nil || m.Sessions.SessionSpec != want) {
		// (nothing written: the record, and the time the online ones
		// idle out from, stays)
		m.Sessions = &SessionState{SessionSpec: want, At: start.UTC(), Seconds: res.Duration.Seconds(),
			Written: res.Written.Online + res.Written.Offline, OnlineIdleSeconds: realms[0].idle}
		m.Updated = time.Now().UTC()
		if err := m.Write(o.ManifestPath); err != nil {
			return res, err
		}
	}
	return res, nil
}

// CheckSessions refuses, before anything is written, sessions that
// cannot be seeded into spec's dataset: dbKind and db are the target's
// database kind and URL, inMemory says the server keeps online sessions
// in memory only.
func CheckSessions(spec Spec, want SessionSpec, dbKind string, db kc.Secret, inMemory bool) error {
	if err := want.Validate(); err != nil {
		return err
	}
	switch {
	case spec.Content.Users == 0:
		return errors.New("sessions need users to own them: the dataset has none (--users)")
	case dbKind == "mariadb":
		return errors.New("sessions are written into Keycloak's PostgreSQL tables: not available on MariaDB")
	case db == "":
		return errors.New("sessions are written into Keycloak's database: the local stack only (no database URL for this target)")
	case want.Online > 0 && inMemory:
		return errors.New("--sessions: this stack keeps online sessions in memory only (--persistent-sessions=false), where nothing can be written; seed --offline-sessions only, or a stack with persistent sessions")
	}
	return nil
}

func checkSessionRequest(m *Manifest, want SessionSpec, o SessionOptions) error {
	switch {
	case m == nil || m.Tenants() == 0:
		return errors.New("sessions need a seeded dataset to own them: seed its tenants first")
	case m.Files != nil:
		return errors.New("sessions are seeded into generated datasets only, not one seeded from realm files")
	}
	return CheckSessions(m.Spec, want, o.DBKind, o.DB, o.OnlineInMemory)
}

// The columns of the session tables the writer knows: what it sets
// (users, sessions, clients, realms, times, data) and what it copies from
// Keycloak's own row. A column not listed means a Keycloak line the writer
// does not know.
var (
	userSessionCols = map[string]bool{"user_session_id": true, "user_id": true, "realm_id": true, "created_on": true,
		"offline_flag": true, "data": true, "last_session_refresh": true, "broker_session_id": true, "version": true, "remember_me": true}
	clientSessionCols = map[string]bool{"user_session_id": true, "client_id": true, "offline_flag": true, "timestamp": true,
		"data": true, "client_storage_provider": true, "external_client_id": true, "version": true, "realm_id": true}
	sessionColsNeeded = map[string][]string{
		"offline_user_session":   {"user_session_id", "user_id", "realm_id", "created_on", "offline_flag", "data", "last_session_refresh"},
		"offline_client_session": {"user_session_id", "client_id", "offline_flag", "timestamp", "data"},
	}
)

// checkSessionTables compares the session tables' columns with the ones
// the writer knows.
func checkSessionTables(ctx context.Context, conn *pgx.Conn) error {
	for table, known := range map[string]map[string]bool{"offline_user_session": userSessionCols, "offline_client_session": clientSessionCols} {
		rows, err := conn.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND table_schema = current_schema()`, table)
		if err != nil {
			return fmt.Errorf("sessions: read the columns of %s: %w", table, err)
		}
		cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("sessions: read the columns of %s: %w", table, err)
		}
		var unknown []string
		for _, c := range cols {
			if !known[c] {
				unknown = append(unknown, c)
			}
		}
		for _, c := range sessionColsNeeded[table] {
			if !slices.Contains(cols, c) {
				return fmt.Errorf("sessions: Keycloak's table %s lacks column %s: a Keycloak line whose sessions kcbench cannot write (nothing was written)", table, c)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			return fmt.Errorf("sessions: Keycloak's table %s has columns kcbench does not know (%s): a Keycloak line whose sessions kcbench cannot write (nothing was written)", table, strings.Join(unknown, ", "))
		}
	}
	return nil
}

// sessionRow is one row as Keycloak wrote it: its columns' names and
// values.
type sessionRow struct {
	cols []string
	vals []any
}

func (r sessionRow) get(col string) any {
	if i := slices.Index(r.cols, col); i >= 0 {
		return r.vals[i]
	}
	return nil
}

// sessionTemplate is what Keycloak wrote for one online and one offline
// session of tenant 1, and what in it varies from session to session.
type sessionTemplate struct {
	// user and client rows, per offline flag ("0" online, "1" offline).
	user, client map[string]sessionRow
	// userData and clientData are the data columns cut at what varies.
	userData, clientData map[string][]piece
	realm, realmName     string
	clientID             string   // the client's id (UUID) in the rows
	execs                []string // authenticator execution ids in the user data
	idLen                int      // the session ids' shape: 36 a UUID, else base64url of idLen bytes
	bytes                int      // what one session's rows take, text
}

// piece is literal text, or a slot filled per session.
type piece struct {
	lit  string
	slot int
}

const (
	slotNone = iota
	slotCreated
	slotClient
	slotRealmName
	slotExec // + index in execs
)

// probeSessions has Keycloak make an online and an offline session of
// tenant 1's first user with its backend client, reads their rows, and
// ends both sessions again; only the offline one where online sessions
// are kept in memory only.
func probeSessions(ctx context.Context, adm *kc.Admin, conn *pgx.Conn, m *Manifest, inMemory bool) (*sessionTemplate, error) {
	t := m.Tenant(1)
	cl := kc.OAuthClient{ID: t.Backend, Secret: t.BackendSecret}
	tp := &sessionTemplate{user: map[string]sessionRow{}, client: map[string]sessionRow{}, userData: map[string][]piece{}, clientData: map[string][]piece{}, realmName: t.Realm}
	var probeAt int64
	flags := []string{"0", "1"}
	if inMemory {
		flags = flags[1:]
	}
	for _, flag := range flags {
		scope := "openid"
		if flag == "1" {
			scope = "openid " + kc.ScopeOfflineAccess
		}
		tok, err := adm.Client().PasswordGrant(ctx, t.Realm, cl, m.Username(1, 1), m.Password, scope)
		if err != nil {
			return nil, fmt.Errorf("sessions: a session for Keycloak to write first (password grant of %s in %s): %w", cl.ID, t.Realm, err)
		}
		sid, err := kc.SessionID(tok.RefreshToken)
		if err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
		u, err := readSessionRow(ctx, conn, "offline_user_session", sid, flag)
		if err != nil {
			return nil, err
		}
		c, err := readSessionRow(ctx, conn, "offline_client_session", sid, flag)
		if err != nil {
			return nil, err
		}
		tp.user[flag], tp.client[flag] = u, c
		probeAt = toInt64(u.get("created_on"))
		if err := adm.DeleteSession(ctx, t.Realm, sid, flag == "1"); err != nil {
			return nil, fmt.Errorf("sessions: end the first session again: %w", err)
		}
		if tp.idLen, err = sessionIDShape(sid); err != nil {
			return nil, err
		}
	}
	tp.realm, _ = tp.user["1"].get("realm_id").(string)
	tp.clientID, _ = tp.client["1"].get("client_id").(string)
	execs, err := realmExecutionIDs(ctx, conn, tp.realm)
	if err != nil {
		return nil, err
	}
	for _, flag := range flags {
		ud, _ := tp.user[flag].get("data").(string)
		cd, _ := tp.client[flag].get("data").(string)
		if tp.userData[flag], err = tp.cut(ud, probeAt, execs); err != nil {
			return nil, err
		}
		if tp.clientData[flag], err = tp.cut(cd, probeAt, execs); err != nil {
			return nil, err
		}
		tp.bytes = max(tp.bytes, len(ud)+len(cd)+200)
	}
	return tp, nil
}

// readSessionRow reads the row of session sid Keycloak wrote into table.
func readSessionRow(ctx context.Context, conn *pgx.Conn, table, sid, flag string) (sessionRow, error) {
	rows, err := conn.Query(ctx, "SELECT * FROM "+table+" WHERE user_session_id = $1 AND offline_flag = $2", sid, flag)
	if err != nil {
		return sessionRow{}, fmt.Errorf("sessions: read %s: %w", table, err)
	}
	defer rows.Close()
	var r sessionRow
	for _, fd := range rows.FieldDescriptions() {
		r.cols = append(r.cols, fd.Name)
	}
	n := 0
	for rows.Next() {
		if r.vals, err = rows.Values(); err != nil {
			return r, fmt.Errorf("sessions: read %s: %w", table, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return r, fmt.Errorf("sessions: read %s: %w", table, err)
	}
	if n != 1 {
		return r, fmt.Errorf("sessions: Keycloak wrote %d rows into %s for a session with offline_flag %s, want 1: a Keycloak line (or a --persistent-sessions setting) whose sessions kcbench cannot write", n, table, flag)
	}
	return r, nil
}

// sessionIDShape is the length in bytes of a session id that is base64url
// text (Keycloak 26.2 and later), or 36 for a UUID (26.0).
func sessionIDShape(sid string) (int, error) {
	if isUUID(sid) {
		return 36, nil
	}
	if b, err := base64.RawURLEncoding.DecodeString(sid); err == nil && len(b) > 0 && len(sid) <= 36 {
		return len(b), nil
	}
	return 0, fmt.Errorf("sessions: Keycloak's session id %q is neither a UUID nor base64url text: a Keycloak line whose sessions kcbench cannot write", sid)
}

// realmExecutionIDs are the ids of the authentication executions of realm.
func realmExecutionIDs(ctx context.Context, conn *pgx.Conn, realm string) (map[string]bool, error) {
	rows, err := conn.Query(ctx, "SELECT id FROM authentication_execution WHERE realm_id = $1", realm)
	if err != nil {
		return nil, fmt.Errorf("sessions: read the realm's authentication executions: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sessions: read the realm's authentication executions: %w", err)
	}
	set := map[string]bool{}
	for _, id := range ids {
		set[id] = true
	}
	return set, nil
}

var (
	// a time in seconds, standing alone (not inside base64 text)
	epochRE = regexp.MustCompile(`(^|[^A-Za-z0-9+/=])(1[0-9]{9})([^A-Za-z0-9+/=]|$)`)
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// cut splits a data column at what varies: the times of the probe (within
// two minutes of probeAt: the session's start), the client's id, the
// realm's name in issuer URLs, the realm's authentication executions. Any
// other id in it is one the writer does not know how to change.
func (tp *sessionTemplate) cut(data string, probeAt int64, execs map[string]bool) ([]piece, error) {
	type mark struct {
		lo, hi, slot int
	}
	var marks []mark
	for _, m := range epochRE.FindAllStringSubmatchIndex(data, -1) {
		v, _ := strconv.ParseInt(data[m[4]:m[5]], 10, 64)
		if v >= probeAt-120 && v <= probeAt+120 {
			marks = append(marks, mark{m[4], m[5], slotCreated})
		}
	}
	for _, m := range uuidRE.FindAllStringIndex(data, -1) {
		id := data[m[0]:m[1]]
		switch {
		case id == tp.clientID:
			marks = append(marks, mark{m[0], m[1], slotClient})
		case execs[id]:
			k := slices.Index(tp.execs, id)
			if k < 0 {
				k = len(tp.execs)
				tp.execs = append(tp.execs, id)
			}
			marks = append(marks, mark{m[0], m[1], slotExec + k})
		default:
			return nil, fmt.Errorf("sessions: Keycloak's session data holds an id kcbench does not know (%s in %.80q…): a Keycloak line whose sessions kcbench cannot write", id, data)
		}
	}
	realmRef := "/realms/" + tp.realmName + `"`
	for off := 0; ; {
		k := strings.Index(data[off:], realmRef)
		if k < 0 {
			break
		}
		lo := off + k + len("/realms/")
		marks = append(marks, mark{lo, lo + len(tp.realmName), slotRealmName})
		off = lo + len(tp.realmName)
	}
	slices.SortFunc(marks, func(a, b mark) int { return a.lo - b.lo })
	var ps []piece
	at := 0
	for _, mk := range marks {
		if mk.lo < at {
			continue
		}
		ps = append(ps, piece{lit: data[at:mk.lo]}, piece{slot: mk.slot})
		at = mk.hi
	}
	return append(ps, piece{lit: data[at:]}), nil
}

// sessionRealm is a realm of the dataset and what its sessions are made of.
type sessionRealm struct {
	id, name string
	// users and clients of each tenant in the realm (ids)
	tenants []sessionTenant
	// execs maps the template realm's execution ids to this realm's
	execs []string
	// the realm's timeouts (seconds)
	idle, maxLife, offlineIdle int
	found                      SessionSpec
}

type sessionTenant struct {
	index          int
	users, clients []string
}

// readSessionRealms reads the dataset's realms: ids, timeouts, users,
// clients, the executions matching the template's, the sessions there.
func readSessionRealms(ctx context.Context, conn *pgx.Conn, m *Manifest, tp *sessionTemplate) ([]*sessionRealm, error) {
	byName := map[string]*sessionRealm{}
	var realms []*sessionRealm
	b := newBuilder(m.Spec)
	for i := 1; i <= m.Tenants(); i++ {
		name := m.Spec.RealmOf(i)
		r := byName[name]
		if r == nil {
			r = &sessionRealm{name: name}
			err := conn.QueryRow(ctx, `SELECT id, sso_idle_timeout, sso_max_lifespan, offline_session_idle_timeout FROM realm WHERE name = $1`, name).
				Scan(&r.id, &r.idle, &r.maxLife, &r.offlineIdle)
			if err != nil {
				return nil, fmt.Errorf("sessions: realm %s: %w (dataset verify says what the server holds)", name, err)
			}
			if r.execs, err = matchExecutions(ctx, conn, tp, r.id); err != nil {
				return nil, err
			}
			byName[name], realms = r, append(realms, r)
		}
		t := sessionTenant{index: i}
		names := make([]string, m.Spec.Content.Users)
		for j := range names {
			names[j] = m.Username(i, j+1)
		}
		var err error
		if t.users, err = idsByName(ctx, conn, "SELECT id FROM user_entity WHERE realm_id = $1 AND username = ANY($2) ORDER BY username", r.id, names); err != nil {
			return nil, err
		}
		if len(t.users) != len(names) {
			return nil, fmt.Errorf("sessions: tenant %s has %d of its %d users in Keycloak's database (users in LDAP without import cannot own seeded sessions; dataset verify says what the server holds)", TenantID(i), len(t.users), len(names))
		}
		var clients []string
		for _, c := range b.clientNames(i) {
			if c.Protocol == "" { // sessions of OpenID Connect clients only
				clients = append(clients, c.ClientID)
			}
		}
		if t.clients, err = idsByName(ctx, conn, "SELECT id FROM client WHERE realm_id = $1 AND client_id = ANY($2) ORDER BY client_id", r.id, clients); err != nil {
			return nil, err
		}
		if len(t.clients) != len(clients) {
			return nil, fmt.Errorf("sessions: tenant %s has %d of its %d clients (dataset verify says what the server holds)", TenantID(i), len(t.clients), len(clients))
		}
		r.tenants = append(r.tenants, t)
	}
	for _, r := range realms {
		err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE offline_flag = '0'), count(*) FILTER (WHERE offline_flag = '1') FROM offline_user_session WHERE realm_id = $1`, r.id).
			Scan(&r.found.Online, &r.found.Offline)
		if err != nil {
			return nil, fmt.Errorf("sessions: count the sessions of %s: %w", r.name, err)
		}
	}
	return realms, nil
}

func idsByName(ctx context.Context, conn *pgx.Conn, sql, realm string, names []string) ([]string, error) {
	rows, err := conn.Query(ctx, sql, realm, names)
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	return ids, nil
}

// matchExecutions finds, in realm, the executions that stand where the
// template's stand (same flow alias, authenticator and priority).
func matchExecutions(ctx context.Context, conn *pgx.Conn, tp *sessionTemplate, realm string) ([]string, error) {
	if realm == tp.realm || len(tp.execs) == 0 {
		return tp.execs, nil
	}
	out := make([]string, len(tp.execs))
	for k, id := range tp.execs {
		err := conn.QueryRow(ctx, `SELECT e2.id FROM authentication_execution e1
			JOIN authentication_flow f1 ON f1.id = e1.flow_id
			JOIN authentication_flow f2 ON f2.alias = f1.alias AND f2.realm_id = $2
			JOIN authentication_execution e2 ON e2.flow_id = f2.id AND e2.authenticator IS NOT DISTINCT FROM e1.authenticator AND e2.priority = e1.priority
			WHERE e1.id = $1 LIMIT 1`, id, realm).Scan(&out[k])
		if err != nil {
			return nil, fmt.Errorf("sessions: the authentication execution matching %s in realm %s: %w", id, realm, err)
		}
	}
	return out, nil
}

// sessionPlan is what to write: the sessions found, to write, and the
// parts (a realm's tenant's share) to write them in.
type sessionPlan struct {
	found, todo SessionSpec
	parts       []sessionPart
}

type sessionPart struct {
	realm   *sessionRealm
	tenant  sessionTenant
	offline bool
	n       int
	first   int // the tenant's first session's index (spreads users and clients)
}

// planSessions spreads want over the tenants; the sessions a realm holds
// already count against its tenants' shares.
func planSessions(m *Manifest, realms []*sessionRealm, want SessionSpec) sessionPlan {
	var p sessionPlan
	for _, r := range realms {
		p.found.Online += r.found.Online
		p.found.Offline += r.found.Offline
		for _, offline := range []bool{false, true} {
			total, found := want.Online, r.found.Online
			if offline {
				total, found = want.Offline, r.found.Offline
			}
			for _, t := range r.tenants {
				n := TenantShare(total, m.Tenants(), t.index)
				take := min(n, found)
				found -= take
				if n -= take; n > 0 {
					p.parts = append(p.parts, sessionPart{realm: r, tenant: t, offline: offline, n: n, first: take})
					if offline {
						p.todo.Offline += n
					} else {
						p.todo.Online += n
					}
				}
			}
		}
	}
	return p
}

// trimSessions deletes, from the database, the sessions of a realm beyond
// its tenants' shares. (The admin API's logout-all would end the realm's
// offline sessions too: Keycloak 26.7.3 counted none after it.) Keycloak
// may hold some of those deleted in its caches until it restarts.
func trimSessions(ctx context.Context, conn *pgx.Conn, m *Manifest, realms []*sessionRealm, want SessionSpec, logf func(string, ...any)) error {
	for _, r := range realms {
		var share SessionSpec
		for _, t := range r.tenants {
			share.Online += TenantShare(want.Online, m.Tenants(), t.index)
			share.Offline += TenantShare(want.Offline, m.Tenants(), t.index)
		}
		for _, c := range []struct {
			flag        string
			found, want *int
		}{{"0", &r.found.Online, &share.Online}, {"1", &r.found.Offline, &share.Offline}} {
			surplus := *c.found - *c.want
			if surplus <= 0 {
				continue
			}
			_, err := conn.Exec(ctx, `WITH gone AS (DELETE FROM offline_user_session WHERE ctid IN
				(SELECT ctid FROM offline_user_session WHERE realm_id = $1 AND offline_flag = $2 LIMIT $3) RETURNING user_session_id)
				DELETE FROM offline_client_session WHERE offline_flag = $2 AND user_session_id IN (SELECT user_session_id FROM gone)`, r.id, c.flag, surplus)
			if err != nil {
				return fmt.Errorf("sessions: delete %d sessions (offline_flag %s) of %s: %w", surplus, c.flag, r.name, err)
			}
			logf("sessions: deleted %d of the %d sessions (offline_flag %s) of %s from the database (more than the %d wanted)", surplus, *c.found, c.flag, r.name, *c.want)
			*c.found = *c.want
		}
	}
	return nil
}

// TenantShare is tenant i's share of total sessions spread over n tenants.
func TenantShare(total, n, i int) int {
	s := total / n
	if i <= total%n {
		s++
	}
	return s
}

// checkSessionSpace refuses to write n sessions where the database's disk
// lacks the room, with the estimate.
func checkSessionSpace(dir string, tp *sessionTemplate, n int) error {
	if dir == "" || n == 0 {
		return nil
	}
	free, err := fileutil.FreeBytes(dir)
	if err != nil {
		return nil // no answer: the database will tell
	}
	// the rows' text, twice over for PostgreSQL's tuples, indexes and WAL
	need := int64(n) * int64(tp.bytes) * 2
	if need+need/10+512<<20 > free {
		return fmt.Errorf("sessions: %d sessions need about %.1f GiB in %s (%.0f bytes each, indexes and WAL included), %.1f GiB are free: nothing was written",
			n, float64(need)/(1<<30), dir, float64(need)/float64(n), float64(free)/(1<<30))
	}
	return nil
}

func dbSize(ctx context.Context, conn *pgx.Conn) int64 {
	var n int64
	if err := conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n); err != nil {
		return 0
	}
	return n
}

// sessionWriter writes the planned sessions.
type sessionWriter struct {
	tp      *sessionTemplate
	now     int64
	rnd     *mrand.Rand
	written SessionSpec
}

// write writes parts, sessionsPerTx sessions a transaction (COPY into
// both tables), calling progress with each transaction's sessions.
func (w *sessionWriter) write(ctx context.Context, conn *pgx.Conn, parts []sessionPart, progress func(n int)) error {
	var batch []sessionPart
	size := 0
	flush := func() error {
		if size == 0 {
			return nil
		}
		if err := w.writeTx(ctx, conn, batch); err != nil {
			return err
		}
		progress(size)
		batch, size = batch[:0], 0
		return nil
	}
	for _, p := range parts {
		for p.n > 0 {
			k := min(p.n, sessionsPerTx-size)
			q := p
			q.n = k
			batch, size = append(batch, q), size+k
			p.n, p.first = p.n-k, p.first+k
			if size == sessionsPerTx {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

func (w *sessionWriter) writeTx(ctx context.Context, conn *pgx.Conn, parts []sessionPart) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var users, clients [][]any
	for _, p := range parts {
		for k := range p.n {
			u, c := w.session(p, p.first+k)
			users, clients = append(users, u), append(clients, c)
		}
	}
	flag := "0"
	if len(parts) > 0 && parts[0].offline {
		flag = "1"
	}
	for _, t := range []struct {
		name string
		cols []string
		rows [][]any
	}{{"offline_user_session", w.tp.user[flag].cols, users}, {"offline_client_session", w.tp.client[flag].cols, clients}} {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, pgx.CopyFromRows(t.rows)); err != nil {
			return fmt.Errorf("sessions: write %s: %w", t.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("sessions: commit: %w", err)
	}
	for _, p := range parts {
		if p.offline {
			w.written.Offline += p.n
		} else {
			w.written.Online += p.n
		}
	}
	return nil
}

// session makes session k of part p: its user row and client row. Its
// last refresh lies anywhere within the realm's idle timeout before now
// (a steady state's spread: as many idle out each second), its start
// before that within the maximum lifespan.
func (w *sessionWriter) session(p sessionPart, k int) (user, client []any) {
	r, t, tp := p.realm, p.tenant, w.tp
	flag, idle, life := "0", r.idle, r.maxLife
	if p.offline {
		flag, idle, life = "1", r.offlineIdle, 2*r.offlineIdle
	}
	idle, life = max(idle, 60), max(life, 120)
	last := w.now - w.rnd.Int64N(int64(idle)-30)
	created := last - w.rnd.Int64N(max(1, int64(life)-(w.now-last)-30))
	sid := w.newID()
	userID := t.users[k%len(t.users)]
	clientID := t.clients[(k/len(t.users)+k)%len(t.clients)]
	fill := func(ps []piece) string {
		var b strings.Builder
		for _, pc := range ps {
			switch {
			case pc.slot == slotNone:
				b.WriteString(pc.lit)
			case pc.slot == slotCreated:
				b.WriteString(strconv.FormatInt(created, 10))
			case pc.slot == slotClient:
				b.WriteString(clientID)
			case pc.slot == slotRealmName:
				b.WriteString(r.name)
			default:
				b.WriteString(r.execs[pc.slot-slotExec])
			}
		}
		return b.String()
	}
	// a copy of Keycloak's row, with what is the session's own
	row := func(src sessionRow, data []piece, own func(col string) (any, bool)) []any {
		out := slices.Clone(src.vals)
		for i, col := range src.cols {
			switch col {
			case "user_session_id":
				out[i] = sid
			case "realm_id":
				out[i] = r.id
			case "data":
				out[i] = fill(data)
			default:
				if v, ok := own(col); ok {
					out[i] = v
				}
			}
		}
		return out
	}
	user = row(tp.user[flag], tp.userData[flag], func(col string) (any, bool) {
		switch col {
		case "user_id":
			return userID, true
		case "created_on":
			return int32(created), true
		case "last_session_refresh":
			return int32(last), true
		}
		return nil, false
	})
	client = row(tp.client[flag], tp.clientData[flag], func(col string) (any, bool) {
		switch col {
		case "client_id":
			return clientID, true
		case "timestamp":
			return int32(last), true
		}
		return nil, false
	})
	return user, client
}

// newID is a session id of the template's shape.
func (w *sessionWriter) newID() string {
	if w.tp.idLen == 36 {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], w.rnd.Uint64())
		binary.LittleEndian.PutUint64(b[8:], w.rnd.Uint64())
		return uuidText(b)
	}
	b := make([]byte, (w.tp.idLen+7)/8*8)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], w.rnd.Uint64())
	}
	return base64.RawURLEncoding.EncodeToString(b[:w.tp.idLen])
}

// newFastRand is a ChaCha8 generator seeded from crypto/rand: session ids
// by the million, unguessable enough for a benchmark's sessions.
func newFastRand() *mrand.Rand {
	var seed [32]byte
	rand.Read(seed[:])
	return mrand.New(mrand.NewChaCha8(seed))
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

// WriteText says what SeedSessions did, in a line.
func (r *SessionResult) WriteText(w io.Writer) {
	n := r.Written.Online + r.Written.Offline
	rate := ""
	if n > 0 && r.Duration > 0 {
		rate = fmt.Sprintf(", %.0f sessions/s", float64(n)/r.Duration.Seconds())
	}
	growth := ""
	if r.DBGrowth > 0 && n > 0 {
		growth = fmt.Sprintf("; the database grew %.1f MiB (%.0f bytes a session)", float64(r.DBGrowth)/(1<<20), float64(r.DBGrowth)/float64(n))
	}
	fmt.Fprintf(w, "sessions: %d online and %d offline wanted, %d and %d were there, %d and %d written in %.1f s%s%s\n",
		r.Want.Online, r.Want.Offline, r.Found.Online, r.Found.Offline, r.Written.Online, r.Written.Offline, r.Duration.Seconds(), rate, growth)
}
