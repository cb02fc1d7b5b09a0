package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The statistics views the database's cost is read from. Each is read on
// its own: a role that may not read one (an external database, say) leaves
// the figures of the others (DBCost.Unread).
const (
	// DBViewDatabase gives transactions, tuples written, blocks read and
	// hit, and connections.
	DBViewDatabase = "pg_stat_database"
	// DBViewWAL gives WAL records, full-page images and bytes, and (up to
	// PostgreSQL 17) WAL writes and syncs.
	DBViewWAL = "pg_stat_wal"
	// DBViewIO gives relation data writes (PostgreSQL 16 and later).
	DBViewIO = "pg_stat_io"
)

// dbViewFigures names the figures each view gives, for the line that says
// which are missing.
var dbViewFigures = map[string]string{
	DBViewDatabase: "transactions, tuples written, blocks read and hit, connections",
	DBViewWAL:      "WAL records and bytes, WAL syncs",
	DBViewIO:       "data writes",
}

// DBUnread is one statistics view that could not be read, with the
// database's own error; its figures are -1 in DBCost.
type DBUnread struct {
	View    string `json:"view"`
	Figures string `json:"figures"`
	Error   string `json:"error"`
}

// NewDBUnread names the figures view gives.
func NewDBUnread(view, err string) DBUnread {
	return DBUnread{View: view, Figures: dbViewFigures[view], Error: err}
}

func (u DBUnread) String() string {
	return fmt.Sprintf("%s not read (%s: %s)", u.Figures, u.View, u.Error)
}

// ParamPGDurable is the result param that says whether the database
// synced its writes (fsync and synchronous_commit on) while measured.
const ParamPGDurable = "pg_durable"

// ParamCachePrefix starts the params that give an embedded cache's size
// (max entries) as set for the point: cache_users, cache_realms…
const ParamCachePrefix = "cache_"

// RecordDurable sets params' pg_durable from c, when c was measured.
func (c *DBCost) RecordDurable(params map[string]string) {
	if c != nil && c.Available && c.Engine == "" && params != nil {
		params[ParamPGDurable] = strconv.FormatBool(c.Durable)
	}
}

// DBCost is what the database did over a run's measured window, in total
// and per successful iteration: summary.json's "database" (observe.Cost
// computes it).
type DBCost struct {
	Available bool `json:"available"`
	// Engine is "mariadb" when the database is MariaDB: only its CPU is
	// measured (from /proc), the rest are PostgreSQL statistics ("" is
	// PostgreSQL).
	Engine string  `json:"engine,omitempty"`
	Reason string  `json:"reason,omitempty"` // why not, or what is missing
	Window float64 `json:"window_s,omitempty"`
	Ops    int64   `json:"ops,omitempty"` // successful iterations the figures are divided by

	// Totals over the window.
	CPU           float64 `json:"cpu_s,omitempty"` // postmaster tree; 0 with CPUMeasured false
	CPUMeasured   bool    `json:"cpu_measured"`
	Xacts         int64   `json:"xacts"` // commits + rollbacks, kcbench's own readings taken off
	WALRecords    int64   `json:"wal_records"`
	WALFPI        int64   `json:"wal_fpi"`
	WALBytes      int64   `json:"wal_bytes"`
	WALWrites     int64   `json:"wal_writes"`  // -1: not reported by this server
	WALSyncs      int64   `json:"wal_syncs"`   // -1: not reported by this server
	DataWrites    int64   `json:"data_writes"` // -1: not reported by this server
	TuplesWritten int64   `json:"tuples_written"`
	BlksRead      int64   `json:"blks_read"`
	BlksHit       int64   `json:"blks_hit"`
	PeakBackends  int64   `json:"peak_backends"`

	// Per successful operation.
	CPUMsPerOp      float64 `json:"cpu_ms_per_op,omitempty"`
	XactsPerOp      float64 `json:"xacts_per_op"`
	WALBytesPerOp   float64 `json:"wal_bytes_per_op"`
	WALRecordsPerOp float64 `json:"wal_records_per_op"`
	TuplesPerOp     float64 `json:"tuples_written_per_op"`
	BlksReadPerOp   float64 `json:"blks_read_per_op"`
	// WriteIOPSPerOp is (WAL syncs + data writes) per operation: the
	// writes a durable database issues to storage (WriteIOPSFormula).
	WriteIOPSPerOp float64 `json:"write_iops_per_op,omitempty"`
	// Durable says whether the server syncs its writes (fsync and
	// synchronous_commit on): without it the WAL syncs are not a
	// durable database's (the caller sets it).
	Durable bool `json:"durable"`
	// Unread lists the views that could not be read (the role lacks the
	// permission, say). Their figures, totals and per operation, are -1;
	// the others are measured as usual.
	Unread []DBUnread `json:"unread,omitempty"`
}

