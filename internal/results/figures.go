package results

import (
	"errors"
	"fmt"
)

// maxLatencyMs bounds any latency figure of a results file: a day, far
// above the histograms' range, and below what overflows a time.Duration.
const maxLatencyMs = 24 * 60 * 60 * 1000

// impossible names a figure no measurement can give: analysis refuses a
// file that holds one rather than judge it.
func impossible(field string, v any, why string) error {
	return fmt.Errorf("%s %v: %s", field, v, why)
}

// check refuses a distribution with a negative or absurd latency. (The
// order of the percentiles is not checked: files of older versions lack
// some of them.)
func (j distJSON) check() error {
	fields := []struct {
		name string
		v    float64
	}{{"min_ms", j.Min}, {"p50_ms", j.P50}, {"p90_ms", j.P90}, {"p95_ms", j.P95}, {"p99_ms", j.P99}, {"p99_9_ms", j.P999}, {"max_ms", j.Max}}
	var errs []error
	for _, f := range fields {
		switch {
		case f.v < 0:
			errs = append(errs, impossible(f.name, f.v, "a latency cannot be negative"))
		case f.v > maxLatencyMs:
			errs = append(errs, impossible(f.name, f.v, "a latency above a day"))
		}
	}
	if j.Mean < 0 || j.Mean > maxLatencyMs {
		errs = append(errs, impossible("mean_ms", j.Mean, "a latency cannot be negative or above a day"))
	}
	return errors.Join(errs...)
}

// check refuses an operation's figures that cannot be: negative counts or
// rate, more errors (or successes) than operations, a latency of 0 over
// operations that ran.
func (j opStatsJSON) check() error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	for _, c := range []struct {
		name string
		v    int64
	}{{"count", j.Count}, {"ok", j.OK}, {"errors", j.Errors}, {"out_of_range", j.OutOfRange}} {
		if c.v < 0 {
			add(impossible(c.name, c.v, "a count cannot be negative"))
		}
	}
	if j.Errors > j.Count {
		add(impossible("errors", j.Errors, fmt.Sprintf("more than the %d operations (an error rate above 100%%)", j.Count)))
	}
	if j.OK > j.Count {
		add(impossible("ok", j.OK, fmt.Sprintf("more than the %d operations", j.Count)))
	}
	if j.Rate < 0 {
		add(impossible("rate_per_s", j.Rate, "a rate cannot be negative"))
	}
	if j.Count > 0 && j.Latency.P95 == 0 {
		add(impossible("latency.p95_ms", 0, fmt.Sprintf("%d operations ran, none takes no time", j.Count)))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("op %q: %w", j.Name, err)
	}
	return nil
}

// check refuses a run's counts that cannot be.
func (j statsJSON) check() error {
	var errs []error
	for _, c := range []struct {
		name string
		v    float64
	}{{"iterations", float64(j.Iterations)}, {"dropped_iterations", float64(j.Dropped)}, {"interrupted_iterations", float64(j.Interrupted)},
		{"vus", float64(j.VUs)}, {"duration_s", j.Duration}, {"warmup_s", j.Warmup}, {"elapsed_s", j.Elapsed}} {
		if c.v < 0 {
			errs = append(errs, impossible(c.name, c.v, "cannot be negative"))
		}
	}
	return errors.Join(errs...)
}

// checkFigures refuses a workload's server figures that cannot be.
func (w *Workload) checkFigures() error {
	var errs []error
	for _, c := range []struct {
		name string
		v    float64
	}{{"server_cpu_ms_per_op", w.ServerCPUMsPerOp}, {"max_rss_bytes", float64(w.MaxRSSBytes)}, {"mean_cpu_pct", w.MeanCPUPct},
		{"mean_heap_bytes", float64(w.MeanHeapBytes)}, {"gc_pauses", w.GCPauses}, {"gc_pause_mean_ms", w.GCPauseMeanMs},
		{"heap_after_gc_bytes", float64(w.HeapAfterGCBytes)}, {"warm_after_s", derefOr0(w.WarmAfterSeconds)}} {
		if c.v < 0 {
			errs = append(errs, impossible(c.name, c.v, "cannot be negative"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("workload %s (%s): %w", w.Name, w.Phase, err)
	}
	return nil
}

// checkFigures refuses a summary whose workloads' figures cannot be.
func (s *Summary) checkFigures() error {
	var errs []error
	for i := range s.Workloads {
		errs = append(errs, s.Workloads[i].checkFigures())
	}
	return errors.Join(errs...)
}

// checkFigures refuses a capacity result whose figures cannot be.
func (r *CapacityResult) checkFigures() error {
	var errs []error
	for _, c := range []struct {
		name string
		v    float64
	}{{"max_rate", r.MaxRate}, {"first_failed_rate", r.FirstFailedRate}, {"achieved_rate", r.Achieved}, {"p95_ms", r.P95}, {"p99_ms", r.P99},
		{"cpu_ms_per_op", r.CPUMsPerOp}, {"server_cores", r.ServerCores}, {"ops_per_cpu_second", r.OpsPerCPUSecond}, {"max_rss_bytes", float64(r.MaxRSSBytes)}} {
		if c.v < 0 {
			errs = append(errs, impossible(c.name, c.v, "cannot be negative"))
		}
	}
	if r.Found && r.MaxRate == 0 {
		errs = append(errs, impossible("max_rate", 0, "found is true, yet no rate passed"))
	}
	if r.P99 > 0 && r.P95 > r.P99 {
		errs = append(errs, impossible("p95_ms", r.P95, fmt.Sprintf("above p99_ms %v", r.P99)))
	}
	return errors.Join(errs...)
}

// derefOr0 is *p, or 0 for nil.
func derefOr0(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
