package dataset

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The clone strategy. Keycloak spends most of a tenant's seed time on work
// that is the same for every tenant (a realm's default clients, scopes,
// flows and roles; in orgs mode Hibernate's bookkeeping for each entity),
// so the clone strategy makes one tenant through the admin API (the
// template) and writes every other tenant straight into Keycloak's
// database as a copy of the template's rows:
//
//   - Every table and column of Keycloak's schema has a copy rule
//     (clonerules.go): copied, skipped (sessions, events, bookkeeping) or
//     must be empty (features kcbench's tenants do not use). A table or
//     column the rules do not know stops the clone with its name.
//   - The template's rows are found by following ids from its roots (the
//     realm and its admin client in master, or the tenant's organization,
//     clients, realm roles, groups and users in the shared realm): a row
//     whose id or reference column holds an id already found belongs to
//     the tenant, and its own ids are followed in turn, whatever the
//     column's type or the shape of the table's key.
//   - A copy gets a fresh id for every id the template owns; a value that
//     is exactly one of the template tenant's names (realm, clients,
//     roles, groups, users, emails, domain, the URLs Keycloak derives from
//     a realm name) becomes the copy's, and any other value naming the
//     template tenant stops the clone; client secrets become the copy's
//     (Spec.ClientSecret, or fresh random ones for Keycloak's own
//     clients); every key provider's secrets are renewed (RSA pairs made by
//     kcbench, HMAC and AES secrets, key ids), and a key provider kcbench
//     does not know stops the clone; creation times are the copy's; with
//     unique salts each copied user gets its own password hash.
//   - The copies of a batch of tenants are written with COPY in one
//     transaction (foreign-key order), so a tenant is there entirely or
//     not at all; then Keycloak's realm cache is cleared through the
//     admin API so that it reads them (see clearCaches).
//
// It needs Keycloak's database (the local stack's private PostgreSQL) and
// reads the schema the connection's search_path names (the stack sets it
// from Keycloak's --db-schema). The integration tests compare its tenants
// with the fast strategy's through the admin API on every supported
// Keycloak line.

// Tenants per transaction: up to cloneBatch, fewer when a tenant has many
// rows (presets with thousands of users), to bound memory.
const (
	cloneBatch     = 25
	cloneBatchRows = 200_000
)

// dbTable is a table of Keycloak's schema with its copy rules.
type dbTable struct {
	name  string
	cols  []string
	text  []bool    // string-typed columns (compared to ids without a cast)
	kind  tableKind // set by applyRules
	rules []colRule // per column, for tableCopy tables
}

func (t *dbTable) col(name string) int {
	for i, c := range t.cols {
		if c == name {
			return i
		}
	}
	return -1
}

// querier is a connection or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// readSchema lists the tables of the connection's current schema, parents
// before children, with their copy rules; it fails naming any table or
// column the rules do not know.
func readSchema(ctx context.Context, q querier) ([]*dbTable, error) {
	var schema *string
	if err := q.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	if schema == nil {
		return nil, errors.New("read schema: the database connection's search_path names no existing schema (Keycloak's --db-schema?)")
	}
	rows, err := q.Query(ctx, `SELECT c.relname, a.attname, t.typcategory = 'S', a.attnum
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY c.relname, a.attnum`)
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	byName := map[string]*dbTable{}
	var names []string
	for rows.Next() {
		var tname, cname string
		var isText bool
		var num int16
		if err := rows.Scan(&tname, &cname, &isText, &num); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read schema: %w", err)
		}
		t := byName[tname]
		if t == nil {
			t = &dbTable{name: tname}
			byName[tname] = t
			names = append(names, tname)
		}
		t.cols = append(t.cols, cname)
		t.text = append(t.text, isText)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	if _, ok := byName["realm"]; !ok {
		return nil, fmt.Errorf("read schema: no realm table in schema %q: not Keycloak's (Keycloak's --db-schema?)", *schema)
	}
	rows, err = q.Query(ctx, `SELECT c.relname, p.relname
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_class p ON p.oid = k.confrelid
WHERE n.nspname = current_schema() AND k.contype = 'f'`)
	if err != nil {
		return nil, fmt.Errorf("read schema constraints: %w", err)
	}
	parents := map[string][]string{}
	for rows.Next() {
		var tname, parent string
		if err := rows.Scan(&tname, &parent); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read schema constraints: %w", err)
		}
		if parent != tname {
			parents[tname] = append(parents[tname], parent)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema constraints: %w", err)
	}
	// Depth-first: every table after the tables it references.
	sort.Strings(names)
	var order []*dbTable
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(n string)
	visit = func(n string) {
		if state[n] != 0 || byName[n] == nil {
			return
		}
		state[n] = 1
		for _, p := range parents[n] {
			visit(p)
		}
		state[n] = 2
		order = append(order, byName[n])
	}
	for _, n := range names {
		visit(n)
	}
	if err := applyRules(*schema, order); err != nil {
		return nil, err
	}
	return order, nil
}

