package observe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
)

// DBUsage is one reading of what a PostgreSQL database has done so far:
// cumulative counters from its own statistics and, for a local server,
// the CPU time of the postmaster's process tree.
type DBUsage struct {
	DBStats // SizeBytes is not read
	// WAL (pg_stat_wal, cluster-wide): records, full-page images, bytes.
	WALRecords, WALFPI, WALBytes int64
	// WALWrites and WALSyncs are pg_stat_wal's wal_write and wal_sync
	// (PostgreSQL 14–17); -1 where the server has none (18 moved them to
	// pg_stat_io).
	WALWrites, WALSyncs int64
	// DataWrites are writes of relation data blocks by any process
	// (pg_stat_io, PostgreSQL 16 and later); -1 before 16.
	DataWrites int64
	// Backends is pg_stat_database's numbackends for the database now.
	Backends int64
	// CPU is the postmaster's process tree's CPU time (ReadTree); 0 when
	// HasCPU is false.
	CPU    time.Duration
	HasCPU bool
	// Version is the server's version number, e.g. 170005.
	Version int
	// Durable: fsync on and synchronous_commit not off.
	Durable bool
	// Unread maps each view this reading could not read
	// (results.DBView…) to the database's error; that view's fields
	// are zero (WALWrites, WALSyncs, DataWrites -1).
	Unread map[string]string
}

// The reader's queries, one per statistics view (results.DBView…).
const (
	dbUsageQuery = `SELECT xact_commit, xact_rollback, blks_read, blks_hit,
	tup_inserted + tup_updated + tup_deleted, numbackends
FROM pg_stat_database WHERE datname = $1`
	walQuery   = "SELECT wal_records, wal_fpi, wal_bytes::bigint, wal_write, wal_sync FROM pg_stat_wal"
	wal18Query = "SELECT wal_records, wal_fpi, wal_bytes::bigint, -1, -1 FROM pg_stat_wal" // 18 moved writes and syncs to pg_stat_io
	ioQuery    = "SELECT coalesce(sum(writes), 0)::bigint FROM pg_stat_io WHERE object = 'relation'"
)

// DBUsageReader reads DBUsage over one connection it opens on first use.
type DBUsageReader struct {
	// DSN is the database's postgres:// URL; it is never shown.
	DSN kc.Secret
	// PID is the postmaster's pid on this machine (0: CPU not measured).
	PID  int
	Proc fs.FS // /proc

	conn *pgx.Conn
	db   string
}

