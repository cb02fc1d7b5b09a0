package report

import (
	"bufio"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/results"
)

// readHlogTotal reads an HDR interval log (the load engine's
// <phase>-<workload>-<op>.hlog, values in microseconds) and adds its
// intervals into one histogram: percentiles come from the merged counts,
// never from averaged percentiles.
func readHlogTotal(path string) (*hdr.Histogram, error) {
	f, err := fileutil.Open(path, fileutil.MaxResultFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := hdr.NewHistogramLogReader(bufio.NewReader(f))
	total := hdr.New(1, 3_600_000_000, 3) // 1 µs to 1 h
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		if h == nil {
			return total, nil
		}
		total.Merge(h)
	}
}

// percentileCurve samples h from p0 to its largest value on a "nines"
// scale: x = −log10(1 − p/100), so 1 is p90, 2 p99, 3 p99.9; y in ms.
func percentileCurve(h *hdr.Histogram) []xy {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	top := math.Log10(float64(n)) // beyond it the curve is the max
	var out []xy
	for x := 0.0; x < top; x += 0.05 {
		p := 100 * (1 - math.Pow(10, -x))
		out = append(out, xy{math.Round(x*100) / 100, float64(h.ValueAtQuantile(p)) / 1000})
	}
	out = append(out, xy{math.Round(top*100) / 100, float64(h.Max()) / 1000})
	return out
}

// percentileChart draws, for one point, the latency distribution of every
// operation from its .hlog files.
func (b *builder) percentileChart(p *results.Point, id, title, stem string, sub []string) {
	files, _ := filepath.Glob(filepath.Join(p.Dir, "*.hlog"))
	sort.Strings(files)
	var series []lineSeries
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".hlog")
		if strings.HasSuffix(name, ".service") {
			continue // the service-time series; latency is what users see
		}
		h, err := readHlogTotal(f)
		if err != nil {
			b.note("Point %s: %v; its percentile distribution is left out.", id, err)
			return
		}
		if c := percentileCurve(h); len(c) > 0 {
			series = append(series, lineSeries{label: strings.ReplaceAll(name, "-", " "), parts: [][]xy{c}, color: len(series)})
		}
	}
	if len(series) == 0 {
		return
	}
	t := title + ": latency percentiles (HDR histograms)"
	b.add(stem+"-percentiles", t, sub, lineChart{title: t, sub: sub,
		xLabel: "percentile: 1 = p90, 2 = p99, 3 = p99.9, 4 = p99.99", yLabel: "latency ms (log)",
		logY: true, latency: true, series: series, zeroY: true})
}
