package observe

import (
	"strings"
	"testing"
	"time"
)

func TestCostPerOperation(t *testing.T) {
	a := DBUsage{DBStats: DBStats{Commits: 100, Rollbacks: 1, BlksRead: 10, BlksHit: 1000, TuplesWritten: 50},
		WALRecords: 1000, WALBytes: 100_000, WALWrites: 5, WALSyncs: 5, DataWrites: 7, Backends: 20,
		CPU: 2 * time.Second, HasCPU: true, Version: 170005, Durable: true}
	b := a
	b.Commits, b.Rollbacks = 1101, 1 // 1000 by the load, 1 by kcbench's first reading
	b.BlksRead, b.BlksHit, b.TuplesWritten = 30, 5000, 3050
	b.WALRecords, b.WALBytes, b.WALWrites, b.WALSyncs, b.DataWrites = 6000, 2_100_000, 505, 505, 107
	b.Backends, b.CPU = 25, 4*time.Second
	c := Cost(a, b, 10, 500, 1)
	if !c.Available || c.Xacts != 1000 || c.WALBytes != 2_000_000 || c.WALSyncs != 500 || c.DataWrites != 100 || c.PeakBackends != 25 {
		t.Fatalf("totals %+v", c)
	}
	if c.CPUMsPerOp != 4 || c.XactsPerOp != 2 || c.WALBytesPerOp != 4000 || c.WALRecordsPerOp != 10 || c.TuplesPerOp != 6 || c.BlksReadPerOp != 0.04 {
		t.Errorf("per op %+v", c)
	}
	if c.WriteIOPSPerOp != 1.2 || c.Reason != "" {
		t.Errorf("write IOPS %g (want (500+100)/500), reason %q", c.WriteIOPSPerOp, c.Reason)
	}
	var out strings.Builder
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2.00 s CPU (0.20 cores), 1000 transactions, 1.9 MiB WAL", "4.000 ms CPU, 2.00 transactions, 3.9 KiB WAL (10.0 records)", "write IOPS: 1.200 per iteration = 120 per 100 iterations/s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

func TestCostSaysWhatIsMissing(t *testing.T) {
	// PostgreSQL 18 without local CPU, not durable
	a := DBUsage{WALWrites: -1, WALSyncs: -1, DataWrites: 3, Version: 180000}
	b := a
	b.Commits, b.DataWrites = 11, 13
	c := Cost(a, b, 5, 10, 1)
	if c.CPUMeasured || c.WALSyncs != -1 || c.WriteIOPSPerOp != 0 || c.Xacts != 10 {
		t.Fatalf("%+v", c)
	}
	for _, want := range []string{"CPU not measured", "WAL syncs not reported", "does not sync"} {
		if !strings.Contains(c.Reason, want) {
			t.Errorf("reason lacks %q: %s", want, c.Reason)
		}
	}
	var out strings.Builder
	c.Write(&out)
	if !strings.Contains(out.String(), "CPU not measured") || !strings.Contains(out.String(), "write IOPS: not reported") {
		t.Errorf("summary:\n%s", out.String())
	}
	// kcbench's own reading never makes the count negative
	if c := Cost(a, a, 5, 10, 1); c.Xacts != 0 {
		t.Errorf("xacts %d", c.Xacts)
	}
}

// A view the role may not read takes out its own figures and no others;
// the summary says once which and why.
func TestCostLeavesOutUnreadViews(t *testing.T) {
	denied := "ERROR: permission denied for view pg_stat_wal (SQLSTATE 42501)"
	a := DBUsage{DBStats: DBStats{Commits: 100, BlksRead: 10}, WALWrites: -1, WALSyncs: -1, DataWrites: 7,
		CPU: time.Second, HasCPU: true, Version: 170005, Durable: true, Unread: map[string]string{"pg_stat_wal": denied}}
	b := a
	b.Commits, b.BlksRead, b.DataWrites, b.CPU = 201, 30, 17, 3*time.Second
	c := Cost(a, b, 10, 100, 1)
	if !c.Available || c.Xacts != 100 || c.XactsPerOp != 1 || c.BlksReadPerOp != 0.2 || c.CPUMsPerOp != 20 || c.DataWrites != 10 {
		t.Errorf("the readable figures: %+v", c)
	}
	if c.WALBytes != -1 || c.WALBytesPerOp != -1 || c.WALRecordsPerOp != -1 || c.WALSyncs != -1 || c.WriteIOPSPerOp != 0 {
		t.Errorf("the WAL figures are not -1: %+v", c)
	}
	if len(c.Unread) != 1 || c.Unread[0].View != "pg_stat_wal" || c.Unread[0].Error != denied || c.Has("pg_stat_wal") || !c.Has("pg_stat_database") {
		t.Fatalf("unread %+v", c.Unread)
	}
	if !strings.Contains(c.Reason, denied) || strings.Contains(c.Reason, "PostgreSQL 18") {
		t.Errorf("reason %q", c.Reason)
	}
	var out strings.Builder
	if err := c.Write(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"2.00 s CPU (0.20 cores), 100 transactions over 10.0 s",
		"WAL records and bytes, WAL syncs not read (pg_stat_wal: " + denied + ")",
		"per successful iteration: 20.000 ms CPU, 1.00 transactions, 0.0 tuples written, 0.20 blocks read",
		"write IOPS: not reported: its WAL syncs or data writes were not read"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, denied) != 1 || strings.Contains(s, " WAL (") {
		t.Errorf("the summary says the error once and shows no WAL figure:\n%s", s)
	}
	// only the later reading refused: still unread
	a.Unread, b.Unread = nil, map[string]string{"pg_stat_database": "ERROR: permission denied for function pg_stat_get_db_xact_commit"}
	c = Cost(a, b, 10, 100, 1)
	if c.Has("pg_stat_database") || c.Xacts != -1 || c.XactsPerOp != -1 || c.BlksReadPerOp != -1 || c.PeakBackends != -1 || c.WALBytes != 0 {
		t.Errorf("%+v", c)
	}
}
