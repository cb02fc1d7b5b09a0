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
		{[]string{"seed", "--seed", "5"}, "--seed is now --secrets-seed (kcbench help seed)"},
		{[]string{"dataset", "export", "--seed=5"}, "--seed is now --secrets-seed (kcbench help dataset export)"},
		{[]string{"capacity", "--scenario", "jwks", "--seed", "5"}, "--seed is now --secrets-seed (kcbench help capacity)"},
		{[]string{"loadgen-bench", "--clients", "h1"}, "--clients is now --http-clients (kcbench help loadgen-bench)"},
		{[]string{"logs", "--pg"}, "--pg is now --log db (kcbench help logs)"},
		{[]string{"logs", "--db", "-n", "5"}, "--db is now --log db (kcbench help logs)"},
		{[]string{"logs", "--lb=true"}, "--lb is now --log lb (kcbench help logs)"},
		{[]string{"capacity", "--scenario", "jwks", "--start", "5"}, "--start is now --start-rate (kcbench help capacity)"},
		{[]string{"boot", "--repeat", "2"}, "--repeat is now --repeats (kcbench help boot)"},
		{[]string{"loadgen-bench", "--rounds", "2"}, "--rounds is now --repeats (kcbench help loadgen-bench)"},
		{[]string{"quickstart", "--results", "r"}, "--results is now --out (kcbench help quickstart)"},
		{[]string{"experiment", "run", "quickstart", "--results", "r"}, "--results is now --out (kcbench help experiment run)"},
		{[]string{"experiment", "plan", "--results=r", "quickstart"}, "--results is now --out (kcbench help experiment plan)"},
		{[]string{"dataset", "export", "--dir", "realms"}, "--dir is now --out (kcbench help dataset export)"},
		{[]string{"up", "--pg-durable"}, "--pg-durable is now --db-durable (kcbench help up)"},
		{[]string{"boot", "--pg-durable"}, "--pg-durable is now --db-durable (kcbench help boot)"},
		{[]string{"status", "--timeout", "5s"}, "--timeout is now --wait (kcbench help status)"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errs := runCLI(t, c.args...)
			if code != exitUsage || errs != "kcbench: "+c.want+"\n" {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s\nwant stderr: kcbench: %s", code, exitUsage, out, errs, c.want)
			}
			cmd := c.args[:1]
			if subcommandsOf[c.args[0]] != nil {
				cmd = c.args[:2]
			}
			_, help, _ := runCLI(t, append([]string{"help"}, cmd...)...)
			if old, _, _ := strings.Cut(c.want, " "); strings.Contains(help, old+" ") || strings.Contains(help, old+"\n") {
				t.Errorf("kcbench help %s lists %s", strings.Join(cmd, " "), old)
			}
		})
	}
}
