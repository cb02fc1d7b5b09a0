package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kcbench/kcbench/internal/results"
)

// WriteSummary writes a human-readable end-of-test summary of s to w, in
// the spirit of k6's: the run, then per operation count, rate, errors by
// class and the latency distribution, then the thresholds, if checked.
func WriteSummary(w io.Writer, s results.Stats) error {
	ew := &errWriter{w: w}
	p := ew.printf

	p("scenario:     %s\n", s.Scenario)
	switch s.Model {
	case results.ModelOpen:
		p("executor:     %s (open model: latency from each iteration's intended start)\n", s.Executor)
	default:
		p("executor:     %s (%s model: latency from the actual send)\n", s.Executor, s.Model)
	}
	p("duration:     %s measured", fmtSeconds(s.Duration))
	if s.Warmup > 0 {
		p(" after %s warm-up", fmtSeconds(s.Warmup))
	}
	p(", %s elapsed", fmtSeconds(s.Elapsed))
	if s.Aborted {
		p(" (aborted)")
	}
	p("\n")
	if s.EndReason != "" {
		p("ended:        %s\n", s.EndReason)
	}
	p("vus:          %d peak\n", s.VUs)
	var rate float64
	if it, ok := s.Op(results.IterationOp); ok {
		rate = it.Rate
	}
	p("iterations:   %d (%.2f/s), ", s.Iterations, rate)
	if s.Model == results.ModelOpen {
		p("%d dropped, ", s.Dropped)
	}
	p("%d interrupted\n", s.Interrupted)
	if n := s.Timeouts(); n > 0 {
		p("timeouts:     %d iterations cut off by the %s request time-out (--timeout)\n", n, fmtSeconds(s.Timeout))
	}

	title := "latency"
	if s.Model == results.ModelOpen {
		title = "latency (intended start → end)"
	}
	writeOpTable(ew, title, s.Ops, func(o results.OpStats) results.Dist { return o.Latency }, true)
	if s.Model == results.ModelOpen {
		writeOpTable(ew, "service time (send → end)", s.Ops, func(o results.OpStats) results.Dist { return o.Service }, false)
	}

	if len(s.ErrorExamples) > 0 {
		p("\nerrors (first of each class)\n")
		for _, c := range slices.Sorted(maps.Keys(s.ErrorExamples)) {
			p("  %s: %s\n", c, s.ErrorExamples[c])
		}
	}

	if len(s.Events) > 0 {
		p("\nevents\n")
		for _, e := range s.Events {
			p("  %s", fmtSeconds(e.At))
			p(" %s", strings.TrimSpace(e.Action+" "+e.Args))
			if e.Err != "" {
				p(": failed: %s\n", e.Err)
				continue
			}
			p(" (took %s)", fmtSeconds(e.Took))
			if r := e.Recovery; r != nil {
				if r.Recovered {
					p("; p99 back under %s after %s", r.SLO, fmtSeconds(r.After))
				} else {
					p("; p99 not back under %s within %s", r.SLO, fmtSeconds(r.Window))
				}
				p(", %d failed iterations", r.Errors)
				for _, k := range slices.Sorted(maps.Keys(r.ErrorKinds)) {
					p(", %s %d", k, r.ErrorKinds[k])
				}
				p(", %.0f iterations short of %.1f/s", r.Dip, r.BaselineRate)
			}
			p("\n")
		}
	}

	if len(s.Thresholds) > 0 {
		p("\nthresholds\n")
		for _, r := range s.Thresholds {
			p("  %s\n", r)
		}
	}
	return ew.err
}

