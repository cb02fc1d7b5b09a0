package observe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/kcbench/kcbench/internal/results"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"
)

// TreeUsage is the resource use of a process and all its descendants at
// one instant, read from /proc.
type TreeUsage struct {
	// CPU is the tree's cumulative user + system CPU time: utime + stime
	// + cutime + cstime of every live member. Counting the children
	// times keeps the sum from dropping when a member (a PostgreSQL
	// backend, say) exits: the kernel moves its times into its parent's
	// cutime/cstime when it is reaped.
	CPU time.Duration
	// RSS is the tree's resident memory in bytes: each member's private
	// and file-backed pages (RssAnon + RssFile) plus shared memory
	// (RssShmem) counted once, as the largest RssShmem of any member.
	// Summing VmRSS instead would count PostgreSQL's shared buffers once
	// per backend. Kernels without the Rss* fields fall back to VmRSS.
	RSS int64
	// PIDs are the members, the root first.
	PIDs []int
}

// statFields is the part of /proc/PID/stat a tree walk needs.
type statFields struct {
	ppid  int
	ticks uint64 // utime + stime + cutime + cstime
}

// parseStatTree reads ppid (field 4) and utime, stime, cutime, cstime
// (fields 14-17) of a stat line. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from its last ')'.
func parseStatTree(b []byte) (statFields, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return statFields{}, errors.New("malformed stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 15 {
		return statFields{}, errors.New("malformed stat: too few fields")
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return statFields{}, fmt.Errorf("malformed stat: ppid: %w", err)
	}
	var s statFields
	s.ppid = ppid
	for _, n := range []int{14, 15, 16, 17} {
		// cutime and cstime are signed in the kernel's format (%ld).
		v, err := strconv.ParseInt(f[n-3], 10, 64)
		if err != nil {
			return statFields{}, fmt.Errorf("malformed stat: field %d: %w", n, err)
		}
		if v > 0 {
			s.ticks += uint64(v)
		}
	}
	return s, nil
}

// memFields is the part of /proc/PID/status a tree walk needs, in bytes.
type memFields struct {
	vmRSS, anon, file, shmem int64
	hasSplit                 bool // RssAnon/RssFile/RssShmem present
}

func parseStatus(b []byte) (memFields, error) {
	var m memFields
	var seen bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmRSS":
			dst, seen = &m.vmRSS, true
		case "RssAnon":
			dst, m.hasSplit = &m.anon, true
		case "RssFile":
			dst = &m.file
		case "RssShmem":
			dst = &m.shmem
		default:
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return m, fmt.Errorf("malformed status: %s", key)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("malformed status: %s: %w", key, err)
		}
		*dst = kb * 1024
	}
	if !seen {
		// Kernel threads and zombies have no memory lines.
		return memFields{}, nil
	}
	return m, sc.Err()
}

