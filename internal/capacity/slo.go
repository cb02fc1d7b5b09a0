package capacity

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// ParseSLOs reads a comma-separated list of SLOs such as
// "p99<500ms,errors<0.1%". Each one is a load threshold (see
// results.ParseThreshold): [op:]metric cmp value, where an SLO without an
// operation applies to whole iterations. Every problem is reported at once.
func ParseSLOs(s string) ([]results.Threshold, error) {
	var (
		out  []results.Threshold
		errs []error
	)
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		t, err := results.ParseThreshold(part)
		if err == nil {
			err = checkSLO(part, t)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no SLO given (e.g. 'p99<500ms,errors<0.1%')")
	}
	return out, nil
}

// checkSLO refuses a threshold that is no service level: a latency or an
// error rate bounded from below (max>5ms) is met by a server that gets
// slower or fails more, so the search would look for the wrong edge.
func checkSLO(expr string, t results.Threshold) error {
	if t.Metric != "rate" && strings.HasPrefix(t.Cmp, ">") {
		return fmt.Errorf("slo %q: %s must be bounded from above (%s<…): a lower bound is met by a slower or failing server", expr, t.Metric, t.Metric)
	}
	return nil
}

// DefaultSLOs are the SLOs of a search that names none: p99 under 500 ms
// and fewer than 0.1 % errors.
const DefaultSLOs = "p99<500ms,errors<0.1%"

// LatencyLimit returns the largest latency limit (in milliseconds) among
// the SLOs of upper-bound form (p99<500ms), and whether there is one. The
// CLI sizes the virtual-user pool from it.
func LatencyLimit(ts []results.Threshold) (float64, bool) {
	var limit float64
	found := false
	for _, t := range ts {
		if t.Unit() != results.UnitMillis || !strings.HasPrefix(t.Cmp, "<") {
			continue
		}
		if !found || t.Limit > limit {
			limit, found = t.Limit, true
		}
	}
	return limit, found
}
