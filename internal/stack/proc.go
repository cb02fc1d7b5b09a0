package stack

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
)

// Proc identifies a process across kcbench invocations. A pid alone is not
// enough: after a crash the pid may belong to someone else, so the process
// start time (field 22 of /proc/PID/stat, in clock ticks since boot) is kept
// with it.
type Proc struct {
	PID       int    `json:"pid"`
	PGID      int    `json:"pgid"`
	StartTime uint64 `json:"start_time"`
}

// procStat is the part of /proc/PID/stat kcbench reads.
type procStat struct {
	State     byte
	PPID      int
	PGID      int
	UTime     uint64 // clock ticks
	STime     uint64
	StartTime uint64
	RSSPages  int64
}

// readStat parses /proc/PID/stat. The command name may contain spaces and
// parentheses, so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 22 {
		return procStat{}, errors.New("short stat")
	}
	var s procStat
	s.State = f[0][0]
	var err error
	num := func(n int) uint64 {
		v, e := strconv.ParseUint(f[n-3], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("stat field %d: %w", n, e)
		}
		return v
	}
	s.PPID = int(num(4))
	s.PGID = int(num(5))
	s.UTime = num(14)
	s.STime = num(15)
	s.StartTime = num(22)
	s.RSSPages = int64(num(24))
	return s, err
}

// identify reads a live process's identity.
func identify(pid int) (Proc, error) {
	s, err := readStat(pid)
	if err != nil {
		return Proc{}, err
	}
	return Proc{PID: pid, PGID: s.PGID, StartTime: s.StartTime}, nil
}

// Alive reports whether p still runs (and is the same process, not a zombie).
func (p Proc) Alive() bool {
	if p.PID <= 0 {
		return false
	}
	s, err := readStat(p.PID)
	if err != nil {
		return false
	}
	return s.StartTime == p.StartTime && s.State != 'Z' && s.State != 'X'
}