// Read takes one reading. Its own queries run in one transaction, which
// the caller takes off (see DBCost.Xacts): one commit per reading.
//
// Each view is read on its own (a savepoint each): one the database
// refuses (a role without the permission, a view renamed) is named in
// Unread with the database's error, and the reading goes on. Only a lost
// connection, a timeout or the database missing from pg_stat_database
// fail the reading.
func (r *DBUsageReader) Read(ctx context.Context) (DBUsage, error) {
	var u DBUsage
	if r.conn == nil {
		cfg, err := PGConfig(r.DSN, "kcbench-dbcost")
		if err != nil {
			return u, err
		}
		if r.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
			return u, fmt.Errorf("connect to postgres: %w", err)
		}
		r.db = cfg.Database
	}
	qctx, cancel := context.WithTimeout(ctx, DefaultPGQueryTimeout)
	defer cancel()
	tx, err := r.conn.Begin(qctx)
	if err != nil {
		return u, r.fail(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	q := "SELECT current_setting('server_version_num')::int, current_setting('fsync') = 'on' AND current_setting('synchronous_commit') <> 'off'"
	if err := tx.QueryRow(qctx, q).Scan(&u.Version, &u.Durable); err != nil {
		return u, r.fail(err)
	}
	// view reads one view under a savepoint: an error the server answers
	// with leaves the transaction usable and the view unread.
	view := func(name, query string, args []any, dest ...any) error {
		sp, err := tx.Begin(qctx)
		if err != nil {
			return err
		}
		err = sp.QueryRow(qctx, query, args...).Scan(dest...)
		if err == nil {
			return sp.Commit(qctx)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) {
			return err
		}
		if rbErr := sp.Rollback(qctx); rbErr != nil {
			return rbErr
		}
		if u.Unread == nil {
			u.Unread = map[string]string{}
		}
		u.Unread[name] = pgErr.Error()
		return nil
	}
	err = view(results.DBViewDatabase, dbUsageQuery, []any{r.db}, &u.Commits, &u.Rollbacks, &u.BlksRead, &u.BlksHit,
		&u.TuplesWritten, &u.Backends)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("%q: %w", r.db, ErrNoDatabase)
	}
	if err != nil {
		return u, r.fail(fmt.Errorf("%s: %w", results.DBViewDatabase, err))
	}
	u.WALWrites, u.WALSyncs, u.DataWrites = -1, -1, -1
	wq := walQuery
	if u.Version >= 180000 {
		wq = wal18Query
	}
	if err := view(results.DBViewWAL, wq, nil, &u.WALRecords, &u.WALFPI, &u.WALBytes, &u.WALWrites, &u.WALSyncs); err != nil {
		return u, r.fail(fmt.Errorf("%s: %w", results.DBViewWAL, err))
	}
	if u.Version >= 160000 {
		if err := view(results.DBViewIO, ioQuery, nil, &u.DataWrites); err != nil {
			return u, r.fail(fmt.Errorf("%s: %w", results.DBViewIO, err))
		}
	}
	if err := tx.Commit(qctx); err != nil {
		return u, r.fail(err)
	}
	if r.PID > 0 && r.Proc != nil {
		if t, err := ReadTree(r.Proc, r.PID); err == nil {
			u.CPU, u.HasCPU = t.CPU, true
		}
	}
	return u, nil
}

func (r *DBUsageReader) fail(err error) error {
	r.Close()
	return err
}

// Close closes the connection.
func (r *DBUsageReader) Close() {
	if r.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		r.conn.Close(ctx)
		r.conn = nil
	}
}

