package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLoadServesMetrics: a scrape during a short run against a local
// server shows the run's operations, and the server is gone after it.
func TestLoadServesMetrics(t *testing.T) {
	base, _, _ := fakeKC(t)
	w := newAddrWatch()
	done := make(chan int, 1)
	go func() {
		done <- runCLIWatched(t, w, "load", "--target", base, "--realm", "r", "--scenario", "jwks", "--executor", "constant-arrival-rate",
			"--rate", "50", "--vus", "2", "--duration", "4s", "--metrics-addr", "127.0.0.1:0", "--quiet")
	}()
	addr := w.wait(t, done)
	ops := regexp.MustCompile(`(?m)^kcbench_operations_total\{op="jwks"\} (\S+)$`)
	bucket := regexp.MustCompile(`(?m)^kcbench_operation_latency_seconds_count\{op="jwks"\} (\S+)$`)
	deadline := time.Now().Add(4 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = string(b)
			if m := ops.FindStringSubmatch(got); m != nil {
				if n, _ := strconv.ParseFloat(m[1], 64); n > 0 {
					break
				}
			}
		}
		time.Sleep(100 * time.Millisecond) // polling a server that is starting
	}
	m, c := ops.FindStringSubmatch(got), bucket.FindStringSubmatch(got)
	if m == nil || m[1] == "0" || c == nil || c[1] == "0" || !strings.Contains(got, "kcbench_active_vus") {
		t.Errorf("no operations in a scrape during the run:\n%s", got)
	}
	if code := <-done; code != 0 {
		t.Fatalf("load: exit %d: %s", code, w.String())
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("metrics still served after the run")
	}
	if code, _, stderr := runCLI(t, "load", "--target", base, "--realm", "r", "--scenario", "jwks", "--duration", "1s", "--metrics-addr", "0.0.0.0:9464"); code != exitUsage || !strings.Contains(stderr, "loopback") {
		t.Errorf("a non-loopback metrics address: exit %d: %s", code, stderr)
	}
	// seed, experiment and quickstart refuse it before they touch a stack
	// or a results folder.
	results := filepath.Join(t.TempDir(), "results")
	for _, args := range [][]string{
		{"seed", "--tenants", "1"},
		{"experiment", "run", "quickstart", "--out", results},
		{"quickstart", "--out", results},
	} {
		code, stdout, stderr := runCLI(t, append(args, "--metrics-addr", "10.0.0.1:9464")...)
		if code != exitUsage || !strings.Contains(stderr, "not a loopback address") || stdout != "" {
			t.Errorf("%v with a non-loopback metrics address: exit %d: %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(results); err == nil {
		t.Error("a refused run wrote its results folder")
	}
}

// TestCapacityServesMetrics: a scrape during a capacity search shows the
// steps' operations.
func TestCapacityServesMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a search of a few seconds")
	}
	srv := fakeTokenServer(t, 100)
	w := newAddrWatch()
	done := make(chan int, 1)
	go func() {
		done <- runCLIWatched(t, w, "capacity", "--target", srv.URL, "--realm", "r", "--client-id", "c", "--client-secret", "s",
			"--scenario", "client-credentials", "--slo", "p99<100ms,errors<1%", "--start-rate", "20", "--step", "20", "--step-duration", "1s",
			"--warmup", "500ms", "--resolution", "10", "--pause", "100ms", "--out", filepath.Join(t.TempDir(), "cap"), "--quiet",
			"--metrics-addr", "127.0.0.1:0")
	}()
	addr := w.wait(t, done)
	ops := regexp.MustCompile(`(?m)^kcbench_operations_total\{op="client_credentials"\} ([1-9]\S*)$`)
	seen := false
	for !seen {
		select {
		case code := <-done:
			t.Fatalf("the search ended (exit %d) before a scrape showed its operations: %s", code, w.String())
		default:
		}
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err) // it listens from the moment it logs its address
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if seen = ops.Match(b); !seen {
			time.Sleep(100 * time.Millisecond) // the first step's operations are on their way
		}
	}
	<-done
}

// addrWatch is a command's stderr that hands over the address its
// metrics server logs ("metrics on http://ADDR/metrics"): the server
// listens on a port of the kernel's choice (127.0.0.1:0) from then on.
type addrWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	addr chan string
	sent bool
}

func newAddrWatch() *addrWatch { return &addrWatch{addr: make(chan string, 1)} }

var metricsLine = regexp.MustCompile(`metrics on http://(\S+)/metrics`)

func (w *addrWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := metricsLine.FindSubmatch(w.buf.Bytes()); m != nil && !w.sent {
		w.addr <- string(m[1])
		w.sent = true
	}
	return len(p), nil
}

func (w *addrWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// wait returns the address, or fails when the command ends without one.
func (w *addrWatch) wait(t *testing.T, done <-chan int) string {
	t.Helper()
	select {
	case a := <-w.addr:
		return a
	case code := <-done:
		t.Fatalf("exit %d without serving metrics: %s", code, w.String())
		return ""
	}
}

// runCLIWatched is runCLI with stderr written to w as it comes.
func runCLIWatched(t *testing.T, w io.Writer, args ...string) int {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CACHE_HOME": filepath.Join(dir, "cache")}
	return run(context.Background(), args, io.Discard, w, func(k string) string { return env[k] })
}
