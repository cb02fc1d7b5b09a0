package dataset

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Big tenants by copy. With the clone strategy, a realms-mode tenant past
// a part's users or clients (see partUsers) is made in two steps: the
// admin API makes the realm with its first users (as many as it takes for
// every combination of roles and groups users get: the least common
// multiple of the tenant's realm roles and groups) and its first three
// clients (web, backend, backend-2); the others are written into the
// database as copies of those, with the clone's rules (clone.go): user j
// a copy of user (j-1) mod that period + 1, with its own id, names,
// email, credential and the same role mappings and group memberships;
// client k a copy of backend-2 with its own id, client id, secret,
// service account, client roles and mappers. The realm is marked complete
// after the last copy, so a seed cut off on the way resumes: the API
// skips what is there, the copies write only the users and clients that
// are missing.

// bulkHead is how many of a tenant's users and clients the admin API
// makes when the rest are copies (0: all of them).
type bulkHead struct{ users, clients int }

// bulkClients is how many clients the API makes before copies: web,
// backend (whose client roles users may hold) and backend-2, the one
// copied.
const bulkClients = 3

// maxBulkPeriod bounds the users the API makes before copies: past it,
// the users are made through the API as before.
const maxBulkPeriod = 1000

// bulkHeadOf is spec's bulkHead for the clone strategy (realms mode, users
// in Keycloak's own database).
func bulkHeadOf(s Spec) bulkHead {
	var h bulkHead
	if s.Mode != ModeRealms {
		return h
	}
	c := s.Content
	if p := lcm(lcm(c.RealmRoles, c.Groups), c.groupLeaves()); c.Users > partUsers && p < c.Users && p <= maxBulkPeriod {
		h.users = p
	}
	if c.Clients > partClients {
		h.clients = bulkClients
	}
	return h
}

func lcm(a, b int) int {
	g, h := a, b
	for h != 0 {
		g, h = h, g%h
	}
	return a / g * b
}

func (h bulkHead) any() bool { return h.users > 0 || h.clients > 0 }

// apiUsers is how many of a tenant's users the admin API makes.
func (b builder) apiUsers() int {
	if b.head.users > 0 {
		return b.head.users
	}
	return b.s.Content.Users
}

// apiClients is how many of a tenant's clients (web and backends) the
// admin API makes.
func (b builder) apiClients() int {
	if b.head.clients > 0 {
		return b.head.clients
	}
	return b.s.Content.Clients
}

// bulkRows is about how many rows a transaction of copies writes.
const bulkRows = 50_000

// bulkJob is one copy to make: user j, or client k (client true).
type bulkJob struct {
	client bool
	n      int
}

