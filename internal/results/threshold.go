package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrThresholdsFailed is wrapped by the error Stats.Check returns when a
// threshold is crossed. The CLI maps it to its threshold exit code, after
// writing the results.
var ErrThresholdsFailed = errors.New("thresholds failed")

// Threshold is a pass/fail criterion on one metric of one operation, such as
// "token:p95<500ms". The grammar is
//
//	[op ":"] metric cmp value
//
// where op names an operation (IterationOp when absent); metric is one of
// min, avg (or mean), med (or p50), p90, p95, p99, p99.9, max (latency; a Go
// duration like 500ms or 1.5s, or a bare number of milliseconds), errors
// (error rate; value a percentage like 1% or a bare fraction like 0.01) or
// rate (operations per second; value a number, optionally followed by
// "/s"); and cmp is one of <, <=, >, >=. Spaces around the parts are
// allowed.
type Threshold struct {
	Op     string  // operation; "" means IterationOp
	Metric string  // canonical metric name, e.g. "p95"
	Cmp    string  // "<", "<=", ">" or ">="
	Limit  float64 // in the metric's Unit
}

// Metric units.
const (
	UnitMillis  = "ms"
	UnitPercent = "%"
	UnitPerSec  = "/s"
)

// latencyMetric returns the canonical name of a latency metric or alias,
// or "" if name is none.
func latencyMetric(name string) string {
	switch name {
	case "min", "avg", "p50", "p90", "p95", "p99", "p99.9", "max":
		return name
	case "mean":
		return "avg"
	case "med":
		return "p50"
	}
	return ""
}

// latencyOf returns metric m of d.
func latencyOf(d Dist, m string) time.Duration {
	switch m {
	case "min":
		return d.Min
	case "avg":
		return d.Mean
	case "p50":
		return d.P50
	case "p90":
		return d.P90
	case "p95":
		return d.P95
	case "p99":
		return d.P99
	case "p99.9":
		return d.P999
	default:
		return d.Max
	}
}

// ParseThreshold parses one threshold expression.
func ParseThreshold(s string) (Threshold, error) {
	t, err := parseThreshold(s)
	if err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: %w", s, err)
	}
	return t, nil
}

func parseThreshold(s string) (Threshold, error) {
	var t Threshold
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return t, errors.New("missing comparison (<, <=, >, >=)")
	}
	lhs, rhs := s[:i], s[i:]
	t.Cmp = rhs[:1]
	if strings.HasPrefix(rhs[1:], "=") {
		t.Cmp += "="
	}
	rhs = strings.TrimSpace(rhs[len(t.Cmp):])

	metric := lhs
	if op, m, ok := strings.Cut(lhs, ":"); ok {
		t.Op = strings.TrimSpace(op)
		if t.Op == "" {
			return t, errors.New("empty operation before ':'")
		}
		if strings.ContainsFunc(t.Op, func(r rune) bool { return r <= ' ' || r == ':' || r == ',' || r == 0x7f }) {
			return t, fmt.Errorf("operation %q contains a space, control character, ',' or ':'", t.Op)
		}
		metric = m
	}
	metric = strings.ToLower(strings.TrimSpace(metric))
	if t.Op == IterationOp {
		t.Op = ""
	}

	switch {
	case latencyMetric(metric) != "":
		t.Metric = latencyMetric(metric)
		d, err := parseLatency(rhs)
		if err != nil {
			return t, err
		}
		t.Limit = d
	case metric == "errors":
		t.Metric = metric
		v, err := parseErrorRate(rhs)
		if err != nil {
			return t, err
		}
		t.Limit = v
	case metric == "rate":
		t.Metric = metric
		v, err := parseNumber(strings.TrimSpace(strings.TrimSuffix(rhs, "/s")))
		if err != nil {
			return t, fmt.Errorf("rate: %w", err)
		}
		t.Limit = v
	case metric == "":
		return t, errors.New("missing metric")
	default:
		return t, fmt.Errorf("unknown metric %q (want min, avg, med, p50, p90, p95, p99, p99.9, max, errors or rate)", metric)
	}
	return t, t.checkLimit()
}

// checkLimit refuses a limit no measurement can meet or that cannot be a
// figure at all: an error rate above 100 %, a latency at most 0, anything
// below 0.
func (t Threshold) checkLimit() error {
	switch {
	case t.Metric == "errors" && t.Limit > 100:
		return fmt.Errorf("errors %s: an error rate is at most 100%%", t.format(t.Limit))
	case t.Cmp == "<" && t.Limit == 0:
		return fmt.Errorf("%s<%s: nothing is below 0, so this can never pass", t.Metric, t.format(0))
	case t.Unit() == UnitMillis && t.Cmp == "<=" && t.Limit == 0:
		return fmt.Errorf("%s<=0ms: every latency is above 0, so this can never pass", t.Metric)
	}
	return nil
}

// parseLatency returns milliseconds from a Go duration or a bare number of
// milliseconds. A number followed by "ms" is read exactly, so the canonical
// form String writes reads back unchanged.
func parseLatency(s string) (float64, error) {
	if v, err := parseNumber(strings.TrimSuffix(s, "ms")); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("latency limit %q is neither a duration (500ms) nor milliseconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("latency limit %v is negative", d)
	}
	return float64(d) / float64(time.Millisecond), nil
}

