//go:build integration

package stack_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

// TestLatencyNodeDB: a stack with a latency proxy between Keycloak and
// PostgreSQL. 20 ms more round trip on that link makes a login (Keycloak
// 26 writes its session to the database) at least 20 ms slower at the
// median; at 0 the proxy adds nothing measurable.
func TestLatencyNodeDB(t *testing.T) {
	shared.Get(t)
	stacktest.Long(t) // a stack of its own; TestDelayProxy times the proxy's delays
	ctx := ctxT(t, 10*time.Minute)
	cfg := stacktest.Config(shared.Dirs, "latency")
	// A small latency from the start (the first boot's schema creation
	// runs hundreds of statements), changed below as a fault event does.
	cfg.Topology.Latency = stack.Latency{NodeDB: stack.Delay{RTT: time.Millisecond}}
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Down(context.Background()) })
	if m := s.State().MeasuredLatency.NodeDB; m < time.Millisecond || m > 50*time.Millisecond {
		t.Errorf("measured at start: %s, want about 1 ms", m)
	}
	if p := s.RunParams(); p["latency"] != "node-db=1ms" || p["latency_node_db_measured_ms"] == "" {
		t.Errorf("params %v", p)
	}
	pw, err := readSecret(s, "admin-password")
	if err != nil {
		t.Fatal(err)
	}
	tg := s.Target()
	keepAliveTokens(tg) // latency is measured per request, without a handshake in it
	login := func() time.Duration {
		t0 := time.Now()
		if _, err := token(ctx, tg.BaseURL, "", url.Values{"grant_type": {"password"}, "client_id": {"admin-cli"}, "username": {stack.AdminUser}, "password": {pw}}); err != nil {
			t.Fatal(err)
		}
		return time.Since(t0)
	}
	median := func(n int) time.Duration {
		var ds []time.Duration
		for range n {
			ds = append(ds, login())
		}
		slices.Sort(ds)
		return ds[n/2]
	}
	median(10) // warm-up
	set := func(d time.Duration) {
		if err := s.SetLatency(stack.Latency{NodeDB: stack.Delay{RTT: d}}); err != nil {
			t.Fatal(err)
		}
		m, err := s.MeasureLatency()
		if err != nil {
			t.Fatal(err)
		}
		if (d == 0 && m > 2*time.Millisecond) || (d > 0 && m < d) {
			t.Errorf("latency %s: measured %s through the proxy", d, m)
		}
	}
	// Interleaved: 0, 20 ms, 0, 20 ms.
	var at0, at20 []time.Duration
	for range 2 {
		set(0)
		at0 = append(at0, median(15))
		set(20 * time.Millisecond)
		at20 = append(at20, median(15))
	}
	t.Logf("login p50 at 0 ms: %v; at 20 ms: %v", at0, at20)
	if rise := min(at20[0], at20[1]) - max(at0[0], at0[1]); rise < 20*time.Millisecond {
		t.Errorf("20 ms more to the database raised the login p50 by only %s (0 ms: %v, 20 ms: %v)", rise, at0, at20)
	}
}