// template is a tenant's rows, found from its roots.
type template struct {
	tables []*dbTable
	rows   map[*dbTable][][]*string
	ids    map[string]bool // ids the tenant owns
	tenant string          // its TenantID
	// rootOf is the root each owned id was found from, and rowRoots the
	// root each row was (rowRoots[t][k] for rows[t][k]).
	rootOf   map[string]string
	rowRoots map[*dbTable][]string
}

// matchSQL is the condition "one of cols holds one of $1".
func matchSQL(t *dbTable, use func(i int) bool) string {
	var where []string
	for i, c := range t.cols {
		if !use(i) {
			continue
		}
		id := pgx.Identifier{c}.Sanitize()
		if !t.text[i] {
			id += "::text"
		}
		where = append(where, id+" = ANY($1)")
	}
	return strings.Join(where, " OR ")
}

// findTemplate collects the rows of the tenant whose roots are given. A
// row of a table that must be empty stops it.
func findTemplate(ctx context.Context, q querier, tables []*dbTable, tenant string, roots []string) (*template, error) {
	tp := &template{tables: tables, rows: map[*dbTable][][]*string{}, ids: map[string]bool{}, tenant: tenant,
		rootOf: map[string]string{}, rowRoots: map[*dbTable][]string{}}
	seen := map[*dbTable]map[string]bool{}
	frontier := []string{}
	for _, r := range roots {
		if r != "" && !tp.ids[r] {
			tp.ids[r] = true
			tp.rootOf[r] = r
			frontier = append(frontier, r)
		}
	}
	for len(frontier) > 0 {
		var next []string
		for _, t := range tables {
			switch t.kind {
			case tableNone:
				where := matchSQL(t, func(i int) bool { return true })
				var n int
				err := q.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t.name}.Sanitize()+" WHERE "+where, frontier).Scan(&n)
				if err != nil {
					return nil, fmt.Errorf("read tenant %s from %s: %w", tenant, t.name, err)
				}
				if n > 0 {
					return nil, fmt.Errorf("clone: tenant %s has %d rows in table %s, which the clone does not copy (a feature kcbench's tenants do not use)", tenant, n, t.name)
				}
				continue
			case tableSkip:
				continue
			}
			where := matchSQL(t, func(i int) bool { return t.rules[i] == ruleID || t.rules[i] == ruleRef || t.rules[i] == ruleOwn })
			if where == "" {
				continue
			}
			sel := []string{"ctid::text"}
			for _, c := range t.cols {
				sel = append(sel, pgx.Identifier{c}.Sanitize()+"::text")
			}
			sql := "SELECT " + strings.Join(sel, ", ") + " FROM " + pgx.Identifier{t.name}.Sanitize() + " WHERE " + where
			rows, err := q.Query(ctx, sql, frontier)
			if err != nil {
				return nil, fmt.Errorf("read tenant %s from %s: %w", tenant, t.name, err)
			}
			for rows.Next() {
				vals := make([]*string, len(t.cols)+1)
				ptrs := make([]any, len(vals))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return nil, fmt.Errorf("read tenant %s from %s: %w", tenant, t.name, err)
				}
				if seen[t] == nil {
					seen[t] = map[string]bool{}
				}
				if seen[t][*vals[0]] {
					continue
				}
				seen[t][*vals[0]] = true
				row := vals[1:]
				root := tp.rowRoot(t, row)
				tp.rows[t] = append(tp.rows[t], row)
				tp.rowRoots[t] = append(tp.rowRoots[t], root)
				for i, v := range row {
					if (t.rules[i] == ruleID || t.rules[i] == ruleOwn) && v != nil && !tp.ids[*v] {
						tp.ids[*v] = true
						tp.rootOf[*v] = root
						next = append(next, *v)
					}
				}
			}
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("read tenant %s from %s: %w", tenant, t.name, err)
			}
		}
		frontier = next
	}
	return tp, nil
}

