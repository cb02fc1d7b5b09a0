package sizing

import (
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

func db(ops int64, cpuMs, xacts, wal, iops float64, durable bool) func(*Measurement) {
	return func(m *Measurement) {
		m.DB = &results.DBCost{Available: true, Ops: ops, CPUMeasured: cpuMs > 0, CPUMsPerOp: cpuMs, XactsPerOp: xacts,
			WALBytesPerOp: wal, WriteIOPSPerOp: iops, Durable: durable}
	}
}

func TestSizeFromPrintsTheMeasuredDatabase(t *testing.T) {
	ms := []Measurement{
		// two repeats of the login cell, weighted by their operations
		m("password-grant", 20, db(100, 2, 2, 3000, 0.2, true)),
		m("password-grant", 20, point("p2", 2), db(300, 3, 2, 3000, 0.4, true)),
		m("password-grant", 20, phase(results.PhaseCold), db(50, 9, 9, 9000, 9, true)), // another cell: not used
		m("refresh", 10, db(100, 1, 1, 1500, 0.1, true)),
		m("client-credentials", 5), // no database figures
	}
	cals, err := Calibrate(ms)
	if err != nil || len(cals) != 1 {
		t.Fatalf("%v %v", cals, err)
	}
	c := cals[0]
	if len(c.Database) != 2 {
		t.Fatalf("database figures %+v", c.Database)
	}
	login := c.Database[0]
	if login.Op != OpLogin || login.OK != 400 || login.CPUMsPerOp != 2.75 || login.WriteIOPSPerOp != 0.35 {
		t.Errorf("login %+v, want the cell's two repeats weighted: 2.75 ms, 0.35 IOPS over 400", login)
	}
	in := DefaultInput()
	in.LoginsPerSec, in.RefreshesPerSec = 100, 200
	var b strings.Builder
	if err := WriteFromSizing(&b, FormatText, in, cals, Output{Results: "results/x"}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// 100 × 2.75 ms + 200 × 1 ms = 0.475 vCPU (printed 0.48); 100 × 0.35 + 200 × 0.1 = 55 IOPS
	for _, want := range []string{"Database, measured by kcbench", "per login:", "= 0.48 vCPU", "= 55 IOPS (the guide: 4,200, 0.01× the guide's"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// not durable: no IOPS
	ms[3] = m("refresh", 10, db(100, 1, 1, 1500, 0, false))
	cals, _ = Calibrate(ms)
	b.Reset()
	WriteFromSizing(&b, FormatText, in, cals, Output{Results: "results/x"})
	if !strings.Contains(b.String(), "write IOPS: not measured on a durable database") {
		t.Errorf("non-durable refresh:\n%s", b.String())
	}
}

// A figure a measurement could not read (a view its role may not read) is
// left out of the mean, not counted as nothing; read by none, it says so.
func TestSizeFromLeavesOutUnreadDatabaseFigures(t *testing.T) {
	walUnread := func(m *Measurement) {
		m.DB.Unread = []results.DBUnread{results.NewDBUnread(results.DBViewWAL, "ERROR: permission denied for view pg_stat_wal")}
		m.DB.WALBytesPerOp, m.DB.WALSyncs = -1, -1
	}
	ms := []Measurement{
		m("password-grant", 20, db(100, 2, 2, 3000, 0.2, true)),
		m("password-grant", 20, point("p2", 2), db(300, 2, 4, 0, 0, true), walUnread),
	}
	cals, err := Calibrate(ms)
	if err != nil || len(cals) != 1 || len(cals[0].Database) != 1 {
		t.Fatalf("%+v %v", cals, err)
	}
	login := cals[0].Database[0]
	if login.XactsPerOp != 3.5 || login.WALBytesPerOp != 3000 || login.WriteIOPSPerOp != 0 {
		t.Errorf("login %+v: want 3.5 transactions over both, WAL 3000 bytes from the one that read it, no write IOPS", login)
	}
	ms = ms[1:]
	cals, _ = Calibrate(ms)
	in := DefaultInput()
	in.LoginsPerSec = 100
	var b strings.Builder
	WriteFromSizing(&b, FormatText, in, cals, Output{Results: "results/x"})
	for _, want := range []string{"4.00 transactions, WAL not read, write IOPS not reported (WAL syncs or data writes not read)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
