package sizing

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/kcbench/kcbench/internal/kc"
	"io"
	"net/http"
	"time"
)

// Deps is what kcbench size takes from outside the process: the clock,
// sleeping and HTTP for --from-metrics, so that tests can fake them, and
// where progress lines go.
type Deps struct {
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	HC    *http.Client
	Logf  func(format string, args ...any)
}

// RealDeps are the process's clock and HTTP, logging through logf.
func RealDeps(logf func(format string, args ...any)) Deps {
	return Deps{Now: time.Now, Sleep: sleepCtx, HC: &http.Client{Timeout: metricsScrapeTimeout}, Logf: logf}
}

// sleepCtx sleeps for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Run sizes what the flags ask for (set: the flags given on the command
// line) and writes it to w.
func (f *Flags) Run(ctx context.Context, w io.Writer, set map[string]bool, d Deps) error {
	in, guide, err := f.Inputs(set)
	if err != nil {
		return err
	}
	if f.tenantsFrom != "" {
		return f.tenants(w, set, in)
	}

	out := Output{}
	var cals []Calibration
	if f.from != "" {
		// Read the results before waiting on /metrics: a bad folder fails fast.
		var notes []string
		cals, notes, err = ReadCalibrations(f.from, f.variant)
		if err != nil {
			return err
		}
		out.Results, out.Notes = f.from, notes
	}
	switch {
	case len(f.fromMetrics) > 0:
		if f.caFile != "" || f.insecure {
			d.HC = kc.TLSClient(f.caFile, f.insecure, metricsScrapeTimeout)
		}
		live, err := observeLoad(ctx, d, f.fromMetrics, f.interval, f.peak)
		if err != nil {
			return err
		}
		live.Apply(&in)
		if in.LoginsPerSec+in.ClientCredentialsPerSec+in.RefreshesPerSec == 0 {
			return fmt.Errorf("size needs a rate: %s counted no login, client-credential grant or refresh over %s (is the load running, are event metrics enabled?)", live.Source, f.interval)
		}
		if guide != nil {
			live.Apply(guide)
		}
		out.Observed = &live
		out.Load = "observed on " + live.Source + fmt.Sprintf(" × peak factor %g", f.peak)
	case f.from != "" && !anySet(set, loadFlags()):
		in.LoginsPerSec, in.ClientCredentialsPerSec, in.RefreshesPerSec, in.LogoutsPerSec = 45, 360, 360, 5
		out.Load = "the sizing guide's example load (no --logins, --client-credentials, --refresh or --logouts given)"
	}

	if cals != nil {
		return WriteFromSizing(w, f.format(), in, cals, out)
	}

	r, err := Calculate(in)
	if err != nil {
		return err // inputs has validated in; this is a bug, not a usage error
	}
	if guide == nil {
		switch {
		case f.k8s:
			return r.WriteK8s(w)
		case f.asJSON && out.Observed == nil:
			return writeJSON(w, r)
		case f.asJSON:
			out.Sizing = &r
			return writeJSON(w, out)
		}
		if err := WriteObserved(w, out.Observed); err != nil {
			return err
		}
		return r.WriteText(w)
	}

	gr, err := Calculate(*guide)
	if err != nil {
		return err
	}
	rates := Compare(gr.Input.Rates, r.Input.Rates)
	figures := CompareResults(gr, r)
	switch {
	case f.k8s:
		return r.WriteK8s(w)
	case f.asJSON:
		out.Guide, out.Measured, out.RatesComparison, out.SizingComparison = &gr, &r, &rates, &figures
		return writeJSON(w, out)
	}
	if err := WriteObserved(w, out.Observed); err != nil {
		return err
	}
	if err := r.WriteText(w); err != nil {
		return err
	}
	return WriteComparisons(w, rates, figures)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
