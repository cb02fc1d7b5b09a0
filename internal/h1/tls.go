package h1

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// tlsWire is an https connection as a wire: a tls.Conn over the TCP
// socket's own wire (rawIO on Linux), so that TLS records get the same
// system calls, and the same holding back of writes until the next read,
// as plain http. The conn's deadlines and cancellation set the socket's
// deadline through it.
type tlsWire struct {
	*tls.Conn
	sock *sockConn
	// ready: the handshake completed; what is written since is requests.
	ready bool
	// failed: a read returned an error (such as a close_notify read with
	// the end of an answer), so the stream has ended.
	failed bool
}

func (w *tlsWire) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if err != nil {
		w.failed = true
	}
	return n, err
}

// sent counts the bytes of TLS records handed to the socket: none added
// during an exchange means that no byte of its request left this process
// (a request still held back by the socket's wire has not).
func (w *tlsWire) sent() int64 { return w.sock.w.sent() }

// alive peeks at the idle socket under the TLS connection as the plain
// wire does: anything pending (a close_notify, an end of stream, or any
// record the server sent unasked) makes the connection unusable. See also
// quiet.
func (w *tlsWire) alive() bool { return !w.failed && w.sock.w.alive() }

// quiet reports that TLS holds no record read from the socket along with
// the end of the last answer (such as a close_notify before a half-close):
// a read with an expired deadline processes those and reads nothing from
// the socket. dl is the connection's deadline, set again after.
func (w *tlsWire) quiet(dl time.Time) bool {
	w.Conn.SetReadDeadline(aLongTimeAgo)
	var b [1]byte
	n, err := w.Conn.Read(b[:])
	w.Conn.SetReadDeadline(dl)
	var ne net.Error
	return n == 0 && errors.As(err, &ne) && ne.Timeout()
}

// Close drops the bytes the socket's wire still holds back after the
// handshake (a request whose answer will not be read must not leave
// late), then closes the TLS connection: a close_notify alert (or the
// alert of a failed handshake, still held), then the socket.
func (w *tlsWire) Close() error {
	if h, ok := w.sock.w.(holder); ok && w.ready {
		h.dropHeld()
	}
	return w.Conn.Close()
}

// holder is a wire that holds writes back until its next read (rawIO).
type holder interface {
	// dropHeld forgets the bytes held back.
	dropHeld()
	// sendHeld sends the bytes held back, as far as the socket takes them
	// without waiting.
	sendHeld()
}

// sockConn is the TCP connection under a tls.Conn, its reads and writes
// going through the socket's wire.
type sockConn struct {
	net.Conn
	w wire
}

func (s *sockConn) Read(p []byte) (int, error)  { return s.w.Read(p) }
func (s *sockConn) Write(p []byte) (int, error) { return s.w.Write(p) }

// Close sends what the wire holds back (the close_notify alert that
// tls.Conn.Close just wrote), without waiting, and closes the socket.
func (s *sockConn) Close() error {
	if h, ok := s.w.(holder); ok {
		h.sendHeld()
	}
	return s.Conn.Close()
}

// newTLSWire starts a TLS client connection over nc, a TCP connection to
// addr; its handshake is still to be made.
func (t *Transport) newTLSWire(nc net.Conn, addr string) *tlsWire {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	sock := &sockConn{Conn: nc, w: newWire(nc)}
	return &tlsWire{Conn: tls.Client(sock, t.tlsConfig(host)), sock: sock}
}

