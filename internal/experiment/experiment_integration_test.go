//go:build integration

package experiment_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// tiny: two tenant counts of one mode on one stack (the second grows the
// first's dataset), one short warm phase.
const tiny = `
name: tiny
dataset:
  modes: [realms]
  tenants: [1, 2]
  password_policy: pbkdf2-sha256:1
  snapshots: false
phases: [warm]
warmup: 1s
workloads:
  - name: token
    scenario: client-credentials
    vus: 2
    duration: 3s
  - name: jwks
    scenario: jwks
    vus: 2
    duration: 2s
  - name: jwks-capacity
    scenario: jwks
    capacity: {start_rate: 30, step: 30, max_rate: 60, step_duration: 2s, warmup: 1s}
`

func runner(t *testing.T, yml, dir string) (*experiment.Runner, *logs) {
	if testing.Short() {
		t.Skip("integration test")
	}
	f, err := experiment.Parse([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	d, cleanup, err := stacktest.Dirs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	l := &logs{t: t}
	return &experiment.Runner{File: f, Dir: dir, Dirs: d, StackName: "exp", Logf: l.logf}, l
}

type logs struct {
	t       *testing.T
	mu      sync.Mutex
	lines   []string
	onPoint func(line string)
}

func (l *logs) logf(format string, args ...any) {
	line := strings.TrimSpace(fmtSprintf(format, args...))
	l.mu.Lock()
	l.lines = append(l.lines, line)
	f := l.onPoint
	l.mu.Unlock()
	l.t.Log(line)
	if f != nil {
		f(line)
	}
}

func TestTinyExperimentFilesReportResume(t *testing.T) {
	// Each point makes its last tenant through the admin API, timed:
	// point 1 its only one, point 2 (which grows 1 → 3, or 0 → 3 when
	// resumed on a fresh stack) the third after cloning the rest.
	// Both points hold 9 online and 9 offline sessions, spread over their
	// tenants: point 2 ends and deletes what point 1's tenant holds
	// beyond its new share.
	yml := strings.Replace(tiny, "tenants: [1, 2]", "tenants: [1, 3]\n  admin_api_sample: 1\n  sessions: 9\n  offline_sessions: 9", 1)
	dir := filepath.Join(t.TempDir(), "tiny")
	r, l := runner(t, yml, dir)
	// Interrupt when the second point starts: the first is done, the
	// second must rerun.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// Interrupt at the second point's first step after its header (the
	// dataset growing), so that it leaves an unfinished folder.
	second := false
	l.onPoint = func(line string) {
		switch {
		case strings.HasPrefix(line, "point 2/2"):
			second = true
		case second:
			cancel()
		}
	}
	out, err := r.Run(ctx)
	if err == nil {
		t.Fatalf("interrupted run: %+v, want an error", out)
	}
	if len(out.Done) != 1 {
		t.Fatalf("first run: %+v", out)
	}
	p1 := filepath.Join(dir, "default-realms-n00001-r1")
	for _, f := range []string{"manifest.json", "summary.json", "timeline.csv", "observe.csv", "warm-token-client_credentials.hlog", "warm-jwks-jwks.hlog"} {
		if st, err := os.Stat(filepath.Join(p1, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "default-realms-n00003-r1", "summary.json")); err == nil {
		t.Fatal("the interrupted point has a summary")
	}
	// Resume: only the missing point runs. A point that failed (an
	// error stopped it) runs again too: the unfinished one is made to
	// look failed.
	p2dir := filepath.Join(dir, "default-realms-n00003-r1")
	os.MkdirAll(p2dir, 0o755)
	man, _ := os.ReadFile(filepath.Join(p1, "manifest.json"))
	os.WriteFile(filepath.Join(p2dir, "manifest.json"), man, 0o644)
	failed, _ := json.Marshal(results.Summary{Schema: results.Schema, Status: results.StatusFailed, Reason: "kc.sh start failed: Unknown option"})
	os.WriteFile(filepath.Join(p2dir, "summary.json"), failed, 0o644)
	if p, err := results.ReadPoint(p2dir); err != nil || p.Summary.Status != results.StatusFailed {
		t.Fatalf("the made-up failed point reads %+v, %v", p, err)
	}
	r2, _ := runner(t, yml, dir)
	out, err = r2.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Skipped) != 1 || len(out.Done) != 1 || out.Done[0] != "default-realms-n00003-r1" {
		t.Fatalf("resume: %+v", out)
	}
	pts, err := results.ReadExperiment(dir)
	if err != nil || len(pts) != 2 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	p2 := pts[1].Summary
	if p2.Seed == nil || p2.Seed.Tenants != 3 || p2.Boot == nil || p2.Boot.Seconds <= 0 || p2.Boot.RSSBytes <= 0 {
		t.Fatalf("point 2 seed/boot: %+v %+v", p2.Seed, p2.Boot)
	}
	// A full GC at ready (jcmd GC.run): the heap live is some MiB, less
	// than the process's RSS.
	if h := p2.Boot.HeapAfterGCBytes; h < 10<<20 || h >= p2.Boot.RSSBytes {
		t.Errorf("point 2: heap after GC at ready %d, RSS %d (unobserved: %v)", h, p2.Boot.RSSBytes, p2.Unobserved)
	}
	for i, p := range pts {
		sd := p.Summary.Seed
		if sd == nil || sd.AdminAPISample == nil || sd.AdminAPISample.Tenants != 1 || sd.AdminAPISample.Seconds <= 0 ||
			sd.AdminAPISample.Seconds > sd.Seconds || sd.Added < 1 {
			t.Errorf("point %d: seed %+v, sample %+v: want 1 tenant through the admin API, timed, within the seed time", i+1, sd, sd.AdminAPISample)
		}
	}
	if sd := p2.Seed; sd != nil && sd.Added < 2 {
		t.Errorf("point 2 added %d tenants, want the clone's and the sample's", sd.Added)
	}
	for i, p := range pts {
		ss := p.Summary.Seed.Sessions
		// point 2 on point 1's database: 6 of each more (tenants 2 and 3),
		// tenant 1's online ones ended and written again (3), 6 offline
		// ones deleted; on a fresh one all 9
		if ss == nil || ss.Online != 9 || ss.Offline != 9 || p.Summary.Params["sessions"] != "9" || p.Summary.Params["offline_sessions"] != "9" ||
			i == 0 && (ss.WrittenOnline != 9 || ss.WrittenOffline != 9) ||
			i == 1 && (ss.WrittenOnline != 9 || (ss.WrittenOffline != 6 && ss.WrittenOffline != 9)) {
			t.Errorf("point %d: sessions %+v, params %v", i+1, ss, p.Summary.Params)
		}
	}
	for _, w := range p2.Workloads {
		it, _ := w.Stats.Op("iteration")
		if it.OK == 0 || it.Errors > 0 || w.ServerCPUMsPerOp <= 0 {
			t.Errorf("workload %s: ok %d errors %d cpu %.2f", w.Name, it.OK, it.Errors, w.ServerCPUMsPerOp)
		}
		// Keycloak's memory over the workload, from observe.csv; a GC
		// pause's mean, when one fell in the window, is a pause's length;
		// one client of each of the 3 tenants in use
		if w.MaxRSSBytes < 100<<20 || w.MeanHeapBytes <= 0 || w.MeanHeapBytes > w.MaxRSSBytes || w.ClientsInUse != 3 ||
			w.GCPauses < 0 || (w.GCPauses > 0) != (w.GCPauseMeanMs > 0) || w.GCPauseMeanMs > 1000 {
			t.Errorf("workload %s: max RSS %d, mean heap %d, %.1f GC pauses of %.2f ms, %d clients in use",
				w.Name, w.MaxRSSBytes, w.MeanHeapBytes, w.GCPauses, w.GCPauseMeanMs, w.ClientsInUse)
		}
		if w.HeapAfterGCBytes < 10<<20 || w.HeapAfterGCBytes >= w.MaxRSSBytes {
			t.Errorf("workload %s: heap after GC %d, max RSS %d", w.Name, w.HeapAfterGCBytes, w.MaxRSSBytes)
		}
		t.Logf("workload %s: mean heap %d MiB, after GC %d MiB, %.1f GC pauses of %.2f ms", w.Name, w.MeanHeapBytes>>20, w.HeapAfterGCBytes>>20, w.GCPauses, w.GCPauseMeanMs)
	}
	if len(p2.Capacity) != 1 || !p2.Capacity[0].Found || p2.Capacity[0].MaxRate != 60 || p2.Capacity[0].CPUMsPerOp <= 0 {
		t.Errorf("capacity search at point 2: %+v", p2.Capacity)
	}
	for _, f := range []string{"capacity.json", "steps.csv"} {
		if _, err := os.Stat(filepath.Join(pts[1].Dir, "capacity-jwks-capacity", f)); err != nil {
			t.Error(err)
		}
	}
	// The report builds from the files alone.
	m, err := report.Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var capCharts int
	for _, c := range m.Charts() {
		if strings.HasPrefix(c.Name, "capacity-") {
			capCharts++
		}
	}
	if capCharts < 4 { // latency and rate per search, max rate and CPU side by side
		t.Errorf("%d capacity charts in the report", capCharts)
	}
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(html), "heap after GC at ready MiB") || !strings.Contains(string(html), "heap after GC MiB") {
		t.Error("the report shows no heap after GC")
	}
	// interactive charts: one element per chart the page draws
	if n := strings.Count(string(html), "data-chart="); n < capCharts {
		t.Errorf("the report has %d charts, want at least the %d capacity charts", n, capCharts)
	}
}

func TestWatchdogAbortsAndGoesOn(t *testing.T) {
	yml := strings.Replace(tiny, "modes: [realms]", "modes: [realms, orgs]", 1) + `
watchdog:
  max_rss: 1MiB
`
	dir := filepath.Join(t.TempDir(), "wd")
	r, _ := runner(t, yml, dir)
	out, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// realms n=1 aborts, realms n=2 is skipped, orgs n=1 still runs (and
	// aborts too), orgs n=2 is skipped.
	if len(out.Aborted) != 2 || len(out.Skipped) != 2 {
		t.Fatalf("outcome %+v", out)
	}
	p, err := results.ReadPoint(filepath.Join(dir, "default-realms-n00001-r1"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary.Status != results.StatusAborted || !strings.Contains(p.Summary.Reason, "RSS") {
		t.Errorf("summary %+v", p.Summary)
	}
	if _, err := os.Stat(filepath.Join(dir, "default-realms-n00002-r1")); !os.IsNotExist(err) {
		t.Error("a skipped point has a folder")
	}
	if _, err := results.ReadPoint(filepath.Join(dir, "default-orgs-n00001-r1")); err != nil {
		t.Errorf("the orgs point did not run: %v", err)
	}
}

// A point whose workload fails more than max_error_rate is aborted, and
// the snapshot of its dataset, saved before the workloads, brings the same
// dataset back in the next run on this machine (no seeding); a point past
// point_timeout is aborted with that reason.
func TestWatchdogErrorRateSnapshotRestoreTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	// TestWatchdogAbortsAndGoesOn has a watchdog; stack's tests restore snapshots.
	stacktest.Long(t)
	const base = `
name: snap
dataset:
  modes: [realms]
  tenants: [1]
  password_policy: pbkdf2-sha256:1
  snapshots: true
phases: [warm]
warmup: 1s
workloads:
  - name: token
    scenario: client-credentials
    vus: 1
    duration: 2s
`
	d, cleanup, err := stacktest.Dirs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	run := func(yml, name string) (experiment.Outcome, *results.Point) {
		t.Helper()
		f, err := experiment.Parse([]byte(yml))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), name)
		l := &logs{t: t}
		r := &experiment.Runner{File: f, Dir: dir, Dirs: d, StackName: name, Logf: l.logf}
		out, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p, err := results.ReadPoint(filepath.Join(dir, "default-realms-n00001-r1"))
		if err != nil {
			t.Fatal(err)
		}
		return out, p
	}

	// 1: a workload against a realm that does not exist fails every request.
	out, p := run(base+`  - name: missing-realm
    scenario: jwks
    realm: no-such-realm
    vus: 1
    duration: 2s
watchdog:
  max_error_rate: 50%
`, "errors")
	if len(out.Aborted) != 1 || p.Summary.Status != results.StatusAborted || !strings.Contains(p.Summary.Reason, "missing-realm: error rate 100.0% above 50%") {
		t.Fatalf("error-rate watchdog: outcome %+v, summary %s %q", out, p.Summary.Status, p.Summary.Reason)
	}

	// 2: the same dataset comes back from the snapshot the first run saved,
	// with the seed figures of the run that made it (its manifest's record).
	out, p = run(base, "restore")
	s := p.Summary
	if len(out.Done) != 1 || s.Seed == nil || s.Seed.Restored == "" || s.Seed.RestoreSeconds <= 0 ||
		!s.Seed.Recorded || s.Seed.Added != 1 || s.Seed.Seconds <= 0 || s.Seed.Strategy != "clone" {
		t.Fatalf("restore: outcome %+v, seed %+v", out, s.Seed)
	}
	if w := s.Workload("token", "warm"); w == nil {
		t.Error("no token workload after the restore")
	} else if it, _ := w.Stats.Op(results.IterationOp); it.OK == 0 || it.Errors > 0 {
		t.Errorf("token on the restored dataset: ok %d, errors %d", it.OK, it.Errors)
	}

	// 3: a point that cannot finish in time (a stack does not start in 1 s).
	out, p = run(base+"watchdog:\n  point_timeout: 1s\n", "timeout")
	if len(out.Aborted) != 1 || p.Summary.Status != results.StatusAborted || !strings.Contains(p.Summary.Reason, "point time limit 1s reached") {
		t.Fatalf("point timeout: outcome %+v, summary %s %q", out, p.Summary.Status, p.Summary.Reason)
	}
}