// bulkCopy writes tenant i's users and clients past the head as copies of
// the head's, those not there yet, then has Keycloak drop its caches.
func (sd *seeder) bulkCopy(ctx context.Context, i int) error {
	if !sd.b.head.any() {
		return nil
	}
	t0 := time.Now()
	conn, err := pgx.Connect(ctx, string(sd.o.DB))
	if err != nil {
		return fmt.Errorf("tenant %s: copies: connect to Keycloak's database: %w", TenantID(i), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	parts, tables, rootOf, have, err := sd.bulkTemplates(ctx, conn, i)
	if err != nil {
		return fmt.Errorf("tenant %s: copies: %w", TenantID(i), err)
	}
	s, h := sd.s, sd.b.head
	var jobs []bulkJob
	if h.users > 0 {
		for j := h.users + 1; j <= s.Content.Users; j++ {
			if !have[strings.ToLower(s.Username(i, j))] {
				jobs = append(jobs, bulkJob{n: j})
			}
		}
	}
	if h.clients > 0 {
		for k := h.clients; k < s.Content.Clients; k++ {
			if !have[s.BackendClient(i, k)] {
				jobs = append(jobs, bulkJob{client: true, n: k})
			}
		}
	}
	sd.o.Logf("seed: tenant %s: %d users and clients to write as copies of its first %d users and client %s",
		TenantID(i), len(jobs), h.users, s.BackendClient(i, bulkClients-1))
	written, said := 0, 0
	err = sd.bulkBatches(ctx, i, jobs, parts, rootOf, func(copies []instance) error {
		if err := commitCopies(ctx, conn, tables, copies); err != nil {
			return err
		}
		written += len(copies)
		if tenth := written * 10 / len(jobs); tenth > said {
			said = tenth
			sd.o.Logf("seed: tenant %s: %d of %d copies written in %.1f s", TenantID(i), written, len(jobs), time.Since(t0).Seconds())
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("tenant %s: copies: %w", TenantID(i), err)
	}
	if err := sd.clearCaches(ctx); err != nil {
		return fmt.Errorf("tenant %s: copies: %w", TenantID(i), err)
	}
	return nil
}

// bulkTemplates reads tenant i's head users and copied client, one
// template each (by the id of its user or client row, rootOf maps a
// job's template to it), and the usernames and client ids the realm holds.
func (sd *seeder) bulkTemplates(ctx context.Context, conn *pgx.Conn, i int) (parts map[string]*template, tables []*dbTable, rootOf map[bulkJob]string, have map[string]bool, err error) {
	if tables, err = readSchema(ctx, conn); err != nil {
		return
	}
	s, h := sd.s, sd.b.head
	var realmID string
	if err = conn.QueryRow(ctx, `SELECT id FROM realm WHERE name = $1`, s.RealmOf(i)).Scan(&realmID); err != nil {
		err = fmt.Errorf("realm %s: %w", s.RealmOf(i), err)
		return
	}
	rows, err := conn.Query(ctx, `SELECT username FROM user_entity WHERE realm_id = $1 UNION ALL SELECT client_id FROM client WHERE realm_id = $1`, realmID)
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	have = make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	rootOf = map[bulkJob]string{}
	find := func(sql string, name string, job bulkJob) error {
		var id string
		if err := conn.QueryRow(ctx, sql, realmID, name).Scan(&id); err != nil {
			return fmt.Errorf("the head's %s: %w", name, err)
		}
		rootOf[job] = id
		return nil
	}
	for j := 1; j <= h.users; j++ {
		if err = find(`SELECT id FROM user_entity WHERE realm_id = $1 AND username = $2`, strings.ToLower(s.Username(i, j)), bulkJob{n: j}); err != nil {
			return
		}
	}
	if h.clients > 0 {
		if err = find(`SELECT id FROM client WHERE realm_id = $1 AND client_id = $2`, s.BackendClient(i, h.clients-1), bulkJob{client: true}); err != nil {
			return
		}
	}
	var roots []string
	for _, id := range rootOf {
		roots = append(roots, id)
	}
	tp, err := findTemplate(ctx, conn, tables, TenantID(i), roots)
	if err != nil {
		return
	}
	return tp.byRoot(), tables, rootOf, have, nil
}

// bulkBatches makes the copies of jobs, in parallel, and hands them to
// write in batches of about bulkRows rows; the next batch is made while
// one is written (pipeline).
func (sd *seeder) bulkBatches(ctx context.Context, i int, jobs []bulkJob, parts map[string]*template, rootOf map[bulkJob]string, write func([]instance) error) error {
	h := sd.b.head
	tplOf := func(jb bulkJob) (*template, bulkJob) {
		if jb.client {
			return parts[rootOf[bulkJob{client: true}]], bulkJob{client: true, n: h.clients - 1}
		}
		from := bulkJob{n: (jb.n-1)%h.users + 1}
		return parts[rootOf[from]], from
	}
	per := func(jb bulkJob) int {
		tp, _ := tplOf(jb)
		return max(1, tp.rowCount())
	}
	var spans [][2]int // jobs[lo:hi] per transaction
	for lo := 0; lo < len(jobs); {
		hi, rows := lo, 0
		for hi < len(jobs) && rows < bulkRows {
			rows += per(jobs[hi])
			hi++
		}
		spans = append(spans, [2]int{lo, hi})
		lo = hi
	}
	return pipeline(ctx, len(spans), func(ctx context.Context, b int) ([]instance, error) {
		part := jobs[spans[b][0]:spans[b][1]]
		copies := make([]instance, len(part))
		err := Parallel(ctx, len(part), runtime.GOMAXPROCS(0), func(ctx context.Context, k int) error {
			tp, from := tplOf(part[k])
			c := sd.bulkCopyOf(i, from, part[k], rootOf[from])
			in, err := tp.instantiate(c, nil)
			copies[k] = in
			return err
		})
		return copies, err
	}, write)
}

// bulkCopyOf describes job to as a copy of from (whose row id is id) in
// tenant i: the names that change, and a user's own password hash.
func (sd *seeder) bulkCopyOf(i int, from, to bulkJob, id string) copyOf {
	s := sd.s
	c := copyOf{tenant: TenantID(i), realm: s.RealmOf(i), exact: map[string]string{},
		now: strconv.FormatInt(time.Now().UnixMilli(), 10)}
	if to.client {
		a, b := s.BackendClient(i, from.n), s.BackendClient(i, to.n)
		c.exact[a] = b
		c.exact["service-account-"+strings.ToLower(a)] = "service-account-" + strings.ToLower(b)
		c.exact[s.ClientSecret(i, a)] = s.ClientSecret(i, b)
		return c
	}
	c.exact[strings.ToLower(s.Username(i, from.n))] = strings.ToLower(s.Username(i, to.n))
	c.exact[strings.ToLower(s.Email(i, from.n))] = strings.ToLower(s.Email(i, to.n))
	c.exact[userLastName(i, from.n)] = userLastName(i, to.n)
	if s.UniqueSalts {
		c.hashes = map[string]string{id: sd.b.ownCredential(i, to.n).SecretData}
	}
	return c
}
