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
		st, err := results.ReadStats(dirs[i])
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
	st, err := results.ReadStats(merged)
	if err != nil {
		t.Fatal(err)
	}
	if st.Iterations != sum || st.Iterations != hits.Load() {
		t.Errorf("merged %d iterations; agents %d; the server saw %d", st.Iterations, sum, hits.Load())
	}
	ref, err := results.ReadStats(single)
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
	var logs strings.Builder
	for i, r := range runs {
		for _, l := range strings.SplitAfter(r.output, "\n") {
			if l != "" {
				fmt.Fprintf(&logs, "[pod/kcbench-%d-x/kcbench] %s", i, l)
			}
		}
	}
	logFile := filepath.Join(root, "pods.log")
	if err := os.WriteFile(logFile, []byte(logs.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	coll := filepath.Join(root, "collected")
	if r := runBinary(t, nil, "k8s", "collect", "--out", coll, logFile); r.code != 0 {
		t.Fatalf("k8s collect: exit %d\n%s", r.code, r.output)
	}
	cst, err := results.ReadStats(filepath.Join(coll, "merged"))
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

// splitUsersDisjoint runs the two agents of a split password-grant load
// one after the other against the stack's seeded dataset and asks
// Keycloak which users have sessions after each: the two sets must be
// disjoint (each agent logs in only its own slice of the users).
func splitUsersDisjoint(t *testing.T, c *cli, s *stack.Stack) {
	ctx := t.Context()
	tg := s.Target()
	adm := kc.NewAdmin(kc.New(tg.BaseURL, nil), tg.Admin)
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
	withSessions := func() map[string]bool {
		set := map[string]bool{}
		for _, r := range realms {
			us, err := adm.Users(ctx, r, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range us {
				var ss []struct {
					ID string `json:"id"`
				}
				if err := adm.Do(ctx, http.MethodGet, kc.RealmPath(r, "users", u.ID, "sessions"), nil, &ss); err != nil {
					t.Fatal(err)
				}
				if len(ss) > 0 {
					set[r+"/"+u.Username] = true
				}
			}
		}
		return set
	}
	logoutAll()
	var sets [2]map[string]bool
	for i := range 2 {
		c.mustRun("load", "--scenario", "password-grant", "--vus", "2", "--duration", "3s", "--segment", fmt.Sprintf("%d/2", i), "--quiet")
		sets[i] = withSessions()
		logoutAll()
	}
	if len(sets[0]) == 0 || len(sets[1]) == 0 {
		t.Fatalf("users with sessions: agent 0 %d, agent 1 %d; want some for each", len(sets[0]), len(sets[1]))
	}
	for u := range sets[0] {
		if sets[1][u] {
			t.Errorf("user %s logged in by both agents", u)
		}
	}
	t.Logf("split password-grant against Keycloak: agent 0 logged in %d users, agent 1 %d, none in common", len(sets[0]), len(sets[1]))
}
