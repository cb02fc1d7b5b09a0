package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kcbench/kcbench/internal/results"
)

// WriteQuickSummary writes kcbench quickstart's table: per point its
// seed, boot and RSS, and per workload its rate, p95, errors and server
// CPU-ms per operation.
func WriteQuickSummary(w io.Writer, pts []*results.Point) {
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
			boot, rss = fmt.Sprintf("%.1f", s.Boot.Seconds), fmt.Sprintf("%.0f", float64(s.Boot.RSSBytes)/(1<<20))
		}
		for i, wl := range s.Workloads {
			it, ok := wl.Stats.Op(results.IterationOp)
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
