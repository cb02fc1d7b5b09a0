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
// It speaks http:// and https:// (HTTP/1.1 over crypto/tls, whose records
// go through the same socket calls), without proxies, compression,
// trailers, protocol upgrades or HTTP/2; other schemes go to a fallback
// net/http Transport, bounded by the same Timeout. It is made for talking
// to one server from many virtual users, each doing one request at a
// time. A TLS handshake is bounded by DialTimeout and the request's
// deadline and context like any I/O, is counted (TLSStats), and resumes
// an earlier session when Resume is set.
// A virtual user's requests may carry a Scope (WithScope): a pool of
// connections of its own, for the per-vu and per-iteration connection
// policies, and a hook on the TLS handshakes they make.
//
// What an instrument needs from its client:
//
//   - A request is sent once. After a connection error, only an
//     idempotent request (GET, HEAD, OPTIONS, TRACE) is sent again, once, on
//     a new connection, when it failed on a kept-alive connection before any
//     byte of an answer arrived; any other request (a token grant, a login
//     form) only when provably no byte of it left this process. A login is
//     never counted twice, a refresh token never used twice.
//   - A kept-alive connection idle for longer than IdleTimeout is closed, and
//     one idle for more than ProbeIdle (a second) is checked before use (a
//     non-blocking peek, on Linux), so a connection the server closed
//     meanwhile is replaced instead of failing a request.
//   - Responses are framed strictly: a malformed or conflicting
//     Content-Length, a Transfer-Encoding other than chunked, or both
//     headers at once are errors; a response with neither is read until
//     the server closes (RFC 9112 §6.3) and its connection not reused.
//   - Errors say what happened: a connection the server closed before the
//     end of an answer (or of a TLS handshake) is a *ClosedError
//     (load.Classify: conn_reset), deadlines are timeouts, a refused
//     connect is ECONNREFUSED, a server certificate that does not verify
//     is a *tls.CertificateVerificationError.
//
// All of this holds for https as for http: a TLS connection the server
// closed while idle (a close_notify, then the end of the stream) is found
// by the same peek at its socket, and at the records TLS has read.
//
// Imports: the standard library only (with unsafe, for the raw calls and
// for reading a response head in place on the Exchange path).
package h1

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/textproto"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Defaults of a Transport's zero fields.
const (
	DefaultMaxIdlePerHost = 100
	DefaultDialTimeout    = 5 * time.Second
	DefaultIdleTimeout    = 90 * time.Second
	// DefaultProbeIdle: a connection idle for longer is checked before
	// reuse (one non-blocking system call). Servers close idle
	// connections after seconds to minutes; a VU that is kept busy
	// reuses its connection well within a second, even on a box so loaded
	// that it waits milliseconds for a core, and pays nothing.
	DefaultProbeIdle = time.Second
	readBufferSize   = 16 << 10
	writeBufferSize  = 4 << 10
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
	// DialTimeout bounds connecting, with the TLS handshake for https
	// (0: DefaultDialTimeout).
	DialTimeout time.Duration
	// IdleTimeout is how long a connection is kept idle for reuse
	// (0: DefaultIdleTimeout).
	IdleTimeout time.Duration
	// ProbeIdle is how long a connection may be idle before it is checked
	// for a close by the server before reuse (0: DefaultProbeIdle). Idle
	// times count from the start of the connection's last exchange.
	ProbeIdle time.Duration
	// Fallback serves what Transport does not: schemes other than http
	// and https, and URLs with user info (nil: a net/http Transport
	// without proxy and compression, with TLSConfig).
	Fallback http.RoundTripper
	// LocalAddr, when valid, is the local IP address connections are made
	// from, its own and the default fallback's (zero: the system's choice),
	// e.g. 127.0.0.2 so that a server on 127.0.0.1 tells this client apart
	// from others on the same machine.
	LocalAddr netip.Addr

	// TLSConfig configures https connections (nil: crypto/tls's defaults,
	// with the system's roots). It is cloned, never changed: the clone's
	// ServerName is the URL's host unless TLSConfig names one, its only
	// application protocol (ALPN) is http/1.1, and its session cache is
	// set by Resume. Set it before the first request.
	TLSConfig *tls.Config
	// Resume keeps one TLS session cache for the Transport
	// (tls.NewLRUClientSessionCache), so that a new connection resumes a
	// session (a TLS 1.3 PSK, a TLS 1.2 ticket) instead of a full
	// handshake. Without it every handshake is a full one.
	Resume bool

	shared     pool // the idle connections
	mu         sync.Mutex
	fallback   http.RoundTripper
	tlsConfigs map[string]*tls.Config // by server host, built from TLSConfig
	sessions   tls.ClientSessionCache // with Resume
	dials      atomic.Int64
	hs         handshakeCounts
	// clock reads the time once per request, from which idle times are
	// counted (nil: time.Now; a test moves it on instead of sleeping).
	clock func() time.Time
}

