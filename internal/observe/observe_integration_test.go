//go:build integration

package observe

import (
	"context"
	"fmt"
	"github.com/kcbench/kcbench/internal/results"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

var shared stacktest.Shared

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, &shared)) }

// TestObserveRealStack samples a real stack for about 5 s, 2.5 of them
// while a client logs the admin in with the password grant (each login
// stores a persistent session: database commits).
func TestObserveRealStack(t *testing.T) {
	s := shared.Get(t)
	target := s.Target()
	st := s.State()
	if target.PID == 0 || st.PG == nil || st.PG.Proc.PID == 0 {
		t.Fatalf("stack not running: kc pid %d, pg %+v", target.PID, st.PG)
	}
	pw, err := fileutil.ReadSecret(s.SecretPath("db-password"))
	if err != nil {
		t.Fatal(err)
	}
	dsn := (&url.URL{Scheme: "postgres", User: url.UserPassword("keycloak", pw),
		Host: fmt.Sprintf("127.0.0.1:%d", st.PG.Port), Path: "/keycloak"}).String()

	rec := New(Config{Target: target, PGPID: st.PG.Proc.PID, PGDSN: kc.Secret(dsn)})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rec.SetPhase("idle")
	stop := rec.Start(ctx)

	waitRows(t, rec, func(rows []results.ObserveSample) bool { return len(rows) >= 2 }, "two idle rows")
	rec.SetPhase("load")
	c := kc.NewFor(target)
	cl := kc.OAuthClient{ID: "admin-cli"}
	grants := 0
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		if _, err := c.PasswordGrant(ctx, "master", cl, target.Admin.Username, target.Admin.Password.Reveal(), ""); err != nil {
			t.Fatal(err)
		}
		grants++
	}
	// PostgreSQL flushes its statistics now and then, and Keycloak's
	// request counter is read once a row: wait for load rows that count
	// commits and at least half the grants.
	waitRows(t, rec, func(rows []results.ObserveSample) bool {
		var reqs float64
		for _, r := range rows {
			if r.Phase == "load" && !math.IsNaN(r.HTTPRequests) {
				reqs += r.HTTPRequests
			}
		}
		return reqs >= float64(grants)/2 && slices.ContainsFunc(rows, func(r results.ObserveSample) bool { return r.Phase == "load" && r.PGCommits > 0 })
	}, "load rows with commits and the grants' requests")
	rows := stop()
	t.Logf("%d grants, %d rows, unavailable: %q", grants, len(rows), rec.Unavailable())
	for _, r := range rows {
		t.Logf("%s %-4s kc %6.1f%% %4.0f MiB  pg %5.1f%% %4.0f MiB  heap %4.0f/%4.0f MiB  http %5.1f/s  pool %v  commits %5.1f/s  tuples %5.1f/s  db %.0f MiB",
			r.T.Format("15:04:05.000"), r.Phase, r.KCCPUPct, r.KCRSSBytes/(1<<20), r.PGCPUPct, r.PGRSSBytes/(1<<20),
			r.HeapUsed/(1<<20), r.HeapCommitted/(1<<20), r.HTTPRequests, r.DBPoolActive, r.PGCommits, r.PGTuplesWritten, r.PGDBSizeBytes/(1<<20))
	}

	if u := rec.Unavailable(); len(u) != 0 {
		t.Errorf("unavailable on a local stack: %q", u)
	}
	if len(rows) < 4 {
		t.Fatalf("%d rows in ~5 s", len(rows))
	}
	var commits, reqs, kcCPU float64
	for i, r := range rows {
		if r.KCRSSBytes < 100<<20 || r.PGRSSBytes <= 0 || r.HeapUsed <= 0 || r.HeapCommitted < r.HeapUsed || r.PGDBSizeBytes <= 0 {
			t.Errorf("row %d: implausible gauges: %+v", i, r)
		}
		if i > 0 && (math.IsNaN(r.KCCPUPct) || math.IsNaN(r.PGCommits) || math.IsNaN(r.HTTPRequests)) {
			t.Errorf("row %d: missing rates: %+v", i, r)
		}
		if !math.IsNaN(r.PGCommits) {
			commits += r.PGCommits
		}
		if !math.IsNaN(r.HTTPRequests) {
			reqs += r.HTTPRequests
		}
		if !math.IsNaN(r.KCCPUPct) {
			kcCPU += r.KCCPUPct
		}
	}
	if commits <= 0 || reqs < float64(grants)/2 || kcCPU <= 0 {
		t.Errorf("under load: commits %v, requests %v (grants %d), kc cpu %v", commits, reqs, grants, kcCPU)
	}

	var b strings.Builder
	if err := results.WriteObserveCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	back, err := results.ReadObserveCSV(strings.NewReader(b.String()))
	if err != nil || len(back) != len(rows) {
		t.Fatalf("csv round trip: %d rows, %v", len(back), err)
	}
}

// waitRows polls the recorder's rows until ok holds, or fails the test
// after a deadline.
func waitRows(t *testing.T, rec *Recorder, ok func([]results.ObserveSample) bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(rec.Rows()); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30 s", what)
		}
	}
}
