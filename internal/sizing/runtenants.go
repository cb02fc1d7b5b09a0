package sizing

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/results"
)

// TenantsOutput is kcbench size --tenants-from --json.
type TenantsOutput struct {
	Results    string           `json:"results"`
	SLO        SLO              `json:"slo"`
	Capacities []TenantCapacity `json:"capacities"`
}

// tenants reports, per variant and mode of a multi-tenancy experiment,
// the largest tenant count at which the SLOs held.
func (f *Flags) tenants(w io.Writer, set map[string]bool, in Input) error {
	slo := SLO{AdminP95: f.sloAdminP95, TokenP95: f.sloTokenP95, MaxErrorRate: f.sloErrorPct / 100,
		Phase: f.sloPhase, MemoryLimitMiB: float64(in.Memory.LimitMiB())}
	if slo.Phase == "all" {
		slo.Phase = ""
	}
	if set["memory-limit-mib"] {
		slo.MemoryLimitMiB = f.memoryLimitMiB
	}
	pts, err := results.ReadDir("tenants-from", f.tenantsFrom)
	if err != nil {
		return err
	}
	tps := TenantPoints(pts)
	if f.variant != "" {
		var known []string
		var keep []TenantPoint
		for _, p := range tps {
			if !slices.Contains(known, p.Variant) {
				known = append(known, p.Variant)
			}
			if p.Variant == f.variant {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			slices.Sort(known)
			return cliutil.Usagef("--variant %s: not in %s (variants: %s)", f.variant, f.tenantsFrom, strings.Join(known, ", "))
		}
		tps = keep
	}
	caps, err := TenantCapacities(tps, slo)
	if err != nil {
		return fmt.Errorf("--tenants-from %s: %w", f.tenantsFrom, err)
	}
	if f.asJSON {
		return writeJSON(w, TenantsOutput{Results: f.tenantsFrom, SLO: slo, Capacities: caps})
	}
	fmt.Fprintf(w, "Results: %s\n", f.tenantsFrom)
	return WriteTenantsText(w, caps, slo)
}
