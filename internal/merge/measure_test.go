package merge

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// TestMeasureMergeTime measures the merge of 3 agents × 5 minutes (open
// model, 200 iterations/s each, two operations, latency and service
// logs). A measurement, not a check: it runs only with
// KCBENCH_MEASURE=1:
//
//	KCBENCH_MEASURE=1 go test -run TestMeasureMergeTime -v ./internal/merge/
func TestMeasureMergeTime(t *testing.T) {
	if os.Getenv("KCBENCH_MEASURE") == "" {
		t.Skip("a measurement: set KCBENCH_MEASURE=1")
	}
	root := t.TempDir()
	var dirs []string
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(time.Second)
		var wg sync.WaitGroup
		for i := range 3 {
			dir := filepath.Join(root, fmt.Sprint("agent-", i))
			dirs = append(dirs, dir)
			wg.Go(func() { runAgentFor(t, dir, i, 3, 5*time.Minute, at) })
		}
		wg.Wait()
	})
	var size int64
	for _, d := range dirs {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if fi, err := e.Info(); err == nil {
				size += fi.Size()
			}
		}
	}
	for rep := 1; rep <= 3; rep++ {
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		start := time.Now()
		res, err := Read(dirs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := res.WriteDir(filepath.Join(root, fmt.Sprint("merged-", rep))); err != nil {
			t.Fatal(err)
		}
		wall := time.Since(start)
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		cpu := time.Duration(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) * time.Nanosecond
		it, _ := res.Stats.Op("iteration")
		t.Logf("merge of 3 agents × 5 min (%d iterations, %d timeline rows, %.1f MB of agent files): %v wall, %v CPU",
			it.Count, len(res.Stats.Timeline), float64(size)/1e6, wall.Round(time.Millisecond), cpu.Round(time.Millisecond))
	}
}
