// Package fhttp puts valyala/fasthttp's client behind http.RoundTripper, so
// that it can serve the scenarios (which speak *http.Client through
// internal/kc) in place of internal/h1, for comparing their costs.
//
// The adapter costs what fasthttp itself avoids: the request is copied
// into a fasthttp.Request, and the response's headers and body are copied
// out into an http.Response, since fasthttp reuses its buffers.
// A request's context acts through its deadline only (fasthttp has no
// cancellation): this is a measuring aid, not the engine's client.
package fhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
)

// Transport is an http.RoundTripper on a fasthttp.Client.
type Transport struct {
	c       *fasthttp.Client
	timeout time.Duration
}

// NewClient returns an http.Client on fasthttp with up to maxConns
// connections per host and a timeout per request. Idempotent requests are
// not retried; nothing is.
func NewClient(maxConns int, timeout time.Duration) *http.Client {
	return &http.Client{Transport: &Transport{timeout: timeout, c: &fasthttp.Client{
		MaxConnsPerHost:               maxConns,
		MaxIdleConnDuration:           90 * time.Second,
		MaxIdemponentCallAttempts:     1,
		NoDefaultUserAgentHeader:      false,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		Name:                          "kcbench",
	}}}
}

// CloseIdleConnections closes the kept-alive connections.
func (t *Transport) CloseIdleConnections() { t.c.CloseIdleConnections() }

// Exchange is RoundTrip for a caller that needs the status and body only
// (as h1.Transport.Exchange): the body is appended to dst, no header map
// is built. A body over max bytes is an error.
func (t *Transport) Exchange(req *http.Request, dst []byte, max int) (int, []byte, error) {
	fresp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(fresp)
	if err := t.do(req, fresp); err != nil {
		return 0, dst, err
	}
	b := fresp.Body()
	if len(b) > max {
		return 0, dst, fmt.Errorf("fhttp: answer larger than %d bytes", max)
	}
	return fresp.StatusCode(), append(dst, b...), nil
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	fresp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(fresp)
	if err := t.do(req, fresp); err != nil {
		return nil, err
	}
	resp := &http.Response{
		Status: http.StatusText(fresp.StatusCode()), StatusCode: fresp.StatusCode(),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
		Header: make(http.Header, fresp.Header.Len()),
	}
	for k, v := range fresp.Header.All() {
		resp.Header.Add(string(k), string(v))
	}
	body := bytes.Clone(fresp.Body())
	resp.ContentLength = int64(len(body))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// do sends req through fasthttp into fresp.
func (t *Transport) do(req *http.Request, fresp *fasthttp.Response) error {
	freq := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(freq)
	freq.Header.SetMethod(req.Method)
	freq.SetRequestURI(req.URL.String())
	if req.Host != "" {
		freq.Header.SetHost(req.Host)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			freq.Header.Add(k, v)
		}
	}
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return err
		}
		freq.SetBodyRaw(b)
	}
	deadline := time.Now().Add(t.timeout)
	if d, ok := req.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := req.Context().Err(); err != nil {
		return err
	}
	if err := t.c.DoDeadline(freq, fresp, deadline); err != nil {
		if errors.Is(err, fasthttp.ErrTimeout) {
			if cerr := req.Context().Err(); cerr != nil {
				return cerr
			}
			return context.DeadlineExceeded
		}
		if errors.Is(err, fasthttp.ErrConnectionClosed) {
			return &closedError{err}
		}
		return err
	}
	return nil
}

type closedError struct{ err error }

func (e *closedError) Error() string          { return e.err.Error() }
func (e *closedError) Unwrap() error          { return e.err }
func (e *closedError) ConnectionBroken() bool { return true }
