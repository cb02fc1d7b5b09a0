package sizing

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Output formats of WriteFromSizing.
const (
	FormatText = ""
	FormatJSON = "json"
	FormatK8s  = "k8s"
)

// Output is kcbench size's JSON when it compares or observes (the
// guide-only sizing is a plain Result). Fields are omitted when
// they do not apply.
type Output struct {
	// Observed is the load read from /metrics (--from-metrics).
	Observed *Live `json:"observed,omitempty"`
	// Results is the --from folder; Load says where the load came from.
	Results string `json:"results,omitempty"`
	Load    string `json:"load,omitempty"`
	// Sizing is the guide-only sizing of an observed load.
	Sizing *Result `json:"sizing,omitempty"`
	// Guide, Measured and the comparisons: the CPU-ms flags.
	Guide            *Result     `json:"guide,omitempty"`
	Measured         *Result     `json:"measured,omitempty"`
	RatesComparison  *Comparison `json:"rates_comparison,omitempty"`
	SizingComparison *Comparison `json:"sizing_comparison,omitempty"`
	// Variants: --from, one per variant of the experiment.
	Variants []VariantSizing `json:"variants,omitempty"`
	Notes    []string        `json:"notes,omitempty"`
}

// VariantSizing is the calibrated sizing of one variant.
type VariantSizing struct {
	Calibration      Calibration `json:"calibration"`
	Guide            Result      `json:"guide"`
	Measured         Result      `json:"measured"`
	RatesComparison  Comparison  `json:"rates_comparison"`
	SizingComparison Comparison  `json:"sizing_comparison"`
}

// WriteObserved writes the observed load, if any, and a blank line.
func WriteObserved(w io.Writer, l *Live) error {
	if l == nil {
		return nil
	}
	if err := l.WriteText(w); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// WriteComparisons writes the rates and the sizing figures of the guide
// next to the measured ones.
func WriteComparisons(w io.Writer, rates, figures Comparison) error {
	fmt.Fprintf(w, "\nCompared with the %s (ratio = measured ÷ guide)\n\n", rates.A)
	fmt.Fprintf(w, "Rates (a ratio above 1 means more operations per vCPU, or more CPU-ms per operation)\n")
	if err := rates.WriteText(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSizing for this load (a ratio above 1 means more resources)\n")
	return figures.WriteText(w)
}

// WriteFromSizing sizes in with each variant's measured costs and writes,
// per variant, where the figures came from, the sizing and the comparison
// with the guide (or YAML per variant with FormatK8s, or one JSON object with FormatJSON).
func WriteFromSizing(w io.Writer, format string, in Input, cals []Calibration, out Output) error {
	gr, err := Calculate(in)
	if err != nil {
		return err
	}
	for _, c := range cals {
		m := in
		m.Rates = c.Rates()
		r, err := Calculate(m)
		if err != nil {
			return fmt.Errorf("variant %s: %w", c.Variant, err)
		}
		rates, figures := Compare(gr.Input.Rates, r.Input.Rates), CompareResults(gr, r)
		// The full source heads the variant's section; the tables get a short one.
		rates.B, figures.B = "measured", "measured"
		if c.Variant != "" {
			rates.B, figures.B = "measured: "+c.Variant, "measured: "+c.Variant
		}
		out.Variants = append(out.Variants, VariantSizing{Calibration: c, Guide: gr, Measured: r,
			RatesComparison: rates, SizingComparison: figures})
	}
	switch format {
	case FormatJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case FormatK8s:
		for i, v := range out.Variants {
			if i > 0 {
				fmt.Fprintln(w, "---")
			}
			if err := v.Measured.WriteK8s(w); err != nil {
				return err
			}
		}
		return nil
	}
	if err := WriteObserved(w, out.Observed); err != nil {
		return err
	}
	fmt.Fprintf(w, "Costs measured by kcbench in %s", out.Results)
	if len(out.Variants) > 1 {
		fmt.Fprintf(w, ": %d variants, each sized below", len(out.Variants))
	}
	fmt.Fprintln(w)
	if out.Load != "" && out.Observed == nil {
		fmt.Fprintf(w, "Load: %s\n", out.Load)
	}
	for _, n := range out.Notes {
		fmt.Fprintf(w, "  - %s\n", n)
	}
	for _, v := range out.Variants {
		fmt.Fprintf(w, "\n%s\n", strings.Repeat("=", 78))
		if err := v.Calibration.WriteText(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
		if err := v.Measured.WriteText(w); err != nil {
			return err
		}
		if err := v.Calibration.WriteDatabase(w, v.Measured.Input, v.Guide.Database); err != nil {
			return err
		}
		if err := WriteComparisons(w, v.RatesComparison, v.SizingComparison); err != nil {
			return err
		}
	}
	return nil
}
