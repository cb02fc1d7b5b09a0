package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server counts the connections it accepts.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestFramings(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/length":
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		case "/chunked":
			w.Header().Set("X-Two", "a")
			w.Header().Add("X-Two", "b")
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/notfound":
			http.NotFound(w, r)
		case "/query":
			io.WriteString(w, r.URL.RawQuery+"|"+r.Header.Get("User-Agent")+"|"+r.Host)
		case "/large":
			io.WriteString(w, strings.Repeat("x", 100_000))
		}
	})
	c := newClient(4, 5*time.Second)
	for i := range 3 { // the same connection every time
		if resp, b := get(t, c, srv.URL+"/length"); b != "hello" || resp.ContentLength != 5 || resp.StatusCode != 200 || resp.Status != "200 OK" {
			t.Fatalf("length %d: %q %+v", i, b, resp)
		}
		resp, b := get(t, c, srv.URL+"/chunked")
		if b != "part0;part1;part2;" || resp.ContentLength != -1 || strings.Join(resp.Header.Values("X-Two"), ",") != "a,b" {
			t.Fatalf("chunked %d: %q %+v", i, b, resp.Header)
		}
		if resp, b := get(t, c, srv.URL+"/empty"); b != "" || resp.StatusCode != 204 || resp.Body != http.NoBody {
			t.Fatalf("204: %q %+v", b, resp)
		}
		if resp, b := get(t, c, srv.URL+"/notfound"); resp.StatusCode != 404 || !strings.Contains(b, "not found") || resp.Header.Get("content-type") == "" {
			t.Fatalf("404: %q %+v", b, resp)
		}
		if _, b := get(t, c, srv.URL+"/query?a=1&b=%20"); b != "a=1&b=%20|"+UserAgent+"|"+strings.TrimPrefix(srv.URL, "http://") {
			t.Fatalf("query: %q", b)
		}
		if _, b := get(t, c, srv.URL+"/large"); len(b) != 100_000 {
			t.Fatalf("large: %d", len(b))
		}
		resp, err := c.Head(srv.URL + "/length")
		if err != nil || resp.ContentLength != 0 {
			t.Fatalf("HEAD: %+v %v", resp, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 kept alive", n)
	}
}

func TestPost(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		fmt.Fprintf(w, "%s %s %s %d", r.Method, r.Header.Get("Content-Type"), r.PostForm.Get("k"), r.ContentLength)
	})
	c := newClient(4, 5*time.Second)
	for range 3 {
		resp, err := c.Post(srv.URL, "application/x-www-form-urlencoded", strings.NewReader("k=v%26w"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "POST application/x-www-form-urlencoded v&w 7" {
			t.Fatalf("%q", b)
		}
	}
	// A body of unknown length is sent with a Content-Length.
	pr, pw := io.Pipe()
	go func() { io.WriteString(pw, "k=piped"); pw.Close() }()
	resp, err := c.Post(srv.URL, "application/x-www-form-urlencoded", pr)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "POST application/x-www-form-urlencoded piped 7" {
		t.Fatalf("%q", b)
	}
	if conns.Load() != 1 {
		t.Errorf("%d connections", conns.Load())
	}
}

// Bodies closed unread keep the connection when the rest is small, and
// lose it when it is large.
func TestCloseUnread(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		n := 10
		if r.URL.Path == "/large" {
			n = 1 << 20
		}
		io.WriteString(w, strings.Repeat("y", n))
	})
	c := newClient(4, 5*time.Second)
	for range 3 {
		resp, err := c.Get(srv.URL + "/small")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp.Body.Close() // twice is fine
	}
	if conns.Load() != 1 {
		t.Fatalf("small bodies: %d connections", conns.Load())
	}
	resp, err := c.Get(srv.URL + "/large")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get(t, c, srv.URL+"/small")
	if conns.Load() != 2 {
		t.Fatalf("after a large unread body: %d connections, want 2", conns.Load())
	}
}

func TestConnectionClose(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	c := newClient(4, 5*time.Second)
	for range 3 {
		if _, b := get(t, c, srv.URL); b != "bye" {
			t.Fatal(b)
		}
	}
	if conns.Load() != 3 {
		t.Errorf("%d connections, want one per request", conns.Load())
	}
}

// Keycloak's login flow through a Client with a cookie jar and without
// following redirects: cookies and Location pass through.
func TestCookiesAndRedirects(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "A", Value: "1", Path: "/"})
			http.SetCookie(w, &http.Cookie{Name: "B", Value: "2", Path: "/"})
			http.Redirect(w, r, "/next", http.StatusFound)
		case "/next":
			a, _ := r.Cookie("A")
			b, _ := r.Cookie("B")
			if a == nil || b == nil {
				http.Error(w, "no cookies", 400)
				return
			}
			io.WriteString(w, a.Value+b.Value)
		}
	})
	jar, _ := cookiejar.New(nil)
	c := newClient(2, 5*time.Second)
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/next" || len(resp.Cookies()) != 2 {
		t.Fatalf("%d %v %v", resp.StatusCode, resp.Header, resp.Cookies())
	}
	if _, b := get(t, c, srv.URL+"/next"); b != "12" {
		t.Fatalf("%q", b)
	}
	c.CheckRedirect = nil // followed
	if _, b := get(t, c, srv.URL+"/login"); b != "12" {
		t.Fatalf("followed: %q", b)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	c := newClient(2, 200*time.Millisecond)
	start := time.Now()
	_, err := c.Get(srv.URL)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("timeout: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("timeout took %v", d)
	}

	c = newClient(2, 0)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	start = time.Now()
	_, err = c.Do(req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("cancel took %v", d)
	}
	ctx, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err = c.Do(req); !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("context deadline: %v", err)
	}
}

