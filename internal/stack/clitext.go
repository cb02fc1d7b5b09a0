package stack

import (
	"errors"
	"fmt"
	"io"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// Down is an error when Keycloak (or one of its nodes) is not running.
func (st Status) Down() error {
	if !st.Keycloak.Alive {
		if len(st.Nodes) > 1 {
			return errors.New("a keycloak node is not running (see kcbench logs --node N; kcbench down cleans up)")
		}
		return errors.New("keycloak is not running (see kcbench logs; kcbench down cleans up)")
	}
	return nil
}

// WriteText writes a restart's boot time, RSS and CPU, and each node's.
func (br BootResult) WriteText(w io.Writer) {
	fmt.Fprintf(w, "ready in %.2f s, RSS %.0f MiB, boot CPU %.1f s\n", br.Duration.Seconds(), mib(br.RSS), br.CPU.Seconds())
	for _, nb := range br.Nodes {
		fmt.Fprintf(w, "  node %d: ready %.2f s, full cluster view %.2f s, RSS %.0f MiB\n", nb.Node, nb.Ready.Seconds(), nb.View.Seconds(), mib(nb.RSS))
	}
}

// ShownLogPath is the log kcbench logs --log shows: the database's
// (PostgreSQL's or MariaDB's) for LogDB, HAProxy's for LogLB, else
// Keycloak node's (1-based).
func (s *Stack) ShownLogPath(log string, node int) (string, error) {
	path, err := s.NodeLogPath(node)
	if err != nil {
		return "", cliutil.Usage(err)
	}
	switch log {
	case LogDB:
		if path = s.PGLogPath(); path == "" {
			return "", errors.New("the stack uses an external database: no database log")
		}
	case LogLB:
		if path = s.BalancerLogPath(); path == "" {
			return "", errors.New("the stack has no load balancer (--lb none)")
		}
	}
	return path, nil
}
