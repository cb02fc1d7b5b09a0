package capacity

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// WriteText writes a search's steps table and finding.
func WriteText(w io.Writer, r *results.CapacityResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tphase\tasked/s\tachieved/s\tok/s\tdropped\terrors %\tp50 ms\tp95 ms\tp99 ms\tmax ms\tCPU-ms/op\tcores\tRSS MiB\tverdict\t")
	for _, s := range r.Steps {
		v := "pass"
		switch {
		case s.Phase == results.StepWarmup:
			v = "discarded"
		case s.Phase == results.StepProbe && s.Pass:
			v = "kept up"
		case s.Phase == results.StepProbe:
			v = "fell behind"
		case !s.Pass:
			v = "FAIL"
		}
		fmt.Fprintf(tw, "%d\t%s\t%g\t%.1f\t%.1f\t%d\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Index, s.Phase, s.Rate, s.Achieved, s.OKRate,
			s.Dropped, s.ErrorPct, results.FormatMs(s.P50), results.FormatMs(s.P95), results.FormatMs(s.P99), results.FormatMs(s.Max), results.FormatOpt(s.CPUMsPerOp, 2),
			results.FormatOpt(s.ServerCores, 2), results.FormatOpt(float64(s.RSSBytes)/(1<<20), 0), v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s, SLOs %s: %s\n", r.Scenario, results.FormatSLOs(r.SLOs), r.Conclusion)
	if r.Found {
		fmt.Fprintf(w, "max rate at SLO: %g/s (achieved %.1f/s, p95 %s ms, p99 %s ms)\n", r.MaxRate, r.Achieved, results.FormatMs(r.P95), results.FormatMs(r.P99))
		if r.CPUMsPerOp > 0 {
			fmt.Fprintf(w, "server CPU:      %.2f ms per operation = %.0f operations/s per vCPU (%.2f cores busy at the max)\n",
				r.CPUMsPerOp, r.OpsPerCPUSecond, r.ServerCores)
		}
	}
	if b := r.Best(); b != nil && b.Database != nil && b.Database.Available && b.Database.Ops > 0 {
		d := b.Database
		engine := ""
		if d.Engine != "" {
			engine = fmt.Sprintf(" (%s; transactions, WAL and blocks are PostgreSQL statistics)", d.Engine)
		}
		fmt.Fprintf(w, "database:        %s per operation at the max%s\n", d.PerOp(), engine)
		for _, u := range d.Unread {
			fmt.Fprintf(w, "                 %s\n", u)
		}
	}
	if b := r.Best(); b != nil && b.Directory != nil && b.Directory.Available && b.Directory.Ops > 0 {
		fmt.Fprintf(w, "directory:       %.3f ms CPU per operation at the max (the LDAP server)\n", b.Directory.CPUMsPerOp)
	}
	if r.Settings.Mode == results.ModeAdaptive {
		if r.Found && r.FirstFailedRate > 0 {
			fmt.Fprintf(w, "bracket:         %g/s passed, %g/s failed: known within %.1f%% (asked %g%%)\n", r.MaxRate, r.FirstFailedRate, r.ResolutionPct, r.Settings.PrecisionPct)
			fmt.Fprintf(w, "repeatability:   unknown from one search (the bracket is its step, not its spread): --repeats N measures it\n")
		}
		if r.Found && r.FailedBelow > 0 {
			fmt.Fprintf(w, "steadiness:      %d judged step(s) at or below %g/s failed before a pass at or above it: a warming server, or latency near the limit that comes and goes (repeats spread more; --repeats N measures it)\n",
				r.FailedBelow, r.MaxRate)
		}
		if r.Predicted > 0 {
			fmt.Fprintf(w, "predicted:       %g/s if CPU-bound (%g cores ÷ CPU per operation in the probes); search started from %g/s\n", r.Predicted, r.Settings.Cores, r.Estimate)
		} else if r.Estimate > 0 {
			fmt.Fprintf(w, "estimate:        %g/s from the probes (no CPU prediction: server cores or CPU unknown)\n", r.Estimate)
		}
	}
	if r.Elapsed > 0 {
		fmt.Fprintf(w, "elapsed:         %s, %d steps\n", time.Duration(r.Elapsed*float64(time.Second)).Round(time.Second), len(r.Steps))
	}
	if r.MaxRSSBytes > 0 {
		fmt.Fprintf(w, "server RSS:      %.0f MiB at most\n", float64(r.MaxRSSBytes)/(1<<20))
	}
	return nil
}
