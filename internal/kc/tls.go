package kc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// maxCAFile bounds a CA file: a bundle of a few hundred certificates.
const maxCAFile = 4 << 20

// TLSConfig is how kcbench's clients trust the target's certificate: the
// CA file's certificates (system roots when there is none), or no check at
// all with InsecureSkipVerify. It returns nil, nil when neither is set (Go's
// defaults: system roots).
func (t Target) TLSConfig() (*tls.Config, error) {
	return ClientTLS(t.CAFile, t.InsecureSkipVerify)
}

// ClientTLS is a client TLS configuration that trusts the certificates in
// caFile (PEM), or skips verification when insecure; nil, nil when
// neither is asked for.
func ClientTLS(caFile string, insecure bool) (*tls.Config, error) {
	if caFile == "" && !insecure {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile != "" {
		pool, err := LoadCAFile(caFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// LoadCAFile reads a PEM file of CA certificates.
func LoadCAFile(path string) (*x509.CertPool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ca file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("ca file %s: not a regular file", path)
	}
	if fi.Size() > maxCAFile {
		return nil, fmt.Errorf("ca file %s: %d bytes, more than a CA bundle (%d bytes at most)", path, fi.Size(), maxCAFile)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("ca file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("ca file %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// HTTPClient is a net/http client for the target's admin and management
// calls, with timeout and the target's TLS trust. A CA file that cannot be
// read makes every request fail with that error (Validate reports it
// first).
func (t Target) HTTPClient(timeout time.Duration) *http.Client {
	return TLSClient(t.CAFile, t.InsecureSkipVerify, timeout)
}

// TLSClient is a net/http client with timeout that trusts caFile (see
// ClientTLS).
func TLSClient(caFile string, insecure bool, timeout time.Duration) *http.Client {
	cfg, err := ClientTLS(caFile, insecure)
	if err != nil {
		return &http.Client{Timeout: timeout, Transport: failing{err}}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone() // proxies from the environment, never for loopback
	tr.TLSClientConfig = cfg
	return &http.Client{Timeout: timeout, Transport: tr}
}

// failing is a transport whose every request fails with err.
type failing struct{ err error }

func (f failing) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	return nil, f.err
}

// UntrustedError wraps a failed certificate check with what to do about
// it.
type UntrustedError struct {
	URL string
	Err error
}

func (e *UntrustedError) Error() string {
	return fmt.Sprintf("the TLS certificate of %s is not trusted (%v): pass --ca-file with the CA that signed it, or --insecure-skip-verify to measure without checking it", e.URL, e.Err)
}

func (e *UntrustedError) Unwrap() error { return e.Err }

// Untrusted wraps err in an *UntrustedError when it is a failed
// certificate check, and returns it unchanged otherwise.
func Untrusted(url string, err error) error {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	if err != nil && (errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci)) {
		return &UntrustedError{URL: url, Err: err}
	}
	return err
}

// tlsCheckTimeout bounds CheckTLS's handshake.
const tlsCheckTimeout = 10 * time.Second

// CheckTLS makes one TLS handshake with an https target and reports an
// *UntrustedError when its certificate is not trusted (a bad CA file
// too); nil for http targets, and for failures other than the
// certificate's (a refused connection is the run's to report).
func CheckTLS(ctx context.Context, t Target) error {
	u, err := url.Parse(t.BaseURL)
	if err != nil || u.Scheme != "https" {
		return nil
	}
	cfg, err := t.TLSConfig()
	if err != nil {
		return err
	}
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: tlsCheckTimeout}, Config: cfg}
	ctx, cancel := context.WithTimeout(ctx, tlsCheckTimeout)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		if uerr := Untrusted(t.BaseURL, err); uerr != err {
			return uerr
		}
		return nil
	}
	return c.Close()
}
