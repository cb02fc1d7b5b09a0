package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdUp(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "up", "up [flags]")
	var f stackFlags
	f.register(fs)
	foreground := fs.Bool("foreground", false, "stay in the foreground; Ctrl-C stops the stack")
	showSecrets := fs.Bool("show-secrets", false, "print the admin password and client secret")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	cfg, err := f.config(e, !*foreground)
	if err != nil {
		return err
	}
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		return err
	}
	printStackSummary(e.stdout, s, *showSecrets)
	if !*foreground {
		return nil
	}
	e.logf("stack up in the foreground; Ctrl-C stops it")
	<-ctx.Done()
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	e.logf("stopping the stack")
	if err := s.Down(cctx); err != nil {
		return err
	}
	return ctx.Err()
}

func printStackSummary(w io.Writer, s *stack.Stack, showSecrets bool) {
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

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func cmdStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status", "status [flags]")
	var w where
	w.register(fs)
	var t targetFlags
	t.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if t.set() {
		tg, err := t.target()
		if err != nil {
			return err
		}
		info, err := kc.Check(ctx, tg, nil)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, map[string]any{"target": tg.BaseURL, "management_url": tg.ManagementURL, "info": info})
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "target\t%s (external)\n", tg.BaseURL)
		fmt.Fprintf(tw, "keycloak\t%s on Java %s\n", info.Version, info.JavaVersion)
		fmt.Fprintf(tw, "admin login\tok\n")
		fmt.Fprintf(tw, "realms\t%d\n", info.Realms)
		switch {
		case info.ManagementReady != nil:
			fmt.Fprintf(tw, "ready\t%v (%s)\n", *info.ManagementReady, tg.ManagementURL)
		case info.ManagementError != "":
			fmt.Fprintf(tw, "ready\tunknown: %s\n", info.ManagementError)
		default:
			fmt.Fprintf(tw, "ready\tunknown (no --management-url)\n")
		}
		return tw.Flush()
	}
	s, err := w.attach(e)
	if err != nil {
		return err
	}
	st := s.Status(ctx)
	if *asJSON {
		return writeJSON(e.stdout, st)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
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
	tw.Flush()
	if !st.Keycloak.Alive {
		return errors.New("keycloak is not running (see kcbench logs; kcbench down cleans up)")
	}
	return nil
}

func procLine(p stack.ProcStatus) string {
	if !p.Alive {
		return fmt.Sprintf("%d (not running)", p.PID)
	}
	return fmt.Sprintf("%d, RSS %.0f MiB, CPU %.1f s, up %s", p.PID, mib(p.RSS), p.CPU.Seconds(), p.Uptime.Round(time.Second))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func cmdRestart(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "restart", "restart [flags]")
	var w where
	w.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	s, err := attachToRestart(e, &w, "kcbench restart")
	if err != nil {
		return err
	}
	e.logf("restarting Keycloak")
	br, err := s.Restart(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "ready in %.2f s, RSS %.0f MiB, boot CPU %.1f s\n", br.Duration.Seconds(), mib(br.RSS), br.CPU.Seconds())
	return nil
}

func cmdDown(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "down", "down [flags]")
	var w where
	w.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	s, err := w.attach(e)
	if err != nil {
		return err
	}
	pids := s.Pids()
	cctx, cancel := cleanupCtx(ctx)
	defer cancel()
	if err := s.Down(cctx); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "stack %s down (%d processes stopped, none left)\n", w.name, len(pids))
	return nil
}

func cmdLogs(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "logs", "logs [flags]")
	var w where
	w.register(fs)
	pg := fs.Bool("pg", false, "PostgreSQL's log instead of Keycloak's")
	lines := fs.Int("n", 100, "print the last N lines (0: all)")
	follow := fs.Bool("f", false, "follow the log until Ctrl-C")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	s, err := w.attach(e)
	if err != nil {
		return err
	}
	path := s.LogPath()
	if *pg {
		if path = s.PGLogPath(); path == "" {
			return errors.New("the stack uses an external database: no PostgreSQL log")
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tail(f, e.stdout, *lines); err != nil {
		return err
	}
	if !*follow {
		return nil
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			io.WriteString(e.stdout, line)
		}
		if err == io.EOF {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return err
		}
	}
}

// tail copies the last n lines of f (all if n == 0) and leaves f at its end.
func tail(f *os.File, w io.Writer, n int) error {
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	if n > 0 {
		lines := strings.SplitAfter(string(b), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		b = []byte(strings.Join(lines, ""))
	}
	_, err = w.Write(b)
	return err
}