func TestConnectionRefused(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	if _, err := newClient(1, time.Second).Get("http://" + addr); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("%v", err)
	}
}

// A kept-alive connection the server closed meanwhile is replaced without
// an error, for a POST too: the check before reuse finds it closed.
func TestStaleConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepted atomic.Int64
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				// Answer one request, then close the idle connection.
				defer nc.Close()
				br := bufio.NewReader(nc)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				time.Sleep(20 * time.Millisecond)
			}()
		}
	}()
	tr := &Transport{Timeout: 2 * time.Second, ProbeIdle: 10 * time.Millisecond}
	var later time.Duration
	tr.clock = func() time.Time { return time.Now().Add(later) }
	c := &http.Client{Transport: tr}
	for i := range 4 {
		var resp *http.Response
		if i%2 == 0 {
			resp, err = c.Get("http://" + l.Addr().String())
		} else {
			resp, err = c.Post("http://"+l.Addr().String(), "text/plain", strings.NewReader("x"))
		}
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
		waitFor(t, "the server's close", func() bool { return !tr.idleConn(0).alive() })
		later += 2 * tr.ProbeIdle // idle long enough to be checked
	}
	if accepted.Load() != 4 {
		t.Errorf("%d connections", accepted.Load())
	}
}

func TestMalformedAnswers(t *testing.T) {
	for name, answer := range map[string]string{
		"status":    "HTTP/1.1 abc OK\r\n\r\n",
		"protocol":  "SPDY/3 200 OK\r\n\r\n",
		"header":    "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"truncated": "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
	} {
		t.Run(name, func(t *testing.T) {
			l, _ := net.Listen("tcp", "127.0.0.1:0")
			defer l.Close()
			go func() {
				nc, err := l.Accept()
				if err != nil {
					return
				}
				http.ReadRequest(bufio.NewReader(nc))
				io.WriteString(nc, answer)
				nc.Close()
			}()
			resp, err := newClient(1, time.Second).Get("http://" + l.Addr().String())
			if err == nil {
				_, err = io.ReadAll(resp.Body)
			}
			if err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// Schemes other than http and https, and URLs with user info, go to the
// fallback; https does not.
func TestFallback(t *testing.T) {
	var got []string
	fb := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.URL.String())
		return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
	})
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "tls") })
	c := &http.Client{Transport: &Transport{Fallback: fb, TLSConfig: clientTLS()}}
	for _, url := range []string{"other://host/x", "https://u:p@host/y", srv.URL} {
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if want := "other://host/x https://u:p@host/y"; strings.Join(got, " ") != want {
		t.Errorf("the fallback served %q, want %q", got, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestLocalAddr: connections come from LocalAddr, on the h1 path (http
// and https) and through the default fallback (a server on 127.0.0.1
// sees 127.0.0.2).
func TestLocalAddr(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		io.WriteString(w, host)
	}
	srv, _ := server(t, h)
	tsrv, _ := tlsServer(t, h)
	for _, tc := range []struct {
		local netip.Addr
		want  string
	}{{netip.Addr{}, "127.0.0.1"}, {netip.MustParseAddr("127.0.0.2"), "127.0.0.2"}} {
		tr := &Transport{LocalAddr: tc.local, TLSConfig: clientTLS()}
		for _, url := range []string{srv.URL, tsrv.URL} {
			if _, from := get(t, &http.Client{Transport: tr}, url); from != tc.want {
				t.Errorf("LocalAddr %v, %s: the server saw %s, want %s", tc.local, url, from, tc.want)
			}
		}
		f := tr.fallbackRT().(*http.Transport)
		if _, from := get(t, &http.Client{Transport: f}, srv.URL); from != tc.want {
			t.Errorf("LocalAddr %v, fallback: the server saw %s, want %s", tc.local, from, tc.want)
		}
		tr.CloseIdleConnections()
	}
}

func TestConcurrent(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Query().Get("i")) })
	c := newClient(8, 5*time.Second)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				want := fmt.Sprint(g*1000 + i)
				resp, err := c.Get(srv.URL + "/?i=" + want)
				if err != nil {
					t.Error(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != want {
					t.Errorf("got %q, want %s", b, want)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := conns.Load(); n > 8 {
		t.Errorf("%d connections for 8 goroutines", n)
	}
	c.CloseIdleConnections()
}

func BenchmarkGet(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"keys":[]}`)
	}))
	defer srv.Close()
	for name, c := range map[string]*http.Client{
		"h1":       newClient(4, 5*time.Second),
		"net-http": {Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 5 * time.Second},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// A connection kept from a run whose context was cancelled serves the
// next run without inheriting the cancellation: it is reused.
func TestConnectionOutlivesItsContext(t *testing.T) {
	srv, conns := server(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	c := newClient(4, 5*time.Second)
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel() // the conn is idle, watching a context now done
		if string(b) != "ok" {
			t.Fatalf("%q", b)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 200 requests in turn, want 1 reused", n)
	}
}
