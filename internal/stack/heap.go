package stack

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Heap is the JVM's maximum heap as its command line sets it.
type Heap struct {
	// Max is the maximum heap in bytes (0: unknown).
	Max int64 `json:"max_bytes"`
	// Source says where Max comes from: "-Xmx2g", or
	// "-XX:MaxRAMPercentage=70 of 15.6 GiB", or the JVM's default share.
	Source string `json:"source"`
}

func (h Heap) String() string {
	if h.Max == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%s (%s)", formatBytes(h.Max), h.Source)
}

// jvmDefaultRAMPct is the JVM's MaxRAMPercentage when none is given.
const jvmDefaultRAMPct = 25

// HeapInForce reads the maximum heap of the JVM pid from its command line:
// the last -Xmx, else the last -XX:MaxRAMPercentage of the memory the JVM
// sees (the cgroup's limit when lower than the machine's), else the JVM's
// default 25 %.
func HeapInForce(pid int) (Heap, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return Heap{}, err
	}
	return heapFromArgs(strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00"), physicalMemory())
}

func heapFromArgs(args []string, ram int64) (Heap, error) {
	var xmx, pct string
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "-Xmx"):
			xmx = a
		case strings.HasPrefix(a, "-XX:MaxRAMPercentage="):
			pct = a
		}
	}
	if xmx != "" {
		n, err := parseJVMSize(strings.TrimPrefix(xmx, "-Xmx"))
		if err != nil {
			return Heap{}, fmt.Errorf("%s: %w", xmx, err)
		}
		return Heap{Max: n, Source: xmx}, nil
	}
	p, src := float64(jvmDefaultRAMPct), "the JVM's default 25 %"
	if pct != "" {
		v, err := strconv.ParseFloat(strings.TrimPrefix(pct, "-XX:MaxRAMPercentage="), 64)
		if err != nil || v <= 0 || v > 100 {
			return Heap{}, fmt.Errorf("%s: not a percentage", pct)
		}
		p, src = v, pct
	}
	if ram <= 0 {
		return Heap{Source: src}, nil
	}
	return Heap{Max: int64(float64(ram) * p / 100), Source: fmt.Sprintf("%s of %s", src, formatBytes(ram))}, nil
}

// parseJVMSize reads a JVM size: digits with an optional k, m, g or t.
func parseJVMSize(s string) (int64, error) {
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("not a JVM size")
	}
	return n * mult, nil
}

// physicalMemory is the memory a JVM started now would see: MemTotal, or
// the cgroup v2 limit when lower (0: unknown).
func physicalMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if kb, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
				total = n << 10
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 && (total == 0 || n < total) {
			total = n
		}
	}
	return total
}

// formatBytes writes n as GiB or MiB with one decimal.
func formatBytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// Heap is the maximum heap of the stack's running Keycloak.
func (s *Stack) Heap() (Heap, error) {
	pid := s.Target().PID
	if pid == 0 {
		return Heap{}, fmt.Errorf("keycloak is not running")
	}
	return HeapInForce(pid)
}
