package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/sizing"
)

// cmdQuickstart is the main job (make run): the shipped quickstart
// experiment (a local stack, a small dataset in both modes, the standard
// scenarios cold and warm), its report, a summary and a sizing estimate
// calibrated with the measured server CPU per operation.
func cmdQuickstart(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "quickstart", "quickstart [flags]")
	var w where
	w.register(fs)
	resultsDir := fs.String("results", "results", "results folder (the run goes to <results>/quickstart, replacing an earlier one)")
	scale := fs.Float64("scale", 1, "multiply every phase duration")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr (the log of phases stays)")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if !(*scale > 0 && *scale <= maxScale) {
		return usagef("--scale: %g: must be > 0 and at most %d", *scale, maxScale)
	}
	f, err := loadExperiment("quickstart")
	if err != nil {
		return err
	}
	d, err := w.dirs(e)
	if err != nil {
		return err
	}
	dir := filepath.Join(*resultsDir, f.Name)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	e.logf("quickstart: Keycloak %s + PostgreSQL on 127.0.0.1, %v tenants in %v mode, %d workloads cold and warm; results in %s",
		f.Stack.KeycloakVersion, f.Dataset.Tenants, f.Dataset.Modes, len(f.Workload), dir)
	out, err := runExperiment(ctx, e, f, dir, d, "quickstart", *scale, *quiet)
	if err != nil {
		return err
	}
	if len(out.Failed) > 0 || len(out.Aborted) > 0 {
		return fmt.Errorf("quickstart: %d points failed and %d aborted (see %s)", len(out.Failed), len(out.Aborted), dir)
	}
	reportPath, err := buildReport(ctx, dir)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	pts, err := results.ReadExperiment(dir)
	if err != nil {
		return err
	}
	printQuickSummary(e.stdout, pts)
	if err := printQuickSizing(e.stdout, pts); err != nil {
		e.logf("sizing: %v", err)
	}
	fmt.Fprintf(e.stdout, "\nreport: %s\n", reportPath)
	return nil
}

func printQuickSummary(w io.Writer, pts []*results.Point) {
	if len(pts) == 0 {
		return
	}
	m := pts[0].Manifest
	fmt.Fprintf(w, "\nKeycloak %s, Java %s, PostgreSQL %s; %s, %d cores; closed model (VUs)\n\n", m.Keycloak, m.Java, m.Postgres, m.Machine.CPUModel, m.Machine.Cores)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\ttenants\tseed s\tboot s\tRSS MiB\tworkload\tphase\tops/s\tp95 ms\terrors\tserver CPU-ms/op\t")
	for _, p := range pts {
		s := p.Summary
		seed, boot, rss := "-", "-", "-"
		if s.Seed != nil {
			seed = fmt.Sprintf("%.1f", s.Seed.Seconds)
		}
		if s.Boot != nil {
			boot, rss = fmt.Sprintf("%.1f", s.Boot.Seconds), fmt.Sprintf("%.0f", mib(s.Boot.RSSBytes))
		}
		for i, wl := range s.Workloads {
			it, ok := wl.Stats.Op("iteration")
			if !ok {
				continue
			}
			first := i == 0
			col := func(v string) string {
				if first {
					return v
				}
				return ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%d\t%.2f\t\n",
				col(s.Params["mode"]), col(s.Params["tenants"]), col(seed), col(boot), col(rss),
				wl.Name, wl.Phase, it.Rate, float64(it.Latency.P95)/1e6, it.Errors, wl.ServerCPUMsPerOp)
		}
	}
	tw.Flush()
}

// printQuickSizing sizes the sizing guide's worked example load with the
// measured warm CPU-ms of the realms-mode point.
func printQuickSizing(w io.Writer, pts []*results.Point) error {
	var login, cc, refresh float64
	for _, p := range pts {
		if p.Summary.Params["mode"] != "realms" {
			continue
		}
		for _, wl := range p.Summary.Workloads {
			if wl.Phase != "warm" {
				continue
			}
			switch wl.Scenario {
			case "password-grant":
				login = wl.ServerCPUMsPerOp
			case "client-credentials":
				cc = wl.ServerCPUMsPerOp
			case "refresh":
				refresh = wl.ServerCPUMsPerOp
			}
		}
	}
	if login <= 0 || cc <= 0 || refresh <= 0 {
		return fmt.Errorf("no warm CPU-ms for password-grant, client-credentials and refresh")
	}
	in := sizing.DefaultInput()
	in.LoginsPerSec, in.ClientCredentialsPerSec, in.RefreshesPerSec, in.LogoutsPerSec = 45, 360, 360, 5
	guide, err := sizing.Calculate(in)
	if err != nil {
		return err
	}
	in.Rates = sizing.RatesFromCPUms(login, cc, refresh, "measured by kcbench quickstart (warm, realms mode)")
	measured, err := sizing.Calculate(in)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSizing for the guide's example load (45 logins/s, 360 client-credential grants/s, 360 refreshes/s, 3 pods),\n")
	fmt.Fprintf(w, "with the server CPU this run measured (%.1f / %.1f / %.1f ms per login / grant / refresh; the password\npolicy here is pbkdf2-sha256:1, so logins are far cheaper than with Keycloak's default argon2):\n\n", login, cc, refresh)
	return sizing.CompareResults(guide, measured).WriteText(w)
}
