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
	fmt.Fprintf(tw, "admin\tuser %s, password in %s\n", t.Admin.Username, s.SecretPath("admin-password"))
	fmt.Fprintf(tw, "admin client\t%s, secret in %s\n", t.Admin.ClientID, s.SecretPath("admin-client-secret"))
	if showSecrets {
		fmt.Fprintf(tw, "admin password\t%s\n", t.Admin.Password.Reveal())
		fmt.Fprintf(tw, "admin client secret\t%s\n", t.Admin.ClientSecret.Reveal())
	}
	if b := st.LastBoot; b != nil {
		fmt.Fprintf(tw, "boot\t%.2f s to ready, RSS %.0f MiB\n", b.Duration.Seconds(), mib(b.RSS))
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
	fmt.Fprintf(tw, "keycloak pid\t%s\n", procLine(st.Keycloak))
	if st.Heap != nil {
		fmt.Fprintf(tw, "heap\t%s\n", st.Heap)
	}
	if st.Postgres != nil {
		fmt.Fprintf(tw, "postgres\t%s, %s\n", st.Postgres.Version, st.DBURL)
		fmt.Fprintf(tw, "postgres pid\t%s\n", procLine(*st.Postgres))
	} else {
		fmt.Fprintf(tw, "database\t%s (external)\n", st.DBURL)
	}
	var addrs []string
	for _, l := range st.Listeners {
		addrs = append(addrs, l.Addr)
	}
	slices.Sort(addrs)
	fmt.Fprintf(tw, "listening\t%s\n", strings.Join(slices.Compact(addrs), " "))
	if b := st.LastBoot; b != nil {
		fmt.Fprintf(tw, "last boot\t%.2f s to ready, RSS %.0f MiB\n", b.Duration.Seconds(), mib(b.RSS))
	}
	return tw.Flush()
}

func procLine(p ProcStatus) string {
	if !p.Alive {
		return fmt.Sprintf("%d (not running)", p.PID)
	}
	return fmt.Sprintf("%d, RSS %.0f MiB, CPU %.1f s, up %s", p.PID, mib(p.RSS), p.CPU.Seconds(), p.Uptime.Round(time.Second))
}
