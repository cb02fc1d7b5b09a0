package h1

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// idleConn returns the i-th idle connection of the pool (test helper).
func (p *pool) idleConn(i int) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cs := range p.idle {
		if i < len(cs) {
			return cs[i]
		}
	}
	return nil
}

// getIn does a GET in ctx and returns the body.
func getIn(t *testing.T, ctx context.Context, c *http.Client, url string) string {
	t.Helper()
	b, err := tryGet(ctx, c, url)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tryGet(ctx context.Context, c *http.Client, url string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return string(b), err
}

// handshakes records a Scope's OnHandshake calls as "full", "resumed" or
// "error".
type handshakes struct {
	mu  sync.Mutex
	got []string
}

func (h *handshakes) record(start time.Time, resumed bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil:
		h.got = append(h.got, "error")
	case start.IsZero() || time.Since(start) < 0:
		h.got = append(h.got, "bad start")
	case resumed:
		h.got = append(h.got, "resumed")
	default:
		h.got = append(h.got, "full")
	}
}

// The connection policies over TLS 1.3 and 1.2, with and without session
// resumption: reuse and per-vu make one handshake for a VU's requests;
// per-iteration one per iteration, full or (after the first) resumed.
func TestPolicies(t *testing.T) {
	const iterations, perIteration = 3, 2
	for _, version := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		for _, resume := range []bool{false, true} {
			for _, policy := range []string{"reuse", "per-vu", "per-iteration"} {
				name := fmt.Sprintf("%s/resume=%v/%s", tls.VersionName(version), resume, policy)
				t.Run(name, func(t *testing.T) { testPolicy(t, policy, version, resume, iterations, perIteration) })
			}
		}
	}
}

func testPolicy(t *testing.T, policy string, version uint16, resume bool, iterations, perIteration int) {
	srv, conns := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	cfg := clientTLS()
	cfg.MaxVersion = version
	tr := &Transport{Timeout: 5 * time.Second, TLSConfig: cfg, Resume: resume, Fallback: noFallback(t)}
	c := &http.Client{Transport: tr}
	var hs handshakes
	sc := &Scope{Private: policy != "reuse", OnHandshake: hs.record}
	ctx := WithScope(context.Background(), sc)
	for range iterations {
		for range perIteration {
			if b := getIn(t, ctx, c, srv.URL); b != "ok" {
				t.Fatalf("%q", b)
			}
		}
		if policy == "per-iteration" {
			sc.CloseIdle()
		}
	}
	want := []string{"full"}
	if policy == "per-iteration" {
		for range iterations - 1 {
			want = append(want, map[bool]string{false: "full", true: "resumed"}[resume])
		}
	}
	if !slices.Equal(hs.got, want) {
		t.Errorf("OnHandshake saw %v, want %v", hs.got, want)
	}
	st := tr.TLSStats()
	resumed := int64(0)
	if resume && policy == "per-iteration" {
		resumed = int64(iterations - 1)
	}
	if st.Handshakes != int64(len(want)) || st.Resumed != resumed || st.Failed != 0 || st.Version != version {
		t.Errorf("stats %+v, want %d handshakes, %d resumed, %s", st, len(want), resumed, tls.VersionName(version))
	}
	if n := conns.Load(); n != int64(len(want)) || tr.Dials() != n {
		t.Errorf("the server saw %d connections, %d dialled; want %d", n, tr.Dials(), len(want))
	}
	sc.CloseIdle()
	tr.CloseIdleConnections()
}

// Private scopes keep their connections from each other and from the
// shared pool, and closing one's leaves the others'.
func TestPrivateScopes(t *testing.T) {
	srv, conns := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.RemoteAddr) })
	tr := &Transport{Timeout: 5 * time.Second, TLSConfig: clientTLS(), Fallback: noFallback(t)}
	c := &http.Client{Transport: tr}
	a, b := &Scope{Private: true}, &Scope{Private: true}
	ctxs := map[string]context.Context{
		"a":      WithScope(context.Background(), a),
		"b":      WithScope(context.Background(), b),
		"shared": WithScope(context.Background(), &Scope{}),
		"none":   context.Background(),
	}
	from := map[string]string{} // scope: the client address the server saw
	for range 3 {
		for name, ctx := range ctxs {
			addr := getIn(t, ctx, c, srv.URL)
			if from[name] != "" && from[name] != addr {
				t.Fatalf("%s: a request from %s, then from %s: want its connection kept", name, from[name], addr)
			}
			from[name] = addr
		}
	}
	if from["shared"] != from["none"] || from["a"] == from["b"] || from["a"] == from["none"] || from["b"] == from["none"] {
		t.Errorf("the server saw %v: want a, b and the shared pool (shared and none) apart", from)
	}
	a.CloseIdle()
	if got := getIn(t, ctxs["a"], c, srv.URL); got == from["a"] {
		t.Errorf("a kept its connection after its CloseIdle")
	}
	if got := getIn(t, ctxs["b"], c, srv.URL); got != from["b"] {
		t.Errorf("b lost its connection to a's CloseIdle")
	}
	if got := getIn(t, ctxs["none"], c, srv.URL); got != from["none"] {
		t.Errorf("the shared pool lost its connection to a's CloseIdle")
	}
	if n := conns.Load(); n != 4 {
		t.Errorf("%d connections, want 4", n)
	}
	a.CloseIdle()
	b.CloseIdle()
}

