package sizing

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// Adapters from kcbench's result files to the calculator's inputs.

// pointPolicy is the password policy a point's dataset was seeded with
// (manifest.json's dataset spec), "" when unknown.
func pointPolicy(m results.Manifest) string {
	var spec struct {
		Policy string `json:"password_policy"`
	}
	if len(m.Dataset) == 0 || json.Unmarshal(m.Dataset, &spec) != nil {
		return ""
	}
	return spec.Policy
}

func paramInt(p map[string]string, k string) int {
	n, _ := strconv.Atoi(p[k])
	return n
}

// Measurements turns the points' workloads into sizing measurements. Only
// finished points count; the others are named in the notes.
func Measurements(pts []*results.Point) (ms []Measurement, notes []string) {
	var skipped []string
	for _, p := range pts {
		s := p.Summary
		if s.Status != results.StatusDone {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", p.Manifest.Point, s.Status))
			continue
		}
		for _, w := range s.Workloads {
			it, _ := w.Stats.Op(results.IterationOp)
			m := Measurement{
				Point: p.Manifest.Point, Variant: s.Params[results.ParamVariant], Policy: pointPolicy(p.Manifest),
				Keycloak: p.Manifest.Keycloak, Mode: s.Params["mode"], Tenants: paramInt(s.Params, "tenants"),
				Repeat: paramInt(s.Params, "repeat"), Workload: w.Name, Scenario: w.Scenario, Phase: w.Phase,
				CPUMsPerOp: w.ServerCPUMsPerOp, OK: it.OK, Source: SourceWorkload, DB: w.Database,
			}
			if c := w.Connections; c != nil {
				m.TLS, m.ConnPolicy = results.OnOff(c.TLS), c.Policy
				if c.TLS {
					m.Resumption = results.OnOff(c.Resumption)
				}
			}
			m.LBTLS = s.Params["lb_tls"]
			ms = append(ms, m)
		}
	}
	if len(skipped) > 0 {
		notes = append(notes, "Points that did not finish, not used: "+strings.Join(skipped, ", ")+".")
	}
	return ms, notes
}

// CapacityMeasurements turns capacity searches into measurements: those the
// points of an experiment ran (summary.json's capacity), or, for a folder
// that kcbench capacity --out wrote, its capacity.json or those of its
// subfolders (repeats, a version matrix). A search counts at its best
// step, the highest rate that met every SLO.
func CapacityMeasurements(dir string, pts []*results.Point) (ms []Measurement, notes []string) {
	var dirs []string
	for _, p := range pts {
		for _, c := range p.Summary.Capacity {
			dirs = append(dirs, filepath.Join(p.Dir, c.Dir))
		}
	}
	if len(pts) == 0 {
		dirs, _ = results.FindCapacityDirs(dir)
	}
	for _, d := range dirs {
		r, err := results.ReadCapacityDir(d)
		if err != nil {
			notes = append(notes, fmt.Sprintf("Capacity search %s unreadable, not used: %v.", d, err))
			continue
		}
		if !r.Found || r.BestStep < 0 || r.BestStep >= len(r.Steps) {
			notes = append(notes, fmt.Sprintf("Capacity search %s found no rate that met the SLOs, not used.", d))
			continue
		}
		variant := r.Params[results.ParamVariant]
		if variant == "" && r.Params["keycloak_version"] != "" {
			variant = "keycloak-" + r.Params["keycloak_version"]
		}
		if t := TopologyName(r.Params); t != "" && r.Params[results.ParamVariant] == "" {
			// A search on a cluster or under a CPU quota: its own
			// calibration, named by its topology.
			variant = strings.TrimPrefix(variant+"-"+t, "-")
		}
		workload := cmp.Or(r.Params["workload"], r.Scenario)
		ms = append(ms, Measurement{
			Point: cmp.Or(r.Params["point"], d), Variant: variant, Policy: r.Params["password_policy"],
			Keycloak: r.Params["keycloak_version"], Mode: r.Params["mode"], Tenants: paramInt(r.Params, "tenants"),
			Repeat: paramInt(r.Params, "repeat"), Workload: workload, Scenario: r.Scenario, Phase: PhaseCapacity,
			CPUMsPerOp: r.CPUMsPerOp, OK: r.Steps[r.BestStep].OK, Source: SourceCapacity, DB: r.Steps[r.BestStep].Database,
			TLS: r.Params[results.ParamTLS], ConnPolicy: r.Params[results.ParamConnPolicy],
			Resumption: r.Params[results.ParamTLSResumption], LBTLS: r.Params["lb_tls"],
		})
	}
	return ms, notes
}

// TenantPoints turns result points into the tenant checker's input: status,
// RSS at ready and during the workloads, and per workload the errors and
// each operation's p95 latency.
func TenantPoints(pts []*results.Point) []TenantPoint {
	const mib = 1 << 20
	var out []TenantPoint
	for _, p := range pts {
		s := p.Summary
		tp := TenantPoint{Point: p.Manifest.Point, Variant: s.Params[results.ParamVariant], Mode: s.Params["mode"],
			Tenants: paramInt(s.Params, "tenants"), Repeat: paramInt(s.Params, "repeat"), Status: s.Status, Reason: s.Reason}
		if s.Boot != nil {
			tp.ReadyRSSMiB = float64(s.Boot.RSSBytes) / mib
		}
		for _, w := range s.Workloads {
			tp.MaxRSSMiB = max(tp.MaxRSSMiB, float64(w.MaxRSSBytes)/mib)
			tw := TenantWorkload{Name: w.Name, Scenario: w.Scenario, Phase: w.Phase}
			for _, o := range w.Stats.Ops {
				if o.Name == results.IterationOp {
					tw.Iterations, tw.Errors = o.Count, o.Errors
					continue
				}
				tw.Ops = append(tw.Ops, OpLatency{Op: o.Name, Count: o.Count, P95: o.Latency.P95})
			}
			tp.Workloads = append(tp.Workloads, tw)
		}
		out = append(out, tp)
	}
	return out
}

// TopologyName names a non-default topology from result params (nodes,
// node_cpus): "2x1cpu", "1x0.5cpu", "3x"; "" for one node without a CPU
// limit.
func TopologyName(p map[string]string) string {
	nodes, cpus := cmp.Or(p["nodes"], "1"), cmp.Or(p["node_cpus"], "0")
	if nodes == "1" && cpus == "0" {
		return ""
	}
	if cpus == "0" {
		return nodes + "x"
	}
	return nodes + "x" + cpus + "cpu"
}
