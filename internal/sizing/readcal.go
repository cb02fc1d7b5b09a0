package sizing

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/results"
)

// ReadCalibrations reads a results folder and returns the measured costs
// per variant (only variant when it is set).
func ReadCalibrations(dir, variant string) ([]Calibration, []string, error) {
	pts, err := results.ReadDir("from", dir)
	cms, cnotes := CapacityMeasurements(dir, pts)
	if err != nil && len(cms) == 0 {
		if len(cnotes) > 0 {
			return nil, nil, fmt.Errorf("%w (%s)", err, cnotes[0])
		}
		return nil, nil, err
	}
	ms, notes := Measurements(pts)
	ms, notes = append(ms, cms...), append(notes, cnotes...)
	if variant != "" {
		var known []string
		var keep []Measurement
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
			return nil, nil, cliutil.Usagef("--variant %s: not in %s (variants: %s)", variant, dir, strings.Join(known, ", "))
		}
		ms = keep
	}
	cals, err := Calibrate(ms)
	if err != nil {
		return nil, nil, fmt.Errorf("--from %s: %w", dir, err)
	}
	return cals, notes, nil
}
