package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// probeSecret is in every secret a probe hands kcbench (password files,
// passwords on the command line); no output may contain it.
const probeSecret = "probe-s3cret-value"

// badTargets serves the targets the probes point --target at: a closed
// port, HTML 404 everywhere, invalid discovery JSON, a server that never
// answers, and a 1 GB body.
type badTargets struct {
	closed, html404, badDiscovery, hang, huge string
}

func startBadTargets(t *testing.T) badTargets {
	t.Helper()
	var b badTargets
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.closed = "http://" + ln.Addr().String()
	ln.Close()

	s404 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<html><body><h1>404 Not Found</h1></body></html>")
	}))
	t.Cleanup(s404.Close)
	b.html404 = s404.URL

	sdisc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"issuer": "http://x", "token_endpoint": [1,2`)
	}))
	t.Cleanup(sdisc.Close)
	b.badDiscovery = sdisc.URL

	// A server that accepts connections and never answers: it holds them
	// until the test ends.
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := hl.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() { hl.Close(); close(done) })
	b.hang = "http://" + hl.Addr().String()

	shuge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		chunk := make([]byte, 64<<10)
		for i := range chunk {
			chunk[i] = ' '
		}
		io.WriteString(w, "{")
		for n := 0; n < 1<<30-1; n += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), 1<<30-1-n)]); err != nil {
				return
			}
		}
	}))
	t.Cleanup(shuge.Close)
	b.huge = shuge.URL
	return b
}

// TestBadInputProbes runs the bad-input probes of issue 16: each gives a
// clear one-line error naming the problem, an exit code other than 0, no
// stack trace, no partial output folder and no secret in the output.
func TestBadInputProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and short load runs")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(probeSecret+"\n"), 0o600)
	unreadable := filepath.Join(dir, "unreadable")
	os.WriteFile(unreadable, []byte(probeSecret+"\n"), 0o000)
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	garbage := filepath.Join(dir, "garbage")
	os.Mkdir(garbage, 0o755)
	os.WriteFile(filepath.Join(garbage, "summary.json"), []byte("\x00\x01not json{{{"), 0o644)
	os.WriteFile(filepath.Join(garbage, "manifest.json"), []byte("]]]"), 0o644)
	aFile := filepath.Join(dir, "a-file")
	os.WriteFile(aFile, []byte("x"), 0o644)
	ro := filepath.Join(dir, "read-only")
	os.Mkdir(ro, 0o555)
	yamlFile := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	malformed := yamlFile("malformed.yaml", "name: x\nmatrix: [unclosed\n")
	unknownKey := yamlFile("unknown.yaml", "name: x\nno_such_key: 1\n")
	wrongType := yamlFile("wrongtype.yaml", "name: x\nrepeats: many\n")
	var tenants []string
	for i := range 1000 {
		tenants = append(tenants, fmt.Sprint(i+1))
	}
	million := yamlFile("million.yaml", "name: million\ndataset:\n  modes: [realms, orgs]\n  tenants: ["+strings.Join(tenants, ",")+
		"]\nrepeats: 100\nworkloads:\n  - name: jwks\n    scenario: jwks\n")

	tg := startBadTargets(t)
	// A load run against a target, its users given by hand.
	loadAt := func(target string, extra ...string) []string {
		return append([]string{"load", "--target", target, "--realm", "r", "--client-id", "c", "--username", "u",
			"--password", probeSecret, "--scenario", "password-grant", "--vus", "2", "--duration", "2s", "--timeout", "1s", "--quiet"}, extra...)
	}
	out := func(name string) string { return filepath.Join(dir, "out-"+name) }
	mix := func(w string) []string {
		return []string{"load", "--scenario", "mix", "--mix", w, "--realm", "r", "--client-id", "c", "--username", "u", "--password", probeSecret}
	}

	cases := []struct {
		name string
		args []string
		code int    // exit code wanted
		want string // in the error
		out  string // an output folder that must not exist afterwards
	}{
		{name: "unknown command", args: []string{"frobnicate"}, code: exitUsage, want: `unknown command "frobnicate"`},
		{name: "unknown flag", args: []string{"load", "--frobnicate"}, code: exitUsage, want: "frobnicate"},
		{name: "vus 0", args: []string{"load", "--scenario", "jwks", "--vus", "0"}, code: exitUsage, want: "--vus"},
		{name: "vus 1e8", args: []string{"load", "--scenario", "jwks", "--vus", "100000000"}, code: exitUsage, want: "--vus: 100000000: must be"},
		{name: "rate negative", args: []string{"load", "--scenario", "jwks", "--executor", "constant-arrival-rate", "--rate", "-5"}, code: exitUsage, want: "--rate"},
		{name: "duration 0s", args: []string{"load", "--scenario", "jwks", "--duration", "0s"}, code: exitUsage, want: "--duration"},
		{name: "duration 100 years", args: []string{"load", "--scenario", "jwks", "--duration", "876000h"}, code: exitUsage, want: "--duration: 876000h0m0s: must be"},
		{name: "tenants -1", args: []string{"seed", "--tenants", "-1"}, code: exitUsage, want: "--tenants"},
		{name: "tenants 1e9", args: []string{"seed", "--tenants", "1000000000"}, code: exitUsage, want: "--tenants"},
		{name: "threshold p95<<5", args: []string{"load", "--scenario", "jwks", "--threshold", "p95<<5"}, code: exitUsage, want: "p95<<5"},
		{name: "threshold p200<1s", args: []string{"load", "--scenario", "jwks", "--threshold", "p200<1s"}, code: exitUsage, want: "p200"},
		{name: "threshold foo", args: []string{"load", "--scenario", "jwks", "--threshold", "foo"}, code: exitUsage, want: "foo"},
		{name: "bad slo", args: []string{"capacity", "--scenario", "jwks", "--slo", "p99<<fast"}, code: exitUsage, want: "slo"},
		{name: "unknown scenario", args: []string{"load", "--scenario", "frobnicate"}, code: exitUsage, want: `"frobnicate": unknown`},
		{name: "mix weights overflow", args: mix("jwks=9223372036854775807,discovery=9223372036854775807"), code: exitUsage, want: "-mix"},
		{name: "mix weight overflows int", args: mix("jwks=99999999999999999999"), code: exitUsage, want: "weight"},
		{name: "mix weight non-numeric", args: mix("jwks=3x"), code: exitUsage, want: `"3x"`},
		{name: "mix weights all zero", args: mix("jwks=0,discovery=0"), code: exitUsage, want: "zero"},
		{name: "size 1e308", args: []string{"size", "--logins", "10", "--memory-request-mib", "1e308"}, code: exitUsage, want: "memory"},
		{name: "size -1", args: []string{"size", "--logins", "-1"}, code: exitUsage, want: "logins"},
		{name: "size NaN", args: []string{"size", "--logins", "NaN"}, code: exitUsage, want: "logins"},
		{name: "size pods 0", args: []string{"size", "--logins", "10", "--pods", "0"}, code: exitUsage, want: "pods"},
		{name: "gate missing folder", args: []string{"gate", "--baseline", filepath.Join(dir, "nope"), "--current", filepath.Join(dir, "nope2")}, code: exitError, want: "nope"},
		{name: "gate empty folder", args: []string{"gate", "--baseline", empty, "--current", empty}, code: exitError, want: empty},
		{name: "gate garbage folder", args: []string{"gate", "--baseline", garbage, "--current", garbage}, code: exitError, want: garbage},
		{name: "compare missing folder", args: []string{"compare", filepath.Join(dir, "nope"), filepath.Join(dir, "nope2")}, code: exitError, want: "nope"},
		{name: "compare empty folder", args: []string{"compare", empty, empty}, code: exitError, want: empty},
		{name: "compare garbage folder", args: []string{"compare", garbage, garbage}, code: exitError, want: garbage},
		{name: "report missing folder", args: []string{"report", filepath.Join(dir, "nope")}, code: exitError, want: "nope"},
		{name: "report empty folder", args: []string{"report", empty}, code: exitError, want: empty},
		{name: "report garbage folder", args: []string{"report", garbage}, code: exitError, want: garbage},
		{name: "experiment malformed yaml", args: []string{"experiment", "plan", malformed}, code: exitUsage, want: "malformed.yaml"},
		{name: "experiment unknown key", args: []string{"experiment", "plan", unknownKey}, code: exitUsage, want: "no_such_key"},
		{name: "experiment wrong type", args: []string{"experiment", "plan", wrongType}, code: exitUsage, want: "many"},
		{name: "experiment million points", args: []string{"experiment", "plan", million}, code: exitUsage, want: "points"},
		{name: "target closed port", args: loadAt(tg.closed, "--out", out("closed")), code: exitTargetDown, want: "connection refused", out: ""},
		{name: "target html 404", args: loadAt(tg.html404), code: exitTargetDown, want: "http_404"},
		{name: "status invalid discovery", args: []string{"status", "--target", tg.badDiscovery, "--admin-password-file", pw}, code: exitError, want: "not JSON"},
		{name: "status 1 GB body", args: []string{"status", "--target", tg.huge, "--admin-password-file", pw}, code: exitError, want: "larger than"},
		{name: "target never answers", args: loadAt(tg.hang), code: exitTargetDown, want: "timeout"},
		{name: "target 1 GB body", args: loadAt(tg.huge), code: exitTargetDown, want: "answer body larger than"},
		{name: "status closed port", args: []string{"status", "--target", tg.closed, "--admin-password-file", pw}, code: exitError, want: "unreachable"},
		{name: "status html 404", args: []string{"status", "--target", tg.html404, "--admin-password-file", pw}, code: exitError, want: "404"},
		{name: "status never answers", args: []string{"status", "--target", tg.hang, "--admin-password-file", pw}, code: exitError, want: "did not answer within 10s"},
		{name: "status never answers, --wait", args: []string{"status", "--target", tg.hang, "--admin-password-file", pw, "--wait", "1s"}, code: exitError, want: "did not answer within 1s"},
		{name: "status bad wait", args: []string{"status", "--target", tg.hang, "--admin-password-file", pw, "--wait", "0s"}, code: exitUsage, want: "--wait 0s"},
		{name: "admin password file missing", args: []string{"status", "--target", tg.closed, "--admin-password-file", filepath.Join(dir, "nope")}, code: exitUsage, want: "--admin-password-file"},
		{name: "admin password file unreadable", args: []string{"status", "--target", tg.closed, "--admin-password-file", unreadable}, code: exitUsage, want: "--admin-password-file"},
		{name: "out is a file", args: append(loadAt(tg.closed), "--out", aFile), code: exitUsage, want: "--out"},
		{name: "out read-only", args: append(loadAt(tg.closed), "--out", filepath.Join(ro, "sub")), code: exitUsage, want: "--out"},
		{name: "capacity out is a file", args: []string{"capacity", "--scenario", "jwks", "--target", tg.closed, "--realm", "r", "--out", aFile}, code: exitUsage, want: "--out"},
		{name: "vus 1e8 writes nothing", args: []string{"load", "--scenario", "jwks", "--vus", "100000000", "--out", out("vus")}, code: exitUsage, want: "--vus", out: out("vus")},
		{name: "boot repeats 1e8", args: []string{"boot", "--repeats", "100000000"}, code: exitUsage, want: "--repeats"},
		{name: "db pool 1e9", args: []string{"up", "--db-pool-size", "1000000000"}, code: exitUsage, want: "--db-pool-size"},
		{name: "cache size 1e14", args: []string{"up", "--cache-size", "realms=99999999999999"}, code: exitUsage, want: `cache "realms"`},
		{name: "seed concurrency 1e8", args: []string{"seed", "--concurrency", "100000000"}, code: exitUsage, want: "--concurrency"},
		{name: "capacity start 1e308", args: []string{"capacity", "--scenario", "jwks", "--start-rate", "1e308"}, code: exitUsage, want: "--start-rate"},
		{name: "experiment scale NaN", args: []string{"experiment", "plan", "quickstart", "--scale", "NaN"}, code: exitUsage, want: "--scale"},
		{name: "file is a folder", args: []string{"load", "--file", empty}, code: exitUsage, want: "--file"},
	}
	if os.Geteuid() == 0 {
		// root reads and writes whatever the mode bits say.
		skip := map[string]bool{"admin password file unreadable": true, "out read-only": true}
		n := cases[:0]
		for _, c := range cases {
			if !skip[c.name] {
				n = append(n, c)
			}
		}
		cases = n
	}
	t.Logf("%d probes", len(cases))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			code, stdout, stderr := runCLICtx(t, ctx, c.args...)
			if ctx.Err() != nil {
				t.Fatalf("did not end within a minute")
			}
			all := stdout + stderr
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			msg := errorLine(stderr)
			if msg == "" {
				t.Errorf("no error line on stderr\nstderr: %s", stderr)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q lacks %q\nstderr: %s", msg, c.want, stderr)
			}
			for _, bad := range []string{"panic", "goroutine ", ".go:"} {
				if strings.Contains(all, bad) {
					t.Errorf("output has %q (a stack trace?)\n%s", bad, all)
				}
			}
			if strings.Contains(all, probeSecret) {
				t.Errorf("output holds the secret\n%s", all)
			}
			if c.out != "" {
				if _, err := os.Stat(c.out); err == nil {
					t.Errorf("%s was created", c.out)
				}
			}
		})
	}
}

// errorLine returns the error kcbench printed: the line after "kcbench: "
// and the lines that continue it (errors joined); "" when there is none.
func errorLine(stderr string) string {
	_, after, ok := strings.Cut(stderr, "kcbench: ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(after)
}

// Ctrl-C mid-load: exit 4, the summary of what ran on stdout and in --out.
func TestLoadInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1) == 200 {
			cancel() // Ctrl-C
		}
		io.WriteString(w, `{"keys":[]}`)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "res")
	code, stdout, stderr := runCLICtx(t, ctx, "load", "--target", srv.URL, "--realm", "r", "--scenario", "jwks",
		"--vus", "2", "--duration", "5m", "--out", out, "--quiet")
	if code != exitInterrupted || !strings.Contains(stderr, "kcbench: interrupted") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "(aborted)") {
		t.Errorf("no summary:\n%s", stdout)
	}
	st, err := readStats(out)
	if err != nil {
		t.Fatal(err)
	}
	if it, _ := st.Op(results.IterationOp); !st.Aborted || it.OK < 100 {
		t.Errorf("summary.json: aborted %v, iterations %+v", st.Aborted, it)
	}
}