// tlsConfig returns the TLS configuration for connections to host, built
// once per host from TLSConfig (see there).
func (t *Transport) tlsConfig(host string) *tls.Config {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cfg := t.tlsConfigs[host]; cfg != nil {
		return cfg
	}
	cfg := &tls.Config{}
	if t.TLSConfig != nil {
		cfg = t.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	cfg.NextProtos = []string{"http/1.1"}
	cfg.ClientSessionCache = nil
	if t.Resume {
		if t.sessions == nil {
			t.sessions = tls.NewLRUClientSessionCache(0)
		}
		cfg.ClientSessionCache = t.sessions
	}
	if t.tlsConfigs == nil {
		t.tlsConfigs = map[string]*tls.Config{}
	}
	t.tlsConfigs[host] = cfg
	return cfg
}

// handshake makes the TLS handshake of a new connection on which an
// exchange under ctx has begun: it is bounded by dl and aborted by ctx's
// cancellation (through the connection's deadline, as any exchange is).
// It counts the handshake and tells sc; on an error it closes the
// connection.
func (c *conn) handshake(ctx context.Context, tw *tlsWire, sc *Scope, dl time.Time) error {
	c.nc.SetDeadline(dl)
	c.dl = dl
	start := time.Now()
	// ctx acts through the deadline: HandshakeContext would watch it too.
	if err := tw.HandshakeContext(context.Background()); err != nil {
		c.t.hs.count(start, nil)
		c.release(false)
		err = handshakeError(ctx, c.key.addr, err)
		sc.handshakeDone(start, false, err)
		return err
	}
	tw.ready = true
	st := tw.ConnectionState()
	c.t.hs.count(start, &st)
	sc.handshakeDone(start, st.DidResume, nil)
	return nil
}

// handshakeError tells why a handshake with addr failed: ctx's end, the
// server closing the connection (a *ClosedError), or err (a timeout, a
// certificate that does not verify: *tls.CertificateVerificationError).
func handshakeError(ctx context.Context, addr string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("h1: %w (TLS handshake with %s: %v)", cerr, addr, err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &ClosedError{During: "in the TLS handshake", Err: io.ErrUnexpectedEOF}
	}
	return fmt.Errorf("h1: TLS handshake with %s: %w", addr, err)
}

// TLSStats counts a Transport's TLS handshakes.
type TLSStats struct {
	Handshakes    int64         // made: completed and failed
	Resumed       int64         // completed by resuming a session
	Failed        int64         // ended by an error, a timeout or a cancellation
	HandshakeTime time.Duration // the completed ones', summed
	Version       uint16        // of the latest completed handshake, as tls.VersionTLS13 (0: none yet)
	CipherSuite   uint16        // of the latest completed handshake, as tls.TLS_AES_128_GCM_SHA256
}

// VersionName names Version, as "TLS 1.3" ("" before any handshake).
func (s TLSStats) VersionName() string {
	if s.Version == 0 {
		return ""
	}
	return tls.VersionName(s.Version)
}

// CipherSuiteName names CipherSuite, as "TLS_AES_128_GCM_SHA256" (""
// before any handshake).
func (s TLSStats) CipherSuiteName() string {
	if s.Version == 0 {
		return ""
	}
	return tls.CipherSuiteName(s.CipherSuite)
}

// TLSStats returns the counts of the Transport's TLS handshakes so far.
func (t *Transport) TLSStats() TLSStats {
	last := t.hs.last.Load()
	return TLSStats{
		Handshakes:    t.hs.begun.Load(),
		Resumed:       t.hs.resumed.Load(),
		Failed:        t.hs.failures.Load(),
		HandshakeTime: time.Duration(t.hs.nanos.Load()),
		Version:       uint16(last >> 16),
		CipherSuite:   uint16(last),
	}
}

// Dials returns how many connections the h1 path has opened (TCP
// connects that succeeded), for http and https.
func (t *Transport) Dials() int64 { return t.dials.Load() }

// handshakeCounts are TLSStats' atomic counters.
type handshakeCounts struct {
	begun, resumed, failures, nanos atomic.Int64
	last                            atomic.Uint32 // version<<16 | cipher suite
}

// count adds a handshake begun at start: completed with st, or failed
// (st nil).
func (h *handshakeCounts) count(start time.Time, st *tls.ConnectionState) {
	h.begun.Add(1)
	if st == nil {
		h.failures.Add(1)
		return
	}
	h.nanos.Add(int64(time.Since(start)))
	if st.DidResume {
		h.resumed.Add(1)
	}
	h.last.Store(uint32(st.Version)<<16 | uint32(st.CipherSuite))
}
