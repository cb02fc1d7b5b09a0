package stack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestWatcher(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "keycloak.log")
	os.WriteFile(log, []byte("old run: java.lang.OutOfMemoryError: Java heap space\n"), 0o644)
	var status atomic.Int32
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(int(status.Load())) }))
	defer srv.Close()

	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	jvm, err := identify(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	newWatcher := func() *Watcher {
		fi, _ := os.Stat(log)
		return &Watcher{nodes: map[int]*nodeWatch{1: {jvm: jvm, log: log, off: fi.Size(), ready: srv.URL, hc: srv.Client()}}}
	}
	ctx := context.Background()

	// What was logged before the watch began does not count.
	w := newWatcher()
	if err := w.Check(ctx); err != nil {
		t.Fatalf("alive: %v", err)
	}
	// Readiness lost: three 503s in a row.
	status.Store(503)
	for i := 1; i < watchNotReady; i++ {
		if err := w.Check(ctx); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if err := w.Check(ctx); err == nil || !strings.Contains(err.Error(), "lost readiness") {
		t.Fatalf("not ready: %v", err)
	}
	status.Store(200)

	// An OutOfMemoryError logged, half a line at first.
	w = newWatcher()
	f, _ := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("2026-11-25 01:00:00,000 INFO  [io.quarkus] started\nTerminating due to java.lang.OutOfMemoryError: Java he")
	if err := w.Check(ctx); err != nil {
		t.Fatalf("half a line: %v", err)
	}
	f.WriteString("ap space\n")
	f.Close()
	err = w.Check(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "Keycloak logged OutOfMemoryError: Java heap space") {
		t.Fatalf("oom: %v", err)
	}

	// The process gone: exited, with the OutOfMemoryError as its cause.
	cmd.Process.Kill()
	cmd.Wait()
	err = w.Check(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "Keycloak exited: OutOfMemoryError: Java heap space") {
		t.Fatalf("exited: %v", err)
	}
	if err := newWatcher().Check(ctx); err == nil || !strings.HasPrefix(err.Error(), "Keycloak exited (log: ") {
		t.Fatalf("exited without a cause: %v", err)
	}
}

func TestHeapFromArgs(t *testing.T) {
	const gib = 1 << 30
	cases := []struct {
		args []string
		max  int64
		src  string
	}{
		{[]string{"java", "-Xms1g", "-Xmx2g", "-cp", "x"}, 2 * gib, "-Xmx2g"},
		{[]string{"java", "-Xmx512m", "-Xmx1536M"}, 1536 << 20, "-Xmx1536M"},
		{[]string{"java", "-XX:MaxRAMPercentage=70", "-XX:MinRAMPercentage=70"}, 7 * gib, "-XX:MaxRAMPercentage=70 of 10.0 GiB"},
		{[]string{"java"}, gib * 10 / 4, "the JVM's default 25 % of 10.0 GiB"},
	}
	for _, c := range cases {
		h, err := heapFromArgs(c.args, 10*gib)
		if err != nil || h.Max != c.max || h.Source != c.src {
			t.Errorf("%v: %+v, %v", c.args, h, err)
		}
	}
	for _, bad := range []string{"-Xmxlots", "-Xmx0", "-Xmx99999999t"} {
		if _, err := heapFromArgs([]string{bad}, gib); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	// This test's own process: no heap flags, the default share.
	if h, err := HeapInForce(os.Getpid()); err != nil || h.Max <= 0 {
		t.Errorf("own process: %+v, %v", h, err)
	}
}

// A node that a fault event took down is not watched until an event
// brings it back.
func TestWatcherSkipsNodesDownByEvent(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	jvm, err := identify(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	s := &Stack{st: State{Nodes: []NodeState{
		{Index: 1, Host: "127.0.0.2", Log: filepath.Join(dir, "1.log")},
		{Index: 2, Host: "127.0.0.3", Log: filepath.Join(dir, "2.log"), Proc: &node{JVM: jvm}},
	}}}
	w := s.Watch()
	ctx := context.Background()
	if err := w.Check(ctx); err == nil || !strings.HasPrefix(err.Error(), "Keycloak node 2 exited") {
		t.Fatalf("dead node 2: %v", err)
	}
	s.watchNode(2, false)
	if err := w.Check(ctx); err != nil {
		t.Fatalf("node 2 down by an event: %v", err)
	}
	s.watchNode(2, true) // back, as its (here still dead) process
	if err := w.Check(ctx); err == nil {
		t.Fatal("node 2 back but dead: no error")
	}
}