func writeOpTable(ew *errWriter, title string, ops []results.OpStats, d func(results.OpStats) results.Dist, counts bool) {
	ew.printf("\n%s\n", title)
	head := []string{"op"}
	if counts {
		head = append(head, "count", "rate/s", "errors")
	}
	rows := [][]string{append(head, "min", "avg", "p50", "p90", "p95", "p99", "max")}
	for _, o := range ops {
		row := []string{o.Name}
		if counts {
			row = append(row, strconv.FormatInt(o.Count, 10), fmt.Sprintf("%.2f", o.Rate),
				fmt.Sprintf("%d (%.2f%%)", o.Errors, 100*o.ErrorRate()))
		}
		x := d(o)
		for _, v := range []time.Duration{x.Min, x.Mean, x.P50, x.P90, x.P95, x.P99, x.Max} {
			row = append(row, fmtLatency(v))
		}
		rows = append(rows, row)
		if counts {
			for _, c := range slices.Sorted(maps.Keys(o.ErrorClasses)) {
				rows = append(rows, []string{"  " + c, "", "", strconv.FormatInt(o.ErrorClasses[c], 10)})
			}
			if o.OutOfRange > 0 {
				rows = append(rows, []string{"  >60s", strconv.FormatInt(o.OutOfRange, 10)}) // recorded as 60s
			}
		}
	}
	writeTable(ew, rows)
}

// writeTable writes rows as columns separated by two spaces, the first
// column aligned left and the others right.
func writeTable(w io.Writer, rows [][]string) {
	var width []int
	for _, r := range rows {
		for i, c := range r {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func fmtLatency(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

func fmtSeconds(d time.Duration) string { return d.Round(time.Millisecond).String() }

// errWriter keeps the first write error, so that a sequence of writes can
// be checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, args ...any) { fmt.Fprintf(e, format, args...) }

// Series selects one of an operation's two histogram series.
type Series int

const (
	SeriesLatency Series = iota // from the intended start (open model) or the send (closed)
	SeriesService               // from the send
)

func (s Series) String() string {
	if s == SeriesService {
		return "service"
	}
	return "latency"
}

// ErrUnknownOp is returned by Recorder.WriteHlog for an operation that was
// never recorded.
var ErrUnknownOp = errors.New("load: unknown operation")

// WriteHlog writes the measured intervals of operation op's series as an HDR
// histogram interval log (.hlog), readable by HdrHistogram's tools and
// hdrhistogram-go's HistogramLogReader. Values are in microseconds;
// timestamps are relative to the start of the run, which the log's
// StartTime and BaseTime lines give. Call it after the run.
func (r *Recorder) WriteHlog(w io.Writer, op string, series Series) error {
	r.mergeMu.Lock()
	defer r.mergeMu.Unlock()
	var a *opAgg
	for _, o := range r.ops {
		if o.name == op {
			a = o
		}
	}
	if a == nil {
		return fmt.Errorf("%w %q", ErrUnknownOp, op)
	}
	bw := bufio.NewWriter(w)
	lw := hdr.NewHistogramLogWriter(bw)
	base := r.start.UnixMilli()
	lw.SetBaseTime(base)
	ew := errors.Join(
		lw.OutputLogFormatVersion(),
		lw.OutputComment(fmt.Sprintf("[kcbench op=%s series=%s unit=us]", op, series)),
		WriteHlogTimes(bw, base),
		lw.OutputLegend(),
	)
	if ew != nil {
		return ew
	}
	for _, iv := range a.hlog {
		ref := iv.latency
		if series == SeriesService {
			ref = iv.service
		}
		enc, err := r.store.get(ref)
		if err != nil {
			return err
		}
		h, err := hdr.Decode(enc)
		if err != nil {
			return fmt.Errorf("load: decoding interval of %q: %w", op, err)
		}
		h.SetStartTimeMs(iv.startMs)
		h.SetEndTimeMs(iv.endMs)
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteHlogTimes writes an interval log's StartTime and BaseTime lines
// for ms since the epoch, with their milliseconds: hdrhistogram-go's
// writer drops them, so that its reader, adding the base time to the
// intervals' relative timestamps, would shift them by up to a second.
func WriteHlogTimes(w io.Writer, ms int64) error {
	secs := float64(ms) / 1000
	iso := time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
	_, err := fmt.Fprintf(w, "#[StartTime: %.3f (seconds since epoch), %s]\n#[BaseTime: %.3f (seconds since epoch)]\n", secs, iso, secs)
	return err
}

// Ops returns the names of the operations recorded, IterationOp first.
func (r *Recorder) Ops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.opNames...)
}
