package scenario

import (
	"cmp"
	"context"
	"sync"

	"github.com/kcbench/kcbench/internal/results"
)

// sessionPool holds the refresh scenario's sessions, shared by its VUs:
// a VU takes the session idle longest, refreshes it and puts it back, so
// while some sessions are idle every one is refreshed in turn, whatever
// the VUs' number.
//
// The sessions are not the VUs': they were (SessionsPerVU logged in when
// a VU was made), and an open-model step that fell behind made VUs, each
// logging two users in before its first refresh, on the arrivals' path:
// a probe that fell behind spent its time on logins, and the steps after
// it on writes of the new sessions (docs/results/capacity-search).
// The pool's size is set before a run (prepare: SessionsPerVU × the VUs
// allocated up front, logged in before the clock starts) and does not
// follow the VUs. A scenario that was not prepared (a test driving it
// directly) adds SessionsPerVU to the size per VU made, and logs them in
// as its VUs first need them.
type sessionPool struct {
	env   *Env
	mu    sync.Mutex
	idle  []*session // oldest first
	made  int        // sessions logged in (or being logged in)
	want  int        // the pool's size
	freed chan struct{}
}

// sessionPools keeps a pool across the runs of a capacity search
// (UserCache), so that each step refreshes the sessions of the last.
type sessionPools struct {
	mu    sync.Mutex
	pools map[string]*sessionPool
}

// get returns the pool named name, made with env when new; a kept pool
// logs its new sessions in with env's client and users.
func (ps *sessionPools) get(name string, env *Env) *sessionPool {
	if ps == nil {
		return &sessionPool{env: env}
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.pools[name]
	if !ok {
		if ps.pools == nil {
			ps.pools = map[string]*sessionPool{}
		}
		p = &sessionPool{}
		ps.pools[name] = p
	}
	p.mu.Lock()
	p.env = env
	p.mu.Unlock()
	return p
}

// grow raises the pool's size to at least n sessions.
func (p *sessionPool) grow(n int) {
	p.mu.Lock()
	p.want = max(p.want, n)
	p.mu.Unlock()
}

// add raises the pool's size by n sessions.
func (p *sessionPool) add(n int) {
	p.mu.Lock()
	p.want += n
	p.mu.Unlock()
}

// fill logs sessions in until the pool holds its size, loginWorkers at a
// time.
func (p *sessionPool) fill(ctx context.Context) error {
	const loginWorkers = 8
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		first error
	)
	for range loginWorkers {
		wg.Go(func() {
			for ctx.Err() == nil {
				s, ok, err := p.login(ctx)
				if !ok {
					return
				}
				if err != nil {
					errMu.Lock()
					first = cmp.Or(first, err)
					errMu.Unlock()
					return
				}
				p.put(s)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// login logs one more session in when the pool is below its size (ok
// false when it is not). A failed login gives its place back.
func (p *sessionPool) login(ctx context.Context) (s *session, ok bool, err error) {
	p.mu.Lock()
	if p.made >= p.want {
		p.mu.Unlock()
		return nil, false, nil
	}
	id := p.made
	p.made++
	env := p.env
	p.mu.Unlock()
	s, err = newSession(ctx, env, env.rng(results.ScenarioRefresh, -1-id), "")
	if err != nil {
		p.mu.Lock()
		p.made--
		p.mu.Unlock()
		return nil, true, err
	}
	return s, true, nil
}

// take returns the session idle longest; when none is idle it logs a new
// one in while the pool is below its size, else waits for one.
func (p *sessionPool) take(ctx context.Context) (*session, error) {
	for {
		p.mu.Lock()
		if len(p.idle) > 0 {
			s := p.idle[0]
			p.idle[0] = nil
			p.idle = p.idle[1:]
			p.mu.Unlock()
			return s, nil
		}
		if p.made < p.want {
			p.mu.Unlock()
			s, ok, err := p.login(ctx)
			if ok {
				return s, err
			}
			continue
		}
		if p.freed == nil {
			p.freed = make(chan struct{})
		}
		freed := p.freed
		p.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// put gives a session back; it becomes the last to be taken.
func (p *sessionPool) put(s *session) {
	p.mu.Lock()
	p.idle = append(p.idle, s)
	if p.freed != nil {
		close(p.freed)
		p.freed = nil
	}
	p.mu.Unlock()
}
