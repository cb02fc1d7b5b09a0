package observe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CPUSampler reads a process's cumulative CPU time (user + system).
type CPUSampler interface {
	// CPUTime returns the CPU time the process has used since it started.
	CPUTime(ctx context.Context) (time.Duration, error)
	// Source says where the figure comes from, for reports.
	Source() string
}

var (
	_ CPUSampler = ProcCPU{}
	_ CPUSampler = MetricsCPU{}
	_ CPUSampler = PodsCPU{}
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux kcbench supports.
const clockTicks = 100

// ProcCPU reads utime + stime from /proc/PID/stat, summed with the
// processes in Also (the other nodes of a cluster). Its resolution is one
// clock tick (10 ms).
type ProcCPU struct {
	Proc fs.FS // rooted at /proc, e.g. os.DirFS("/proc")
	PID  int
	Also []int
}

// NewProcCPU samples the sum over pids (at least one).
func NewProcCPU(proc fs.FS, pids []int) ProcCPU {
	return ProcCPU{Proc: proc, PID: pids[0], Also: pids[1:]}
}

// CPUTime implements CPUSampler.
func (p ProcCPU) CPUTime(context.Context) (time.Duration, error) {
	var ticks uint64
	for _, pid := range append([]int{p.PID}, p.Also...) {
		b, err := fs.ReadFile(p.Proc, strconv.Itoa(pid)+"/stat")
		if err != nil {
			return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
		}
		t, err := parseStatCPU(b)
		if err != nil {
			return 0, fmt.Errorf("cpu of pid %d: %w", pid, err)
		}
		ticks += t
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Source implements CPUSampler.
func (p ProcCPU) Source() string {
	if len(p.Also) > 0 {
		return fmt.Sprintf("/proc/{%d,%s}/stat utime+stime, summed", p.PID, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(p.Also)), ","), "[]"))
	}
	return fmt.Sprintf("/proc/%d/stat utime+stime", p.PID)
}

// parseStatCPU returns utime + stime (fields 14 and 15) of a stat line.
// The command name (field 2) may hold spaces and parentheses, so fields
// are counted from its last closing parenthesis.
func parseStatCPU(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime 15.
	if len(f) < 13 {
		return 0, errors.New("malformed stat: too few fields")
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("malformed stat: %w", err)
	}
	return ut + st, nil
}

// MetricsCPU reads the process CPU time a Keycloak exposes on its
// management interface (GET {URL}/metrics): process_cpu_seconds_total
// when present (the Prometheus convention), else Keycloak 26's Micrometer
// counter process_cpu_time_ns_total.
type MetricsCPU struct {
	URL    string // the management URL, e.g. http://127.0.0.1:9000
	Client *http.Client
}

// Metric names MetricsCPU looks for.
const (
	MetricCPUSeconds = "process_cpu_seconds_total"
	MetricCPUNanos   = "process_cpu_time_ns_total"
)

// ErrNoCPUMetric means the metrics hold neither CPU counter.
var ErrNoCPUMetric = errors.New("no process CPU counter in the metrics (" + MetricCPUSeconds + " or " + MetricCPUNanos + ")")

// CPUTime implements CPUSampler.
func (m MetricsCPU) CPUTime(ctx context.Context) (time.Duration, error) {
	hc := m.Client
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	u := strings.TrimRight(m.URL, "/") + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cpu from %s: %w", u, err)
	}
	defer func() {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("cpu from %s: HTTP %d", u, resp.StatusCode)
	}
	d, err := ParseCPUMetric(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("cpu from %s: %w", u, err)
	}
	return d, nil
}

// Source implements CPUSampler.
func (m MetricsCPU) Source() string { return strings.TrimRight(m.URL, "/") + "/metrics" }

// PodsCPU is the CPU time of several pods, each read from its management
// interface, summed: a cluster's cost, where one pod's would be about
// 1/N of it.
type PodsCPU []MetricsCPU

// CPUTime implements CPUSampler: the sum, or the first pod's error.
func (p PodsCPU) CPUTime(ctx context.Context) (time.Duration, error) {
	var sum time.Duration
	for _, m := range p {
		d, err := m.CPUTime(ctx)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// Source implements CPUSampler.
func (p PodsCPU) Source() string {
	if len(p) == 1 {
		return p[0].Source()
	}
	srcs := make([]string, len(p))
	for i, m := range p {
		srcs[i] = m.Source()
	}
	return fmt.Sprintf("the sum over %d pods' %s", len(p), strings.Join(srcs, ", "))
}

// ParseCPUMetric finds the process CPU counter in Prometheus text
// exposition format. Only the two unlabelled samples are read, so a full
// parser is not needed.
func ParseCPUMetric(r io.Reader) (time.Duration, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var (
		nanos    float64
		hasNanos bool
	)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, " ")
		if !ok || (name != MetricCPUSeconds && name != MetricCPUNanos) {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		if name == MetricCPUSeconds {
			return time.Duration(v * float64(time.Second)), nil
		}
		nanos, hasNanos = v, true
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if !hasNanos {
		return 0, ErrNoCPUMetric
	}
	return time.Duration(nanos), nil
}
