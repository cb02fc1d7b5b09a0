package main

import (
	"strings"
	"testing"
)

// Every former flag name is refused, exit 2, with a message naming the
// new one; help pages do not list it.
func TestRenamedFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--seed", "5"}, "--seed is now --random-seed (kcbench help load)"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errs := runCLI(t, c.args...)
			if code != exitUsage || errs != "kcbench: "+c.want+"\n" {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s\nwant stderr: kcbench: %s", code, exitUsage, out, errs, c.want)
			}
			_, help, _ := runCLI(t, "help", c.args[0])
			if old, _, _ := strings.Cut(c.want, " "); strings.Contains(help, old+" ") || strings.Contains(help, old+"\n") {
				t.Errorf("kcbench help %s lists %s", c.args[0], old)
			}
		})
	}
}
