package stack

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteSummary writes what a user of the stack needs: URLs, where the
// admin secrets are (the secrets themselves only with showSecrets) and the
// last boot.
func (s *Stack) WriteSummary(w io.Writer, showSecrets bool) {
	st := s.State()
	t := s.Target()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "stack\t%s (%s)\n", st.Name, st.Dir)
	fmt.Fprintf(tw, "keycloak\t%s on Java %s\n", st.Options.Version, st.Java.Version)
	fmt.Fprintf(tw, "url\t%s\n", t.BaseURL)
	fmt.Fprintf(tw, "management\t%s\n", t.ManagementURL)
	if len(st.Nodes) > 1 {
		for _, n := range st.Nodes {
			fmt.Fprintf(tw, "node %d\t%s (management %s)\n", n.Index, n.URL(), n.MgmtURL())
		}
	}
	fmt.Fprintf(tw, "admin\tuser %s, password in %s\n", t.Admin.Username, s.SecretPath("admin-password"))
	fmt.Fprintf(tw, "admin client\t%s, secret in %s\n", t.Admin.ClientID, s.SecretPath("admin-client-secret"))
	if showSecrets {
		fmt.Fprintf(tw, "admin password\t%s\n", t.Admin.Password.Reveal())
		fmt.Fprintf(tw, "admin client secret\t%s\n", t.Admin.ClientSecret.Reveal())
	}
	if b := st.LastBoot; b != nil {
		if len(b.Nodes) > 1 {
			fmt.Fprintf(tw, "boot\t%.2f s until all %d nodes were ready and saw each other, RSS %.0f MiB in all\n", b.Duration.Seconds(), len(b.Nodes), mib(b.RSS))
		} else {
			fmt.Fprintf(tw, "boot\t%.2f s to ready, RSS %.0f MiB\n", b.Duration.Seconds(), mib(b.RSS))
		}
	}
	tw.Flush()
}

