// Package h1 is a lean HTTP/1.1 client transport for load generation.
//
// net/http's Transport hands every request to two goroutines per
// connection (a writer and a reader) and back, and a Client with a Timeout
// starts a timer goroutine per request for any other RoundTripper. On a
// small box that shares its cores with the server under test, that
// hand-off costs more CPU than the request itself. Transport does the
// exchange in the calling goroutine instead: it takes an idle keep-alive
// connection (or dials one), writes the request and reads the response
// headers on it, and gives the connection back when the caller has read
// the body to its end or closed it. Deadlines and cancellation act on the
// connection itself.
//
// On Linux it reads and writes sockets with raw system calls, waiting
// through the runtime's network poller (see rawIO).
//
// It speaks plain http:// only, without proxies, compression, trailers or
// HTTP/2; anything else goes to a fallback net/http Transport. It is made
// for talking to one server from many virtual users, each doing one
// request at a time.
//
// Imports: the standard library only (with unsafe, for the raw calls).
package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults of a Transport's zero fields.
const (
	DefaultMaxIdlePerHost = 100
	DefaultDialTimeout    = 5 * time.Second
	readBufferSize        = 16 << 10
	writeBufferSize       = 4 << 10
	// maxDrain is how much of an unread body Close reads to keep the
	// connection; a larger rest closes it instead.
	maxDrain = 256 << 10
	// maxHeaderBytes bounds a response's status line and headers.
	maxHeaderBytes = 64 << 10
)

// UserAgent is sent when a request has no User-Agent.
const UserAgent = "kcbench"

// Transport is an http.RoundTripper that does each exchange in the
// caller's goroutine on a pooled keep-alive connection. Its zero value is
// ready to use; it is safe for concurrent use.
type Transport struct {
	// Timeout bounds a request from the start of RoundTrip to the end of
	// its response body (0: no limit beyond the request's context). A
	// request may time out up to a tenth of it (at most 1 s) early: a
	// connection's deadline is not moved for every request.
	Timeout time.Duration
	// MaxIdlePerHost bounds the idle connections kept per host:port
	// (0: DefaultMaxIdlePerHost). Set it to at least the number of VUs.
	MaxIdlePerHost int
	// DialTimeout bounds connecting (0: DefaultDialTimeout).
	DialTimeout time.Duration
	// Fallback serves what Transport does not: https and other schemes
	// (nil: a net/http Transport without proxy and compression).
	Fallback http.RoundTripper

	mu       sync.Mutex
	idle     map[string][]*conn
	fallback http.RoundTripper
}

var _ http.RoundTripper = (*Transport)(nil)

// NewClient returns an http.Client on a Transport that keeps up to
// maxConns connections per host and bounds each request by timeout. The
// client itself has no Timeout: the transport applies it without a
// goroutine per request.
func NewClient(maxConns int, timeout time.Duration) *http.Client {
	return &http.Client{Transport: &Transport{Timeout: timeout, MaxIdlePerHost: maxConns}}
}

// CloseIdleConnections closes the connections kept for reuse.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.close()
		}
	}
	if f, ok := t.fallbackRT().(interface{ CloseIdleConnections() }); ok {
		f.CloseIdleConnections()
	}
}

func (t *Transport) fallbackRT() http.RoundTripper {
	if t.Fallback != nil {
		return t.Fallback
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.fallback == nil {
		t.fallback = &http.Transport{MaxIdleConnsPerHost: t.maxIdle(), DisableCompression: true, IdleConnTimeout: 90 * time.Second}
	}
	return t.fallback
}

func (t *Transport) maxIdle() int {
	if t.MaxIdlePerHost > 0 {
		return t.MaxIdlePerHost
	}
	return DefaultMaxIdlePerHost
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.URL.Scheme != "http" || req.URL.User != nil {
		return t.fallbackRT().RoundTrip(req)
	}
	if req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("h1: request URL has no host")
	}
	ctx := req.Context()
	// The context's own deadline acts through its cancellation (see
	// conn.roundTrip), not as the connection's deadline: a request cut
	// off by it then always finds the context done, as its caller expects.
	var deadline time.Time
	if t.Timeout > 0 {
		deadline = time.Now().Add(t.Timeout)
	}
	if err := expired(ctx); err != nil {
		closeBody(req)
		return nil, err
	}
	addr := hostPort(req.URL.Host)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.getConn(ctx, addr, deadline)
		if err != nil {
			closeBody(req)
			runtime.Gosched()
			return nil, err
		}
		resp, retryable, err := c.roundTrip(ctx, req, deadline)
		if err == nil {
			return resp, nil
		}
		// A kept-alive connection the server closed meanwhile fails
		// before any answer: try once more on a new one, if the
		// request can be sent again.
		if reused && retryable && attempt == 0 && ctx.Err() == nil {
			if r, ok := rewind(req); ok {
				req = r
				continue
			}
		}
		closeBody(req)
		runtime.Gosched()
		return nil, err
	}
}