// rowRoot is the root a row found by its ids belongs to: that of the
// first owned id it holds.
func (tp *template) rowRoot(t *dbTable, row []*string) string {
	for i, v := range row {
		switch t.rules[i] {
		case ruleID, ruleRef, ruleOwn:
			if v != nil && tp.rootOf[*v] != "" {
				return tp.rootOf[*v]
			}
		}
	}
	return ""
}

// byRoot splits tp into one template per root: the rows and ids found
// from it.
func (tp *template) byRoot() map[string]*template {
	out := map[string]*template{}
	part := func(root string) *template {
		p := out[root]
		if p == nil {
			p = &template{tables: tp.tables, rows: map[*dbTable][][]*string{}, ids: map[string]bool{}, tenant: tp.tenant}
			out[root] = p
		}
		return p
	}
	for id, root := range tp.rootOf {
		part(root).ids[id] = true
	}
	for t, rows := range tp.rows {
		for k, row := range rows {
			p := part(tp.rowRoots[t][k])
			p.rows[t] = append(p.rows[t], row)
		}
	}
	return out
}

// rowCount is the number of rows of the template.
func (tp *template) rowCount() int {
	n := 0
	for _, r := range tp.rows {
		n += len(r)
	}
	return n
}

// copyOf is what a copy needs besides the template: its tenant name, realm
// name (for certificates), the exact replacements of the template's names
// and client secrets, and (unique salts) its users' password secret data
// by the template's user id.
type copyOf struct {
	tenant string
	realm  string
	keys   func(j int) (*rsa.PrivateKey, error) // the tenant's j-th RSA key (nil: fresh keys)
	exact  map[string]string
	hashes map[string]string
	now    string // creation time, ms since the epoch
}

// keyEntries finds the template's component_config rows of key providers:
// row index in component_config → component id, provider and what to do
// with the entry. An unknown key provider or entry fails.
func (tp *template) keyEntries() (map[int]keyEntryRow, error) {
	comp, cfg := tp.table("component"), tp.table("component_config")
	if comp == nil || cfg == nil {
		return nil, nil
	}
	ci, cp, ct := comp.col("id"), comp.col("provider_id"), comp.col("provider_type")
	fc, fn := cfg.col("component_id"), cfg.col("name")
	if ci < 0 || cp < 0 || ct < 0 || fc < 0 || fn < 0 || cfg.col("value") < 0 {
		return nil, errors.New("clone: component tables without the expected columns (Keycloak schema changed?)")
	}
	provider := map[string]string{}
	for _, r := range tp.rows[comp] {
		if r[ci] != nil && r[cp] != nil && r[ct] != nil && *r[ct] == keyProviderType {
			provider[*r[ci]] = *r[cp]
		}
	}
	out := map[int]keyEntryRow{}
	for k, r := range tp.rows[cfg] {
		if r[fc] == nil || r[fn] == nil {
			continue
		}
		p, ok := provider[*r[fc]]
		if !ok {
			continue
		}
		a, err := keyEntry(p, *r[fn])
		if err != nil {
			return nil, err
		}
		out[k] = keyEntryRow{comp: *r[fc], action: a}
	}
	return out, nil
}

// keyEntryRow is a key provider's config entry in the template.
type keyEntryRow struct {
	comp   string
	action keyAction
}