// groupMembers lists live processes in process group pgid that started no
// earlier than notBefore (so a recycled group id is never mistaken for ours:
// Linux does not reuse a pid while a group of that id exists, and every member
// of our group started after its leader).
func groupMembers(pgid int, notBefore uint64) []int {
	if pgid <= 0 {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s, err := readStat(pid)
		if err != nil || s.PGID != pgid || s.State == 'Z' || s.State == 'X' {
			continue
		}
		if s.StartTime < notBefore {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// Members lists the live processes of p's group (p included if alive).
func (p Proc) Members() []int { return groupMembers(p.PGID, p.StartTime) }

// Kill stops p's whole process group: sig first, then SIGKILL after grace,
// and waits up to another 10 s until no member is left. It returns an error
// naming the pids still alive.
func (p Proc) Kill(sig syscall.Signal, grace time.Duration) error {
	if len(p.Members()) == 0 {
		return nil
	}
	signalGroup(p, sig)
	if waitGone(p, grace) {
		return nil
	}
	signalGroup(p, syscall.SIGKILL)
	if waitGone(p, 10*time.Second) {
		return nil
	}
	return fmt.Errorf("processes %v of group %d are still alive after SIGKILL", p.Members(), p.PGID)
}

func signalGroup(p Proc, sig syscall.Signal) {
	// Signal the group if its leader is ours or members remain; fall back to
	// the members one by one (a group whose leader exited can still be
	// signalled by id, but be explicit).
	if err := syscall.Kill(-p.PGID, sig); err != nil {
		for _, pid := range p.Members() {
			syscall.Kill(pid, sig)
		}
	}
}

func waitGone(p Proc, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if len(p.Members()) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// children returns the direct children of pid.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// descendants returns pid and all processes below it.
func descendants(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children(out[i])...)
	}
	return out
}

// comm returns the process's command name.
func comm(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// RSS returns a process's resident set size in bytes (VmRSS).
func RSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fs := strings.Fields(rest)
			if len(fs) < 1 {
				break
			}
			kb, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("pid %d: no VmRSS", pid)
}

// TreeRSS sums the RSS of pid and its descendants.
func TreeRSS(pid int) int64 {
	var sum int64
	for _, p := range descendants(pid) {
		if r, err := RSS(p); err == nil {
			sum += r
		}
	}
	return sum
}

// clockTicks is USER_HZ; 100 on every Linux kcbench supports.
const clockTicks = 100

// CPUTime returns a process's user+system CPU time.
func CPUTime(pid int) (time.Duration, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(s.UTime+s.STime) * time.Second / clockTicks, nil
}

// Uptime is how long p has been running.
func (p Proc) Uptime() time.Duration {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	up, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	d := time.Duration(up*float64(time.Second)) - time.Duration(p.StartTime)*time.Second/clockTicks
	if d < 0 {
		return 0
	}
	return d
}

// exitDescription turns an exec exit error into words.
func exitDescription(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exit code %d", ee.ExitCode())
	}
	return err.Error()
}

// TargetCPU is the CPU time of a local target's JVMs, summed over its
// nodes.
func TargetCPU(t kc.Target) (time.Duration, error) {
	pids := t.ServerPIDs()
	if len(pids) == 0 {
		return 0, errors.New("the target is not a local process")
	}
	var sum time.Duration
	for _, pid := range pids {
		c, err := CPUTime(pid)
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

// TargetRSS is the RSS of a local target's JVMs, summed over its nodes.
func TargetRSS(t kc.Target) (int64, error) {
	pids := t.ServerPIDs()
	if len(pids) == 0 {
		return 0, errors.New("the target is not a local process")
	}
	var sum int64
	for _, pid := range pids {
		r, err := RSS(pid)
		if err != nil {
			return 0, err
		}
		sum += r
	}
	return sum, nil
}

// child is a server kcbench started (PostgreSQL, slapd, HAProxy) and
// waits on: its process, when it exits and why, and where this run's
// part of its log starts.
type child struct {
	name    string
	proc    Proc
	exited  chan struct{}
	waitErr error
	log     string
	logOff  int64
}

// serverCmd is a database or directory server (PostgreSQL, MariaDB,
// slapd) to start in the foreground as a direct child, so that its pid is
// known and it gets a parent-death signal unless detached; in its own
// process group, as User (nil: as kcbench), with a clean environment.
// Stop is its normal shutdown signal.
type serverCmd struct {
	Name, Bin, Dir, Log string
	Args                []string
	User                *pgUser
	Stop                syscall.Signal
}

// start starts the server; its output goes to Log.
func (sc serverCmd) start(detached bool) (*child, error) {
	cmd := exec.Command(sc.Bin, sc.Args...)
	cmd.Dir = sc.Dir
	cmd.Env = []string{"LANG=C", "LC_ALL=C", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = sc.User.attr(procAttr(detached, sc.Stop))
	return startChild(sc.Name, cmd, sc.Log)
}

// startChild starts cmd as name with its output appended to logPath.
func startChild(name string, cmd *exec.Cmd, logPath string) (*child, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	c := &child{name: name, exited: make(chan struct{}), log: logPath}
	c.logOff, _ = logFile.Seek(0, io.SeekEnd)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { c.waitErr = cmd.Wait(); close(c.exited) }()
	c.proc, _ = identify(cmd.Process.Pid)
	if c.proc.PID == 0 {
		c.proc = Proc{PID: cmd.Process.Pid, PGID: cmd.Process.Pid}
	}
	return c, nil
}

// waitReady polls ready every 50 ms until it holds. It fails, with the
// end of the child's log, when the child exits or timeout passes (what
// says what it waited for), and stops the child on a timeout or when ctx
// ends.
func (c *child) waitReady(ctx context.Context, timeout time.Duration, what string, ready func() error, stop func()) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited (%s): %s", c.name, exitDescription(c.waitErr), lastLines(readFrom(c.log, c.logOff), 8))
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("%s %s within %v (%v): %s", c.name, what, timeout, err, lastLines(readFrom(c.log, c.logOff), 8))
		}
	}
}

// MachineCPU is the whole machine's CPU time from /proc/stat: Busy is
// every state but idle and iowait, Total every state, both summed over
// the cores.
type MachineCPU struct {
	Busy, Total time.Duration
}

// ReadMachineCPU reads /proc/stat.
func ReadMachineCPU() (MachineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}, err
	}
	return parseMachineCPU(b)
}

// parseMachineCPU reads the "cpu" line of /proc/stat: user nice system
// idle iowait irq softirq steal (guest time is inside user already).
func parseMachineCPU(b []byte) (MachineCPU, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return MachineCPU{}, errors.New("/proc/stat: no cpu line")
	}
	var ticks [8]uint64
	for i := 1; i < len(f) && i <= len(ticks); i++ {
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return MachineCPU{}, fmt.Errorf("/proc/stat: cpu field %d: %w", i, err)
		}
		ticks[i-1] = v
	}
	var total uint64
	for _, v := range ticks {
		total += v
	}
	idle := ticks[3] + ticks[4]
	d := func(t uint64) time.Duration { return time.Duration(t) * time.Second / clockTicks }
	return MachineCPU{Busy: d(total - idle), Total: d(total)}, nil
}
