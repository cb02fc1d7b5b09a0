package h1

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
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

// testCert is a self-signed ECDSA certificate for 127.0.0.1, ::1 and
// localhost.
var testCert = sync.OnceValue(func() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "h1 test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
})

// serverTLS is a server's TLS configuration with testCert.
func serverTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{testCert()}}
}

// clientTLS is a client's TLS configuration that trusts testCert.
func clientTLS() *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(testCert().Leaf)
	return &tls.Config{RootCAs: roots}
}

// testClient is NewClient, trusting testCert.
func testClient(maxConns int, timeout time.Duration) *http.Client {
	return &http.Client{Transport: &Transport{Timeout: timeout, MaxIdlePerHost: maxConns, TLSConfig: clientTLS()}}
}

// tlsServer is server over TLS, with testCert: it counts the connections
// it accepts.
func tlsServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // failed handshakes are the point of some tests
	srv.TLS = serverTLS()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// noFallback fails the test when a request goes to the fallback.
func noFallback(t *testing.T) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		t.Errorf("%s %s went to the fallback", r.Method, r.URL)
		return nil, errors.New("no fallback")
	})
}

// https on the h1 path: GET, POST and Exchange on one kept-alive
// connection, after one handshake, counted.
func TestTLS(t *testing.T) {
	srv, conns := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		fmt.Fprintf(w, "%s %s %v", r.Method, r.PostForm.Get("k"), r.TLS != nil)
	})
	tr := &Transport{Timeout: 5 * time.Second, TLSConfig: clientTLS(), Fallback: noFallback(t)}
	c := &http.Client{Transport: tr}
	for i := range 3 {
		if _, b := get(t, c, srv.URL); b != "GET  true" {
			t.Fatalf("GET %d: %q", i, b)
		}
		resp, err := c.Post(srv.URL, "application/x-www-form-urlencoded", strings.NewReader("k=v"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "POST v true" {
			t.Fatalf("POST %d: %q", i, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	if code, b, err := tr.Exchange(req, nil, 100); err != nil || code != 200 || string(b) != "GET  true" {
		t.Fatalf("Exchange: %d %q %v", code, b, err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 kept alive", n)
	}
	st := tr.TLSStats()
	if st.Handshakes != 1 || st.Resumed != 0 || st.Failed != 0 || st.HandshakeTime <= 0 {
		t.Errorf("stats %+v, want one full handshake", st)
	}
	if st.VersionName() != "TLS 1.3" || !strings.HasPrefix(st.CipherSuiteName(), "TLS_") {
		t.Errorf("negotiated %s %s", st.VersionName(), st.CipherSuiteName())
	}
	if n := tr.Dials(); n != 1 {
		t.Errorf("%d dials, want 1", n)
	}
}

// A certificate that does not verify fails the request with the
// verification error, and counts as a failed handshake.
func TestTLSUntrusted(t *testing.T) {
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {})
	tr := &Transport{Timeout: 5 * time.Second, Fallback: noFallback(t)} // the system's roots
	_, err := (&http.Client{Transport: tr}).Get(srv.URL)
	var cve *tls.CertificateVerificationError
	var uae x509.UnknownAuthorityError
	if !errors.As(err, &cve) || !errors.As(err, &uae) {
		t.Fatalf("%v (%T), want a *tls.CertificateVerificationError for an unknown authority", err, err)
	}
	if st := tr.TLSStats(); st.Handshakes != 1 || st.Failed != 1 || st.VersionName() != "" {
		t.Errorf("stats %+v, want one failed handshake", st)
	}
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r io.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// http and https to one host:port are different connections.
func TestSchemesKeptApart(t *testing.T) {
	url, conns := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
		first, err := br.Peek(1)
		if err != nil {
			return
		}
		var rw io.ReadWriter = nc
		scheme := "http"
		if first[0] == 0x16 { // a TLS handshake record
			tc := tls.Server(&peekedConn{Conn: nc, r: br}, serverTLS())
			defer tc.Close()
			rw, br, scheme = tc, bufio.NewReader(tc), "https"
		}
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(scheme), scheme)
		}
	})
	addr := strings.TrimPrefix(url, "http://")
	tr := &Transport{Timeout: 5 * time.Second, TLSConfig: clientTLS(), Fallback: noFallback(t)}
	c := &http.Client{Transport: tr}
	for range 3 {
		for _, scheme := range []string{"http", "https"} {
			if _, b := get(t, c, scheme+"://"+addr); b != scheme {
				t.Fatalf("%s: the server answered over %s", scheme, b)
			}
		}
	}
	if n, d := conns.Load(), tr.Dials(); n != 2 || d != 2 {
		t.Errorf("%d connections, %d dials; want 2, one per scheme", n, d)
	}
}

func TestHostPort(t *testing.T) {
	for _, tc := range []struct {
		host   string
		secure bool
		want   string
	}{
		{"kc", false, "kc:80"},
		{"kc", true, "kc:443"},
		{"kc:8443", true, "kc:8443"},
		{"[::1]", true, "[::1]:443"},
		{"[::1]:8080", false, "[::1]:8080"},
	} {
		if got := hostPort(tc.host, tc.secure); got != tc.want {
			t.Errorf("hostPort(%q, %v) = %q, want %q", tc.host, tc.secure, got, tc.want)
		}
	}
}

// A kept-alive TLS connection the server closed while idle is found by
// the check before reuse and replaced: a POST goes out once, on a new
// connection, without an error. The server closes with a close_notify
// and the end of the stream, or with a close_notify alone.
func TestTLSStaleConnectionProbed(t *testing.T) {
	for name, closeWriteOnly := range map[string]bool{"close": false, "close_notify only": true} {
		t.Run(name, func(t *testing.T) {
			var posts atomic.Int64
			url, conns := rawServerOver(t, true, func(nc net.Conn, br *bufio.Reader) {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				posts.Add(1)
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				if closeWriteOnly {
					nc.(*tls.Conn).CloseWrite()
					io.Copy(io.Discard, br) // until the client closes
				}
				// return: close the connection, as an idle timeout would
			})
			tr := &Transport{Timeout: 2 * time.Second, ProbeIdle: 5 * time.Millisecond, TLSConfig: clientTLS(), Fallback: noFallback(t)}
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
				waitFor(t, "the close to arrive", func() bool { return !tr.idleConn(0).alive() })
				later += 2 * tr.ProbeIdle // idle long enough to be checked
			}
			if posts.Load() != 3 || conns.Load() != 3 {
				t.Errorf("%d POSTs on %d connections, want 3 on 3", posts.Load(), conns.Load())
			}
		})
	}
}

