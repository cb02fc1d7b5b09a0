//go:build integration

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/sizing"
	"github.com/kcbench/kcbench/internal/stack"
)

// kcbench size --from-metrics against a real Keycloak (the local stack
// builds with event metrics on): while kcbench load sends client-credential
// grants, refreshes, browser logins and logouts, the rates size reads are
// > 0 and its counts match what was sent. On TestLoadCommand's stack: a
// dataset hashed with pbkdf2-sha256 only.
func checkSizeFromMetricsLive(t *testing.T, c *cli, s *stack.Stack) {
	mgmt := s.Target().ManagementURL

	// size reads /metrics now and again in 40 s; the loads run in between.
	size := exec.Command(binary, "size", "--from-metrics", mgmt, "--ca-file", s.Target().CAFile, "--interval", "40s", "--peak", "2", "--json")
	var sizeOut, sizeErr bytes.Buffer
	size.Stdout = &sizeOut
	pipe, err := size.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := size.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(pipe)
	for {
		line, err := br.ReadString('\n')
		sizeErr.WriteString(line)
		if strings.Contains(line, "again in") {
			break
		}
		if err != nil {
			t.Fatalf("size: %v\n%s", err, sizeErr.String())
		}
	}
	copied := make(chan struct{})
	go func() { io.Copy(&sizeErr, br); close(copied) }()
	mixOut, logoutOut := filepath.Join(t.TempDir(), "mix"), filepath.Join(t.TempDir(), "logout")
	c.mustRun("load", "--scenario", "mix", "--vus", "4", "--duration", "8s", "--out", mixOut)
	c.mustRun("load", "--scenario", "logout", "--vus", "2", "--duration", "3s", "--out", logoutOut)
	<-copied
	if err := size.Wait(); err != nil {
		t.Fatalf("size: %v\n%s\n%s", err, sizeOut.String(), sizeErr.String())
	}

	var o sizing.Output
	if err := json.Unmarshal(sizeOut.Bytes(), &o); err != nil {
		t.Fatalf("%v\n%s", err, sizeOut.String())
	}
	if o.Observed == nil || o.Sizing == nil {
		t.Fatalf("output: %s", sizeOut.String())
	}
	counts := map[string]float64{}
	for _, e := range o.Observed.Events {
		counts[e.Event] = e.Count
	}
	sent := func(dir, op string) float64 {
		st, err := readStats(dir)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := st.Op(op)
		// The summary covers the measured window; warm-up and graceful stop
		// requests reach Keycloak too, so Keycloak may count a few more.
		return float64(o.OK)
	}
	cc, refresh := sent(mixOut, results.OpClientCredentials), sent(mixOut, results.OpRefresh)
	logins := sent(mixOut, results.OpCodeExchange) + sent(logoutOut, results.OpPasswordGrant)
	logouts := sent(logoutOut, results.OpLogout)
	for _, c := range []struct {
		event string
		sent  float64
	}{{"client_login", cc}, {"refresh_token", refresh}, {"login", logins}, {"logout", logouts}} {
		got := counts[c.event]
		t.Logf("%s: Keycloak counted %v, kcbench load sent %v", c.event, got, c.sent)
		// Logins also include the sessions the refresh VUs open when they start.
		if c.sent <= 0 || got < c.sent || got > c.sent*1.2+20 {
			t.Errorf("%s: Keycloak counted %v, kcbench load sent %v", c.event, got, c.sent)
		}
	}
	obs := o.Observed.Observed
	if obs.LoginsPerSec <= 0 || obs.ClientCredentialsPerSec <= 0 || obs.RefreshesPerSec <= 0 || obs.LogoutsPerSec <= 0 {
		t.Errorf("observed %+v", obs)
	}
	if o.Sizing.Input.ClientCredentialsPerSec != 2*obs.ClientCredentialsPerSec {
		t.Errorf("peak 2 not applied: %v vs %v", o.Sizing.Input.ClientCredentialsPerSec, obs.ClientCredentialsPerSec)
	}
	if len(o.Observed.Hashing) != 1 || o.Observed.Hashing[0].Algorithm != "pbkdf2-sha256" || o.Observed.Hashing[0].Count < logins {
		t.Errorf("hashing %+v", o.Observed.Hashing)
	}
}
