package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/sizing"
)

// readResults reads the points of a results folder: an experiment folder
// (results/<experiment>) or one point's folder. A path that is not a folder
// is a usage error; a folder without finished points is an error.
func readResults(flagName, dir string) ([]*results.Point, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, usagef("--%s %s: no such folder (want results/<experiment>, as kcbench experiment run writes it)", flagName, dir)
	case err != nil:
		return nil, fmt.Errorf("--%s %s: %w", flagName, dir, err)
	case !st.IsDir():
		return nil, usagef("--%s %s: not a folder (want results/<experiment>)", flagName, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, results.SummaryFile)); err == nil {
		p, err := results.ReadPoint(dir)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %w", flagName, dir, err)
		}
		return []*results.Point{p}, nil
	}
	pts, err := results.ReadExperiment(dir)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	return pts, nil
}

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

// measurements turns the points' workloads into sizing measurements. Only
// finished points count; the others are named in the notes.
func measurements(pts []*results.Point) (ms []sizing.Measurement, notes []string) {
	var skipped []string
	for _, p := range pts {
		s := p.Summary
		if s.Status != results.StatusDone {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", p.Manifest.Point, s.Status))
			continue
		}
		for _, w := range s.Workloads {
			it, _ := w.Stats.Op(results.IterationOp)
			ms = append(ms, sizing.Measurement{
				Point: p.Manifest.Point, Variant: s.Params["variant"], Policy: pointPolicy(p.Manifest),
				Keycloak: p.Manifest.Keycloak, Mode: s.Params["mode"], Tenants: paramInt(s.Params, "tenants"),
				Repeat: paramInt(s.Params, "repeat"), Workload: w.Name, Scenario: w.Scenario, Phase: w.Phase,
				CPUMsPerOp: w.ServerCPUMsPerOp, OK: it.OK, Source: sizing.SourceWorkload,
			})
		}
	}
	if len(skipped) > 0 {
		notes = append(notes, "Points that did not finish, not used: "+strings.Join(skipped, ", ")+".")
	}
	return ms, notes
}

// readCapacity turns capacity searches into measurements: those the
// points of an experiment ran (summary.json's capacity), or, for a folder
// that kcbench capacity --out wrote, its capacity.json or those of its
// subfolders (repeats, a version matrix). A search counts at its best
// step, the highest rate that met every SLO.
func readCapacity(dir string, pts []*results.Point) (ms []sizing.Measurement, notes []string) {
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
		variant := r.Params["variant"]
		if variant == "" && r.Params["keycloak_version"] != "" {
			variant = "keycloak-" + r.Params["keycloak_version"]
		}
		workload := cmp.Or(r.Params["workload"], r.Scenario)
		ms = append(ms, sizing.Measurement{
			Point: cmp.Or(r.Params["point"], d), Variant: variant, Policy: r.Params["password_policy"],
			Keycloak: r.Params["keycloak_version"], Mode: r.Params["mode"], Tenants: paramInt(r.Params, "tenants"),
			Repeat: paramInt(r.Params, "repeat"), Workload: workload, Scenario: r.Scenario, Phase: sizing.PhaseCapacity,
			CPUMsPerOp: r.CPUMsPerOp, OK: r.Steps[r.BestStep].OK, Source: sizing.SourceCapacity,
		})
	}
	return ms, notes
}

// readCalibrations reads a results folder and returns the measured costs
// per variant (only variant when it is set).
func readCalibrations(dir, variant string) ([]sizing.Calibration, []string, error) {
	pts, err := readResults("from", dir)
	cms, cnotes := readCapacity(dir, pts)
	if err != nil && len(cms) == 0 {
		if len(cnotes) > 0 {
			return nil, nil, fmt.Errorf("%w (%s)", err, cnotes[0])
		}
		return nil, nil, err
	}
	ms, notes := measurements(pts)
	ms, notes = append(ms, cms...), append(notes, cnotes...)
	if variant != "" {
		var known []string
		var keep []sizing.Measurement
		for _, m := range ms {
			if !slices.Contains(known, m.Variant) {
				known = append(known, m.Variant)
			}
			if m.Variant == variant {
				keep = append(keep, m)
			}
		}
		if len(keep) == 0 {
			slices.Sort(known)
			return nil, nil, usagef("--variant %s: not in %s (variants: %s)", variant, dir, strings.Join(known, ", "))
		}
		ms = keep
	}
	cals, err := sizing.Calibrate(ms)
	if err != nil {
		return nil, nil, fmt.Errorf("--from %s: %w", dir, err)
	}
	return cals, notes, nil
}
