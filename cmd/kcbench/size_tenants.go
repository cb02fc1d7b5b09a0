package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/sizing"
)

// tenantsOutput is kcbench size --tenants-from --json.
type tenantsOutput struct {
	Results    string                  `json:"results"`
	SLO        sizing.SLO              `json:"slo"`
	Capacities []sizing.TenantCapacity `json:"capacities"`
}

// sizeTenants reports, per variant and mode of a multi-tenancy experiment,
// the largest tenant count at which the SLOs held.
func sizeTenants(e *env, f *sizeFlags, set map[string]bool, in sizing.Input) error {
	slo := sizing.SLO{AdminP95: f.sloAdminP95, TokenP95: f.sloTokenP95, MaxErrorRate: f.sloErrorPct / 100,
		Phase: f.sloPhase, MemoryLimitMiB: float64(in.Memory.LimitMiB())}
	if slo.Phase == "all" {
		slo.Phase = ""
	}
	if set["memory-limit-mib"] {
		slo.MemoryLimitMiB = f.memoryLimitMiB
	}
	pts, err := readResults("tenants-from", f.tenantsFrom)
	if err != nil {
		return err
	}
	tps := sizing.TenantPoints(pts)
	if f.variant != "" {
		var known []string
		var keep []sizing.TenantPoint
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
			return usagef("--variant %s: not in %s (variants: %s)", f.variant, f.tenantsFrom, strings.Join(known, ", "))
		}
		tps = keep
	}
	caps, err := sizing.TenantCapacities(tps, slo)
	if err != nil {
		return fmt.Errorf("--tenants-from %s: %w", f.tenantsFrom, err)
	}
	if f.asJSON {
		return writeJSON(e.stdout, tenantsOutput{Results: f.tenantsFrom, SLO: slo, Capacities: caps})
	}
	fmt.Fprintf(e.stdout, "Results: %s\n", f.tenantsFrom)
	return sizing.WriteTenantsText(e.stdout, caps, slo)
}