func (tp *template) table(name string) *dbTable {
	for _, t := range tp.tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

// instance is one copy's rows, table by table.
type instance map[*dbTable][][]*string

// instantiate makes the copy c of the template: fresh ids, names, secrets
// and keys.
func (tp *template) instantiate(c copyOf, keyRows map[int]keyEntryRow) (instance, error) {
	ids := make(map[string]string, len(tp.ids))
	for id := range tp.ids {
		ids[id] = newUUID()
	}
	pairs := map[string][2]string{} // key component → RSA private key, certificate
	cfg := tp.table("component_config")
	out := instance{}
	for _, t := range tp.tables {
		src := tp.rows[t]
		if len(src) == 0 {
			continue
		}
		credUser, credType := -1, -1
		if t.name == "credential" {
			credUser, credType = t.col("user_id"), t.col("type")
		}
		dst := make([][]*string, len(src))
		for k, row := range src {
			nr := make([]*string, len(row))
			for i, v := range row {
				if v == nil || t.rules[i] == ruleKeep {
					nr[i] = v
					continue
				}
				s, err := c.column(tp, t, i, *v, ids)
				if err != nil {
					return nil, err
				}
				switch t.rules[i] {
				case ruleHash:
					if c.hashes != nil && credUser >= 0 && credType >= 0 && row[credType] != nil && *row[credType] == "password" && row[credUser] != nil {
						h, ok := c.hashes[*row[credUser]]
						if !ok {
							return nil, fmt.Errorf("clone: tenant %s: no password hash for the copy of user %s", c.tenant, *row[credUser])
						}
						s = h
					}
				case ruleConfig:
					if ke, ok := keyRows[k]; ok && t == cfg {
						if s, err = c.renewKey(ke, *v, pairs); err != nil {
							return nil, err
						}
					}
				}
				nr[i] = &s
			}
			dst[k] = nr
		}
		out[t] = dst
	}
	return out, nil
}

// column is the copy's value of column i of table t whose template value
// is v (not NULL).
func (c copyOf) column(tp *template, t *dbTable, i int, v string, ids map[string]string) (string, error) {
	switch t.rules[i] {
	case ruleID:
		if n, ok := ids[v]; ok {
			return n, nil
		}
		return newUUID(), nil
	case ruleRef, ruleOwn:
		if n, ok := ids[v]; ok {
			return n, nil
		}
		return v, nil
	case ruleSecret:
		if n, ok := c.exact[v]; ok {
			return n, nil
		}
		return randomLike(v), nil
	case ruleFresh:
		if isUUID(v) {
			return newUUID(), nil
		}
	case ruleTime:
		return c.now, nil
	case ruleHash:
		return v, nil
	case ruleIDsIn:
		v = remapIDs(v, ids)
	}
	// ruleValue, ruleConfig, ruleIDsIn, ruleFresh holding a name.
	if n, ok := ids[v]; ok {
		return n, nil
	}
	if n, ok := c.exact[v]; ok {
		return n, nil
	}
	if strings.Contains(v, tp.tenant) {
		return "", fmt.Errorf("clone: column %s.%s holds %q, which names template tenant %s but is none of the names kcbench maps exactly; use --strategy fast", t.name, t.cols[i], v, tp.tenant)
	}
	return v, nil
}

// renewKey is the copy's value of a key provider's config entry (old is
// the template's); pairs keeps one RSA pair per component, so that its
// key and certificate match.
func (c copyOf) renewKey(ke keyEntryRow, old string, pairs map[string][2]string) (string, error) {
	switch ke.action {
	case keyRSAPriv, keyRSACert:
		p, ok := pairs[ke.comp]
		if !ok {
			key, err := newKey(c.keys, len(pairs))
			if err == nil {
				p[0], p[1], err = rsaKeyPair(key, c.realm)
			}
			if err != nil {
				return "", fmt.Errorf("tenant %s: realm keys: %w", c.tenant, err)
			}
			pairs[ke.comp] = p
		}
		if ke.action == keyRSACert {
			return p[1], nil
		}
		return p[0], nil
	case keyKID:
		return newUUID(), nil
	case keySecret:
		return randomLike(old), nil
	}
	return old, nil
}

// remapIDs replaces every id in v that ids maps (UUIDs, wherever they
// stand in the text) by its copy's.
func remapIDs(v string, ids map[string]string) string {
	const n = 36 // a UUID's length
	var b strings.Builder
	last := 0
	for i := 0; i+n <= len(v); i++ {
		if !isUUID(v[i : i+n]) {
			continue
		}
		if to, ok := ids[v[i:i+n]]; ok {
			b.WriteString(v[last:i])
			b.WriteString(to)
			last = i + n
		}
		i += n - 1
	}
	if last == 0 {
		return v
	}
	b.WriteString(v[last:])
	return b.String()
}

// isUUID reports whether s looks like a UUID (8-4-4-4-12 hex digits).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}

// randomLike is a random secret of the same shape as old: a UUID, letters
// and digits of the same length (Keycloak's generated client secrets), or
// random bytes of the same size as unpadded base64url (its HMAC and AES
// key secrets).
func randomLike(old string) string {
	if isUUID(old) {
		return newUUID()
	}
	alnum := old != ""
	for i := 0; i < len(old) && alnum; i++ {
		c := old[i]
		alnum = '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	if alnum {
		const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, len(old))
		for i := range b {
			b[i] = letters[randIntn(len(letters))]
		}
		return string(b)
	}
	n, err := base64.RawURLEncoding.DecodeString(old)
	size := len(n)
	if err != nil || size == 0 {
		size = 32
	}
	b := make([]byte, size)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// randIntn is a uniform random number in [0, n), n <= 256.
func randIntn(n int) int {
	var b [1]byte
	for {
		rand.Read(b[:])
		if int(b[0]) < 256-256%n {
			return int(b[0]) % n
		}
	}
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	return uuidText(b)
}

// uuidText is b as a version 4 UUID's text.
func uuidText(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// writeCopies writes instances in one transaction, a COPY per table in
// foreign-key order.
func writeCopies(ctx context.Context, tx pgx.Tx, tables []*dbTable, copies []instance) error {
	var buf bytes.Buffer
	for _, t := range tables {
		buf.Reset()
		n := 0
		for _, in := range copies {
			for _, row := range in[t] {
				for i, v := range row {
					if i > 0 {
						buf.WriteByte('\t')
					}
					copyText(&buf, v)
				}
				buf.WriteByte('\n')
				n++
			}
		}
		if n == 0 {
			continue
		}
		cols := make([]string, len(t.cols))
		for i, c := range t.cols {
			cols[i] = pgx.Identifier{c}.Sanitize()
		}
		sql := "COPY " + pgx.Identifier{t.name}.Sanitize() + " (" + strings.Join(cols, ", ") + ") FROM STDIN"
		if _, err := tx.Conn().PgConn().CopyFrom(ctx, &buf, sql); err != nil {
			return fmt.Errorf("write %s: %w", t.name, err)
		}
	}
	return nil
}

// commitCopies writes copies in one transaction (writeCopies).
func commitCopies(ctx context.Context, conn *pgx.Conn, tables []*dbTable, copies []instance) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	if err := writeCopies(ctx, tx, tables, copies); err != nil {
		tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// copyText writes v in COPY's text format.
func copyText(b *bytes.Buffer, v *string) {
	if v == nil {
		b.WriteString(`\N`)
		return
	}
	s := *v
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
}

// clone seeds todo by copying a complete tenant inside the database. When
// no tenant is complete yet, the first is made the fast way; tenants an
// interrupted run left half-made are completed the fast way too.
func (sd *seeder) clone(ctx context.Context, todo []int) error {
	tpl := sd.completeTenant(todo)
	if tpl == 0 {
		if err := sd.fast(ctx, todo[:1]); err != nil {
			return err
		}
		tpl, todo = todo[0], todo[1:]
	}
	if len(todo) == 0 {
		return nil
	}
	conn, err := pgx.Connect(ctx, string(sd.o.DB))
	if err != nil {
		return fmt.Errorf("clone: connect to Keycloak's database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tp, keyRows, err := sd.readTemplate(ctx, conn, tpl)
	if err != nil {
		return fmt.Errorf("%w (--strategy fast does not read the database)", err)
	}
	users, err := sd.templateUsers(tp, tpl)
	if err != nil {
		return err
	}
	tables := tp.tables
	todo, left, err := sd.leftovers(ctx, conn, todo)
	if err != nil {
		return err
	}
	if err := sd.ensureKeys(ctx, todo); err != nil {
		return err
	}
	per := max(1, min(cloneBatch, cloneBatchRows/max(1, tp.rowCount())))
	sd.o.Logf("seed: cloning tenant %s (%d rows in %d tables) into %d tenants, %d per transaction; %d half-made left to the fast way",
		TenantID(tpl), tp.rowCount(), len(tp.rows), len(todo), per, len(left))

	// Copies of the next batch (key generation is their main cost) are
	// made while a batch is written.
	type batch struct {
		tenants []int
		copies  []instance
		took    time.Duration
	}
	var made, wrote time.Duration
	n := (len(todo) + per - 1) / per
	err = pipeline(ctx, n, func(ctx context.Context, b int) (batch, error) {
		part := todo[b*per : min((b+1)*per, len(todo))]
		t0 := time.Now()
		copies := make([]instance, len(part))
		err := Parallel(ctx, len(part), runtime.GOMAXPROCS(0), func(ctx context.Context, k int) error {
			c, err := sd.copyOf(tpl, part[k], users)
			if err != nil {
				return err
			}
			in, err := tp.instantiate(c, keyRows)
			if err != nil {
				return fmt.Errorf("%w (--strategy fast makes every tenant through the admin API)", err)
			}
			copies[k] = in
			return nil
		})
		return batch{part, copies, time.Since(t0)}, err
	}, func(b batch) error {
		t0 := time.Now()
		if err := sd.writeBatch(ctx, conn, tables, b.tenants, b.copies); err != nil {
			return err
		}
		made, wrote = made+b.took, wrote+time.Since(t0)
		return nil
	})
	if err != nil {
		return err
	}
	what := "mostly RSA keys"
	if sd.o.Keys != nil {
		what = "ids, names, certificates for the pool's keys"
	}
	if sd.s.UniqueSalts {
		what += " and password hashes"
	}
	sd.o.Logf("seed: cloned %d tenants; making the copies (%s) took %.1f s, writing them and clearing Keycloak's caches %.1f s",
		len(todo), what, made.Seconds(), wrote.Seconds())
	if len(left) > 0 {
		return sd.fast(ctx, left)
	}
	return nil
}

// pipeline makes batches 0..n-1 with produce, in a goroutine one batch
// ahead, and hands each to write, in order; the first error stops both.
func pipeline[B any](ctx context.Context, n int, produce func(ctx context.Context, k int) (B, error), write func(B) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type batch struct {
		b   B
		err error
	}
	ch := make(chan batch, 1)
	go func() {
		defer close(ch)
		for k := range n {
			b, err := produce(ctx, k)
			select {
			case ch <- batch{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for m := range ch {
		if m.err != nil {
			return m.err
		}
		if err := write(m.b); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// readTemplate reads tenant tpl's rows and finds its key secrets.
func (sd *seeder) readTemplate(ctx context.Context, conn *pgx.Conn, tpl int) (*template, map[int]keyEntryRow, error) {
	tables, err := readSchema(ctx, conn)
	if err != nil {
		return nil, nil, err
	}
	roots, err := sd.templateRoots(ctx, conn, tpl)
	if err != nil {
		return nil, nil, err
	}
	tp, err := findTemplate(ctx, conn, tables, TenantID(tpl), roots)
	if err != nil {
		return nil, nil, err
	}
	keyRows, err := tp.keyEntries()
	return tp, keyRows, err
}

// writeBatch writes the copies of tenants in one transaction, then has
// Keycloak drop what it cached.
func (sd *seeder) writeBatch(ctx context.Context, conn *pgx.Conn, tables []*dbTable, tenants []int, copies []instance) error {
	span := fmt.Sprintf("tenants %s..%s", TenantID(tenants[0]), TenantID(tenants[len(tenants)-1]))
	if err := commitCopies(ctx, conn, tables, copies); err != nil {
		return fmt.Errorf("clone %s: %w", span, err)
	}
	if err := sd.clearCaches(ctx); err != nil {
		return fmt.Errorf("clone %s: %w", span, err)
	}
	for _, i := range tenants {
		sd.markDone(i)
	}
	return nil
}

// clearCaches makes Keycloak forget the realms, roles, clients, groups and
// organizations it cached, so that it reads what was written behind its
// back. Its user cache holds only users that were there before (a user not
// found is not cached), and copies add users, never change one, so it is
// left alone: clearing it took 1.2 s a batch (the keys cache, which holds
// only other servers' keys, 0.5 s).
func (sd *seeder) clearCaches(ctx context.Context) error {
	realm := "master"
	if sd.s.Mode == ModeOrgs {
		realm = sd.s.SharedRealm()
	}
	return sd.adm.ClearRealmCache(ctx, realm)
}

// completeTenant is the first tenant of the dataset that is complete, 0 if
// none is.
func (sd *seeder) completeTenant(todo []int) int {
	missing := map[int]bool{}
	for _, i := range todo {
		missing[i] = true
	}
	for i := 1; i <= sd.s.Tenants; i++ {
		if !missing[i] {
			return i
		}
	}
	return 0
}

// templateRoots are the ids tenant i's rows hang from.
func (sd *seeder) templateRoots(ctx context.Context, conn *pgx.Conn, i int) ([]string, error) {
	fail := func(err error) ([]string, error) {
		return nil, fmt.Errorf("clone: find tenant %s: %w", TenantID(i), err)
	}
	if sd.s.Mode == ModeRealms {
		var id, admin string
		err := conn.QueryRow(ctx, `SELECT id, coalesce(master_admin_client, '') FROM realm WHERE name = $1`, sd.s.RealmOf(i)).Scan(&id, &admin)
		if err != nil {
			return fail(err)
		}
		return []string{id, admin}, nil
	}
	var realmID string
	if err := conn.QueryRow(ctx, `SELECT id FROM realm WHERE name = $1`, sd.s.SharedRealm()).Scan(&realmID); err != nil {
		return fail(err)
	}
	var clients, roles, groups, users []string
	for _, c := range sd.b.clientNames(i) {
		clients = append(clients, c.ClientID)
	}
	for k := 1; k <= sd.s.Content.RealmRoles; k++ {
		for _, cr := range sd.s.CompositeRoles(i, k) {
			roles = append(roles, cr.Name)
		}
	}
	groups = append(groups, sd.s.GroupNames(i)...)
	var scopes []string
	for k := 1; k <= sd.s.Content.ScopesPerClient; k++ {
		scopes = append(scopes, sd.s.ClientScope(i, k))
	}
	for j := 1; j <= sd.s.Content.Users; j++ {
		users = append(users, strings.ToLower(sd.s.Username(i, j)))
	}
	for j := 1; j <= sd.s.Content.OTPUsers; j++ {
		users = append(users, strings.ToLower(sd.s.OTPUsername(i, j)))
	}
	for j := 1; j <= sd.s.Content.BrokerUsers; j++ {
		users = append(users, strings.ToLower(sd.s.BrokerUsername(i, j)))
	}
	var roots []string
	for _, q := range []struct {
		sql   string
		names []string
	}{
		{`SELECT id FROM org WHERE realm_id = $1 AND alias = ANY($2)`, []string{TenantID(i)}},
		{`SELECT id FROM client WHERE realm_id = $1 AND client_id = ANY($2)`, clients},
		{`SELECT id FROM keycloak_role WHERE realm_id = $1 AND NOT client_role AND name = ANY($2)`, roles},
		{`SELECT id FROM keycloak_group WHERE realm_id = $1 AND name = ANY($2)`, groups},
		{`SELECT id FROM client_scope WHERE realm_id = $1 AND name = ANY($2)`, scopes},
		{`SELECT id FROM user_entity WHERE realm_id = $1 AND username = ANY($2)`, users},
	} {
		rows, err := conn.Query(ctx, q.sql, realmID, q.names)
		if err != nil {
			return fail(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fail(err)
		}
		if len(ids) != len(q.names) {
			return fail(fmt.Errorf("found %d of %v", len(ids), q.names))
		}
		roots = append(roots, ids...)
	}
	return roots, nil
}

// copyOf describes tenant k as a copy of tenant tpl; users maps the
// template's user ids to user numbers (for unique salts).
func (sd *seeder) copyOf(tpl, k int, users map[string]int) (copyOf, error) {
	c := copyOf{tenant: TenantID(k), realm: sd.s.RealmOf(k), exact: map[string]string{},
		now: strconv.FormatInt(time.Now().UnixMilli(), 10), keys: sd.tenantKeys(k)}
	from, to := sd.b.names(tpl), sd.b.names(k)
	if len(from) != len(to) {
		return c, fmt.Errorf("clone: tenants %s and %s have different names", TenantID(tpl), TenantID(k))
	}
	for n, f := range from {
		if old, dup := c.exact[f]; dup && old != to[n] {
			return c, fmt.Errorf("clone: name %q of tenant %s maps to both %q and %q", f, TenantID(tpl), old, to[n])
		}
		c.exact[f] = to[n]
	}
	if sd.s.UniqueSalts {
		c.hashes = make(map[string]string, len(users))
		for id, j := range users {
			c.hashes[id] = sd.b.ownCredential(k, j).SecretData
		}
	}
	return c, nil
}

// templateUsers maps the ids of the template's users to their numbers.
func (sd *seeder) templateUsers(tp *template, tpl int) (map[string]int, error) {
	ut := tp.table("user_entity")
	if ut == nil {
		return nil, errors.New("clone: no user_entity table")
	}
	id, name := ut.col("id"), ut.col("username")
	byName := map[string]int{}
	for j := 1; j <= sd.s.Content.Users; j++ {
		byName[strings.ToLower(sd.s.Username(tpl, j))] = j
	}
	// OTP user j's password is user Users+j's (builder.otpUsers).
	for j := 1; j <= sd.s.Content.OTPUsers; j++ {
		byName[strings.ToLower(sd.s.OTPUsername(tpl, j))] = sd.s.Content.Users + j
	}
	out := map[string]int{}
	for _, r := range tp.rows[ut] {
		if r[id] == nil || r[name] == nil {
			continue
		}
		if j, ok := byName[*r[name]]; ok {
			out[*r[id]] = j
		}
	}
	if n := sd.s.Content.Users + sd.s.Content.OTPUsers; len(out) != n {
		return nil, fmt.Errorf("clone: found %d of tenant %s's %d users", len(out), TenantID(tpl), n)
	}
	return out, nil
}

// leftovers splits todo into tenants with no trace in the database and
// tenants an interrupted run left something of (a realm, an organization,
// a client or a user), which the fast way completes.
func (sd *seeder) leftovers(ctx context.Context, conn *pgx.Conn, todo []int) (clean, left []int, err error) {
	found := map[string]bool{}
	query := func(sql string, args ...any) error {
		rows, err := conn.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("clone: look for half-made tenants: %w", err)
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		for _, n := range names {
			found[n] = true
		}
		return err
	}
	key := func(i int) []string {
		if sd.s.Mode == ModeRealms {
			return []string{sd.s.RealmOf(i)}
		}
		k := []string{sd.s.WebClient(i)}
		if sd.s.Content.Users > 0 {
			k = append(k, strings.ToLower(sd.s.Username(i, 1)))
		}
		return k
	}
	var names []string
	for _, i := range todo {
		names = append(names, key(i)...)
	}
	if sd.s.Mode == ModeRealms {
		err = query(`SELECT name FROM realm WHERE name = ANY($1)`, names)
	} else {
		shared := `(SELECT id FROM realm WHERE name = $2)`
		err = query(`SELECT client_id FROM client WHERE realm_id = `+shared+` AND client_id = ANY($1)
UNION ALL SELECT username FROM user_entity WHERE realm_id = `+shared+` AND username = ANY($1)`, names, sd.s.SharedRealm())
	}
	if err != nil {
		return nil, nil, err
	}
	sd.mu.Lock()
	defer sd.mu.Unlock()
	for _, i := range todo {
		half := sd.orgIDs[TenantID(i)] != ""
		for _, k := range key(i) {
			half = half || found[k]
		}
		if half {
			left = append(left, i)
		} else {
			clean = append(clean, i)
		}
	}
	return clean, left, nil
}
