package results

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// RepeatsFile holds the run-to-run spread of kcbench capacity --repeats,
// in --out beside the repeat-<i>/ folders.
const RepeatsFile = "repeats.json"

// CapacityRepeats is the run-to-run spread of the same search repeated: each
// repeat's found rate, their mean and (max−min)/mean, and the server's
// CPU per operation and cores busy at each answer, which tell whether
// the answers moved with the server's own cost (a JVM still getting
// cheaper, another JVM) or with the search.
type CapacityRepeats struct {
	Schema   int              `json:"schema"`
	Kind     string           `json:"kind"` // "capacity-repeats"
	Scenario string           `json:"scenario"`
	Repeats  []CapacityRepeat `json:"repeats"`
	// Mean, Min, Max and SpreadPct are over the repeats that found a
	// rate; SpreadPct is (Max−Min)/Mean in %, 0 with fewer than two;
	// DeviationPct is the largest |rate − Mean|/Mean in %.
	Mean         float64 `json:"mean_rate"`
	Min          float64 `json:"min_rate"`
	Max          float64 `json:"max_rate"`
	SpreadPct    float64 `json:"spread_pct"`
	DeviationPct float64 `json:"max_deviation_pct"`
	// CPUSpreadPct and CoresSpreadPct are (max−min)/mean in % of the
	// server CPU-ms per operation and of the cores busy at the answers,
	// over the repeats that found a rate and measured them (absent with
	// fewer than two).
	CPUSpreadPct   float64 `json:"cpu_ms_per_op_spread_pct,omitempty"`
	CoresSpreadPct float64 `json:"server_cores_spread_pct,omitempty"`
	// Restarted is true when Keycloak was restarted before every repeat
	// (kcbench capacity --restart): each ran on a JVM of its own.
	Restarted bool `json:"restarted,omitempty"`
}

// CapacityRepeat is one search of CapacityRepeats.
type CapacityRepeat struct {
	Repeat      int     `json:"repeat"` // 1-based
	Found       bool    `json:"found"`
	MaxRate     float64 `json:"max_rate"` // 0 when not found
	CPUMsPerOp  float64 `json:"cpu_ms_per_op,omitempty"`
	ServerCores float64 `json:"server_cores,omitempty"`
	Elapsed     float64 `json:"elapsed_s,omitempty"`
	BootSeconds float64 `json:"boot_s,omitempty"` // the restart before it (--restart)
}

