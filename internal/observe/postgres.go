package observe

import (
	"context"
	"errors"
	"fmt"
	"github.com/kcbench/kcbench/internal/results"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/kc"
)

// Timeouts of the PostgreSQL source.
const (
	DefaultPGConnectTimeout = 3 * time.Second
	DefaultPGQueryTimeout   = 2 * time.Second
)

// DBStats is one reading of pg_stat_database for a database. Counters are
// cumulative since the statistics were last reset.
type DBStats struct {
	Commits, Rollbacks int64
	BlksRead, BlksHit  int64
	TuplesWritten      int64 // tup_inserted + tup_updated + tup_deleted
	SizeBytes          int64 // pg_database_size
}

const dbStatsQuery = `SELECT xact_commit, xact_rollback, blks_read, blks_hit,
	tup_inserted + tup_updated + tup_deleted, pg_database_size(datid)
FROM pg_stat_database WHERE datname = $1`

// ErrNoDatabase means pg_stat_database has no row for the database.
var ErrNoDatabase = errors.New("database not in pg_stat_database")

// ReadDBStats reads the statistics of database db over conn.
func ReadDBStats(ctx context.Context, conn *pgx.Conn, db string) (DBStats, error) {
	var s DBStats
	err := conn.QueryRow(ctx, dbStatsQuery, db).Scan(
		&s.Commits, &s.Rollbacks, &s.BlksRead, &s.BlksHit, &s.TuplesWritten, &s.SizeBytes)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, fmt.Errorf("%q: %w", db, ErrNoDatabase)
	}
	return s, err
}

// PGSource samples pg_stat_database over one connection, opened on the
// first sample and reopened on the next after an error.
//
// Its own query is a transaction: when it is connected to the database it
// observes (the usual DSN, …/keycloak), one commit per sample is taken
// off the commit rate, so an idle Keycloak reads about 0. Its block hits
// (a few catalog pages per sample) are not.
type PGSource struct {
	// DSN is a postgres:// URL or key=value string, e.g.
	// postgres://keycloak:PASSWORD@127.0.0.1:5432/keycloak.
	DSN kc.Secret
	// Database is the database observed; empty means the DSN's.
	Database string

	conn                                  *pgx.Conn
	db                                    string
	self                                  bool // connected to the observed database
	commits, rollbacks, read, hit, tuples counter
}

var _ Source = (*PGSource)(nil)

// NewPGSource observes the DSN's database.
func NewPGSource(dsn kc.Secret) *PGSource { return &PGSource{DSN: dsn} }

// Name implements Source. It never shows the DSN, which may hold a
// password.
func (p *PGSource) Name() string { return "postgres statistics (pg_stat_database)" }

// PGConfig parses dsn for a connection named app (application_name)
// that gives up connecting after DefaultPGConnectTimeout. Its error never
// shows the DSN: pgx's parse errors can echo it, password included.
func PGConfig(dsn kc.Secret, app string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn.Reveal())
	if err != nil {
		return nil, errors.New("postgres DSN does not parse")
	}
	cfg.ConnectTimeout = DefaultPGConnectTimeout
	cfg.RuntimeParams["application_name"] = app
	return cfg, nil
}

func (p *PGSource) connect(ctx context.Context) error {
	cfg, err := PGConfig(p.DSN, "kcbench-observe")
	if err != nil {
		return err
	}
	cfg.RuntimeParams["statement_timeout"] = fmt.Sprint(DefaultPGQueryTimeout.Milliseconds())
	// One simple-protocol query per sample: exactly one transaction, no
	// prepared statements to lose on reconnect.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	p.conn = conn
	p.db = p.Database
	if p.db == "" {
		p.db = cfg.Database
	}
	p.self = p.db == cfg.Database
	return nil
}

// results.ObserveSample implements Source. Rates start with the second sample.
func (p *PGSource) Sample(ctx context.Context) (results.ObserveSample, error) {
	out := results.BlankObserveSample(time.Now())
	if p.conn == nil {
		if err := p.connect(ctx); err != nil {
			return out, err
		}
	}
	qctx, cancel := context.WithTimeout(ctx, DefaultPGQueryTimeout)
	defer cancel()
	s, err := ReadDBStats(qctx, p.conn, p.db)
	now := time.Now()
	out.T = now
	if err != nil {
		p.closeConn()
		return out, fmt.Errorf("postgres statistics: %w", err)
	}
	commits := p.commits.rate(float64(s.Commits), now)
	if p.self && !math.IsNaN(commits) {
		// Our previous query committed once since the last reading.
		commits = max(0, commits-1/p.commits.dt)
	}
	out.PGCommits = commits
	out.PGRollbacks = p.rollbacks.rate(float64(s.Rollbacks), now)
	out.PGBlksRead = p.read.rate(float64(s.BlksRead), now)
	out.PGBlksHit = p.hit.rate(float64(s.BlksHit), now)
	out.PGTuplesWritten = p.tuples.rate(float64(s.TuplesWritten), now)
	out.PGDBSizeBytes = float64(s.SizeBytes)
	return out, nil
}

func (p *PGSource) closeConn() {
	if p.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p.conn.Close(ctx)
	p.conn = nil
}

// Close closes the connection. The Recorder calls it when Run ends.
func (p *PGSource) Close() error {
	p.closeConn()
	return nil
}
