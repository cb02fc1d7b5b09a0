package observe

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
)

// On MariaDB the database's cost is mariadbd's CPU alone, read from /proc.
func TestDBWindowMariaDB(t *testing.T) {
	ctx := context.Background()
	stats := results.Stats{Ops: []results.OpStats{{Name: results.IterationOp, OK: 5}}}
	if c := newDBWindow(ctx, kc.Target{}).result(stats); c != nil {
		t.Errorf("no database known: %+v, want nil", c)
	}
	// This process stands in for mariadbd.
	w := newDBWindow(ctx, kc.Target{DBKind: "mariadb", DBPID: os.Getpid()})
	w.begin(0)
	burnCPU(t, 60*time.Millisecond)
	w.end()
	c := w.result(stats)
	if c == nil || !c.Available || c.Engine != "mariadb" || !c.CPUMeasured || c.Ops != 5 || c.CPU <= 0 || c.CPUMsPerOp != c.CPU*1000/5 {
		t.Fatalf("mariadb: %+v", c)
	}
	if !strings.Contains(c.Reason, "not available on MariaDB") {
		t.Errorf("the PostgreSQL-only figures are not said to be missing: %q", c.Reason)
	}
	var b strings.Builder
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "mariadb:") || !strings.Contains(out, "ms CPU") || strings.Contains(out, "0 transactions") {
		t.Errorf("summary lines:\n%s", out)
	}
	params := map[string]string{}
	c.RecordDurable(params)
	if _, ok := params[results.ParamPGDurable]; ok {
		t.Errorf("pg_durable recorded for MariaDB: %v", params)
	}
}

// burnCPU spins until this process has used d more CPU time (not wall
// time: on a busy machine a spinning goroutine may get little of it),
// within a deadline.
func burnCPU(t *testing.T, d time.Duration) {
	t.Helper()
	used := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start, deadline := used(), time.Now().Add(30*time.Second)
	for used()-start < d {
		if time.Now().After(deadline) {
			t.Fatalf("used less than %v of CPU in 30 s", d)
		}
	}
}
