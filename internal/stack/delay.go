package stack

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Delay is latency added to a link: RTT is the round trip added (half of
// it each way), Jitter the spread of each chunk's delay (uniform in ±Jitter/2
// each way; chunks keep their order).
type Delay struct {
	RTT    time.Duration
	Jitter time.Duration
}

// String reads "5ms", or "5ms~1ms" with jitter.
func (d Delay) String() string {
	if d.Jitter == 0 {
		return d.RTT.String()
	}
	return d.RTT.String() + "~" + d.Jitter.String()
}

// Zero reports whether d adds nothing (then no proxy is placed).
func (d Delay) Zero() bool { return d.RTT == 0 && d.Jitter == 0 }

// MaxDelay bounds an injected round trip.
const MaxDelay = 10 * time.Second

// ParseDelay reads "5ms" or "5ms~1ms" (round trip ~ jitter), both ≥ 0,
// the jitter at most the round trip.
func ParseDelay(s string) (Delay, error) {
	rtt, jit, hasJit := strings.Cut(s, "~")
	var d Delay
	var err error
	if d.RTT, err = time.ParseDuration(strings.TrimSpace(rtt)); err != nil {
		return d, fmt.Errorf("%q: want a duration such as 5ms, with optional jitter 5ms~1ms", s)
	}
	if hasJit {
		if d.Jitter, err = time.ParseDuration(strings.TrimSpace(jit)); err != nil {
			return d, fmt.Errorf("%q: jitter %q: want a duration such as 1ms", s, jit)
		}
	}
	switch {
	case d.RTT < 0 || d.Jitter < 0:
		return d, fmt.Errorf("%q: latency cannot be negative", s)
	case d.RTT > MaxDelay:
		return d, fmt.Errorf("%q: at most %s", s, MaxDelay)
	case d.Jitter > d.RTT:
		return d, fmt.Errorf("%q: jitter above the latency itself", s)
	}
	return d, nil
}

// delayProxy is an in-process TCP proxy that holds every chunk read in
// either direction for half the round trip (± jitter) before writing it
// on, in order: the link behaves like one with that much more latency,
// its bandwidth unchanged.
type delayProxy struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	delay Delay
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// startDelayProxy listens on listen (host:port, port 0 for any) and
// forwards to upstream.
func startDelayProxy(listen, upstream string, d Delay) (*delayProxy, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("latency proxy for %s: %w", upstream, err)
	}
	p := &delayProxy{ln: ln, upstream: upstream, delay: d, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr is where the proxy listens.
func (p *delayProxy) Addr() string { return p.ln.Addr().String() }

// SetDelay changes the delay of chunks read from now on.
func (p *delayProxy) SetDelay(d Delay) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

func (p *delayProxy) oneWay() time.Duration {
	p.mu.Lock()
	d := p.delay
	p.mu.Unlock()
	w := d.RTT / 2
	if d.Jitter > 0 {
		w += time.Duration(rand.Int64N(int64(d.Jitter)+1)) - d.Jitter/2
	}
	return max(w, 0)
}

// Close stops listening and cuts every connection.
func (p *delayProxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *delayProxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.conns == nil {
			return false
		}
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
	return true
}

func (p *delayProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.handle(c)
		}()
	}
}

func (p *delayProxy) handle(down net.Conn) {
	up, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		down.Close()
		return
	}
	p.track(down, true)
	p.track(up, true)
	defer func() {
		p.track(down, false)
		p.track(up, false)
	}()
	done := make(chan struct{}, 2)
	go func() { p.pump(up, down); done <- struct{}{} }()
	go func() { p.pump(down, up); done <- struct{}{} }()
	// A side that ends cleanly half-closes the other (pump); an error
	// closes both, which ends the other pump too.
	<-done
	<-done
	down.Close()
	up.Close()
}

// chunk is data read at a time, due for writing at due.
type chunk struct {
	b   []byte
	due time.Time
}

// pump copies src to dst, each chunk held until its due time; chunks keep
// their order (a chunk is never due before the one read before it).
func (p *delayProxy) pump(dst, src net.Conn) {
	q := make(chan chunk, 256)
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		for c := range q {
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			_, err := dst.Write(c.b)
			if err != nil {
				src.Close() // the reader ends at its next read
				dst.Close()
				for range q {
				}
				return
			}
		}
		if tc, ok := dst.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	var last time.Time
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			due := time.Now().Add(p.oneWay())
			if due.Before(last) {
				due = last
			}
			last = due
			q <- chunk{b: buf[:n], due: due}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				src.Close()
				dst.Close()
			}
			break
		}
	}
	close(q)
	<-wdone
}

// pgSSLRequest is PostgreSQL's SSLRequest message: a server answers it
// with one byte ('S' or 'N') before anything else, a real round trip.
var pgSSLRequest = []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}

// probeRTT is the median of 5 round trips to addr: each a fresh
// connection sending probe and reading one byte back (an echo server or
// PostgreSQL's SSLRequest; with no probe, a server that speaks first,
// MariaDB).
func probeRTT(addr string, probe []byte) (time.Duration, error) {
	var rtts []time.Duration
	for range 5 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		c.SetDeadline(time.Now().Add(MaxDelay + 5*time.Second))
		t := time.Now()
		if len(probe) > 0 {
			_, err = c.Write(probe)
		}
		if err == nil {
			_, err = io.ReadFull(c, make([]byte, 1))
		}
		el := time.Since(t)
		c.Close()
		if err != nil {
			return 0, err
		}
		rtts = append(rtts, el)
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}

// addedRTT is the round trip the proxy p adds to its upstream, measured
// with probe (median through the proxy minus median direct).
func addedRTT(p *delayProxy, probe []byte) (time.Duration, error) {
	direct, err := probeRTT(p.upstream, probe)
	if err != nil {
		return 0, err
	}
	via, err := probeRTT(p.Addr(), probe)
	if err != nil {
		return 0, err
	}
	return max(via-direct, 0), nil
}

// echoRTT measures the round trip a proxy with delay d adds, through a
// proxy like the real one in front of a loopback echo server (for links
// whose protocol has no harmless probe, such as JGroups).
func echoRTT(d Delay) (time.Duration, error) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	p, err := startDelayProxy("127.0.0.1:0", echo.Addr().String(), d)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	return addedRTT(p, []byte{1})
}
