//go:build integration

package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

// agentRun is one kcbench process's outcome.
type agentRun struct {
	code   int
	output string
	cpu    time.Duration // user + system CPU of the process
}

func runBinary(t *testing.T, env []string, args ...string) agentRun {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append(os.Environ(), "LANG=C"), env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	r := agentRun{output: b.String()}
	if cmd.ProcessState != nil {
		r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		r.code = cmd.ProcessState.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSplitLoadMerge: three agent processes (--segment 0/3, 1/3, and the
// Indexed Job's --segments 3 with JOB_COMPLETION_INDEX=2) share a rate
// against a local server and start together (--start-at); kcbench merge
// joins their folders into one whose counts are the agents' sums and the
// requests the server saw, whose rate is that of one process run at the
// full rate, and which report, compare and gate read.
func TestSplitLoadMerge(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/realms/r/protocol/openid-connect/certs" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		io.WriteString(w, `{"keys":[{"kid":"k","kty":"RSA"}]}`)
	}))
	defer srv.Close()
	const rate, dur = 300, 4 * time.Second
	root := t.TempDir()
	common := []string{"load", "--target", srv.URL, "--realm", "r", "--scenario", "jwks", "--executor", "constant-arrival-rate",
		"--rate", fmt.Sprint(rate), "--vus", "6", "--max-vus", "150", "--duration", dur.String(), "--quiet"}

	// One process at the full rate, for comparison.
	single := filepath.Join(root, "single")
	one := runBinary(t, nil, append(common, "--out", single)...)
	if one.code != 0 {
		t.Fatalf("single run: exit %d\n%s", one.code, one.output)
	}
	hits.Store(0)

	at := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	var dirs []string
	runs := make([]agentRun, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		dir := filepath.Join(root, fmt.Sprintf("agent-%d", i))
		dirs = append(dirs, dir)
		args := append(append([]string{}, common...), "--out", dir, "--start-at", at, "--emit-results")
		var env []string
		if i == 2 {
			args = append(args, "--segments", "3")
			env = []string{load.JobIndexEnv + "=2"}
		} else {
			args = append(args, "--segment", fmt.Sprintf("%d/3", i))
		}
		wg.Go(func() { runs[i] = runBinary(t, env, args...) })
	}
	wg.Wait()
	var sum int64
	var agentsCPU time.Duration
	starts := map[time.Time]bool{}
	for i, r := range runs {
		if r.code != 0 {
			t.Fatalf("agent %d: exit %d\n%s", i, r.code, r.output)
		}
		st, err := readStats(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		sum += st.Iterations
		agentsCPU += r.cpu
		starts[st.Start] = true
		if !strings.Contains(r.output, fmt.Sprintf("agent %d/3: jwks, constant-arrival-rate 100/s", i)) {
			t.Errorf("agent %d does not say its share:\n%s", i, r.output)
		}
		b, _ := os.ReadFile(filepath.Join(dirs[i], results.SummaryFile))
		if !bytes.Contains(b, []byte(fmt.Sprintf(`"segment": "%d/3"`, i))) || !bytes.Contains(b, []byte(`"agent_pid"`)) {
			t.Errorf("agent %d's summary lacks its identity", i)
		}
	}
	for s := range starts {
		if want, _ := time.Parse(time.RFC3339Nano, at); !s.Equal(want) {
			t.Errorf("an agent started at %v, not at --start-at %v", s, want)
		}
	}

	merged := filepath.Join(root, "merged")
	m := runBinary(t, nil, append([]string{"merge"}, append(dirs, "--out", merged)...)...)
	if m.code != 0 {
		t.Fatalf("merge: exit %d\n%s", m.code, m.output)
	}
	st, err := readStats(merged)
	if err != nil {
		t.Fatal(err)
	}
	// the server saw each agent's setup check too: one iteration each,
	// before the clock
	if st.Iterations != sum || st.Iterations+int64(len(dirs)) != hits.Load() {
		t.Errorf("merged %d iterations; agents %d; the server saw %d (%d setup checks among them)", st.Iterations, sum, hits.Load(), len(dirs))
	}
	ref, err := readStats(single)
	if err != nil {
		t.Fatal(err)
	}
	mi, _ := st.Op(results.IterationOp)
	ri, _ := ref.Op(results.IterationOp)
	// The agents make every third arrival of the whole schedule: together,
	// exactly the arrivals of one process.
	if st.Iterations+st.Dropped != ref.Iterations+ref.Dropped {
		t.Errorf("merged arrivals %d+%d dropped; one process %d+%d", st.Iterations, st.Dropped, ref.Iterations, ref.Dropped)
	}
	if d := mi.Rate/ri.Rate - 1; d > 0.05 || d < -0.05 {
		t.Errorf("merged rate %.1f/s, one process at the full rate %.1f/s", mi.Rate, ri.Rate)
	}
	t.Logf("load generator CPU per request: one process %.1f µs (%d requests), 3 agents %.1f µs (%d requests)",
		float64(one.cpu.Microseconds())/float64(ri.Count), ri.Count, float64(agentsCPU.Microseconds())/float64(mi.Count), mi.Count)

	// The agents' outputs, as kubectl logs --prefix prints the pods',
	// give back the same merged result through k8s collect.
	var outs []string
	for _, r := range runs {
		outs = append(outs, r.output)
	}
	logFile := writePodsLog(t, root, outs)
	coll := filepath.Join(root, "collected")
	if r := runBinary(t, nil, "k8s", "collect", "--out", coll, logFile); r.code != 0 {
		t.Fatalf("k8s collect: exit %d\n%s", r.code, r.output)
	}
	cst, err := readStats(filepath.Join(coll, "merged"))
	if err != nil {
		t.Fatal(err)
	}
	if ci, _ := cst.Op(results.IterationOp); ci.Count != mi.Count || ci.Latency != mi.Latency {
		t.Errorf("collected: %+v; merged: %+v", ci, mi)
	}

	// The merged folder reads as a single run's folder does: gate takes
	// it; report and size --from answer as they do for a single run's.
	if r := runBinary(t, nil, "gate", "--baseline", single, "--current", merged, "--max-regression", "1000%", "--min-latency-delta", "1s"); r.code != 0 {
		t.Errorf("gate: exit %d\n%s", r.code, r.output)
	}
	for _, cmd := range [][]string{{"report"}, {"size", "--from"}} {
		a := runBinary(t, nil, append(cmd, single)...)
		b := runBinary(t, nil, append(cmd, merged)...)
		if a.code != b.code || (cmd[0] == "report" && a.code != 0) {
			t.Errorf("%v: exit %d for one run's folder, %d for the merged one\n%s\n%s", cmd, a.code, b.code, a.output, b.output)
		}
	}

	// Bad input: clear errors, exit 2, nothing written.
	for _, bad := range [][]string{
		{"--segment", "3/3"}, {"--segment", "1/0"}, {"--start-at", "2020-01-01T00:00:00Z"},
	} {
		out := filepath.Join(root, "bad")
		r := runBinary(t, nil, append(append(append([]string{}, common...), "--out", out), bad...)...)
		if r.code != exitUsage || strings.Count(strings.TrimSpace(r.output), "\n") > 0 {
			t.Errorf("%v: exit %d, want %d and one line:\n%s", bad, r.code, exitUsage, r.output)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", bad, out)
		}
	}
	if r := runBinary(t, nil, "merge", dirs[0], dirs[0], "--out", filepath.Join(root, "twice")); r.code == 0 || !strings.Contains(r.output, "count twice") {
		t.Errorf("merging one segment twice: exit %d\n%s", r.code, r.output)
	}
}

// splitAgents is the test against the local Keycloak: three
// agent processes (--segment 0/3 … 2/3, a common --start-at), each
// connecting from its own loopback address (--source-ip 127.0.0.2…4), run
// a password-grant load split over them; kcbench merge joins their
// folders. The merged counts are the agents' sums; its p50 and p99 are
// those of the agents' HDR logs added here, read with hdrhistogram-go's
// own reader; its rate is that of one process at the full rate within
// noise. What Keycloak saw proves the users disjoint: its sessions, by the
// address they were opened from, fall to the three agents, no user has
// sessions from two of them, and each agent's sessions are its successful
// grants.
func splitAgents(t *testing.T, c *cli, s *stack.Stack) {
	ctx := t.Context()
	tg := s.Target()
	adm := kc.NewAdmin(kc.NewFor(tg), tg.Admin)
	m, err := dataset.ReadManifest(s.DatasetManifest())
	if err != nil {
		t.Fatal(err)
	}
	var realms []string
	for i := 1; i <= m.Tenants(); i++ {
		if r := m.Tenant(i).Realm; !slices.Contains(realms, r) {
			realms = append(realms, r)
		}
	}
	logoutAll := func() {
		for _, r := range realms {
			if err := adm.Do(ctx, http.MethodPost, kc.RealmPath(r, "logout-all"), nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// sessions returns, per address Keycloak saw a session opened from,
	// the users with sessions from there and the number of sessions.
	sessions := func() (map[string]map[string]bool, map[string]int64) {
		users, n := map[string]map[string]bool{}, map[string]int64{}
		for _, r := range realms {
			us, err := adm.Users(ctx, r, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range us {
				var ss []struct {
					IPAddress string `json:"ipAddress"`
				}
				if err := adm.Do(ctx, http.MethodGet, kc.RealmPath(r, "users", u.ID, "sessions"), nil, &ss); err != nil {
					t.Fatal(err)
				}
				for _, x := range ss {
					if users[x.IPAddress] == nil {
						users[x.IPAddress] = map[string]bool{}
					}
					users[x.IPAddress][r+"/"+u.Username] = true
					n[x.IPAddress]++
				}
			}
		}
		return users, n
	}

	root := t.TempDir()
	common := []string{"load", "--scenario", "password-grant", "--executor", "constant-arrival-rate", "--rate", "30",
		"--vus", "4", "--max-vus", "30", "--duration", "3s", "--quiet"}
	single := filepath.Join(root, "single")
	c.mustRun(append(common, "--out", single)...)
	logoutAll()

	at := time.Now().Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	var dirs, ips []string
	runs := make([]agentRun, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		dirs = append(dirs, filepath.Join(root, fmt.Sprintf("agent-%d", i)))
		ips = append(ips, fmt.Sprintf("127.0.0.%d", i+2))
		args := c.args(append(common, "--out", dirs[i], "--segment", fmt.Sprintf("%d/3", i), "--start-at", at, "--source-ip", ips[i])...)
		wg.Go(func() { runs[i] = runBinary(t, nil, args...) })
	}
	wg.Wait()
	users, nSessions := sessions()
	logoutAll()

	var sum results.OpStats
	var iterations, dropped int64
	var hists []*hdr.Histogram
	for i, r := range runs {
		if r.code != 0 {
			t.Fatalf("agent %d: exit %d\n%s", i, r.code, r.output)
		}
		st, err := readStats(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := time.Parse(time.RFC3339Nano, at); !st.Start.Equal(want) {
			t.Errorf("agent %d started at %v, not at --start-at %v", i, st.Start, want)
		}
		op, _ := st.Op(results.OpPasswordGrant)
		iterations += st.Iterations
		dropped += st.Dropped
		sum.Count += op.Count
		sum.OK += op.OK
		sum.Errors += op.Errors
		// Keycloak opened one session per successful grant, from the
		// agent's address (a grant that timed out here may have
		// succeeded there), and one for the setup check's grant.
		if n := nSessions[ips[i]]; op.OK == 0 || n < op.OK+1 || n > op.Count+1 {
			t.Errorf("agent %d (%s): %d grants, %d ok; Keycloak has %d sessions from %s", i, ips[i], op.Count, op.OK, n, ips[i])
		}
		h := readHlog(t, filepath.Join(dirs[i], results.OpPasswordGrant+".hlog"))
		if h.TotalCount() != op.Count {
			t.Errorf("agent %d: %d grants in its HDR log, %d in its summary", i, h.TotalCount(), op.Count)
		}
		hists = append(hists, h)
	}
	for ip := range users {
		if !slices.Contains(ips, ip) {
			t.Errorf("Keycloak has %d sessions from %s, no agent's address", nSessions[ip], ip)
		}
	}
	for i := range ips {
		for j := i + 1; j < len(ips); j++ {
			for u := range users[ips[i]] {
				if users[ips[j]][u] {
					t.Errorf("user %s has sessions from agent %d (%s) and agent %d (%s)", u, i, ips[i], j, ips[j])
				}
			}
		}
	}

	merged := filepath.Join(root, "merged")
	if r := runBinary(t, nil, append([]string{"merge"}, append(dirs, "--out", merged)...)...); r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.output)
	}
	st, err := readStats(merged)
	if err != nil {
		t.Fatal(err)
	}
	mo, _ := st.Op(results.OpPasswordGrant)
	if st.Iterations != iterations || st.Dropped != dropped || mo.Count != sum.Count || mo.OK != sum.OK || mo.Errors != sum.Errors {
		t.Errorf("merged: %d iterations, %d dropped, grants %d/%d ok/%d errors; the agents' sums: %d, %d, %d/%d/%d",
			st.Iterations, st.Dropped, mo.Count, mo.OK, mo.Errors, iterations, dropped, sum.Count, sum.OK, sum.Errors)
	}
	all := hists[0]
	for _, h := range hists[1:] {
		if n := all.Merge(h); n != 0 {
			t.Fatalf("adding the agents' histograms dropped %d values", n)
		}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	if p50, p99 := us(all.ValueAtQuantile(50)), us(all.ValueAtQuantile(99)); mo.Latency.P50 != p50 || mo.Latency.P99 != p99 {
		t.Errorf("merged p50 %v, p99 %v; the agents' histograms added: p50 %v, p99 %v", mo.Latency.P50, mo.Latency.P99, p50, p99)
	}
	ref, err := readStats(single)
	if err != nil {
		t.Fatal(err)
	}
	ro, _ := ref.Op(results.OpPasswordGrant)
	if d := mo.Rate/ro.Rate - 1; d > 0.1 || d < -0.1 {
		t.Errorf("merged rate %.1f/s, one process at the full rate %.1f/s", mo.Rate, ro.Rate)
	}
	t.Logf("split password-grant against Keycloak: %d grants at %.1f/s merged (one process %.1f/s), p50 %v p99 %v; sessions by address %v; users %d, %d, %d, none in common",
		mo.Count, mo.Rate, ro.Rate, mo.Latency.P50, mo.Latency.P99, nSessions, len(users[ips[0]]), len(users[ips[1]]), len(users[ips[2]]))
}

// readHlog adds up the intervals of an HDR log with hdrhistogram-go's
// own reader (not kcbench's).
func readHlog(t *testing.T, path string) *hdr.Histogram {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdr.NewHistogramLogReader(f)
	var sum *hdr.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h == nil {
			break
		}
		if sum == nil {
			sum = hdr.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		if n := sum.Merge(h); n != 0 {
			t.Fatalf("%s: %d values out of range", path, n)
		}
	}
	if sum == nil {
		t.Fatalf("%s: no intervals", path)
	}
	return sum
}
