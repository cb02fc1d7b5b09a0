package load

import (
	"net"
	"net/http"
	"time"
)

// HTTP client defaults for NewHTTPClient.
const (
	DefaultMaxConns    = 100
	DefaultHTTPTimeout = 30 * time.Second
	dialTimeout        = 5 * time.Second
	idleConnTimeout    = 90 * time.Second
)

// NewHTTPClient returns an HTTP/1.1 client tuned for load generation: it
// keeps up to maxConns idle connections per host alive for reuse (so it
// should be at least the number of VUs, or connections churn), uses no
// proxy, does not ask for compression, and gives up on a request after
// timeout. maxConns <= 0 means DefaultMaxConns, timeout <= 0
// DefaultHTTPTimeout. Callers must drain and close response bodies for
// connections to be reused.
func NewHTTPClient(maxConns int, timeout time.Duration) *http.Client {
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	if timeout <= 0 {
		timeout = DefaultHTTPTimeout
	}
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           d.DialContext,
			MaxIdleConns:          maxConns,
			MaxIdleConnsPerHost:   maxConns,
			IdleConnTimeout:       idleConnTimeout,
			TLSHandshakeTimeout:   dialTimeout,
			ExpectContinueTimeout: time.Second,
			DisableCompression:    true,
			ForceAttemptHTTP2:     false,
		},
	}
}
