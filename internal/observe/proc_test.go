package observe

import (
	"math"
	"os"
	"reflect"
	"strconv"
	"testing"
	"testing/fstest"
	"testing/synctest"
	"time"
)

// testdata/proc holds two trees: a Keycloak-like one under 4242 (a child,
// a grandchild on a kernel without the Rss* split, a zombie) and a
// PostgreSQL-like one under 7000 (two backends sharing shared memory),
// plus an unrelated process 5000.
func TestReadTree(t *testing.T) {
	t.Parallel()
	proc := os.DirFS("testdata/proc")
	const kB = 1024
	cases := []struct {
		pid  int
		pids []int
		cpu  time.Duration
		rss  int64
	}{
		{4242, []int{4242, 4243, 4260, 4250},
			// (2534+311) + (10+5+3+2) + (7+3) + (1+1) ticks
			2877 * 10 * time.Millisecond,
			// 4242 and 4243: RssAnon+RssFile; 4250: VmRSS; zombie: nothing
			(470000 + 16168 + 1000 + 500 + 200) * kB},
		{7000, []int{7000, 7001, 7002},
			(100 + 50 + 40 + 10 + 30 + 20 + 5 + 5) * 10 * time.Millisecond,
			// private pages of all three, shared memory once (the largest)
			(2000 + 8000 + 3000 + 2000 + 1000 + 2000 + 130000) * kB},
		{4250, []int{4250}, 20 * time.Millisecond, 200 * kB},
	}
	for _, c := range cases {
		u, err := ReadTree(proc, c.pid)
		if err != nil {
			t.Fatalf("pid %d: %v", c.pid, err)
		}
		if !reflect.DeepEqual(u.PIDs, c.pids) || u.CPU != c.cpu || u.RSS != c.rss {
			t.Errorf("pid %d: got %v %v %d, want %v %v %d", c.pid, u.PIDs, u.CPU, u.RSS, c.pids, c.cpu, c.rss)
		}
	}
	if _, err := ReadTree(proc, 1); err == nil {
		t.Error("missing pid: no error")
	}
}

func TestReadTreeSelf(t *testing.T) {
	t.Parallel()
	u, err := ReadTree(os.DirFS("/proc"), os.Getpid())
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if u.RSS <= 0 || u.CPU <= 0 || u.PIDs[0] != os.Getpid() {
		t.Fatalf("implausible usage of this test: %+v", u)
	}
}

func TestParseStatTreeErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "1 (x", "1 (x) S 1 2 3", "1 (x) S a 1 1 0 -1 0 0 0 0 0 1 1 0 0", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 1 b 0 0"} {
		if _, err := parseStatTree([]byte(s)); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

// stat renders a /proc/PID/stat line with the given ppid and utime.
func stat(pid, ppid, utime int) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(
		strconv.Itoa(pid) + " (x) S " + strconv.Itoa(ppid) + " 1 1 0 -1 0 0 0 0 0 " + strconv.Itoa(utime) + " 0 0 0 20 0 1 0 1 1 1\n")}
}

func TestProcSourceRates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		proc := fstest.MapFS{
			"10/stat":   stat(10, 1, 100),
			"10/status": {Data: []byte("VmRSS: 2048 kB\n")},
		}
		src := NewProcSource(PostgreSQL, proc, 10)
		s, err := src.Sample(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(s.PGCPUPct) || s.PGRSSBytes != 2048*1024 || !math.IsNaN(s.KCRSSBytes) {
			t.Fatalf("first sample: %+v", s)
		}
		// 1.5 s of CPU in 2 s of wall time, with a new child.
		time.Sleep(2 * time.Second)
		proc["10/stat"] = stat(10, 1, 200)
		proc["11/stat"] = stat(11, 10, 50)
		s, err = src.Sample(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.PGCPUPct != 75 || !s.T.Equal(time.Now()) {
			t.Fatalf("second sample: cpu %v%%, want 75%%", s.PGCPUPct)
		}
		// The child exits unreaped by anyone we see: the tree's CPU drops,
		// which reads as "unknown", not as a negative rate.
		time.Sleep(time.Second)
		delete(proc, "11/stat")
		s, _ = src.Sample(t.Context())
		if !math.IsNaN(s.PGCPUPct) {
			t.Fatalf("after a drop: cpu %v, want NaN", s.PGCPUPct)
		}
		delete(proc, "10/stat")
		if _, err := src.Sample(t.Context()); err == nil {
			t.Fatal("root gone: no error")
		}
	})
}

func TestCounter(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	var c counter
	steps := []struct {
		v    float64
		at   time.Duration
		want float64
	}{
		{10, 0, math.NaN()},               // first
		{20, 2 * time.Second, 5},          // +10 in 2 s
		{20, 2 * time.Second, math.NaN()}, // no time passed
		{5, 3 * time.Second, math.NaN()},  // reset
		{6, 4 * time.Second, 1},
		{math.NaN(), 5 * time.Second, math.NaN()},
		{8, 6 * time.Second, math.NaN()}, // restart after a gap
		{9, 7 * time.Second, 1},
	}
	for i, s := range steps {
		got := c.rate(s.v, t0.Add(s.at))
		if got != s.want && !(math.IsNaN(got) && math.IsNaN(s.want)) {
			t.Errorf("step %d: %v, want %v", i, got, s.want)
		}
	}
}