// parseErrorRate returns a percentage from "1%" or a fraction "0.01".
func parseErrorRate(s string) (float64, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := parseNumber(strings.TrimSpace(p))
		if err != nil {
			return 0, fmt.Errorf("errors: %w", err)
		}
		return v, nil
	}
	v, err := parseNumber(s)
	if err != nil {
		return 0, fmt.Errorf("errors: %w", err)
	}
	return v * 100, nil
}

// parseNumber parses a finite, non-negative decimal number.
func parseNumber(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || (v == 0 && math.Signbit(v)) {
		return 0, fmt.Errorf("%q is not a finite non-negative number", s)
	}
	return v, nil
}

// Unit returns the unit of Limit: UnitMillis, UnitPercent or UnitPerSec.
func (t Threshold) Unit() string {
	switch t.Metric {
	case "errors":
		return UnitPercent
	case "rate":
		return UnitPerSec
	default:
		return UnitMillis
	}
}

// String returns the threshold in canonical form; ParseThreshold reads it
// back.
func (t Threshold) String() string {
	var b strings.Builder
	if t.Op != "" {
		b.WriteString(t.Op)
		b.WriteByte(':')
	}
	b.WriteString(t.Metric)
	b.WriteString(t.Cmp)
	b.WriteString(t.format(t.Limit))
	return b.String()
}

// format renders v in t's unit.
func (t Threshold) format(v float64) string {
	num := strconv.FormatFloat(v, 'g', -1, 64)
	switch t.Unit() {
	case UnitPercent:
		return num + "%"
	case UnitPerSec:
		return num
	default:
		return num + "ms"
	}
}

// MarshalText implements encoding.TextMarshaler.
func (t Threshold) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (t *Threshold) UnmarshalText(b []byte) error {
	v, err := ParseThreshold(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ThresholdResult is a Threshold checked against Stats.
type ThresholdResult struct {
	Threshold Threshold
	Actual    float64 // the metric's value, in Threshold.Unit()
	NoData    bool    // the operation had no measurements; the threshold fails
	Pass      bool
}

// String describes the result, e.g. "✓ token:p95<500ms (actual 23.4ms)".
func (r ThresholdResult) String() string {
	mark := "✓"
	if !r.Pass {
		mark = "✗"
	}
	if r.NoData {
		return mark + " " + r.Threshold.String() + " (no data)"
	}
	return mark + " " + r.Threshold.String() + " (actual " + r.Threshold.formatActual(r.Actual) + ")"
}

func (t Threshold) formatActual(v float64) string {
	return t.format(math.Round(v*1000) / 1000)
}

type thresholdResultJSON struct {
	Threshold Threshold `json:"threshold"`
	Actual    float64   `json:"actual"`
	Unit      string    `json:"unit"`
	NoData    bool      `json:"no_data,omitempty"`
	Pass      bool      `json:"pass"`
}

// MarshalJSON writes the result with the threshold as text.
func (r ThresholdResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(thresholdResultJSON{r.Threshold, r.Actual, r.Threshold.Unit(), r.NoData, r.Pass})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *ThresholdResult) UnmarshalJSON(b []byte) error {
	var j thresholdResultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = ThresholdResult{Threshold: j.Threshold, Actual: j.Actual, NoData: j.NoData, Pass: j.Pass}
	return nil
}

// Evaluate checks t against s. An operation without measurements fails
// every threshold, since nothing shows it holds.
func (t Threshold) Evaluate(s Stats) ThresholdResult {
	r := ThresholdResult{Threshold: t}
	op := t.Op
	if op == "" {
		op = IterationOp
	}
	o, ok := s.Op(op)
	if !ok || o.Count == 0 {
		r.NoData = true
		return r
	}
	switch t.Metric {
	case "errors":
		r.Actual = 100 * o.ErrorRate()
	case "rate":
		r.Actual = o.Rate
	default:
		r.Actual = float64(latencyOf(o.Latency, t.Metric)) / float64(time.Millisecond)
	}
	switch t.Cmp {
	case "<":
		r.Pass = r.Actual < t.Limit
	case "<=":
		r.Pass = r.Actual <= t.Limit
	case ">":
		r.Pass = r.Actual > t.Limit
	case ">=":
		r.Pass = r.Actual >= t.Limit
	}
	return r
}

// Check evaluates ths against s. The error wraps ErrThresholdsFailed and
// names the failed thresholds when any fails; the results are returned
// either way, typically to be stored in s.Thresholds.
func (s Stats) Check(ths []Threshold) ([]ThresholdResult, error) {
	results := make([]ThresholdResult, 0, len(ths))
	var failed []string
	for _, t := range ths {
		r := t.Evaluate(s)
		results = append(results, r)
		if !r.Pass {
			failed = append(failed, t.String())
		}
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("%w: %s", ErrThresholdsFailed, strings.Join(failed, ", "))
	}
	return results, nil
}

// FormatSLOs joins thresholds with commas (the inverse of capacity.ParseSLOs), in canonical form.
func FormatSLOs(ts []Threshold) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}

// FormatMs writes a latency in milliseconds with three significant digits
// or so (1234, 56.7, 8.90): kcbench's one latency format for tables and
// sentences.
func FormatMs(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

// FormatOpt writes v with prec decimals, or "-" when it is not positive
// (a figure not measured).
func FormatOpt(v float64, prec int) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// FormatNum formats x for people: at most three decimals, trailing zeros dropped,
// thousands grouped with commas (1357.142857 → "1,357.143").
func FormatNum(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= 1e15 {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}
