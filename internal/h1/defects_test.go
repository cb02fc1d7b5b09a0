package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

// rawServer accepts connections on loopback and hands each to serve in
// its own goroutine; it counts them.
func rawServer(t *testing.T, serve func(nc net.Conn, br *bufio.Reader)) (string, *atomic.Int64) {
	t.Helper()
	return rawServerOver(t, false, serve)
}

// rawServerOver is rawServer over TLS (with the test certificate) when
// secure is set.
func rawServerOver(t *testing.T, secure bool, serve func(nc net.Conn, br *bufio.Reader)) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme := "http://"
	if secure {
		l, scheme = tls.NewListener(l, serverTLS()), "https://"
	}
	var conns atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, nc := range open {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			mu.Lock()
			open = append(open, nc)
			mu.Unlock()
			wg.Go(func() {
				defer nc.Close()
				serve(nc, bufio.NewReader(nc))
			})
		}
	})
	return scheme + l.Addr().String(), &conns
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// The fallback path (net/http underneath; here for a URL with user info)
// is bounded by Timeout too, up to the end of the body.
func TestFallbackTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "abc")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c := &http.Client{Transport: &Transport{Timeout: 200 * time.Millisecond, Fallback: srv.Client().Transport}}
	url := strings.Replace(srv.URL, "https://", "https://user:pass@", 1)
	start := time.Now()
	_, err := c.Get(url + "/head")
	if got := load.Classify(err); got != load.ClassTimeout {
		t.Fatalf("headers never come: %v (class %q), want a timeout", err, got)
	}
	resp, err := c.Get(url + "/body")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := load.Classify(err); got != load.ClassTimeout {
		t.Fatalf("body never ends: %v (class %q), want a timeout", err, got)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the timeouts took %v", d)
	}
}

// A POST that reached the server on a kept-alive connection is not sent
// again when the server closes the connection without answering: the
// server sees it once and the caller gets the error, classified. A GET in
// the same spot is sent again once (idempotent). Over http and https.
func TestNoReplayOfPost(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[secure], func(t *testing.T) { testNoReplayOfPost(t, secure) })
	}
}

