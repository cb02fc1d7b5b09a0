package h1

import (
	"context"
	"time"
)

// Scope is one virtual user's view of a Transport, carried in the context
// of its requests (WithScope), as net/http/httptrace carries a
// ClientTrace. With Private set, its requests take and return connections
// in the scope's own pool, never the Transport's shared one.
//
// A load run's connection policies, named after k6's options:
//
//   - reuse: no Scope, or Private unset: the VUs share the Transport's
//     kept-alive connections.
//   - per-vu: a Private Scope per VU, closed (CloseIdle) when the VU ends:
//     each VU keeps its own connections.
//   - per-iteration: a Private Scope whose CloseIdle is called after every
//     iteration (k6's noVUConnectionReuse): a new connection per iteration,
//     with a full TLS handshake unless the Transport resumes sessions.
//
// A Scope serves one Transport; its zero value is a shared one. It is safe
// for concurrent use.
type Scope struct {
	// Private keeps the scope's connections apart (see Scope).
	Private bool
	// OnHandshake, when set, is called in the requesting goroutine right
	// after each TLS handshake this scope's requests make, with its start
	// time, whether it resumed a session, and its error.
	OnHandshake func(start time.Time, resumed bool, err error)

	pool pool // with Private
}

// scopeKey is the context key of a Scope.
type scopeKey struct{}

// WithScope returns ctx carrying s: requests made with it are s's. The
// result keeps ctx's Done channel, so a connection that watches ctx for
// cancellation keeps watching it without a new registration.
func WithScope(ctx context.Context, s *Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// scopeOf returns the Scope that ctx carries, or nil.
func scopeOf(ctx context.Context) *Scope {
	s, _ := ctx.Value(scopeKey{}).(*Scope)
	return s
}

// CloseIdle closes the scope's idle connections, as at the end of an
// iteration under the per-iteration policy or of a VU under per-vu. A
// connection still in use (a response body not yet closed) is kept.
func (s *Scope) CloseIdle() { s.pool.closeIdle() }

// poolFor returns the pool of the scope's requests: its own when Private,
// else the Transport's.
func (t *Transport) poolFor(s *Scope) *pool {
	if s != nil && s.Private {
		return &s.pool
	}
	return &t.shared
}

// handshakeDone tells the scope's OnHandshake about a handshake.
func (s *Scope) handshakeDone(start time.Time, resumed bool, err error) {
	if s != nil && s.OnHandshake != nil {
		s.OnHandshake(start, resumed, err)
	}
}
