package sizing

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// quickOp is one operation the quickstart's estimate is made from: its
// warm cost and the conditions it was measured under.
type quickOp struct {
	name     string
	cpuMs    float64
	conns    *results.Connections
	policy   string // the dataset's password policy ("default": argon2)
	guideCon string // the guide's connection policy for it
}

// WriteQuickSizing sizes the sizing guide's worked example load with the
// measured warm CPU-ms of the realms-mode point. Its first line says
// whether the figures were measured under the guide's conditions, then
// each operation's conditions, each difference flagged.
func WriteQuickSizing(w io.Writer, pts []*results.Point) error {
	ops := []*quickOp{
		{name: "login", guideCon: results.ConnReuse},
		{name: "client-credential grant", guideCon: results.ConnPerIteration},
		{name: "refresh", guideCon: results.ConnReuse},
	}
	for _, p := range pts {
		if p.Summary.Params["mode"] != "realms" {
			continue
		}
		for _, wl := range p.Summary.Workloads {
			if wl.Phase != results.PhaseWarm {
				continue
			}
			var op *quickOp
			switch wl.Scenario {
			case results.ScenarioPasswordGrant:
				op = ops[0]
			case results.ScenarioClientCredentials:
				op = ops[1]
			case results.ScenarioRefresh:
				op = ops[2]
			default:
				continue
			}
			op.cpuMs, op.conns, op.policy = wl.ServerCPUMsPerOp, wl.Connections, p.Summary.Params["password_policy"]
		}
	}
	if ops[0].cpuMs <= 0 || ops[1].cpuMs <= 0 || ops[2].cpuMs <= 0 {
		return fmt.Errorf("no warm CPU-ms for password-grant, client-credentials and refresh")
	}
	in := DefaultInput()
	in.LoginsPerSec, in.ClientCredentialsPerSec, in.RefreshesPerSec, in.LogoutsPerSec = 45, 360, 360, 5
	guide, err := Calculate(in)
	if err != nil {
		return err
	}
	in.Rates = RatesFromCPUms(ops[0].cpuMs, ops[1].cpuMs, ops[2].cpuMs, "measured by kcbench quickstart (warm, realms mode)")
	measured, err := Calculate(in)
	if err != nil {
		return err
	}
	var diffs []string
	var lines []string
	for i, op := range ops {
		cond, d := op.conditions(i == 0)
		lines = append(lines, fmt.Sprintf("  %-24s %6.1f ms  %s", op.name, op.cpuMs, cond))
		diffs = append(diffs, d...)
	}
	fmt.Fprintln(w)
	if len(diffs) == 0 {
		fmt.Fprintln(w, "Sizing from costs measured under the sizing guide's conditions (TLS at Keycloak, a new connection per grant, the default argon2 hashing):")
	} else {
		fmt.Fprintf(w, "Sizing from costs NOT measured under the sizing guide's conditions (%s).\n", strings.Join(diffs, "; "))
	}
	fmt.Fprintln(w, "Server CPU per operation, warm, realms mode, and what it was measured under (≠: differs from the guide's test):")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, "  the guide's test held 20,000 users and 20,000 clients (more than the default 10,000-entry caches), this run a few tenants (all cached) ≠")
	fmt.Fprintf(w, "\nFor the guide's example load (45 logins/s, 360 client-credential grants/s, 360 refreshes/s, 3 pods):\n\n")
	return CompareResults(guide, measured).WriteText(w)
}

// conditions describes how op was measured and lists where that differs
// from the guide's test; login says whether hashing applies.
func (op *quickOp) conditions(login bool) (string, []string) {
	var parts, diffs []string
	c := op.conns
	switch {
	case c == nil:
		parts = append(parts, "connections not recorded ≠")
		diffs = append(diffs, op.name+": connections not recorded")
	case !c.TLS:
		parts = append(parts, "plain HTTP ≠")
		diffs = append(diffs, op.name+" over plain HTTP")
	default:
		parts = append(parts, cmp.Or(c.Version, "TLS"))
	}
	if c != nil {
		p := c.Policy
		if p != op.guideCon {
			p += " ≠ " + op.guideCon
			diffs = append(diffs, fmt.Sprintf("%s with %s connections, the guide's %s", op.name, c.Policy, op.guideCon))
		}
		parts = append(parts, p+" connections")
	}
	if login {
		switch op.policy {
		case "default", "":
			parts = append(parts, "argon2 (default hashing)")
		default:
			parts = append(parts, op.policy+" hashing ≠ argon2")
			diffs = append(diffs, "logins hashed with "+op.policy+", not the default argon2")
		}
	}
	return strings.Join(parts, ", "), diffs
}
