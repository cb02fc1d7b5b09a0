package stack

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CPU limit methods, as status and results name them.
const (
	CPULimitV2       = "cgroup-v2" // cpu.max
	CPULimitV1       = "cgroup-v1" // cpu.cfs_quota_us
	CPULimitAffinity = "affinity"  // sched_setaffinity through taskset
)

// cgroupRoot is where cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cfsPeriod is the CFS period kcbench sets (the kernel's default, 100 ms).
const cfsPeriod = 100 * time.Millisecond

// CPULimit is one node's CPU quota as applied.
type CPULimit struct {
	// Method is cgroup-v2, cgroup-v1 or affinity.
	Method string `json:"method"`
	// CPUs is the quota in cores; with affinity, the number of cores the
	// node may run on (the quota rounded up).
	CPUs float64 `json:"cpus"`
	// Group is the cgroup folder (cgroup methods).
	Group string `json:"group,omitempty"`
	// CPUList is the cores the node is pinned to (affinity), e.g. "0" or "0-1".
	CPUList string `json:"cpu_list,omitempty"`
}

// Throttling is a cgroup's cpu.stat: how often and how long the node was
// held back by its quota.
type Throttling struct {
	Periods   int64         `json:"nr_periods"`
	Throttled int64         `json:"nr_throttled"`
	Time      time.Duration `json:"throttled_ns"`
}

// cpuLimitMethod picks how to limit CPU on this machine: cgroup v2 when
// /sys/fs/cgroup is a v2 hierarchy with the cpu controller and writable,
// v1 when the cpu controller's hierarchy is writable, else affinity.
func cpuLimitMethod() string {
	if b, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil && hasWord(string(b), "cpu") && writable(cgroupRoot) {
		return CPULimitV2
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "cpu", "cpu.cfs_quota_us")); err == nil && writable(filepath.Join(cgroupRoot, "cpu")) {
		return CPULimitV1
	}
	return CPULimitAffinity
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// writable reports whether a folder can get a subfolder (access(2) W_OK
// through a probe: cgroup file systems ignore mode bits for root).
func writable(dir string) bool {
	p, err := os.MkdirTemp(dir, ".kcbench-probe-")
	if err != nil {
		return false
	}
	os.Remove(p)
	return true
}

// stackGroupName names a stack's cgroup folder: the stack name and a
// hash of its folder (two state folders may hold stacks of the same name).
func stackGroupName(dir, name string) string {
	h := fnv.New32a()
	h.Write([]byte(dir))
	return fmt.Sprintf("%s-%08x", name, h.Sum32())
}

// newCPULimit prepares node i's limit of cpus cores: a cgroup with the
// quota (the node's kc.sh moves itself into it before exec), or a CPU list
// for taskset.
func newCPULimit(method, stackGroup string, i int, cpus float64) (CPULimit, error) {
	l := CPULimit{Method: method, CPUs: cpus}
	quota := int64(math.Round(cpus * float64(cfsPeriod/time.Microsecond)))
	if quota < 1000 {
		return l, fmt.Errorf("node cpus %g: below the kernel's 1 ms minimum quota per 100 ms period", cpus)
	}
	switch method {
	case CPULimitV2:
		parent := filepath.Join(cgroupRoot, "kcbench")
		l.Group = filepath.Join(parent, stackGroup, fmt.Sprintf("node%d", i))
		if err := os.MkdirAll(l.Group, 0o755); err != nil {
			return l, fmt.Errorf("cgroup v2: %w", err)
		}
		// The cpu controller must be enabled on the way down.
		for _, d := range []string{cgroupRoot, parent, filepath.Dir(l.Group)} {
			if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+cpu"), 0o644); err != nil {
				removeGroup(l.Group)
				return l, fmt.Errorf("cgroup v2: enable cpu in %s: %w", d, err)
			}
		}
		if err := os.WriteFile(filepath.Join(l.Group, "cpu.max"), []byte(fmt.Sprintf("%d %d", quota, cfsPeriod/time.Microsecond)), 0o644); err != nil {
			removeGroup(l.Group)
			return l, fmt.Errorf("cgroup v2 cpu.max: %w", err)
		}
	case CPULimitV1:
		l.Group = filepath.Join(cgroupRoot, "cpu", "kcbench", stackGroup, fmt.Sprintf("node%d", i))
		if err := os.MkdirAll(l.Group, 0o755); err != nil {
			return l, fmt.Errorf("cgroup v1: %w", err)
		}
		if err := os.WriteFile(filepath.Join(l.Group, "cpu.cfs_period_us"), []byte(strconv.FormatInt(int64(cfsPeriod/time.Microsecond), 10)), 0o644); err != nil {
			removeGroup(l.Group)
			return l, fmt.Errorf("cgroup v1 cpu.cfs_period_us: %w", err)
		}
		if err := os.WriteFile(filepath.Join(l.Group, "cpu.cfs_quota_us"), []byte(strconv.FormatInt(quota, 10)), 0o644); err != nil {
			removeGroup(l.Group)
			return l, fmt.Errorf("cgroup v1 cpu.cfs_quota_us: %w", err)
		}
	case CPULimitAffinity:
		if _, err := exec.LookPath("taskset"); err != nil {
			return l, errors.New("no writable cgroup for a CPU quota and no taskset (util-linux) to pin CPUs: --node-cpus cannot be applied")
		}
		l.CPUList = affinityList(i, cpus, runtime.NumCPU())
		l.CPUs = math.Ceil(cpus)
	}
	return l, nil
}

