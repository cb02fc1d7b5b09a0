//go:build fasthttp

package bench

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/kcbench/kcbench/internal/fhttp"
)

// fasthttp behind http.RoundTripper, the client h1 was measured against.
func init() {
	Clients["fasthttp"] = func(conns int, timeout time.Duration, _ *tls.Config) *http.Client {
		return fhttp.NewClient(conns, timeout)
	}
}