var _ http.RoundTripper = (*Transport)(nil)

// CloseIdleConnections closes the connections kept for reuse in the
// Transport's shared pool (a private Scope's are closed by its
// CloseIdle).
func (t *Transport) CloseIdleConnections() {
	t.shared.closeIdle()
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
		f := &http.Transport{MaxIdleConnsPerHost: t.maxIdle(), DisableCompression: true, IdleConnTimeout: 90 * time.Second}
		if t.LocalAddr.IsValid() {
			f.DialContext = t.dialer(0, time.Time{}).DialContext
		}
		f.TLSClientConfig = t.TLSConfig // net/http clones it
		t.fallback = f
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
	if !onPath(req.URL) {
		return t.roundTripFallback(req)
	}
	return t.roundTrip(req, false)
}

// onPath reports whether the h1 path serves u: http and https, without
// user info.
func onPath(u *url.URL) bool {
	return u != nil && (u.Scheme == "http" || u.Scheme == "https") && u.User == nil
}

// Exchange sends req as RoundTrip does and appends the answer's body to
// dst, for a caller that needs only the status and the body (a load
// scenario fetching JWKS): on the h1 path it builds no header map. A body
// longer than max bytes is an error.
func (t *Transport) Exchange(req *http.Request, dst []byte, max int) (status int, body []byte, err error) {
	var resp *http.Response
	if !onPath(req.URL) {
		resp, err = t.roundTripFallback(req)
	} else {
		resp, err = t.roundTrip(req, true)
	}
	if err != nil {
		return 0, dst, err
	}
	dst, err = appendBody(dst, resp.Body, max)
	resp.Body.Close()
	return resp.StatusCode, dst, err
}

// appendBody appends r to dst, up to max bytes, growing dst as little as
// it can.
func appendBody(dst []byte, r io.Reader, max int) ([]byte, error) {
	n0 := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		switch {
		case len(dst)-n0 > max:
			return dst, fmt.Errorf("h1: answer larger than %d bytes", max)
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, err
		}
	}
}

// roundTrip is RoundTrip on the h1 path; lite leaves the response's
// Header and Status empty.
func (t *Transport) roundTrip(req *http.Request, lite bool) (*http.Response, error) {
	if req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("h1: request URL has no host")
	}
	ctx := req.Context()
	// The context's own deadline acts through its cancellation (see
	// conn.roundTrip), not as the connection's deadline: a request cut
	// off by it then always finds the context done, as its caller expects.
	now := time.Now()
	if t.clock != nil {
		now = t.clock()
	}
	var deadline time.Time
	if t.Timeout > 0 {
		deadline = now.Add(t.Timeout)
	}
	if err := expired(ctx); err != nil {
		closeBody(req)
		return nil, err
	}
	secure := req.URL.Scheme == "https"
	key := connKey{addr: hostPort(req.URL.Host, secure), tls: secure}
	sc := scopeOf(ctx)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.getConn(ctx, sc, key, now, deadline)
		if err != nil {
			closeBody(req)
			runtime.Gosched()
			return nil, err
		}
		resp, retry, err := c.roundTrip(ctx, req, deadline, lite)
		if err == nil {
			return resp, nil
		}
		// A kept-alive connection the server closed meanwhile: send the
		// request once more on a new connection, when that cannot make
		// the server act on it twice (see roundTrip).
		if reused && retry && attempt == 0 && ctx.Err() == nil {
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

// roundTripFallback sends req through the fallback transport, bounded by
// Timeout up to the end of the response body, as the h1 path is.
func (t *Transport) roundTripFallback(req *http.Request) (*http.Response, error) {
	cancel := context.CancelFunc(func() {})
	if t.Timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), t.Timeout)
		req = req.WithContext(ctx)
	}
	resp, err := t.fallbackRT().RoundTrip(req)
	if err == nil && req.Context().Err() != nil {
		// net/http may hand over an answer that came only because the
		// deadline closed the connection (the server's handler saw its
		// request cancelled and returned): past the deadline it is a
		// timeout, as on the h1 path.
		resp.Body.Close()
		resp, err = nil, req.Context().Err()
	}
	if err != nil {
		cancel()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = &ClosedError{During: "before the response", Err: err}
		}
		return nil, err
	}
	resp.Body = &fallbackBody{rc: resp.Body, cancel: cancel}
	return resp, nil
}