// Timeouts bound https as http: a handshake that never completes (by
// Timeout, by DialTimeout, by the context's deadline) and an answer that
// never comes; a cancellation aborts either.
func TestTLSTimeouts(t *testing.T) {
	mute, _ := rawServer(t, func(nc net.Conn, br *bufio.Reader) { io.Copy(io.Discard, br) })
	mute = "https://" + strings.TrimPrefix(mute, "http://") // a TCP server that never answers a ClientHello
	hang, _ := rawServerOver(t, true, func(nc net.Conn, br *bufio.Reader) { io.Copy(io.Discard, br) })
	for name, tc := range map[string]struct {
		url      string
		tr       *Transport
		ctx      func() (context.Context, context.CancelFunc)
		class    string
		failedHS int64
	}{
		"handshake, Timeout":          {mute, &Transport{Timeout: 200 * time.Millisecond}, nil, load.ClassTimeout, 1},
		"handshake, DialTimeout":      {mute, &Transport{DialTimeout: 200 * time.Millisecond}, nil, load.ClassTimeout, 1},
		"handshake, context deadline": {mute, &Transport{}, withTimeout(200 * time.Millisecond), load.ClassTimeout, 1},
		"handshake, cancelled":        {mute, &Transport{}, cancelAfter(200 * time.Millisecond), "", 1},
		"answer, Timeout":             {hang, &Transport{Timeout: 200 * time.Millisecond}, nil, load.ClassTimeout, 0},
		"answer, context deadline":    {hang, &Transport{}, withTimeout(200 * time.Millisecond), load.ClassTimeout, 0},
		"answer, cancelled":           {hang, &Transport{}, cancelAfter(200 * time.Millisecond), "", 0},
	} {
		t.Run(name, func(t *testing.T) {
			tc.tr.TLSConfig, tc.tr.Fallback = clientTLS(), noFallback(t)
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, tc.url, nil)
			start := time.Now()
			_, err := (&http.Client{Transport: tc.tr}).Do(req)
			switch {
			case tc.class == "" && !errors.Is(err, context.Canceled):
				t.Fatalf("%v, want the cancellation", err)
			case tc.class != "" && load.Classify(err) != tc.class:
				t.Fatalf("%v: class %q, want %q", err, load.Classify(err), tc.class)
			}
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Errorf("took %v", d)
			}
			if st := tc.tr.TLSStats(); st.Failed != tc.failedHS {
				t.Errorf("%d failed handshakes, want %d", st.Failed, tc.failedHS)
			}
		})
	}
}

func withTimeout(d time.Duration) func() (context.Context, context.CancelFunc) {
	return func() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), d) }
}

func cancelAfter(d time.Duration) func() (context.Context, context.CancelFunc) {
	return func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(d, cancel)
		return ctx, cancel
	}
}

// An idle TLS connection that the server keeps open passes the check
// before reuse, and its deadline still holds after it (or none, without
// Timeout).
func TestTLSProbedAndKept(t *testing.T) {
	srv, conns := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "ok")
	})
	for _, timeout := range []time.Duration{0, 300 * time.Millisecond} {
		conns.Store(0)
		tr := &Transport{Timeout: timeout, ProbeIdle: time.Millisecond, TLSConfig: clientTLS(), Fallback: noFallback(t)}
		var later time.Duration
		tr.clock = func() time.Time { return time.Now().Add(later) }
		c := &http.Client{Transport: tr}
		for range 3 {
			get(t, c, srv.URL)
			later += 5 * time.Millisecond // idle long enough to be checked
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("Timeout %v: %d connections, want 1 checked and kept", timeout, n)
		}
		if timeout > 0 {
			start := time.Now()
			if _, err := c.Get(srv.URL + "/slow"); load.Classify(err) != load.ClassTimeout || time.Since(start) > time.Second {
				t.Errorf("after the check: %v after %v, want a timeout after %v", err, time.Since(start), timeout)
			}
		}
		tr.CloseIdleConnections()
	}
}