// affinityList gives node i (1-based) ceil(cpus) cores, nodes side by
// side, wrapping around the machine's n cores.
func affinityList(i int, cpus float64, n int) string {
	k := int(math.Ceil(cpus))
	if k > n {
		k = n
	}
	var ids []string
	for c := 0; c < k; c++ {
		ids = append(ids, strconv.Itoa(((i-1)*k+c)%n))
	}
	return strings.Join(ids, ",")
}

// wrap returns the command that starts name args under the limit: a shell
// that moves itself into the cgroup and execs, or taskset.
func (l *CPULimit) wrap(name string, args []string) (string, []string) {
	if l == nil {
		return name, args
	}
	switch l.Method {
	case CPULimitV1, CPULimitV2:
		procs := filepath.Join(l.Group, "cgroup.procs")
		return "/bin/sh", append([]string{"-c", `p=$1; shift; echo $$ > "$p" && exec "$@"`, "sh", procs, name}, args...)
	case CPULimitAffinity:
		return "taskset", append([]string{"-c", l.CPUList, name}, args...)
	}
	return name, args
}

// Throttling reads the group's cpu.stat (zero for affinity).
func (l *CPULimit) Throttling() (Throttling, error) {
	if l == nil || l.Group == "" {
		return Throttling{}, nil
	}
	f, err := os.Open(filepath.Join(l.Group, "cpu.stat"))
	if err != nil {
		return Throttling{}, err
	}
	defer f.Close()
	return parseCPUStat(f)
}

// parseCPUStat reads nr_periods, nr_throttled and throttled_time (v1, ns)
// or throttled_usec (v2).
func parseCPUStat(r interface{ Read([]byte) (int, error) }) (Throttling, error) {
	var t Throttling
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "nr_periods":
			t.Periods = n
		case "nr_throttled":
			t.Throttled = n
		case "throttled_time":
			t.Time = time.Duration(n)
		case "throttled_usec":
			t.Time = time.Duration(n) * time.Microsecond
		}
	}
	return t, sc.Err()
}

// release removes the node's cgroup (it must be empty: the node stopped)
// and its stack's folder when that is empty too.
func (l *CPULimit) release() error {
	if l == nil || l.Group == "" {
		return nil
	}
	return removeGroup(l.Group)
}

func removeGroup(g string) error {
	if err := os.Remove(g); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove cgroup %s: %w", g, err)
	}
	// The stack's folder once its last node is gone, and kcbench's once
	// no stack is left (a folder with members is not removed).
	os.Remove(filepath.Dir(g))
	os.Remove(filepath.Dir(filepath.Dir(g)))
	return nil
}