// expired returns ctx's error if it is done, and then yields: a VU whose
// requests fail at once without any I/O must not keep the only thread
// busy, or the timers that end the run may never get to run.
func expired(ctx context.Context) error {
	err := ctx.Err()
	if err != nil {
		runtime.Gosched()
	}
	return err
}

// hostPort adds :80 to a host without a port.
func hostPort(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		return host
	}
	return host + ":80"
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// rewind returns req with a fresh body, if it can be sent again.
func rewind(req *http.Request) (*http.Request, bool) {
	if req.Body == nil || req.Body == http.NoBody {
		return req, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	b, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	r := *req
	r.Body = b
	return &r, true
}

func (t *Transport) getConn(ctx context.Context, addr string, deadline time.Time) (*conn, bool, error) {
	t.mu.Lock()
	for cs := t.idle[addr]; len(cs) > 0; cs = t.idle[addr] {
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		t.idle[addr] = cs[:len(cs)-1]
		if c.aborted.Load() || !c.watch(ctx) { // cancelled while idle
			c.close()
			continue
		}
		t.mu.Unlock()
		return c, true, nil
	}
	t.mu.Unlock()
	dt := t.DialTimeout
	if dt <= 0 {
		dt = DefaultDialTimeout
	}
	d := net.Dialer{Timeout: dt, Deadline: deadline, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	rw := newRawIO(nc)
	c := &conn{t: t, addr: addr, nc: nc, br: bufio.NewReaderSize(rw, readBufferSize), bw: bufio.NewWriterSize(rw, writeBufferSize)}
	c.abort = c.cancel
	c.watch(ctx)
	return c, false, nil
}

func (t *Transport) putConn(c *conn) {
	t.mu.Lock()
	if t.idle == nil {
		t.idle = map[string][]*conn{}
	}
	if cs := t.idle[c.addr]; len(cs) < t.maxIdle() {
		t.idle[c.addr] = append(cs, c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.close()
}

// conn is one connection; it serves one exchange at a time.
type conn struct {
	t     *Transport
	addr  string
	nc    net.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	abort func() // c.cancel, bound once
	raw   []byte // scratch for the response head
	dl    time.Time
	got   bool // a byte of the current answer arrived

	// The connection watches the Done channel of the context of its
	// requests, registered once for as long as its requests share it (a
	// load run's VUs all do): a registration per request costs more than
	// the rest of the client's own work.
	watched   <-chan struct{}
	stopWatch func() bool
	aborted   atomic.Bool // the watched context was cancelled
}

// aLongTimeAgo is a deadline in the past: it fails pending I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

func (c *conn) cancel() {
	c.aborted.Store(true)
	c.nc.SetDeadline(aLongTimeAgo)
}

// watch makes ctx's cancellation abort the connection's I/O. It reports
// false when the connection was watching another context that is done:
// its abort may still be on its way, so the connection must not be used.
func (c *conn) watch(ctx context.Context) bool {
	done := ctx.Done()
	if done == c.watched {
		return true
	}
	if c.stopWatch != nil {
		if !c.stopWatch() {
			c.stopWatch = nil
			return false
		}
	}
	c.watched, c.stopWatch = done, nil
	if done != nil {
		c.stopWatch = context.AfterFunc(ctx, c.abort)
	}
	return true
}

func (c *conn) close() {
	if c.stopWatch != nil {
		c.stopWatch()
		c.stopWatch, c.watched = nil, nil
	}
	c.nc.Close()
}

// deadlineSlack is how much earlier than its Timeout a request may time
// out: a connection's deadline is moved only when it is older than that,
// sparing most requests the runtime timer update.
func deadlineSlack(timeout time.Duration) time.Duration { return min(timeout/10, time.Second) }

// roundTrip does one exchange. retryable reports that it failed before
// any byte of an answer arrived, as when the server had closed a kept-alive
// connection: the request never reached it.
func (c *conn) roundTrip(ctx context.Context, req *http.Request, deadline time.Time) (resp *http.Response, retryable bool, err error) {
	if c.aborted.Load() { // ctx was cancelled
		c.release(false)
		return nil, false, fmt.Errorf("h1: %w", context.Cause(ctx))
	}
	switch {
	case deadline.IsZero() && !c.dl.IsZero():
		c.nc.SetDeadline(time.Time{})
		c.dl = time.Time{}
	case !deadline.IsZero() && (c.dl.IsZero() || deadline.Sub(c.dl) > deadlineSlack(c.t.Timeout)):
		c.nc.SetDeadline(deadline)
		c.dl = deadline
	}
	c.got = false
	fail := func(err error) (*http.Response, bool, error) {
		c.release(false)
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, fmt.Errorf("h1: %w (%v)", cerr, err)
		}
		return nil, !c.got && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
			errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)), err
	}
	if err := c.writeRequest(req); err != nil {
		return fail(err)
	}
	resp, err = c.readResponse(req)
	if err != nil {
		return fail(err)
	}
	return resp, false, nil
}

// writeRequest writes req and closes its body.
func (c *conn) writeRequest(req *http.Request) error {
	defer closeBody(req)
	w := c.bw
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	w.WriteString(method)
	w.WriteByte(' ')
	switch {
	case req.URL.Opaque != "":
		w.WriteString(req.URL.Opaque)
	default:
		p := req.URL.EscapedPath()
		if p == "" {
			p = "/"
		}
		w.WriteString(p)
		if req.URL.ForceQuery || req.URL.RawQuery != "" {
			w.WriteByte('?')
			w.WriteString(req.URL.RawQuery)
		}
	}
	w.WriteString(" HTTP/1.1\r\nHost: ")
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: " + UserAgent + "\r\n")
	}
	for k, vs := range req.Header {
		switch k {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			continue
		}
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if req.Close {
		w.WriteString("Connection: close\r\n")
	}
	var body io.Reader
	if req.Body != nil && req.Body != http.NoBody {
		body = req.Body
		n := req.ContentLength
		if n <= 0 { // unknown length: read it to send a Content-Length
			b, err := io.ReadAll(req.Body)
			if err != nil {
				return err
			}
			n, body = int64(len(b)), bytes.NewReader(b)
		}
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(n, 10))
		w.WriteString("\r\n\r\n")
		if _, err := io.CopyN(w, body, n); err != nil {
			return err
		}
	} else {
		if req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch {
			w.WriteString("Content-Length: 0\r\n")
		}
		w.WriteString("\r\n")
	}
	return w.Flush()
}