// Cost is the database's work between readings a and b, over window
// seconds and ops successful operations; readings is how many of
// kcbench's own readings fell between them (each is one transaction).
// A view either reading could not read is named in Unread (the later
// reading's error first) and its figures are -1.
func Cost(a, b DBUsage, window float64, ops int64, readings int64) results.DBCost {
	c := results.DBCost{Available: true, Window: window, Ops: ops,
		Xacts:      max(0, b.Commits+b.Rollbacks-a.Commits-a.Rollbacks-readings),
		WALRecords: b.WALRecords - a.WALRecords, WALFPI: b.WALFPI - a.WALFPI, WALBytes: b.WALBytes - a.WALBytes,
		WALWrites: -1, WALSyncs: -1, DataWrites: -1,
		TuplesWritten: b.TuplesWritten - a.TuplesWritten, BlksRead: b.BlksRead - a.BlksRead, BlksHit: b.BlksHit - a.BlksHit,
		PeakBackends: max(a.Backends, b.Backends),
	}
	for _, v := range []string{results.DBViewDatabase, results.DBViewWAL, results.DBViewIO} {
		if e, ok := b.Unread[v]; ok {
			c.Unread = append(c.Unread, results.NewDBUnread(v, e))
		} else if e, ok := a.Unread[v]; ok {
			c.Unread = append(c.Unread, results.NewDBUnread(v, e))
		}
	}
	hasStats, hasWAL, hasIO := c.Has(results.DBViewDatabase), c.Has(results.DBViewWAL), c.Has(results.DBViewIO)
	if !hasStats {
		c.Xacts, c.TuplesWritten, c.BlksRead, c.BlksHit, c.PeakBackends = -1, -1, -1, -1, -1
	}
	if !hasWAL {
		c.WALRecords, c.WALFPI, c.WALBytes = -1, -1, -1
	}
	if hasWAL && a.WALSyncs >= 0 && b.WALSyncs >= 0 {
		c.WALWrites, c.WALSyncs = b.WALWrites-a.WALWrites, b.WALSyncs-a.WALSyncs
	}
	if hasIO && a.DataWrites >= 0 && b.DataWrites >= 0 {
		c.DataWrites = b.DataWrites - a.DataWrites
	}
	if a.HasCPU && b.HasCPU {
		c.CPU, c.CPUMeasured = (b.CPU - a.CPU).Seconds(), true
	}
	c.Durable = a.Durable && b.Durable
	var missing []string
	if !c.CPUMeasured {
		missing = append(missing, "CPU not measured (the database is not a local process)")
	}
	for _, u := range c.Unread {
		missing = append(missing, u.String())
	}
	if hasWAL && c.WALSyncs < 0 {
		missing = append(missing, "WAL syncs not reported (PostgreSQL 18 moved them to pg_stat_io)")
	}
	if hasIO && c.DataWrites < 0 {
		missing = append(missing, "data writes not reported (pg_stat_io needs PostgreSQL 16)")
	}
	if !c.Durable {
		missing = append(missing, "write IOPS not reported: the database does not sync (fsync or synchronous_commit off)")
	}
	if len(missing) > 0 {
		c.Reason = strings.Join(missing, "; ")
	}
	if ops <= 0 {
		return c
	}
	n := float64(ops)
	if c.CPUMeasured {
		c.CPUMsPerOp = c.CPU * 1000 / n
	}
	c.XactsPerOp, c.TuplesPerOp, c.BlksReadPerOp = -1, -1, -1
	if hasStats {
		c.XactsPerOp, c.TuplesPerOp, c.BlksReadPerOp = float64(c.Xacts)/n, float64(c.TuplesWritten)/n, float64(c.BlksRead)/n
	}
	c.WALBytesPerOp, c.WALRecordsPerOp = -1, -1
	if hasWAL {
		c.WALBytesPerOp, c.WALRecordsPerOp = float64(c.WALBytes)/n, float64(c.WALRecords)/n
	}
	if c.WALSyncs >= 0 && c.DataWrites >= 0 && c.Durable {
		// a database that does not sync issues no storage writes worth
		// counting as a durable one's IOPS
		c.WriteIOPSPerOp = float64(c.WALSyncs+c.DataWrites) / n
	}
	return c
}

// NotOnMariaDB says which database figures MariaDB has not.
const NotOnMariaDB = "transactions, WAL, tuples, blocks and write IOPS: not available on MariaDB (PostgreSQL statistics)"

// CPUCost is the work of a database measured by its process's CPU alone
// (engine "mariadb"), between readings a and b, over window seconds and
// ops successful operations.
func CPUCost(engine string, a, b DBUsage, window float64, ops int64) results.DBCost {
	c := results.DBCost{Available: true, Engine: engine, Window: window, Ops: ops, Reason: NotOnMariaDB,
		WALWrites: -1, WALSyncs: -1, DataWrites: -1}
	if a.HasCPU && b.HasCPU {
		c.CPU, c.CPUMeasured = (b.CPU - a.CPU).Seconds(), true
	} else {
		c.Reason = "CPU not measured (the database is not a local process); " + NotOnMariaDB
	}
	if ops > 0 && c.CPUMeasured {
		c.CPUMsPerOp = c.CPU * 1000 / float64(ops)
	}
	return c
}

// ReadTreeCPU reads the CPU time of the process tree at pid (a database
// without PostgreSQL's statistics: mariadbd).
func ReadTreeCPU(proc fs.FS, pid int) (DBUsage, error) {
	t, err := ReadTree(proc, pid)
	if err != nil {
		return DBUsage{}, err
	}
	return DBUsage{CPU: t.CPU, HasCPU: true}, nil
}