// Has reports whether the figures of view (DBViewDatabase, DBViewWAL,
// DBViewIO) were read.
func (c *DBCost) Has(view string) bool {
	if c.Engine != "" {
		return false // not PostgreSQL: none of its statistics views
	}
	for _, u := range c.Unread {
		if u.View == view {
			return false
		}
	}
	return true
}

// PerOp is the figures per successful iteration that were read, e.g.
// "0.412 ms CPU, 2.00 transactions, 3.9 KiB WAL (10.0 records), 6.0
// tuples written, 0.04 blocks read (99.9% hit)".
func (c *DBCost) PerOp() string {
	var parts []string
	if c.CPUMeasured {
		parts = append(parts, fmt.Sprintf("%.3f ms CPU", c.CPUMsPerOp))
	}
	if c.Has(DBViewDatabase) {
		parts = append(parts, fmt.Sprintf("%.2f transactions", c.XactsPerOp))
	}
	if c.Has(DBViewWAL) {
		parts = append(parts, fmt.Sprintf("%s WAL (%.1f records)", byteSize(c.WALBytesPerOp), c.WALRecordsPerOp))
	}
	if c.Has(DBViewDatabase) {
		parts = append(parts, fmt.Sprintf("%.1f tuples written, %.2f blocks read (%s hit)", c.TuplesPerOp, c.BlksReadPerOp, hitRatio(c.BlksRead, c.BlksHit)))
	}
	if len(parts) == 0 {
		return "no figure read"
	}
	return strings.Join(parts, ", ")
}

// WriteIOPSFormula says how WriteIOPSPerOp is derived.
const WriteIOPSFormula = "(pg_stat_wal.wal_sync + pg_stat_io relation writes) ÷ successful operations"

// Write prints the cost as the load summary's "database:" lines.
func (c *DBCost) Write(w io.Writer) error {
	if !c.Available {
		_, err := fmt.Fprintf(w, "database:     unavailable: %s\n", c.Reason)
		return err
	}
	if c.Engine != "" {
		return c.writeCPUOnly(w)
	}
	totals := []string{"CPU not measured"}
	if c.CPUMeasured {
		totals[0] = fmt.Sprintf("%.2f s CPU (%.2f cores)", c.CPU, c.CPU/max(c.Window, 1e-9))
	}
	if c.Has(DBViewDatabase) {
		totals = append(totals, fmt.Sprintf("%d transactions", c.Xacts))
	}
	if c.Has(DBViewWAL) {
		totals = append(totals, byteSize(float64(c.WALBytes))+" WAL")
	}
	if _, err := fmt.Fprintf(w, "database:     %s over %.1f s measured\n", strings.Join(totals, ", "), c.Window); err != nil {
		return err
	}
	for _, u := range c.Unread {
		if _, err := fmt.Fprintf(w, "  %s\n", u); err != nil {
			return err
		}
	}
	if c.Ops == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "  per successful iteration: %s\n", c.PerOp()); err != nil {
		return err
	}
	switch {
	case c.WriteIOPSPerOp > 0 || (c.WALSyncs >= 0 && c.DataWrites >= 0 && c.Durable):
		_, err := fmt.Fprintf(w, "  write IOPS: %.3f per iteration = %.0f per 100 iterations/s, from %s\n", c.WriteIOPSPerOp, 100*c.WriteIOPSPerOp, WriteIOPSFormula)
		return err
	case !c.Durable:
		_, err := fmt.Fprintln(w, "  write IOPS: not reported: the database does not sync its writes (fsync or synchronous_commit off; kcbench up --db-durable)")
		return err
	case !c.Has(DBViewWAL) || !c.Has(DBViewIO):
		_, err := fmt.Fprintln(w, "  write IOPS: not reported: its WAL syncs or data writes were not read (above)")
		return err
	}
	return nil
}

func byteSize(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

func hitRatio(read, hit int64) string {
	if read+hit == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(hit)/float64(read+hit))
}

// writeCPUOnly prints a database measured by its CPU alone (MariaDB).
func (c *DBCost) writeCPUOnly(w io.Writer) error {
	cpu := "CPU not measured"
	if c.CPUMeasured {
		cpu = fmt.Sprintf("%.2f s CPU (%.2f cores)", c.CPU, c.CPU/max(c.Window, 1e-9))
	}
	if _, err := fmt.Fprintf(w, "database:     %s: %s over %.1f s measured\n", c.Engine, cpu, c.Window); err != nil {
		return err
	}
	if c.Ops > 0 && c.CPUMeasured {
		if _, err := fmt.Fprintf(w, "  per successful iteration: %.3f ms CPU\n", c.CPUMsPerOp); err != nil {
			return err
		}
	}
	if c.Reason != "" {
		_, err := fmt.Fprintf(w, "  %s\n", c.Reason)
		return err
	}
	return nil
}