// readResponse reads the status line and headers, and sets up the body.
func (c *conn) readResponse(req *http.Request) (*http.Response, error) {
	for {
		c.raw = c.raw[:0]
		// Status line and headers, copied into raw, "\n"-separated.
		lines := 0
		for {
			line, err := c.br.ReadSlice('\n')
			if len(line) > 0 {
				c.got = true
			}
			if err != nil {
				if errors.Is(err, bufio.ErrBufferFull) {
					return nil, errors.New("h1: response header line too long")
				}
				if err == io.EOF {
					return nil, io.ErrUnexpectedEOF
				}
				return nil, err
			}
			line = trimEOL(line)
			if len(line) == 0 {
				if lines == 0 {
					continue // tolerate a stray empty line before the status
				}
				break
			}
			c.raw = append(c.raw, line...)
			c.raw = append(c.raw, '\n')
			lines++
			if len(c.raw) > maxHeaderBytes {
				return nil, errors.New("h1: response header too large")
			}
		}
		head := string(c.raw) // the one string every header value points into
		statusLine, rest, _ := strings.Cut(head, "\n")
		proto, status, ok := strings.Cut(statusLine, " ")
		if !ok || !strings.HasPrefix(proto, "HTTP/1.") {
			return nil, fmt.Errorf("h1: malformed status line %q", statusLine)
		}
		codeStr, _, _ := strings.Cut(status, " ")
		code, err := strconv.Atoi(codeStr)
		if err != nil || code < 100 || code > 999 {
			return nil, fmt.Errorf("h1: malformed status line %q", statusLine)
		}
		if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			continue // an interim answer (100 Continue): the real one follows
		}
		h, err := parseHeader(rest, lines-1)
		if err != nil {
			return nil, err
		}
		resp := &http.Response{
			Status: status, StatusCode: code, Proto: proto, ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Request: req, ContentLength: -1,
		}
		if proto == "HTTP/1.0" {
			resp.ProtoMinor = 0
		}
		c.setBody(resp, req)
		return resp, nil
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

// parseHeader reads "Key: value" lines. Values and known keys point into
// text; one []string backs all values.
func parseHeader(text string, n int) (http.Header, error) {
	h := make(http.Header, n)
	vals := make([]string, 0, n)
	for text != "" {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("h1: malformed header line %q", line)
		}
		key := canonicalKey(k)
		v = strings.TrimSpace(v)
		if old, ok := h[key]; ok {
			h[key] = append(old, v)
			continue
		}
		vals = append(vals, v)
		h[key] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return h, nil
}

// commonKeys are the canonical forms of the headers Keycloak sends, so
// that they cost no allocation whatever their case on the wire.
var commonKeys = []string{
	"Cache-Control", "Connection", "Content-Encoding", "Content-Language", "Content-Length",
	"Content-Security-Policy", "Content-Type", "Date", "Expires", "Keep-Alive", "Location", "Pragma",
	"Referrer-Policy", "Set-Cookie", "Strict-Transport-Security", "Transfer-Encoding", "Vary",
	"Www-Authenticate", "X-Content-Type-Options", "X-Frame-Options", "X-Robots-Tag", "X-Xss-Protection",
}

func canonicalKey(k string) string {
	for _, c := range commonKeys {
		if len(c) == len(k) && strings.EqualFold(c, k) {
			return c
		}
	}
	return textproto.CanonicalMIMEHeaderKey(k)
}

// setBody frames the response body: none, chunked, a Content-Length, or
// until the connection closes.
func (c *conn) setBody(resp *http.Response, req *http.Request) {
	resp.Close = req.Close || headerHas(resp.Header, "Connection", "close") || resp.ProtoMinor == 0 && !headerHas(resp.Header, "Connection", "keep-alive")
	noBody := req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent ||
		resp.StatusCode == http.StatusNotModified || (resp.StatusCode >= 100 && resp.StatusCode < 200)
	b := &body{c: c, remain: -1}
	switch {
	case noBody:
		resp.ContentLength = 0
		resp.Body = http.NoBody
		c.release(!resp.Close)
		return
	case headerHas(resp.Header, "Transfer-Encoding", "chunked"):
		b.r, b.chunked = httputil.NewChunkedReader(c.br), true
		resp.Header.Del("Content-Length")
	default:
		if cl := resp.Header["Content-Length"]; len(cl) > 0 {
			n, err := strconv.ParseInt(cl[0], 10, 64)
			if err == nil && n >= 0 {
				resp.ContentLength, b.remain = n, n
			}
		}
		if b.remain < 0 {
			resp.Close = true // read until the server closes
			b.r = c.br
		}
		if b.remain == 0 {
			resp.Body = http.NoBody
			c.release(!resp.Close)
			return
		}
	}
	b.keep = !resp.Close
	resp.Body = b
}

func headerHas(h http.Header, key, token string) bool {
	for _, v := range h[key] {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), token) {
				return true
			}
		}
	}
	return false
}

