package observe

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
)

func TestDirWindow(t *testing.T) {
	ctx := context.Background()
	stats := results.Stats{Ops: []results.OpStats{{Name: results.IterationOp, OK: 4}}}
	if c := newDirWindow(ctx, kc.Target{}).result(stats); c != nil {
		t.Errorf("users not in LDAP: %+v, want nil", c)
	}
	remote := newDirWindow(ctx, kc.Target{LDAP: &kc.Directory{URL: "ldap://dir.example.com"}})
	remote.begin(0)
	remote.end()
	if c := remote.result(stats); c == nil || c.Available || c.Reason == "" {
		t.Errorf("remote directory: %+v, want unavailable with a reason", c)
	}
	// This process stands in for slapd.
	w := newDirWindow(ctx, kc.Target{LDAP: &kc.Directory{URL: "ldap://127.0.0.1:1", PID: os.Getpid()}})
	w.begin(0)
	time.Sleep(20 * time.Millisecond)
	for t0 := time.Now(); time.Since(t0) < 50*time.Millisecond; { // burn some CPU
	}
	w.end()
	c := w.result(stats)
	if c == nil || !c.Available || c.Ops != 4 || c.Window <= 0 || c.CPUMsPerOp != c.CPU*1000/4 {
		t.Errorf("local directory: %+v", c)
	}
}
