package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestParseLatency(t *testing.T) {
	good := map[string]Latency{
		"":                    {},
		"node-db=2ms":         {NodeDB: Delay{RTT: 2 * time.Millisecond}},
		" node-db=5ms~1ms ":   {NodeDB: Delay{RTT: 5 * time.Millisecond, Jitter: time.Millisecond}},
		"node-db=0s":          {},
		"node-db=1.5ms~0.5ms": {NodeDB: Delay{RTT: 1500 * time.Microsecond, Jitter: 500 * time.Microsecond}},
		"node-node=5ms~1ms,node-db=2ms": {NodeNode: Delay{RTT: 5 * time.Millisecond, Jitter: time.Millisecond},
			NodeDB: Delay{RTT: 2 * time.Millisecond}},
		"node-db=2ms,node-node=5ms": {NodeNode: Delay{RTT: 5 * time.Millisecond}, NodeDB: Delay{RTT: 2 * time.Millisecond}},
	}
	for in, want := range good {
		l, err := ParseLatency(in)
		if err != nil || l != want {
			t.Errorf("%q: %+v, %v", in, l, err)
		}
		if back, err := ParseLatency(l.String()); err != nil || back != l {
			t.Errorf("%q: String %q reads back as %+v, %v", in, l.String(), back, err)
		}
	}
	bad := map[string]string{
		"node-db=-2ms":                "cannot be negative",
		"node-db=2ms~-1ms":            "cannot be negative",
		"node-db=2ms~3ms":             "jitter above the latency",
		"node-db=soon":                "want a duration",
		"node-db=1h":                  "at most 10s",
		"node-db":                     "want LINK=DURATION",
		"node-db=1ms,node-db=2ms":     "given twice",
		"node-pg=1ms":                 `unknown link "node-pg"`,
		"node-node=1ms,node-node=1ms": "given twice",
	}
	for in, want := range bad {
		if _, err := ParseLatency(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	if err := (Latency{NodeDB: Delay{RTT: time.Millisecond}}).validate(true, false); err == nil || !strings.Contains(err.Error(), "up --foreground") {
		t.Errorf("detached: %v", err)
	}
	if err := (Latency{NodeDB: Delay{RTT: time.Millisecond}}).validate(false, true); err == nil || !strings.Contains(err.Error(), "--db-url") {
		t.Errorf("external db: %v", err)
	}
	nn := Latency{NodeNode: Delay{RTT: time.Millisecond}}
	if err := (Topology{Nodes: 1, Latency: nn}).Validate(); err == nil || !strings.Contains(err.Error(), "a single node has no node-node link") {
		t.Errorf("node-node on one node: %v", err)
	}
	if err := (Topology{Nodes: 2, Latency: nn}).Validate(); err != nil {
		t.Errorf("node-node on two nodes: %v", err)
	}
	// params: as --latency takes it, and each link's round trip in ms
	l, _ := ParseLatency("node-node=1.5ms~0.5ms,node-db=20ms")
	want := map[string]string{"latency": l.String(), "latency_node_node_ms": "1.5", "latency_node_db_ms": "20"}
	if got := (Topology{Nodes: 2, Latency: l}).Params(); got["latency"] != want["latency"] ||
		got["latency_node_node_ms"] != want["latency_node_node_ms"] || got["latency_node_db_ms"] != want["latency_node_db_ms"] {
		t.Errorf("params %v, want %v", got, want)
	}
	if got := (Topology{Nodes: 2}).Params(); got["latency"] != "" || got["latency_node_node_ms"] != "" {
		t.Errorf("no latency: params %v", got)
	}
}

// The proxy adds at least the round trip asked for, keeps the bytes and
// their order, and changes its delay on the fly.
func TestDelayProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("times round trips")
	}
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.(*net.TCPConn).CloseWrite() }()
		}
	}()
	p, err := startDelayProxy("127.0.0.1:0", echo.Addr().String(), Delay{RTT: 20 * time.Millisecond, Jitter: 4 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	rtt, err := addedRTT(p, []byte{1})
	if err != nil || rtt < 18*time.Millisecond || rtt > 500*time.Millisecond { // 20 ms ± jitter/2 each way, at least 18 ms
		t.Fatalf("added round trip %s, %v; want about 20 ms", rtt, err)
	}
	// 1 MiB through and back, unchanged.
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1<<20)
	rand.Read(data)
	go func() { c.Write(data); c.(*net.TCPConn).CloseWrite() }()
	got, err := io.ReadAll(c)
	c.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("echo through the proxy: %d bytes, equal %v, %v", len(got), bytes.Equal(got, data), err)
	}
	p.SetDelay(Delay{})
	if rtt, err := addedRTT(p, []byte{1}); err != nil || rtt > 10*time.Millisecond {
		t.Errorf("after SetDelay(0): %s, %v", rtt, err)
	}
}