// WriteText writes the status as a table.
func (st Status) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	mode := "detached"
	if !st.Detached {
		mode = "foreground"
	}
	fmt.Fprintf(tw, "stack\t%s (%s, %s)\n", st.Name, mode, st.Dir)
	fmt.Fprintf(tw, "keycloak\t%s on Java %s (%s)\n", st.Version, st.Java.Version, st.Java.Home)
	fmt.Fprintf(tw, "url\t%s\n", st.URL)
	fmt.Fprintf(tw, "management\t%s\n", st.MgmtURL)
	fmt.Fprintf(tw, "ready\t%v\n", st.Ready)
	if len(st.Nodes) > 1 {
		fmt.Fprintf(tw, "topology\t%s\n", topologyLine(st.Topology))
		for _, n := range st.Nodes {
			fmt.Fprintf(tw, "node %d\t%s, ready %v, cluster view %d; pid %s\n", n.Index, n.URL, n.Ready, n.View, procLine(n.Process))
			if l := n.CPULimit; l != nil {
				fmt.Fprintf(tw, "  cpu limit\t%s\n", cpuLimitLine(*l, n.Throttling))
			}
		}
		fmt.Fprintf(tw, "keycloak total\tRSS %.0f MiB, CPU %.1f s\n", mib(st.Keycloak.RSS), st.Keycloak.CPU.Seconds())
	} else {
		fmt.Fprintf(tw, "keycloak pid\t%s\n", procLine(st.Keycloak))
		if len(st.Nodes) == 1 && st.Nodes[0].CPULimit != nil {
			fmt.Fprintf(tw, "cpu limit\t%s\n", cpuLimitLine(*st.Nodes[0].CPULimit, st.Nodes[0].Throttling))
		}
	}
	if b := st.Balancer; b != nil {
		fmt.Fprintf(tw, "haproxy\t%s; pid %s\n", b.URL, procLine(b.Process))
		for _, bk := range b.Backends {
			if bk.Connections {
				fmt.Fprintf(tw, "  %s\t%s, %d connections (TLS passthrough: requests not seen)\n", bk.Node, bk.Status, bk.Requests)
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s, %d requests, %d 5xx\n", bk.Node, bk.Status, bk.Requests, bk.Errors5xx)
		}
		if b.Error != "" {
			fmt.Fprintf(tw, "  stats\t%s\n", b.Error)
		}
	}
	if st.Heap != nil {
		fmt.Fprintf(tw, "heap\t%s\n", st.Heap)
	}
	if len(st.JavaOpts) > 0 {
		fmt.Fprintf(tw, "java options\t%s\n", strings.Join(st.JavaOpts, " "))
	}
	if st.VolatileSessions {
		fmt.Fprintf(tw, "sessions\tin memory only: lost when Keycloak restarts (up --persistent-sessions=false)\n")
	}
	if st.TLS != "" {
		fmt.Fprintf(tw, "tls\t%s\n", st.TLS)
		fmt.Fprintf(tw, "ca file\t%s (curl --cacert, k6 and Go: SSL_CERT_FILE)\n", st.CAFile)
	} else {
		fmt.Fprintf(tw, "tls\toff (plain HTTP: up --tls=false)\n")
	}
	if st.Postgres != nil {
		fmt.Fprintf(tw, "postgres\t%s, %s\n", st.Postgres.Version, st.DBURL)
		fmt.Fprintf(tw, "postgres pid\t%s\n", procLine(*st.Postgres))
	} else if st.MariaDB != nil {
		fmt.Fprintf(tw, "mariadb\t%s, %s\n", st.MariaDB.Version, st.DBURL)
		fmt.Fprintf(tw, "mariadb pid\t%s\n", procLine(*st.MariaDB))
	} else {
		fmt.Fprintf(tw, "database\t%s (external)\n", st.DBURL)
	}
	if st.Slapd != nil {
		fmt.Fprintf(tw, "slapd\t%s\n", st.LDAPURL)
		fmt.Fprintf(tw, "slapd pid\t%s\n", procLine(*st.Slapd))
	} else if st.LDAPURL != "" {
		fmt.Fprintf(tw, "ldap\t%s (external)\n", st.LDAPURL)
	}
	var addrs []string
	for _, l := range st.Listeners {
		addrs = append(addrs, l.Addr)
	}
	slices.Sort(addrs)
	fmt.Fprintf(tw, "listening\t%s\n", strings.Join(slices.Compact(addrs), " "))
	if b := st.LastBoot; b != nil {
		fmt.Fprintf(tw, "last boot\t%.2f s to ready, RSS %.0f MiB\n", b.Duration.Seconds(), mib(b.RSS))
		for _, nb := range b.Nodes {
			fmt.Fprintf(tw, "  node %d\tready %.2f s, full view %.2f s, RSS %.0f MiB, boot CPU %.1f s\n", nb.Node, nb.Ready.Seconds(), nb.View.Seconds(), mib(nb.RSS), nb.CPU.Seconds())
		}
	}
	return tw.Flush()
}

func procLine(p ProcStatus) string {
	if !p.Alive {
		return fmt.Sprintf("%d (not running)", p.PID)
	}
	return fmt.Sprintf("%d, RSS %.0f MiB, CPU %.1f s, up %s", p.PID, mib(p.RSS), p.CPU.Seconds(), p.Uptime.Round(time.Second))
}

// cpuLimitLine describes a node's CPU limit and its throttling.
func cpuLimitLine(l CPULimit, th *Throttling) string {
	s := fmt.Sprintf("%g cores via %s", l.CPUs, l.Method)
	if l.CPUList != "" {
		s = fmt.Sprintf("cores %s via %s (sched_setaffinity: whole cores only)", l.CPUList, l.Method)
	}
	if th != nil {
		s += fmt.Sprintf("; throttled %d of %d periods, %.1f s", th.Throttled, th.Periods, th.Time.Seconds())
	}
	return s
}

// topologyLine says how a stack's Keycloak side is laid out.
func topologyLine(t Topology) string {
	s := fmt.Sprintf("%d nodes", t.Nodes)
	if t.Nodes == 1 {
		s = "1 node"
	}
	if t.NodeCPUs > 0 {
		s += fmt.Sprintf(" × %g CPU", t.NodeCPUs)
	}
	switch {
	case t.LB == LBHAProxy && t.Sticky:
		s += ", HAProxy round-robin, sticky on AUTH_SESSION_ID"
	case t.LB == LBHAProxy:
		s += ", HAProxy round-robin"
	default:
		s += ", no balancer"
	}
	return s
}
