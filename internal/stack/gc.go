package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// gcTimeout bounds one JVM's full collection (a few hundred ms for a
// GiB of heap on this box).
const gcTimeout = 2 * time.Minute

// CollectGarbage runs a full garbage collection in each running Keycloak
// node's JVM (jcmd PID GC.run, with the JDK the stack runs) and waits for
// it to end, so that a JVM's heap in use just after is what it holds live.
// It returns the management URLs of the nodes collected, to read their
// heap from. A JDK without jcmd (a bare runtime), a node not running, or
// a java option that turns GC.run into less than a full collection is an
// error that says so.
func (s *Stack) CollectGarbage(ctx context.Context) ([]string, error) {
	for _, opt := range s.st.Options.JavaOpts {
		if opt == "-XX:+DisableExplicitGC" || opt == "-XX:+ExplicitGCInvokesConcurrent" {
			return nil, fmt.Errorf("java option %s: jcmd GC.run would not run a full collection", opt)
		}
	}
	jcmd := filepath.Join(s.st.Java.Home, "bin", "jcmd")
	if _, err := os.Stat(jcmd); err != nil {
		return nil, fmt.Errorf("a full GC needs jcmd, which the JDK at %s lacks (a runtime without the JDK's tools?)", s.st.Java.Home)
	}
	var urls []string
	for i, ns := range s.st.Nodes {
		if ns.Proc == nil || !ns.Proc.JVM.Alive() {
			return nil, fmt.Errorf("node %d is not running: its heap would be missing from the sum", i+1)
		}
		if err := runGC(ctx, jcmd, ns.Proc.JVM.PID); err != nil {
			return nil, err
		}
		urls = append(urls, ns.MgmtURL())
	}
	if len(urls) == 0 {
		return nil, errors.New("the stack has no Keycloak node")
	}
	return urls, nil
}

// runGC asks JVM pid for a full collection through jcmd; jcmd dies with
// kcbench and after gcTimeout.
func runGC(ctx context.Context, jcmd string, pid int) error {
	ctx, cancel := context.WithTimeout(ctx, gcTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, jcmd, strconv.Itoa(pid), "GC.run")
	cmd.SysProcAttr = procAttr(false, syscall.SIGKILL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("full GC of JVM %d (jcmd GC.run): %w: %s", pid, err, strings.TrimSpace(string(out)))
	}
	return nil
}
