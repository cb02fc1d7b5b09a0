package fhttp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/kcbench/kcbench/internal/h1"
)

// jwks is a JWKS-sized answer, as Keycloak's (two keys, ~3 KB).
var jwks = `{"keys":[` + strings.Repeat(`{"kid":"x","kty":"RSA","n":"`+strings.Repeat("A", 1400)+`"},`, 2) + `{}]}`

func TestRoundTrip(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		io.WriteString(w, string(b)+r.URL.RawQuery)
	}))
	defer srv.Close()
	c := NewClient(2, 5*time.Second)
	resp, err := c.Post(srv.URL+"/?q=1", "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "bodyq=1" || resp.Header.Get("X-Method") != "POST" || resp.StatusCode != 200 {
		t.Fatalf("%q %v", b, resp.Header)
	}
}

// BenchmarkJWKS compares the clients on one connection to an in-process
// server: the server's share is the same for each, so the differences are
// the clients'. fasthttp-native is fasthttp without the RoundTripper
// adapter, the adapter's cost being the difference to fasthttp.
func BenchmarkJWKS(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		io.WriteString(w, jwks)
	}))
	defer srv.Close()
	for _, name := range []string{"h1", "fasthttp", "net-http"} {
		c := map[string]*http.Client{"h1": &http.Client{Transport: &h1.Transport{Timeout: 5 * time.Second, MaxIdlePerHost: 1}}, "fasthttp": NewClient(1, 5*time.Second),
			"net-http": {Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Second}}[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+"/realms/master/protocol/openid-connect/certs", nil)
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
	b.Run("fasthttp-native", func(b *testing.B) {
		c := &fasthttp.Client{MaxConnsPerHost: 1}
		b.ReportAllocs()
		for b.Loop() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			req.SetRequestURI(srv.URL + "/realms/master/protocol/openid-connect/certs")
			if err := c.DoTimeout(req, resp, 5*time.Second); err != nil {
				b.Fatal(err)
			}
			_ = resp.Body()
			fasthttp.ReleaseRequest(req)
			fasthttp.ReleaseResponse(resp)
		}
	})
}

func TestExchange(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, "body")
	}))
	defer srv.Close()
	tr := NewClient(1, 5*time.Second).Transport.(*Transport)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	code, b, err := tr.Exchange(req, []byte("x:"), 10)
	if err != nil || code != http.StatusTeapot || string(b) != "x:body" {
		t.Fatalf("%d %q %v", code, b, err)
	}
}
