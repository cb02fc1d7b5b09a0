package capacity

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// RepeatsFile holds the run-to-run spread of kcbench capacity --repeats,
// in --out beside the repeat-<i>/ folders.
const RepeatsFile = "repeats.json"

// Repeats is the run-to-run spread of the same search repeated: each
// repeat's found rate, their mean and (max−min)/mean.
type Repeats struct {
	Schema   int      `json:"schema"`
	Kind     string   `json:"kind"` // "capacity-repeats"
	Scenario string   `json:"scenario"`
	Repeats  []Repeat `json:"repeats"`
	// Mean, Min, Max and SpreadPct are over the repeats that found a
	// rate; SpreadPct is (Max−Min)/Mean in %, 0 with fewer than two.
	Mean      float64 `json:"mean_rate"`
	Min       float64 `json:"min_rate"`
	Max       float64 `json:"max_rate"`
	SpreadPct float64 `json:"spread_pct"`
}

// Repeat is one search of Repeats.
type Repeat struct {
	Repeat  int     `json:"repeat"` // 1-based
	Found   bool    `json:"found"`
	MaxRate float64 `json:"max_rate"` // 0 when not found
}

// NewRepeats sums up the results of repeated searches, in the order run.
func NewRepeats(rs []*results.CapacityResult) Repeats {
	out := Repeats{Schema: 1, Kind: "capacity-repeats", Repeats: []Repeat{}}
	var found []float64
	for i, r := range rs {
		out.Scenario = r.Scenario
		out.Repeats = append(out.Repeats, Repeat{Repeat: i + 1, Found: r.Found, MaxRate: r.MaxRate})
		if r.Found {
			found = append(found, r.MaxRate)
		}
	}
	if len(found) == 0 {
		return out
	}
	var sum float64
	for _, x := range found {
		sum += x
	}
	out.Mean, out.Min, out.Max = sum/float64(len(found)), slices.Min(found), slices.Max(found)
	if len(found) > 1 && out.Mean > 0 {
		out.SpreadPct = 100 * (out.Max - out.Min) / out.Mean
	}
	return out
}

// WriteText writes one line: each repeat's rate, their mean and spread,
// e.g. "repeats: 1,150 / 1,100 / 1,100/s, mean 1,117/s, spread
// (max−min)/mean 4.5 %". A repeat that found no rate shows as "none".
func (r Repeats) WriteText(w io.Writer) error {
	rates := make([]string, len(r.Repeats))
	n := 0
	for i, x := range r.Repeats {
		rates[i] = "none"
		if x.Found {
			rates[i] = results.FormatNum(x.MaxRate)
			n++
		}
	}
	line := "repeats: " + strings.Join(rates, " / ") + "/s"
	switch {
	case n == 0:
		line += ", no rate met the SLOs"
	case n == 1:
		line += fmt.Sprintf(", only one found a rate (%s/s): no spread", results.FormatNum(r.Mean))
	default:
		line += fmt.Sprintf(", mean %s/s, spread (max−min)/mean %.1f %%", results.FormatNum(math.Round(r.Mean)), r.SpreadPct)
		if n < len(r.Repeats) {
			line += fmt.Sprintf(" (over the %d that found a rate)", n)
		}
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