// Requests in scoped contexts register the connection's cancellation
// watch once, as requests in the run's context do: WithScope keeps the
// Done channel, so a shared connection going from VU to VU (each with its
// own Scope on the run's context) is not registered again.
func TestScopeWatchesOnce(t *testing.T) {
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	c := testClient(4, 5*time.Second)
	tr := c.Transport.(*Transport)
	run, cancel := context.WithCancel(context.Background())
	defer cancel()
	private := &Scope{Private: true}
	for name, ctxs := range map[string][]context.Context{
		"private": {WithScope(run, private)},
		"shared":  {WithScope(run, &Scope{}), WithScope(run, &Scope{}), run},
	} {
		for i := range 60 {
			getIn(t, ctxs[i%len(ctxs)], c, srv.URL)
		}
		cn := tr.poolFor(scopeOf(ctxs[0])).idleConn(0)
		if cn == nil {
			t.Fatalf("%s: no idle connection", name)
		}
		if gen := cn.st.Load() >> 2; gen != 1 {
			t.Errorf("%s: the connection registered its watch %d times for 60 requests, want once", name, gen)
		}
	}
	private.CloseIdle()
}

// A failed handshake reaches OnHandshake with its error, for a shared
// scope too.
func TestOnHandshakeError(t *testing.T) {
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {})
	var hs handshakes
	ctx := WithScope(context.Background(), &Scope{OnHandshake: hs.record})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := (&http.Client{Transport: &Transport{Timeout: 5 * time.Second}}).Do(req); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
	if !slices.Equal(hs.got, []string{"error"}) {
		t.Errorf("OnHandshake saw %v, want one error", hs.got)
	}
}

// VUs under the per-iteration policy at once, each in its own scope.
func TestPerIterationConcurrent(t *testing.T) {
	srv, conns := tlsServer(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tr := &Transport{Timeout: 5 * time.Second, TLSConfig: clientTLS(), Resume: true, Fallback: noFallback(t)}
	c := &http.Client{Transport: tr}
	const vus, iterations = 4, 5
	var wg sync.WaitGroup
	for range vus {
		wg.Go(func() {
			sc := &Scope{Private: true}
			ctx := WithScope(context.Background(), sc)
			for range iterations {
				for range 2 {
					if b, err := tryGet(ctx, c, srv.URL); err != nil || b != "ok" {
						t.Errorf("%q %v", b, err)
						return
					}
				}
				sc.CloseIdle()
			}
		})
	}
	wg.Wait()
	if st := tr.TLSStats(); st.Handshakes != vus*iterations || st.Failed != 0 || st.Resumed == 0 {
		t.Errorf("stats %+v, want %d handshakes, some resumed", st, vus*iterations)
	}
	if n := conns.Load(); n != vus*iterations {
		t.Errorf("%d connections, want %d", n, vus*iterations)
	}
}

// BenchmarkTLS: a GET over TLS on a kept-alive connection (h1 and
// net/http), and on a new connection per request (per-iteration), with a
// full handshake or a resumed one.
func BenchmarkTLS(b *testing.B) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"keys":[]}`)
	}))
	srv.TLS = serverTLS()
	srv.StartTLS()
	defer srv.Close()
	for _, bc := range []struct {
		name                 string
		rt                   http.RoundTripper
		perIteration, resume bool
	}{
		{name: "h1/reuse"},
		{name: "net-http/reuse", rt: &http.Transport{TLSClientConfig: clientTLS(), MaxIdleConnsPerHost: 4}},
		{name: "h1/per-iteration", perIteration: true},
		{name: "h1/per-iteration-resume", perIteration: true, resume: true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			tr := &Transport{Timeout: 5 * time.Second, TLSConfig: clientTLS(), Resume: bc.resume}
			c := &http.Client{Transport: tr} // h1 applies its Timeout itself
			if bc.rt != nil {
				c = &http.Client{Transport: bc.rt, Timeout: 5 * time.Second}
			}
			sc := &Scope{Private: true}
			ctx := WithScope(context.Background(), sc)
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if bc.perIteration {
					sc.CloseIdle()
				}
			}
			if bc.rt == nil {
				st := tr.TLSStats()
				b.ReportMetric(float64(st.Handshakes)/float64(b.N), "handshakes/op")
				b.ReportMetric(float64(st.Resumed)/float64(b.N), "resumed/op")
			}
			sc.CloseIdle()
		})
	}
}