// fallbackBody ends the fallback request's timeout with the body, and
// tells a body cut short by the server as a *ClosedError.
type fallbackBody struct {
	rc     io.ReadCloser
	cancel context.CancelFunc
}

func (b *fallbackBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF:
		b.cancel()
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = &ClosedError{During: "in the response body", Err: err}
	}
	return n, err
}

func (b *fallbackBody) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}

// ClosedError reports that the server closed the connection before the
// end of its answer. load.Classify counts it as conn_reset (through
// ConnectionBroken).
type ClosedError struct {
	During string // "before the response", "in the response body"
	Err    error  // io.EOF or io.ErrUnexpectedEOF
}

func (e *ClosedError) Error() string {
	return "h1: the server closed the connection " + e.During
}

func (e *ClosedError) Unwrap() error { return e.Err }

// ConnectionBroken reports true: the connection broke under the exchange.
func (e *ClosedError) ConnectionBroken() bool { return true }

// MalformedError is an answer that breaks HTTP/1.1's framing: a bad status
// or header line, a bad or conflicting Content-Length, an unknown
// Transfer-Encoding. load.Classify counts it as malformed (through
// Malformed).
type MalformedError struct{ msg string }

func malformed(format string, args ...any) *MalformedError {
	return &MalformedError{msg: "h1: " + fmt.Sprintf(format, args...)}
}

func (e *MalformedError) Error() string { return e.msg }

// Malformed reports true: the answer is not well-formed HTTP.
func (e *MalformedError) Malformed() bool { return true }