// NewCapacityRepeats sums up the results of repeated searches, in the order run.
func NewCapacityRepeats(rs []*CapacityResult) CapacityRepeats {
	out := CapacityRepeats{Schema: 1, Kind: "capacity-repeats", Repeats: []CapacityRepeat{}}
	var found, cpus, cores []float64
	out.Restarted = len(rs) > 0
	for i, r := range rs {
		out.Scenario = r.Scenario
		out.Restarted = out.Restarted && r.BootSeconds > 0
		x := CapacityRepeat{Repeat: i + 1, Found: r.Found, MaxRate: r.MaxRate, Elapsed: r.Elapsed, BootSeconds: r.BootSeconds}
		if r.Found {
			found = append(found, r.MaxRate)
			x.CPUMsPerOp, x.ServerCores = r.CPUMsPerOp, r.ServerCores
			if r.CPUMsPerOp > 0 && r.ServerCores > 0 {
				cpus, cores = append(cpus, r.CPUMsPerOp), append(cores, r.ServerCores)
			}
		}
		out.Repeats = append(out.Repeats, x)
	}
	if len(found) == 0 {
		return out
	}
	out.Mean, out.Min, out.Max = mean(found), slices.Min(found), slices.Max(found)
	out.SpreadPct = spreadPct(found)
	for _, x := range found {
		out.DeviationPct = max(out.DeviationPct, 100*math.Abs(x-out.Mean)/out.Mean)
	}
	out.CPUSpreadPct, out.CoresSpreadPct = spreadPct(cpus), spreadPct(cores)
	return out
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// spreadPct is (max−min)/mean in % (0 with fewer than two).
func spreadPct(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := mean(xs)
	if m <= 0 {
		return 0
	}
	return 100 * (slices.Max(xs) - slices.Min(xs)) / m
}

// WriteText writes a line of each repeat's rate, their mean, spread and
// largest deviation from the mean, e.g. "repeats: 1,150 / 1,100 /
// 1,100/s, mean 1,117/s, spread (max−min)/mean 4.5 %, each within 3.0 %
// of the mean" (a repeat that found no rate shows as "none"); then, when
// two or more measured the server, a line of its CPU per operation and
// cores busy at each answer, saying whether the answers followed the
// server's cost per operation or the load at which each search stopped.
func (r CapacityRepeats) WriteText(w io.Writer) error {
	rates := make([]string, len(r.Repeats))
	var cpus, cores []string
	n := 0
	for i, x := range r.Repeats {
		rates[i] = "none"
		if x.Found {
			rates[i] = FormatNum(x.MaxRate)
			n++
			if x.CPUMsPerOp > 0 && x.ServerCores > 0 {
				cpus = append(cpus, fmt.Sprintf("%.2f", x.CPUMsPerOp))
				cores = append(cores, fmt.Sprintf("%.2f", x.ServerCores))
			}
		}
	}
	line := "repeats: " + strings.Join(rates, " / ") + "/s"
	if r.Restarted {
		line = "repeats, each on a freshly restarted Keycloak: " + strings.Join(rates, " / ") + "/s"
	}
	switch {
	case n == 0:
		line += ", no rate met the SLOs"
	case n == 1:
		line += fmt.Sprintf(", only one found a rate (%s/s): no spread", FormatNum(r.Mean))
	default:
		line += fmt.Sprintf(", mean %s/s, spread (max−min)/mean %.1f %%, each within %.1f %% of the mean",
			FormatNum(math.Round(r.Mean)), r.SpreadPct, r.DeviationPct)
		if n < len(r.Repeats) {
			line += fmt.Sprintf(" (over the %d that found a rate)", n)
		}
	}
	if len(cpus) > 1 {
		line += fmt.Sprintf("\nserver at the answers: %s CPU-ms per operation (spread %.1f %%), %s cores busy (spread %.1f %%)",
			strings.Join(cpus, " / "), r.CPUSpreadPct, strings.Join(cores, " / "), r.CoresSpreadPct)
		switch {
		case r.SpreadPct <= 0:
		case r.CoresSpreadPct < r.SpreadPct/2 && r.CPUSpreadPct >= r.SpreadPct/2 && r.Restarted:
			line += ": the answers moved with the server's cost per operation, which differs from one boot of the JVM to the next"
		case r.CoresSpreadPct < r.SpreadPct/2 && r.CPUSpreadPct >= r.SpreadPct/2:
			line += ": the answers moved with the server's cost per operation (a JVM still warming up, or another JVM), not with the cores the search left it"
		case r.CPUSpreadPct < r.SpreadPct/2 && r.CoresSpreadPct >= r.SpreadPct/2:
			line += ": the answers moved with how busy the server was where each search stopped, not with its cost per operation (near its limit a step tips over at loads that differ from run to run)"
		}
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// ReadCapacityRepeats reads dir's repeats.json; the error wraps
// os.ErrNotExist when dir holds none.
func ReadCapacityRepeats(dir string) (*CapacityRepeats, error) {
	path := filepath.Join(dir, RepeatsFile)
	var r CapacityRepeats
	if err := readJSON(path, &r); err != nil {
		return nil, err
	}
	if r.Kind != "capacity-repeats" {
		return nil, fmt.Errorf("%s: kind %q, want capacity-repeats", path, r.Kind)
	}
	return &r, nil
}