// ReadTree reads the usage of pid and its descendants from proc, an
// fs.FS rooted at /proc (os.DirFS("/proc"), or testdata/proc in tests).
// It scans every process's stat to find the descendants. Members that
// exit during the walk are skipped; only the root's absence is an error.
func ReadTree(proc fs.FS, pid int) (TreeUsage, error) {
	root, err := fs.ReadFile(proc, strconv.Itoa(pid)+"/stat")
	if err != nil {
		return TreeUsage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	rs, err := parseStatTree(root)
	if err != nil {
		return TreeUsage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	ents, err := fs.ReadDir(proc, ".")
	if err != nil {
		return TreeUsage{}, fmt.Errorf("list processes: %w", err)
	}
	stats := map[int]statFields{pid: rs}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p <= 0 || p == pid {
			continue
		}
		b, err := fs.ReadFile(proc, e.Name()+"/stat")
		if err != nil {
			continue // gone since the listing
		}
		s, err := parseStatTree(b)
		if err != nil {
			continue
		}
		stats[p] = s
		children[s.ppid] = append(children[s.ppid], p)
	}
	u := TreeUsage{PIDs: []int{pid}}
	for i := 0; i < len(u.PIDs); i++ {
		u.PIDs = append(u.PIDs, children[u.PIDs[i]]...)
	}
	var ticks uint64
	var maxShmem int64
	for i, p := range u.PIDs {
		ticks += stats[p].ticks
		b, err := fs.ReadFile(proc, strconv.Itoa(p)+"/status")
		if err != nil {
			if i == 0 {
				return TreeUsage{}, fmt.Errorf("process %d: %w", pid, err)
			}
			continue
		}
		m, err := parseStatus(b)
		if err != nil {
			return TreeUsage{}, fmt.Errorf("process %d: %w", p, err)
		}
		if m.hasSplit {
			u.RSS += m.anon + m.file
			maxShmem = max(maxShmem, m.shmem)
		} else {
			u.RSS += m.vmRSS
		}
	}
	u.RSS += maxShmem
	u.CPU = time.Duration(ticks) * time.Second / clockTicks
	return u, nil
}

// Process says whose columns a ProcSource fills.
type Process int

// The processes a ProcSource can observe.
const (
	Keycloak   Process = iota // the JVMs (kc.Target.ServerPIDs) and their children
	PostgreSQL                // the postmaster and its backends
	// MariaDB is mariadbd (one process, many threads); it fills the
	// database's columns, PostgreSQL's (pg_cpu_pct, pg_rss_bytes).
	MariaDB
)

func (p Process) String() string {
	switch p {
	case Keycloak:
		return "keycloak"
	case PostgreSQL:
		return "postgres"
	case MariaDB:
		return "mariadb"
	}
	return "process(" + strconv.Itoa(int(p)) + ")"
}

// ProcSource samples the CPU % and RSS of a local process tree. CPU % is
// the CPU time used between two samples over the wall time between them,
// in percent of one core (two busy cores read 200).
type ProcSource struct {
	Which Process
	Proc  fs.FS // rooted at /proc
	// PIDs are the trees' roots: one, or every node of a cluster, whose
	// CPU and RSS are summed.
	PIDs []int

	cpu counter
}

var _ Source = (*ProcSource)(nil)

// NewProcSource observes the trees rooted at pids, reading proc (an
// fs.FS rooted at /proc).
func NewProcSource(which Process, proc fs.FS, pids ...int) *ProcSource {
	return &ProcSource{Which: which, Proc: proc, PIDs: pids}
}

// Name implements Source.
func (p *ProcSource) Name() string {
	if len(p.PIDs) == 1 {
		return fmt.Sprintf("%s process tree (/proc/%d)", p.Which, p.PIDs[0])
	}
	return fmt.Sprintf("%s process trees (/proc/%v)", p.Which, p.PIDs)
}

// results.ObserveSample implements Source. The first sample has RSS but no CPU %.
func (p *ProcSource) Sample(context.Context) (results.ObserveSample, error) {
	var u TreeUsage
	var err error
	for _, pid := range p.PIDs {
		t, terr := ReadTree(p.Proc, pid)
		if terr != nil {
			err = terr
			break
		}
		u.RSS += t.RSS
		u.CPU += t.CPU
	}
	now := time.Now()
	s := results.BlankObserveSample(now)
	if err != nil {
		return s, err
	}
	pct := p.cpu.rate(u.CPU.Seconds(), now) * 100
	rss := float64(u.RSS)
	switch p.Which {
	case Keycloak:
		s.KCCPUPct, s.KCRSSBytes = pct, rss
	case PostgreSQL, MariaDB:
		s.PGCPUPct, s.PGRSSBytes = pct, rss
	default:
		return s, fmt.Errorf("unknown process %v", p.Which)
	}
	return s, nil
}

// counter turns a cumulative counter into a per-second rate.
type counter struct {
	v  float64
	at time.Time
	ok bool
	dt float64 // seconds between the last two readings
}

// rate returns the increase per second since the previous call. It is
// NaN on the first call, when v is NaN, when no time has passed and when
// the counter went down (a restart): the next call measures from v.
func (c *counter) rate(v float64, now time.Time) float64 {
	prev, at, ok := c.v, c.at, c.ok
	if math.IsNaN(v) {
		c.ok = false
		return math.NaN()
	}
	c.v, c.at, c.ok = v, now, true
	dt := now.Sub(at).Seconds()
	if !ok || dt <= 0 || v < prev {
		return math.NaN()
	}
	c.dt = dt
	return (v - prev) / dt
}