func testNoReplayOfPost(t *testing.T, secure bool) {
	var posts, gets atomic.Int64
	url, _ := rawServerOver(t, secure, func(nc net.Conn, br *bufio.Reader) {
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if req.Method == http.MethodPost {
				posts.Add(1)
			} else {
				gets.Add(1)
			}
			if n == 1 { // the second request on a connection: hang up unanswered
				return
			}
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	c := testClient(1, 2*time.Second)
	get(t, c, url)
	resp, err := c.Post(url, "application/x-www-form-urlencoded", strings.NewReader("grant_type=password"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("POST answered: it was sent again")
	}
	if n := posts.Load(); n != 1 {
		t.Fatalf("the server saw the POST %d times, want once", n)
	}
	if got := load.Classify(err); got != load.ClassConnReset {
		t.Errorf("%v: class %q, want %q", err, got, load.ClassConnReset)
	}
	// GET on a connection that hangs up unanswered: sent once more.
	get(t, c, url) // new connection, first request
	if _, b := get(t, c, url); b != "ok" {
		t.Fatalf("GET retried: %q", b)
	}
	if n := gets.Load(); n != 4 {
		t.Errorf("the server saw %d GETs, want 4 (one sent twice)", n)
	}
}

// A kept-alive connection the server closed while idle is noticed before
// use: a POST goes out on a new connection, without an error.
func TestStaleConnectionProbed(t *testing.T) {
	var posts atomic.Int64
	url, conns := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		posts.Add(1)
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		// return: close the connection, as an idle timeout would
	})
	tr := &Transport{Timeout: 2 * time.Second, ProbeIdle: 5 * time.Millisecond}
	var later time.Duration
	tr.clock = func() time.Time { return time.Now().Add(later) }
	c := &http.Client{Transport: tr}
	for i := range 3 {
		resp, err := c.Post(url, "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatalf("POST %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// Wait until the server's close has reached the idle connection.
		waitFor(t, "the close to arrive", func() bool { return !tr.idleConn(0).alive() })
		later += 2 * tr.ProbeIdle // idle long enough to be checked
	}
	if posts.Load() != 3 || conns.Load() != 3 {
		t.Errorf("%d POSTs on %d connections, want 3 on 3", posts.Load(), conns.Load())
	}
}

// idleConn returns the i-th idle connection (test helper).
func (t *Transport) idleConn(i int) *conn { return t.shared.idleConn(i) }

// An idle connection older than IdleTimeout is closed, not reused.
func TestIdleTimeout(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tr := &Transport{Timeout: 2 * time.Second, IdleTimeout: time.Hour}
	var later time.Duration
	tr.clock = func() time.Time { return time.Now().Add(later) }
	c := &http.Client{Transport: tr}
	get(t, c, srv.URL)
	get(t, c, srv.URL)
	if conns.Load() != 1 {
		t.Fatalf("%d connections, want 1 reused", conns.Load())
	}
	later = 2 * time.Hour // past the idle timeout
	get(t, c, srv.URL)
	if conns.Load() != 2 {
		t.Fatalf("%d connections, want a new one after the idle timeout", conns.Load())
	}
}

// Framing: Content-Length must be digits and agree with itself; chunked
// is the only Transfer-Encoding and excludes a Content-Length; with
// neither, the body runs to the connection's end. The same through
// RoundTrip and through Exchange (no header map), over http and https.
func TestFraming(t *testing.T) {
	for _, secure := range []bool{false, true} {
		for _, lite := range []bool{false, true} {
			name := map[bool]string{false: "http", true: "https"}[secure] + "/" + map[bool]string{false: "RoundTrip", true: "Exchange"}[lite]
			t.Run(name, func(t *testing.T) { testFraming(t, lite, secure) })
		}
	}
}

func testFraming(t *testing.T, lite, secure bool) {
	for name, tc := range map[string]struct {
		answer string
		body   string // "" with ok false: an error
		ok     bool
	}{
		"length":              {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "ok", true},
		"same length twice":   {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", "ok", true},
		"same length listed":  {"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok", "ok", true},
		"conflicting lengths": {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok!", "", false},
		"conflicting list":    {"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok!", "", false},
		"malformed length":    {"HTTP/1.1 200 OK\r\nContent-Length: two\r\n\r\nok", "", false},
		"signed length":       {"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", "", false},
		"negative length":     {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nok", "", false},
		"empty length":        {"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nok", "", false},
		"huge length":         {"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nok", "", false},
		"chunked":             {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n1;x=y\r\n!\r\n0\r\nT: v\r\n\r\n", "ok!", true},
		"chunked and length":  {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n2\r\nok\r\n0\r\n\r\n", "", false},
		"gzip, chunked":       {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", "", false},
		"identity":            {"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nok", "", false},
		"HTTP/1.0 chunked":    {"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", "", false},
		"bad chunk size":      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n", "", false},
		"chunked cut short":   {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nok", "", false},
		"length cut short":    {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok", "", false},
		"no length: to close": {"HTTP/1.1 200 OK\r\n\r\nall of it", "all of it", true},
	} {
		t.Run(name, func(t *testing.T) {
			url, conns := rawServerOver(t, secure, func(nc net.Conn, br *bufio.Reader) {
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					io.WriteString(nc, tc.answer)
					if !tc.ok || strings.Contains(name, "close") {
						return
					}
				}
			})
			c := testClient(1, 2*time.Second)
			for range 2 {
				var b []byte
				var err error
				if lite {
					req, _ := http.NewRequest(http.MethodGet, url, nil)
					var code int
					code, b, err = c.Transport.(*Transport).Exchange(req, nil, 1<<20)
					if err == nil && code != 200 {
						t.Fatalf("status %d", code)
					}
				} else {
					var resp *http.Response
					resp, err = c.Get(url)
					if err == nil {
						b, err = io.ReadAll(resp.Body)
						resp.Body.Close()
					}
				}
				if tc.ok != (err == nil) || tc.ok && string(b) != tc.body {
					t.Fatalf("body %q, error %v; want %q, ok %v", b, err, tc.body, tc.ok)
				}
				if !tc.ok {
					return
				}
			}
			want := int64(1)
			if strings.Contains(name, "close") {
				want = 2 // a body read to the close leaves no connection to reuse
			}
			if conns.Load() != want {
				t.Errorf("%d connections, want %d", conns.Load(), want)
			}
		})
	}
}

// A server that closes the connection in the middle of an answer is a
// conn_reset, not "other": before the headers end, and in the body, over
// http and https.
func TestClosedMidAnswer(t *testing.T) {
	for name, answer := range map[string]string{
		"no answer":  "",
		"in headers": "HTTP/1.1 200 OK\r\nContent-Le",
		"in body":    "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
		"in chunks":  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
		"in trailer": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX: y",
	} {
		for _, secure := range []bool{false, true} {
			t.Run(name+map[bool]string{false: "/http", true: "/https"}[secure], func(t *testing.T) {
				url, _ := rawServerOver(t, secure, func(nc net.Conn, br *bufio.Reader) {
					http.ReadRequest(br)
					io.WriteString(nc, answer)
				})
				resp, err := testClient(1, 2*time.Second).Get(url)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if got := load.Classify(err); got != load.ClassConnReset {
					t.Fatalf("%v: class %q, want %q", err, got, load.ClassConnReset)
				}
			})
		}
	}
}

// Every error class the client can produce.
func TestErrorClasses(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	_, err = newClient(1, time.Second).Get(closed)
	if got := load.Classify(err); got != load.ClassConnRefused {
		t.Errorf("refused: %v: class %q", err, got)
	}
	url, _ := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
		http.ReadRequest(br)
		nc.(*net.TCPConn).SetLinger(0) // close with a RST
	})
	_, err = newClient(1, time.Second).Get(url)
	if got := load.Classify(err); got != load.ClassConnReset {
		t.Errorf("reset: %v: class %q", err, got)
	}
	hang, _ := rawServer(t, func(nc net.Conn, br *bufio.Reader) { io.Copy(io.Discard, br) })
	_, err = newClient(1, 100*time.Millisecond).Get(hang)
	if got := load.Classify(err); got != load.ClassTimeout {
		t.Errorf("timeout: %v: class %q", err, got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, hang, nil)
	_, err = newClient(1, 0).Do(req)
	if got := load.Classify(err); got != load.ClassTimeout {
		t.Errorf("context deadline: %v: class %q", err, got)
	}
	bad, _ := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
		http.ReadRequest(br)
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n")
	})
	_, err = newClient(1, time.Second).Get(bad)
	if got := load.Classify(err); got != load.ClassMalformed {
		t.Errorf("malformed: %v: class %q", err, got)
	}
}

// After a 101 the connection speaks another protocol: it is not reused.
func TestSwitchingProtocolsNotReused(t *testing.T) {
	url, conns := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			if req.URL.Path == "/upgrade" {
				io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n\r\n")
				io.Copy(io.Discard, br) // another protocol now: no HTTP answer
				return
			}
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	c := newClient(2, time.Second)
	resp, err := c.Get(url + "/upgrade")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, b := get(t, c, url+"/plain"); b != "ok" {
		t.Fatalf("%q", b)
	}
	if conns.Load() != 2 {
		t.Errorf("%d connections, want 2", conns.Load())
	}
}

// A context cancelled after its exchange ended (a VU's run ending, a
// per-request context's cancel) leaves the connection kept alive; one
// cancelled during an exchange aborts it.
func TestCancelKeepsIdleConnection(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "ok")
	})
	c := newClient(4, 5*time.Second)
	tr := c.Transport.(*Transport)
	ctx, cancel := context.WithCancel(context.Background())
	for range 3 { // a run sharing ctx
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cancel() // the run ends
	cn := tr.idleConn(0)
	waitFor(t, "the cancellation to be seen", func() bool { return cn.st.Load()&stFired != 0 })
	if _, b := get(t, c, srv.URL); b != "ok" { // the next run
		t.Fatalf("%q", b)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections, want the one kept alive across the cancel", n)
	}
	// Cancelled during an exchange: the request fails with the
	// cancellation, and the connection it cut is not reused.
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
	if _, err := c.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled mid-exchange: %v", err)
	}
	get(t, c, srv.URL)
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want a new one after the cut", n)
	}
}

// Exchange appends the body to dst and gives the status, over http and
// https, and through the fallback (a URL with user info); a body over max
// is an error.
func TestExchange(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "body")
	})
	srv, conns := server(t, h)
	tsrv, tconns := tlsServer(t, h)
	tr := &Transport{Timeout: 2 * time.Second, TLSConfig: clientTLS(), Fallback: tsrv.Client().Transport}
	viaFallback := strings.Replace(tsrv.URL, "https://", "https://u:p@", 1)
	for _, url := range []string{srv.URL, tsrv.URL, viaFallback} {
		for range 2 {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			code, b, err := tr.Exchange(req, []byte("x:"), 100)
			if err != nil || code != http.StatusTeapot || string(b) != "x:body" {
				t.Fatalf("%s: %d %q %v", url, code, b, err)
			}
		}
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if _, _, err := tr.Exchange(req, nil, 3); err == nil || !strings.Contains(err.Error(), "larger than 3 bytes") {
			t.Fatalf("%s: over max: %v", url, err)
		}
	}
	if n, m := conns.Load(), tconns.Load(); n != 1 || m != 2 {
		t.Errorf("%d http and %d https connections, want 1 and 2 (one through the fallback), kept alive", n, m)
	}
	if n := tr.Dials(); n != 2 {
		t.Errorf("%d dials on the h1 path, want 2", n)
	}
}

// newClient is an http.Client on a Transport that keeps up to maxConns
// connections per host and bounds each request by timeout.
func newClient(maxConns int, timeout time.Duration) *http.Client {
	return &http.Client{Transport: &Transport{Timeout: timeout, MaxIdlePerHost: maxConns}}
}
