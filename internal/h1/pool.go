package h1

import "sync"

// connKey tells apart the connections a pool keeps: by address, and TLS
// or not (http and https to one host:port are different connections).
type connKey struct {
	addr string // host:port
	tls  bool
}

// pool keeps idle connections for reuse, a stack per connKey: the newest
// is taken first, and the oldest, at the bottom, expires.
type pool struct {
	mu   sync.Mutex
	idle map[connKey][]*conn
}

// take removes and returns the connection for key idle for the shortest
// time, or nil.
func (p *pool) take(key connKey) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := p.idle[key]
	if len(cs) == 0 {
		return nil
	}
	c := cs[len(cs)-1]
	cs[len(cs)-1] = nil
	p.idle[key] = cs[:len(cs)-1]
	return c
}

// put keeps c for reuse, and closes the oldest idle connection when it
// has expired (under a steady load it is never taken). A full pool
// closes c instead.
func (p *pool) put(c *conn) {
	now := c.lastUse // no clock read per request: idle times are counted from the exchange's start
	c.idleAt = now
	var expired *conn
	p.mu.Lock()
	if p.idle == nil {
		p.idle = map[connKey][]*conn{}
	}
	cs := p.idle[c.key]
	if len(cs) > 0 && now.Sub(cs[0].idleAt) > c.t.idleTimeout() {
		expired = cs[0]
		copy(cs, cs[1:])
		cs[len(cs)-1] = nil
		cs = cs[:len(cs)-1]
	}
	if len(cs) < c.t.maxIdle() {
		p.idle[c.key] = append(cs, c)
		c = nil
	} else {
		p.idle[c.key] = cs
	}
	p.mu.Unlock()
	if expired != nil {
		expired.close()
	}
	if c != nil {
		c.close()
	}
}

// closeIdle closes the idle connections.
func (p *pool) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, cs := range idle {
		for _, c := range cs {
			c.close()
		}
	}
}