// idempotent reports whether a request may be sent again after it may
// have reached the server, as net/http decides it.
func idempotent(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// brokenConn reports whether err is the connection failing under an
// exchange (closed or reset by the peer), as opposed to a timeout or a
// malformed answer.
func brokenConn(err error) bool {
	var ce *ClosedError
	return errors.As(err, &ce) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
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

// hostPort adds the scheme's default port (80, or 443 with TLS) to a
// host without a port.
func hostPort(host string, secure bool) string {
	switch {
	case strings.LastIndexByte(host, ':') >= 0 && !strings.HasSuffix(host, "]"):
		return host
	case secure:
		return host + ":443"
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

func (t *Transport) probeIdle() time.Duration {
	if t.ProbeIdle > 0 {
		return t.ProbeIdle
	}
	return DefaultProbeIdle
}

func (t *Transport) idleTimeout() time.Duration {
	if t.IdleTimeout > 0 {
		return t.IdleTimeout
	}
	return DefaultIdleTimeout
}

// getConn returns a kept-alive connection of sc's pool that is still
// open, or dials a new one, and begins an exchange on it under ctx.
func (t *Transport) getConn(ctx context.Context, sc *Scope, key connKey, now, deadline time.Time) (*conn, bool, error) {
	p := t.poolFor(sc)
	for {
		c := p.take(key)
		if c == nil {
			break
		}
		idle := now.Sub(c.idleAt)
		if idle > t.idleTimeout() || idle > t.probeIdle() && !c.alive() {
			c.close() // expired, or closed by the server meanwhile
			continue
		}
		if !c.begin(ctx) { // ctx is done: keep the connection for others
			c.p.put(c)
			return nil, false, expired(ctx)
		}
		c.lastUse = now
		return c, true, nil
	}
	c, err := t.dial(ctx, p, sc, key, now, deadline)
	return c, false, err
}

// dial opens a connection for key (TCP, then TLS for https) that goes
// back to p when idle, and begins an exchange on it under ctx. Connecting
// and the TLS handshake together are bounded by DialTimeout; sc hears of
// the handshake.
func (t *Transport) dial(ctx context.Context, p *pool, sc *Scope, key connKey, now, deadline time.Time) (*conn, error) {
	dt := t.DialTimeout
	if dt <= 0 {
		dt = DefaultDialTimeout
	}
	nc, err := t.dialer(dt, deadline).DialContext(ctx, "tcp", key.addr)
	if err != nil {
		return nil, err
	}
	t.dials.Add(1)
	c := &conn{t: t, p: p, key: key, nc: nc}
	var tw *tlsWire
	if key.tls {
		tw = t.newTLSWire(nc, key.addr)
		c.nc, c.w = tw, tw
	} else {
		c.w = newWire(nc)
	}
	c.br, c.bw = bufio.NewReaderSize(c.w, readBufferSize), bufio.NewWriterSize(c.w, writeBufferSize)
	if !c.begin(ctx) {
		c.close()
		return nil, expired(ctx)
	}
	c.lastUse = now
	if tw != nil {
		dl := now.Add(dt)
		if !deadline.IsZero() && deadline.Before(dl) {
			dl = deadline
		}
		if err := c.handshake(ctx, tw, sc, dl); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// dialer connects from LocalAddr, when set.
func (t *Transport) dialer(timeout time.Duration, deadline time.Time) *net.Dialer {
	d := &net.Dialer{Timeout: timeout, Deadline: deadline, KeepAlive: 30 * time.Second}
	if t.LocalAddr.IsValid() {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(t.LocalAddr, 0))
	}
	return d
}

// wire is a connection's byte stream: raw system calls on Linux (rawIO),
// the net.Conn elsewhere.
type wire interface {
	io.ReadWriter
	// sent counts the bytes handed to the socket so far.
	sent() int64
	// alive reports, without blocking, that the peer has neither closed
	// the idle connection nor sent anything unasked.
	alive() bool
}

// plainWire is a net.Conn as a wire; it cannot tell an idle connection's
// state without a read, so it reports it alive.
type plainWire struct {
	net.Conn
	n int64
}

func (p *plainWire) Write(b []byte) (int, error) {
	n, err := p.Conn.Write(b)
	p.n += int64(n)
	return n, err
}

func (p *plainWire) sent() int64 { return p.n }
func (p *plainWire) alive() bool { return true }

// conn is one connection; it serves one exchange at a time.
type conn struct {
	t       *Transport
	p       *pool // where it is kept while idle
	key     connKey
	nc      net.Conn
	w       wire
	br      *bufio.Reader
	bw      *bufio.Writer
	raw     []byte // scratch for the response head
	dl      time.Time
	got     bool      // a byte of the current answer arrived
	idleAt  time.Time // when it was last put in the pool
	lastUse time.Time // when its last exchange began

	// The connection watches the Done channel of the context of its
	// requests, registered once for as long as its requests share it (a
	// load run's VUs all do): a registration per request costs more than
	// the rest of the client's own work. A cancellation aborts the I/O of
	// an exchange in progress; one that comes while the connection is
	// idle (or after its exchange ended) leaves it alone.
	watched   <-chan struct{}
	stopWatch func() bool
	// st is gen<<2 | stFired | stBusy: gen counts the contexts watched,
	// so that a stale cancellation finds a newer gen and does nothing.
	st atomic.Uint64
}

const (
	stBusy  = 1 // an exchange is in progress
	stFired = 2 // the watched context was cancelled
)

// aLongTimeAgo is a deadline in the past: it fails pending I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// begin marks the start of an exchange under ctx and makes ctx's
// cancellation abort its I/O. It reports false, and begins nothing, when
// ctx is the watched context and it is done.
func (c *conn) begin(ctx context.Context) bool {
	done := ctx.Done()
	for {
		s := c.st.Load()
		if done != c.watched {
			break
		}
		if s&stFired != 0 {
			return false
		}
		if c.st.CompareAndSwap(s, s|stBusy) {
			return true
		}
	}
	// Watch ctx instead. An earlier context's cancellation still under
	// way finds a newer gen and does nothing.
	if c.stopWatch != nil {
		c.stopWatch()
	}
	gen := c.st.Load()>>2 + 1
	c.st.Store(gen<<2 | stBusy)
	c.watched, c.stopWatch = done, nil
	if done != nil {
		c.stopWatch = context.AfterFunc(ctx, func() { c.fire(gen) })
	}
	return true
}

// fire is the watched context's cancellation: it aborts the exchange in
// progress, if any.
func (c *conn) fire(gen uint64) {
	for {
		s := c.st.Load()
		if s>>2 != gen || s&stFired != 0 {
			return
		}
		if c.st.CompareAndSwap(s, s|stFired) {
			if s&stBusy != 0 {
				c.nc.SetDeadline(aLongTimeAgo)
			}
			return
		}
	}
}

// alive checks an idle connection before reuse (see wire.alive); for
// TLS, the records already read from its socket too (tlsWire.quiet).
func (c *conn) alive() bool {
	if tw, ok := c.w.(*tlsWire); ok {
		return tw.alive() && tw.quiet(c.dl)
	}
	return c.w.alive()
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

// roundTrip does one exchange. retry reports that the request may be sent
// again on a new connection: the connection failed before any byte of an
// answer arrived (as when the server had closed it while idle), and
// either the request is idempotent or no byte of it left this process.
func (c *conn) roundTrip(ctx context.Context, req *http.Request, deadline time.Time, lite bool) (resp *http.Response, retry bool, err error) {
	switch {
	case deadline.IsZero() && !c.dl.IsZero():
		c.nc.SetDeadline(time.Time{})
		c.dl = time.Time{}
	case !deadline.IsZero() && (c.dl.IsZero() || deadline.Sub(c.dl) > deadlineSlack(c.t.Timeout)):
		c.nc.SetDeadline(deadline)
		c.dl = deadline
	}
	c.got = false
	sent := c.w.sent()
	fail := func(err error) (*http.Response, bool, error) {
		c.release(false)
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, fmt.Errorf("h1: %w (%v)", cerr, err)
		}
		retry := !c.got && brokenConn(err) && (idempotent(req) || c.w.sent() == sent)
		return nil, retry, err
	}
	if err := c.writeRequest(req); err != nil {
		return fail(err)
	}
	resp, err = c.readResponse(req, lite)
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
// lite skips the header map and the Status text.
func (c *conn) readResponse(req *http.Request, lite bool) (*http.Response, error) {
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
					return nil, malformed("response header line too long")
				}
				if err == io.EOF {
					return nil, &ClosedError{During: "before the response", Err: io.ErrUnexpectedEOF}
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
				return nil, malformed("response header too large")
			}
		}
		// head is the one string every header value points into. For lite,
		// nothing of it outlives this call (framing values are read in
		// setBody, errors quote copies): it may alias c.raw.
		var head string
		if lite {
			head = unsafe.String(unsafe.SliceData(c.raw), len(c.raw))
		} else {
			head = string(c.raw)
		}
		statusLine, rest, _ := strings.Cut(head, "\n")
		proto, status, ok := strings.Cut(statusLine, " ")
		if !ok || !strings.HasPrefix(proto, "HTTP/1.") {
			return nil, malformed("malformed status line %q", statusLine)
		}
		codeStr, _, _ := strings.Cut(status, " ")
		code, err := strconv.Atoi(codeStr)
		if err != nil || code < 100 || code > 999 {
			return nil, malformed("malformed status line %q", statusLine)
		}
		if code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			continue // an interim answer (100 Continue): the real one follows
		}
		resp := &http.Response{
			StatusCode: code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req, ContentLength: -1,
		}
		switch proto {
		case "HTTP/1.1":
		case "HTTP/1.0":
			resp.Proto, resp.ProtoMinor = "HTTP/1.0", 0
		default:
			resp.Proto = strings.Clone(proto)
		}
		var f framing
		if lite {
			var buf [6]string
			if f, err = scanFraming(rest, &buf); err != nil {
				return nil, err
			}
		} else {
			h, err := parseHeader(rest, lines-1)
			if err != nil {
				return nil, err
			}
			resp.Status, resp.Header = status, h
			f = framing{cl: h["Content-Length"], te: h["Transfer-Encoding"], conn: h["Connection"]}
		}
		if err := c.setBody(resp, req, f); err != nil {
			return nil, err
		}
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

// framing holds the values of the headers that frame a response.
type framing struct {
	cl, te, conn []string
}

// scanFraming finds the framing headers in "Key: value" lines without
// building a header map; buf backs the values.
func scanFraming(text string, buf *[6]string) (framing, error) {
	var f framing
	n := 0
	for text != "" {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		i := strings.IndexByte(line, ':')
		if i <= 0 || strings.IndexByte(line[:i], ' ') >= 0 || strings.IndexByte(line[:i], '\t') >= 0 {
			return f, malformed("malformed header line %q", line)
		}
		k, v := line[:i], line[i+1:]
		var dst *[]string
		switch {
		case k[0]|0x20 != 'c' && k[0]|0x20 != 't':
			continue // most lines: not a framing header
		case strings.EqualFold(k, "Content-Length"):
			dst = &f.cl
		case strings.EqualFold(k, "Transfer-Encoding"):
			dst = &f.te
		case strings.EqualFold(k, "Connection"):
			dst = &f.conn
		default:
			continue
		}
		v = strings.TrimSpace(v)
		if n < len(buf) && len(*dst) == 0 {
			buf[n] = v
			*dst = buf[n : n+1 : n+1]
			n++
		} else {
			*dst = append(*dst, v)
		}
	}
	return f, nil
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
			return nil, malformed("malformed header line %q", line)
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

// setBody frames the response body (RFC 9112 §6.3): none, chunked, a
// Content-Length, or until the connection closes. Framing that could be
// read two ways is an error, and the connection is not reused.
func (c *conn) setBody(resp *http.Response, req *http.Request, f framing) error {
	resp.Close = req.Close || hasToken(f.conn, "close") || resp.ProtoMinor == 0 && !hasToken(f.conn, "keep-alive")
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The connection now speaks another protocol: h1 does not
		// follow upgrades, and the connection is never reused.
		resp.Close, resp.ContentLength, resp.Body = true, 0, http.NoBody
		c.release(false)
		return nil
	}
	if req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified {
		resp.ContentLength = 0
		resp.Body = http.NoBody
		c.release(!resp.Close)
		return nil
	}
	b := &body{c: c, remain: -1}
	te, cl := f.te, f.cl
	switch {
	case len(te) > 0:
		switch {
		case len(cl) > 0:
			return malformed("response has both Transfer-Encoding and Content-Length")
		case resp.ProtoMinor == 0:
			return malformed("HTTP/1.0 response with Transfer-Encoding")
		case len(te) > 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked"):
			return malformed("unsupported Transfer-Encoding %q", strings.Join(te, ", "))
		}
		b.r, b.chunked = httputil.NewChunkedReader(c.br), true
	case len(cl) > 0:
		n, err := parseContentLength(cl)
		if err != nil {
			return err
		}
		resp.ContentLength, b.remain = n, n
		if n == 0 {
			resp.Body = http.NoBody
			c.release(!resp.Close)
			return nil
		}
	default:
		resp.Close = true // read until the server closes
		b.r = c.br
	}
	b.keep = !resp.Close
	resp.Body = b
	return nil
}

// parseContentLength reads Content-Length values: digits only; repeated
// values (in several fields or a comma list) must agree.
func parseContentLength(vs []string) (int64, error) {
	n := int64(-1)
	for _, v := range vs {
		for {
			f, rest, more := strings.Cut(v, ",")
			m, ok := parseDigits(strings.TrimSpace(f))
			if !ok {
				return 0, malformed("malformed Content-Length %q", strings.Join(vs, ", "))
			}
			if n >= 0 && m != n {
				return 0, malformed("conflicting Content-Length %q", strings.Join(vs, ", "))
			}
			n = m
			if !more {
				break
			}
			v = rest
		}
	}
	return n, nil
}

// parseDigits parses a non-negative decimal of at most 18 digits.
func parseDigits(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		n = n*10 + int64(d)
	}
	return n, true
}

func hasToken(vs []string, token string) bool {
	for _, v := range vs {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), token) {
				return true
			}
		}
	}
	return false
}

// release ends the exchange: the connection goes back to the pool when
// reuse is true and its context was not cancelled during the exchange
// (its I/O may then have been cut, or be cut by a cancellation still
// under way), else it is closed.
func (c *conn) release(reuse bool) {
	s := c.st.And(^uint64(stBusy))
	if reuse && s&stFired == 0 && c.br.Buffered() == 0 {
		c.p.put(c)
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
	if errors.Is(err, io.ErrUnexpectedEOF) { // cut short
		err = &ClosedError{During: "in the response body", Err: err}
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
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
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