// BenchmarkDelayProxy is the proxy's own cost: 100-byte ping-pongs (a
// JDBC statement's size) through it at zero delay, against the same
// straight to the echo server.
//
//	go test -run '^$' -bench DelayProxy -benchtime 20000x ./internal/stack/
func BenchmarkDelayProxy(b *testing.B) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
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
	p, err := startDelayProxy("127.0.0.1:0", echo.Addr().String(), Delay{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct{ name, addr string }{{"direct", echo.Addr().String()}, {"proxy", p.Addr()}} {
		b.Run(c.name, func(b *testing.B) {
			conn, err := net.Dial("tcp", c.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			msg := make([]byte, 100)
			for b.Loop() {
				if _, err := conn.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(conn, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A latency event changes the links it names and leaves the others as
// they are.
func TestLatencyEventKeepsOtherLinks(t *testing.T) {
	proxy := func(d time.Duration) *delayProxy {
		p, err := startDelayProxy("127.0.0.1:0", "127.0.0.1:1", Delay{RTT: d})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	links := &latencyLinks{db: proxy(2 * time.Millisecond),
		nodes: map[int][2]*delayProxy{1: {proxy(4 * time.Millisecond), proxy(4 * time.Millisecond)}}}
	defer links.close()
	s := &Stack{logf: t.Logf, links: links, st: State{Dir: t.TempDir(), Topology: Topology{Nodes: 2,
		Latency: Latency{NodeDB: Delay{RTT: 2 * time.Millisecond}, NodeNode: Delay{RTT: 4 * time.Millisecond}}}}}
	f, err := ParseFault("10s latency node-node=20ms")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ApplyFault(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	want := Latency{NodeDB: Delay{RTT: 2 * time.Millisecond}, NodeNode: Delay{RTT: 20 * time.Millisecond}}
	if got := s.st.Topology.Latency; got != want {
		t.Errorf("latency %+v, want %+v", got, want)
	}
	if links.db.delay.RTT != 2*time.Millisecond || links.nodes[1][0].delay.RTT != 20*time.Millisecond || links.nodes[1][1].delay.RTT != 20*time.Millisecond {
		t.Errorf("proxies: db %v, node %v / %v", links.db.delay, links.nodes[1][0].delay, links.nodes[1][1].delay)
	}
}

func FuzzParseLatency(f *testing.F) {
	for _, s := range []string{"node-db=2ms", "node-node=5ms~1ms,node-db=2ms", "node-db=0s", "node-db=1h", "x=1ms", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLatency(s)
		if err != nil {
			return
		}
		back, err := ParseLatency(l.String())
		if err != nil || back != l {
			t.Fatalf("%q: String %q reads back as %+v, %v", s, l.String(), back, err)
		}
		for _, d := range []Delay{l.NodeDB, l.NodeNode} {
			if d.RTT < 0 || d.Jitter < 0 || d.Jitter > d.RTT || d.RTT > MaxDelay {
				t.Fatalf("%q: %+v", s, l)
			}
		}
	})
}
