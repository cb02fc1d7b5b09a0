//go:build integration

package stack_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/observe"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// TestCluster forms one 2-node cluster behind HAProxy and checks what a
// cluster must do; it is the package's only cluster, so every cluster
// check is a subtest of it.
func TestCluster(t *testing.T) {
	shared.Get(t)
	ctx := ctxT(t, 15*time.Minute)
	cfg := stacktest.Config(shared.Dirs, "cluster")
	// Each node gets a quota of one core, as in "2 nodes × 1 core".
	cfg.Topology = stack.Topology{Nodes: 2, NodeCPUs: 1}
	// KCBENCH_TEST_NODE_NODE=5ms runs it all with node-node latency (the
	// delay proxies in front of JGroups; not in make test, for time).
	if v := os.Getenv("KCBENCH_TEST_NODE_NODE"); v != "" {
		d, err := stack.ParseDelay(v)
		if err != nil {
			t.Fatalf("KCBENCH_TEST_NODE_NODE: %v", err)
		}
		cfg.Topology.Latency.NodeNode = d
	}
	start := time.Now()
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2-node cluster up in %s", time.Since(start).Round(time.Second))
	downed := false
	t.Cleanup(func() {
		if !downed {
			s.Down(context.Background())
		}
	})
	tg := s.Target()
	st := s.State()
	newConnPerToken(tg)
	if !strings.HasPrefix(tg.BaseURL, "https://") || tg.CAFile == "" || st.LB == nil || !st.Nodes[0].TLS {
		t.Fatalf("target %s (CA %q): want the balancer over TLS, passthrough to nodes that serve HTTPS", tg.BaseURL, tg.CAFile)
	}

	t.Run("nodes see each other", func(t *testing.T) {
		status := s.Status(ctx)
		if !status.Ready || len(status.Nodes) != 2 {
			t.Fatalf("status: ready %v, %d nodes", status.Ready, len(status.Nodes))
		}
		for _, n := range status.Nodes {
			if n.View != 2 || !n.Ready || !n.Process.Alive {
				t.Errorf("node %d: view %d, ready %v, alive %v", n.Index, n.View, n.Ready, n.Process.Alive)
			}
		}
		if len(tg.ServerPIDs()) != 2 || tg.ServerPIDs()[0] == tg.ServerPIDs()[1] {
			t.Errorf("target pids %v, want both nodes' JVMs", tg.ServerPIDs())
		}
		if st.Nodes[0].Host == st.Nodes[1].Host {
			t.Errorf("both nodes on %s", st.Nodes[0].Host)
		}
		// What an external target's pods say of the cluster (the warning when
		// --management-url names fewer pods than it has).
		pods, err := observe.ReadPods(ctx, tg.HTTPClient(observe.DefaultScrapeTimeout), []string{st.Nodes[0].MgmtURL(), st.Nodes[1].MgmtURL()})
		if err != nil || pods[0].ClusterSize != 2 || pods[1].ClusterSize != 2 || pods[0].Node == pods[1].Node || pods[0].Node == "" {
			t.Errorf("pods' metrics: %+v, %v: want a cluster of 2 seen from two named nodes", pods, err)
		} else if w := observe.PodsWarning(pods[:1]); !strings.Contains(w, "cluster has 2 nodes") || observe.PodsWarning(pods) != "" {
			t.Errorf("one of two pods: warning %q; both: %q", w, observe.PodsWarning(pods))
		}
		b := st.LastBoot
		if b == nil || len(b.Nodes) != 2 || b.Nodes[0].View <= 0 || b.Nodes[1].View <= 0 {
			t.Errorf("boot %+v: want each node's time to the full view", b)
		}
	})

	pw, err := readSecret(s, "admin-password")
	if err != nil {
		t.Fatal(err)
	}
	lb, _ := url.Parse(tg.BaseURL)
	if !strings.HasPrefix(lb.Host, "127.0.0.1:") || lb.Port() == fmt.Sprint(st.Nodes[0].HTTPPort) {
		t.Fatalf("target %s is not the balancer", tg.BaseURL)
	}

	t.Run("each node under its CPU limit", func(t *testing.T) {
		status := s.Status(ctx)
		for _, n := range status.Nodes {
			l := n.CPULimit
			if l == nil || l.CPUs != 1 {
				t.Fatalf("node %d: cpu limit %+v", n.Index, l)
			}
			switch l.Method {
			case stack.CPULimitV1, stack.CPULimitV2:
				// The JVM (kc.sh's child) is inside the node's group.
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", n.Process.PID))
				if err != nil {
					t.Fatal(err)
				}
				want := strings.TrimPrefix(l.Group, "/sys/fs/cgroup")
				want = strings.TrimPrefix(strings.TrimPrefix(want, "/cpu"), "/unified")
				if !strings.Contains(string(b), want) {
					t.Errorf("node %d: JVM's cgroups %q lack %s", n.Index, b, want)
				}
				if n.Throttling == nil || n.Throttling.Periods == 0 {
					t.Errorf("node %d: no cpu.stat periods: %+v", n.Index, n.Throttling)
				}
			case stack.CPULimitAffinity:
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", n.Process.PID))
				if !strings.Contains(string(b), "Cpus_allowed_list:\t"+l.CPUList) {
					t.Errorf("node %d: JVM not pinned to %s:\n%s", n.Index, l.CPUList, b)
				}
			default:
				t.Errorf("node %d: method %q", n.Index, l.Method)
			}
			t.Logf("node %d: %s, throttling %+v", n.Index, l.Method, n.Throttling)
		}
	})

	t.Run("password grants through the balancer reach both nodes", func(t *testing.T) {
		before, err := s.BalancerStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			tok, err := token(ctx, tg.BaseURL, "", url.Values{"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {stack.AdminUser}, "password": {pw}})
			if err != nil {
				t.Fatalf("grant %d: %v", i, err)
			}
			// TLS passes through the balancer: the nodes see its host.
			if iss := issuer(t, tok.AccessToken); iss != tg.BaseURL+"/realms/master" {
				t.Errorf("grant %d: issuer %q, want the balancer's https URL", i, iss)
			}
		}
		after, err := s.BalancerStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != 2 {
			t.Fatalf("balancer stats %+v, want 2 nodes", after)
		}
		for i, a := range after {
			if !strings.HasPrefix(a.Status, "UP") {
				t.Errorf("%s: %s", a.Node, a.Status)
			}
			if d := a.Requests - before[i].Requests; d < 2 {
				t.Errorf("%s served %d of 6 grants; round-robin should give each about half", a.Node, d)
			}
		}
	})

	t.Run("login on one node, refresh on the other", func(t *testing.T) {
		// The balancer's Host on both, as it would pass them: the issuer
		// follows the request's host.
		tok, err := token(ctx, st.Nodes[0].URL(), lb.Host, url.Values{"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {stack.AdminUser}, "password": {pw}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := token(ctx, st.Nodes[1].URL(), lb.Host, url.Values{"grant_type": {"refresh_token"}, "client_id": {"admin-cli"}, "refresh_token": {tok.RefreshToken}}); err != nil {
			t.Fatalf("refresh on node 2 of a session from node 1: %v", err)
		}
	})

	t.Run("restart one node", func(t *testing.T) {
		stacktest.Long(t)
		old := st.Nodes[1].Proc
		br, err := s.RestartNode(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(br.Nodes) != 1 || br.Nodes[0].Node != 2 {
			t.Errorf("boot %+v, want node 2's", br)
		}
		status := s.Status(ctx)
		if !status.Ready || status.Nodes[1].Process.PID == old.JVM.PID {
			t.Errorf("after restart: ready %v, node 2 pid %d (was %d)", status.Ready, status.Nodes[1].Process.PID, old.JVM.PID)
		}
		for _, n := range status.Nodes {
			if n.View != 2 {
				t.Errorf("node %d: view %d after node 2's restart", n.Index, n.View)
			}
		}
	})

	t.Run("restart the whole cluster", func(t *testing.T) {
		stacktest.Long(t)
		// From nothing, node 1 first: nodes started at one instant may
		// each stay a cluster of one.
		if _, err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		ns := s.State().Nodes
		if ns[1].Proc.StartedAt.Before(ns[0].Proc.ReadyAt) {
			t.Errorf("node 2 started at %v, before node 1 was ready at %v", ns[1].Proc.StartedAt, ns[0].Proc.ReadyAt)
		}
		for _, n := range s.Status(ctx).Nodes {
			if n.View != 2 || !n.Ready {
				t.Errorf("node %d: view %d, ready %v after the cluster's restart", n.Index, n.View, n.Ready)
			}
		}
	})

	t.Run("kill node 2 under load, start it again", func(t *testing.T) {
		// A token issued on node 2 before the kill must refresh on node 1
		// after it (Keycloak 26 keeps user sessions in the database).
		tok, err := token(ctx, st.Nodes[1].URL(), lb.Host, url.Values{"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {stack.AdminUser}, "password": {pw}})
		if err != nil {
			t.Fatal(err)
		}
		secret, err := readSecret(s, "admin-client-secret")
		if err != nil {
			t.Fatal(err)
		}
		// Kept-alive connections, as most clients of a cluster hold them:
		// the recovery after the kill is what is measured here.
		cfg := scenario.Config{Scenario: results.ScenarioClientCredentials, Executor: "constant-arrival-rate", Rate: 5, VUs: 4, MaxVUs: 50,
			Duration: 55 * time.Second, Realm: "master", ClientID: stack.AdminClientID, ClientSecret: secret, ConnPolicy: results.ConnReuse}
		cfg.ApplyDefaults()
		fault := func(spec string) load.Event {
			f, err := stack.ParseFault(spec)
			if err != nil {
				t.Fatal(err)
			}
			return load.Event{At: f.At, Action: f.Action, Args: f.Args(), Do: func(ctx context.Context) error { return s.ApplyFault(ctx, f) }}
		}
		if err := stack.CheckFaults([]stack.Fault{{At: 5 * time.Second, Action: stack.FaultKill, Node: 2}, {At: 20 * time.Second, Action: stack.FaultStart, Node: 2}}, s.State().Topology, cfg.Total()); err != nil {
			t.Fatal(err)
		}
		events := []load.Event{fault("5s kill node=2"), fault("20s start node=2")}
		// Between the kill and the start: node 2 is gone, node 1 alone
		// refreshes the token node 2 issued.
		refreshed := make(chan error, 1)
		time.AfterFunc(12*time.Second, func() {
			if s.Status(ctx).Nodes[1].Process.Alive {
				refreshed <- errors.New("node 2 is still alive 12 s into the run")
				return
			}
			_, err := token(ctx, st.Nodes[0].URL(), lb.Host, url.Values{"grant_type": {"refresh_token"}, "client_id": {"admin-cli"}, "refresh_token": {tok.RefreshToken}})
			refreshed <- err
		})
		res, err := scenario.Run(ctx, scenario.RunInput{Target: tg, Config: cfg, Alive: s.Watch().Check, Events: events, RecoverySLO: time.Second, RequireSuccess: true})
		if err != nil || res == nil {
			t.Fatalf("the run did not survive the kill: %v", err)
		}
		var text strings.Builder
		load.WriteSummary(&text, res.Stats)
		t.Logf("%s", text.String())
		if res.Stats.Aborted || res.Stats.EndReason != "" {
			t.Errorf("aborted %v, end reason %q", res.Stats.Aborted, res.Stats.EndReason)
		}
		ev := res.Stats.Events
		if len(ev) != 2 {
			t.Fatalf("events %+v", ev)
		}
		for _, e := range ev {
			if e.Err != "" {
				t.Errorf("%s %s: %s", e.Action, e.Args, e.Err)
			}
		}
		if err := <-refreshed; err != nil {
			t.Errorf("refresh on node 1 of a token issued on node 2, after node 2 was killed: %v", err)
			keepLogs(t, s)
		}
		kill := ev[0].Recovery
		it, _ := res.Stats.Op(results.IterationOp)
		if kill == nil || it.OK == 0 {
			t.Fatalf("kill: recovery %+v, iterations %+v", kill, it)
		}
		// Until HAProxy's checks take node 2 out (fall 2 × inter 1 s), about
		// half the requests go to it: errors are bounded by the rate over
		// a few seconds, far from all of them.
		if kill.Errors > 5*10 || it.Errors > it.Count/4 {
			t.Errorf("errors after the kill: %d in the window, %d of %d overall", kill.Errors, it.Errors, it.Count)
		}
		if !kill.Recovered {
			t.Errorf("the p99 did not come back under %s within the %s before node 2's start: %+v", kill.SLO, kill.Window, kill)
		}
		if ev[1].Took <= 0 || !s.Status(ctx).Ready {
			t.Errorf("node 2 back: took %s, ready %v", ev[1].Took, s.Status(ctx).Ready)
		}
		// Node 2 receives traffic again through the balancer.
		before, err := s.BalancerStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			if _, err := token(ctx, tg.BaseURL, "", url.Values{"grant_type": {"client_credentials"}, "client_id": {stack.AdminClientID}, "client_secret": {secret}}); err != nil {
				t.Fatal(err)
			}
		}
		after, err := s.BalancerStats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != 2 || after[1].Requests <= before[1].Requests {
			t.Errorf("node 2 after its start: %+v → %+v", before, after)
		}
	})

	t.Run("add a node behind the balancer, remove it", func(t *testing.T) {
		stacktest.Long(t)
		oldLB := s.State().LB.Proc // the balancer's process before the reloads
		if err := s.ApplyFault(ctx, stack.Fault{Action: stack.FaultAddNode}); err != nil {
			t.Fatal(err)
		}
		status := s.Status(ctx)
		if len(status.Nodes) != 3 || !status.Ready {
			t.Fatalf("after add-node: %d nodes, ready %v", len(status.Nodes), status.Ready)
		}
		for _, n := range status.Nodes {
			if n.View != 3 {
				t.Errorf("node %d: view %d, want 3", n.Index, n.View)
			}
		}
		secret, err := readSecret(s, "admin-client-secret")
		if err != nil {
			t.Fatal(err)
		}
		for range 6 {
			if _, err := token(ctx, tg.BaseURL, "", url.Values{"grant_type": {"client_credentials"}, "client_id": {stack.AdminClientID}, "client_secret": {secret}}); err != nil {
				t.Fatal(err)
			}
		}
		lbs, err := s.BalancerStats(ctx)
		if err != nil || len(lbs) != 3 || lbs[2].Requests == 0 {
			t.Fatalf("balancer after add-node (reloaded): %+v, %v", lbs, err)
		}
		t.Logf("add-node: balancer %+v", lbs)
		if err := s.ApplyFault(ctx, stack.Fault{Action: stack.FaultRemoveNode}); err != nil {
			t.Fatal(err)
		}
		if status := s.Status(ctx); len(status.Nodes) != 2 || !status.Ready {
			t.Fatalf("after remove-node: %d nodes, ready %v", len(status.Nodes), status.Ready)
		}
		if lbs, err := s.BalancerStats(ctx); err != nil || len(lbs) != 2 {
			t.Fatalf("balancer after remove-node: %+v, %v", lbs, err)
		}
		// The haproxy processes replaced by the reloads finish and exit.
		deadline := time.Now().Add(40 * time.Second)
		for oldLB.Alive() && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		if oldLB.Alive() {
			t.Errorf("the haproxy replaced by the reload (pid %d) is still alive", oldLB.PID)
		}
	})

	t.Run("down leaves nothing", func(t *testing.T) {
		procs := s.Procs()
		if len(procs) < 5 { // haproxy, 2 × (kc.sh + JVM), postmaster
			t.Fatalf("procs %+v: want haproxy, both nodes and postgres", procs)
		}
		downed = true
		if err := s.Down(ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range procs {
			if p.Alive() {
				t.Errorf("pid %d still alive after down", p.PID)
			}
		}
		assertNothingLeft(t, shared.Dirs, "cluster")
		for _, n := range st.Nodes {
			if n.CPU != nil && n.CPU.Group != "" {
				if _, err := os.Stat(n.CPU.Group); !os.IsNotExist(err) {
					t.Errorf("node %d's cgroup %s left behind (%v)", n.Index, n.CPU.Group, err)
				}
			}
		}
	})
}

// tokenClient is token's client: one that trusts the stack's CA.
var tokenClient *http.Client

// newConnPerToken makes token open a connection for every request: a
// balancer in TLS passthrough balances connections, not requests.
func newConnPerToken(tg kc.Target) {
	tokenClient = tg.HTTPClient(time.Minute)
	tokenClient.Transport.(*http.Transport).DisableKeepAlives = true
}

// keepAliveTokens makes token reuse one kept-alive connection.
func keepAliveTokens(tg kc.Target) {
	tokenClient = tg.HTTPClient(time.Minute)
	tokenClient.Transport.(*http.Transport).MaxIdleConnsPerHost = 1
}

// issuer is the iss claim of a JWT.
func issuer(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.Iss
}

type tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
}

// token posts a grant to base's master realm, with Host set when given.
func token(ctx context.Context, base, host string, form url.Values) (tokens, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/realms/master/protocol/openid-connect/token", strings.NewReader(form.Encode()))
	if err != nil {
		return tokens{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if host != "" {
		req.Host = host
	}
	resp, err := tokenClient.Do(req)
	if err != nil {
		return tokens{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return tokens{}, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	var tk tokens
	if err := json.Unmarshal(b, &tk); err != nil {
		return tk, err
	}
	if tk.AccessToken == "" {
		return tk, fmt.Errorf("no access token in %s", b)
	}
	return tk, nil
}

func readSecret(s *stack.Stack, name string) (string, error) {
	tg := s.Target()
	if name == "admin-password" {
		return tg.Admin.Password.Reveal(), nil
	}
	return tg.Admin.ClientSecret.Reveal(), nil
}

// keepLogs copies every node's log out of the stack (which the test's
// cleanup removes) and says where: a failed check's evidence.
func keepLogs(t *testing.T, s *stack.Stack) {
	t.Helper()
	dir, err := os.MkdirTemp("", "kcbench-cluster-logs-")
	if err != nil {
		t.Log(err)
		return
	}
	for i := range s.State().Nodes {
		path, err := s.NodeLogPath(i + 1)
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(path); err == nil {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("node%d.log", i+1)), b, 0o644) //nolint:errcheck // evidence, best effort
		}
	}
	t.Logf("the nodes' logs are kept in %s", dir)
}

// TestClusterTerminate puts the balancer in front of two nodes in
// terminate mode: TLS ends at HAProxy, the nodes serve plain HTTP and
// take the client's https scheme from X-Forwarded-Proto.
func TestClusterTerminate(t *testing.T) {
	shared.Get(t)
	ctx := ctxT(t, 10*time.Minute)
	cfg := stacktest.Config(shared.Dirs, "terminate")
	cfg.Topology = stack.Topology{Nodes: 2, LBTLS: stack.LBTLSTerminate}
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Down(context.Background()) })
	tg, st := s.Target(), s.State()
	if !strings.HasPrefix(tg.BaseURL, "https://") {
		t.Fatalf("target %s: want https at the balancer", tg.BaseURL)
	}
	for _, n := range st.Nodes {
		if n.TLS || !strings.HasPrefix(n.URL(), "http://") {
			t.Errorf("node %d serves %s: want plain HTTP behind a terminating balancer", n.Index, n.URL())
		}
	}
	newConnPerToken(tg)
	secret, err := readSecret(s, "admin-client-secret")
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.BalancerStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		tok, err := token(ctx, tg.BaseURL, "", url.Values{"grant_type": {"client_credentials"}, "client_id": {stack.AdminClientID}, "client_secret": {secret}})
		if err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
		if iss := issuer(t, tok.AccessToken); iss != tg.BaseURL+"/realms/master" {
			t.Errorf("grant %d: issuer %q, want the balancer's https URL", i, iss)
		}
	}
	after, err := s.BalancerStats(ctx)
	if err != nil || len(after) != 2 {
		t.Fatalf("balancer stats %+v, %v", after, err)
	}
	for i, a := range after {
		if d := a.Requests - before[i].Requests; d < 2 {
			t.Errorf("%s served %d of 6 grants; round-robin should give each about half", a.Node, d)
		}
	}
}
