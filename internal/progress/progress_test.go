package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

func TestLoadLine(t *testing.T) {
	var b strings.Builder
	p := &Load{w: &b, every: 5 * time.Second}
	for s := 1; s <= 11; s++ {
		p.Update(load.Progress{Elapsed: time.Duration(s) * time.Second, Iterations: int64(s * 10), Rate: 10, VUs: 2, ActiveVUs: 1})
	}
	p.Done()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "iterations 10 (10.0/s)") || strings.Contains(b.String(), "\r") {
		t.Fatalf("not a terminal: a line every 5 s, got:\n%s", b.String())
	}
	b.Reset()
	p = &Load{w: &b, tty: true}
	p.Update(load.Progress{Elapsed: time.Second, Warmup: true, Dropped: 2})
	p.Update(load.Progress{Elapsed: 2 * time.Second})
	p.Done()
	if got := b.String(); strings.Count(got, "\r") != 2 || !strings.Contains(got, "warm-up") || !strings.Contains(got, "dropped 2") || !strings.HasSuffix(got, "\n") {
		t.Fatalf("terminal: %q", got)
	}
}
