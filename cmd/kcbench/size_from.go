package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// readCalibrations reads a results folder and returns the measured costs
// per variant (only variant when it is set).
func readCalibrations(dir, variant string) ([]sizing.Calibration, []string, error) {
	pts, err := readResults("from", dir)
	cms, cnotes := sizing.CapacityMeasurements(dir, pts)
	if err != nil && len(cms) == 0 {
		if len(cnotes) > 0 {
			return nil, nil, fmt.Errorf("%w (%s)", err, cnotes[0])
		}
		return nil, nil, err
	}
	ms, notes := sizing.Measurements(pts)
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