// release ends the exchange: the connection goes back to the pool when
// reuse is true and its context was not cancelled, else it is closed.
func (c *conn) release(reuse bool) {
	if reuse && c.br.Buffered() == 0 && !c.aborted.Load() {
		c.t.putConn(c)
		return
	}
	c.close()
}

// body is one response body. Reading it to its end (or closing it) gives
// the connection back.
type body struct {
	c       *conn
	r       io.Reader // chunked or until close; nil: remain bytes from c.br
	remain  int64     // bytes left with a Content-Length, else -1
	keep    bool      // the connection may be reused after the body
	chunked bool
	done    bool
	err     error
	mu      sync.Mutex
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		if b.err != nil {
			return 0, b.err
		}
		return 0, io.EOF
	}
	var n int
	var err error
	if b.r != nil {
		n, err = b.r.Read(p)
	} else {
		if int64(len(p)) > b.remain {
			p = p[:b.remain]
		}
		n, err = b.c.br.Read(p)
		b.remain -= int64(n)
		if b.remain == 0 {
			err = io.EOF
		} else if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}
	if err == io.EOF && b.chunked {
		if terr := b.c.skipTrailer(); terr != nil {
			err = terr
		}
	}
	switch {
	case err == io.EOF:
		b.finish(b.keep, nil)
	case err != nil:
		b.finish(false, err)
	}
	return n, err
}

// skipTrailer reads the trailer section that ends a chunked body.
func (c *conn) skipTrailer() error {
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(trimEOL(line)) == 0 {
			return nil
		}
	}
}

// Close drains a small rest of the body to keep the connection, or closes
// the connection.
func (b *body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	if b.r == nil && b.keep && b.remain <= maxDrain {
		_, err := b.c.br.Discard(int(b.remain))
		b.remain = 0
		b.finish(err == nil, nil)
		return nil
	}
	if b.chunked && b.keep {
		n, err := io.CopyN(io.Discard, b.r, maxDrain+1)
		ok := errors.Is(err, io.EOF) && n <= maxDrain && b.c.skipTrailer() == nil
		b.finish(ok, nil)
		return nil
	}
	b.finish(false, nil)
	return nil
}

func (b *body) finish(reuse bool, err error) {
	b.done, b.err = true, err
	b.c.release(reuse)
}
