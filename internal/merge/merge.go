// Package merge joins the results of the agents of a split load run
// (`kcbench load --segment i/n --out DIR`, one folder per agent) into the
// folder a single run at the full load would have written: summary.json,
// timeline.csv and one HDR log per operation and series, so that report,
// compare, gate and size --from read it like any load folder.
//
// Merging is exact where a single run's figures are: the HDR histograms of
// the agents are added (never their percentiles averaged), so the merged
// percentiles are those of the union of the agents' samples at the
// histograms' precision; counts, errors, dropped and interrupted
// iterations are summed; per-second timeline rows are summed on wall time.
//
// The agents of a split capacity search (kcbench capacity --segment) are
// merged step by step and each merged step judged by capacity's judge
// (Capacity, capacity.go).
//
// It sits after load, scenario and capacity in the pipeline (it reads
// their files through results and writes them with scenario's writer)
// and before report.
package merge

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// interval is the timeline's resolution: agents' starts are aligned to
// whole intervals.
const interval = load.DefaultInterval

// Agent is one agent's result folder read back.
type Agent struct {
	Dir    string
	Stats  results.Stats
	CPU    results.ServerCPU
	Params map[string]string
	// hists[op][series] are the agent's measured interval histograms.
	hists map[string][2][]*hdr.Histogram
}

// Result is the merge of several agents.
type Result struct {
	Stats  results.Stats
	CPU    results.ServerCPU
	Params map[string]string
	// Agents are the inputs, in the order given.
	Agents []*Agent
	// hlogs[op][series] are the merged interval histograms, in time order.
	hlogs map[string][2][]*hdr.Histogram
	// Notes say what the merge could not make exact.
	Notes []string
}

// ReadAgent reads a `kcbench load --out` folder: summary.json and the
// HDR logs of its operations.
func ReadAgent(dir string) (*Agent, error) {
	b, err := fileutil.ReadFile(filepath.Join(dir, results.SummaryFile), fileutil.MaxResultFile)
	if err != nil {
		return nil, err
	}
	a := &Agent{Dir: dir, hists: map[string][2][]*hdr.Histogram{}}
	var sum results.LoadSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	a.Stats, a.CPU, a.Params = sum.Stats, sum.ServerCPU, sum.Params
	f, err := fileutil.Open(filepath.Join(dir, results.TimelineFile), fileutil.MaxResultFile)
	if err != nil {
		return nil, err
	}
	a.Stats.Timeline, err = results.ReadTimelineCSV(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if a.Stats.Scenario == "" || len(a.Stats.Ops) == 0 || a.Stats.Ops[0].Name != results.IterationOp {
		return nil, fmt.Errorf("%s: %s is not a load summary (no scenario or iterations)", dir, results.SummaryFile)
	}
	for _, o := range a.Stats.Ops {
		var hs [2][]*hdr.Histogram
		for s, name := range hlogNames(o.Name) {
			h, err := readHlog(filepath.Join(dir, name))
			if errors.Is(err, os.ErrNotExist) && (o.Count == 0 || s == 1) {
				continue // nothing measured; the closed model has no service log
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", dir, err)
			}
			var n int64
			for _, x := range h {
				n += x.TotalCount()
			}
			if n != o.Count {
				return nil, fmt.Errorf("%s: %s holds %d samples, %s says %s ran %d times", dir, name, n, results.SummaryFile, o.Name, o.Count)
			}
			hs[s] = h
		}
		a.hists[o.Name] = hs
	}
	return a, nil
}

// hlogNames are the files of op's latency and service series.
func hlogNames(op string) [2]string { return [2]string{op + ".hlog", op + ".service.hlog"} }

func readHlog(path string) ([]*hdr.Histogram, error) {
	f, err := fileutil.Open(path, fileutil.MaxResultFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := hdr.NewHistogramLogReader(bufio.NewReader(f))
	var hs []*hdr.Histogram
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		if h == nil {
			return hs, nil
		}
		hs = append(hs, h)
	}
}

// Options change what a merge accepts.
type Options struct {
	// Partial merges a set of segments with some missing, on purpose:
	// the result's params say partial=true and which are missing.
	Partial bool
}

// Read reads the agents' folders and merges them.
func Read(dirs []string, o Options) (*Result, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no folders given")
	}
	var as []*Agent
	for _, d := range dirs {
		a, err := ReadAgent(d)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	return Merge(as, o)
}

// Merge joins the agents' results. The agents must have run the same
// scenario with the same executor, as segments of one split run (the same
// number of agents, the same start time when they had one); two folders
// of the same segment are an error (their samples would count twice), and
// so is a missing segment unless o.Partial.
func Merge(as []*Agent, o Options) (*Result, error) {
	if len(as) == 0 {
		return nil, errors.New("merge: no agents")
	}
	missing, err := check(as)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 && !o.Partial {
		return nil, fmt.Errorf("merge: segment(s) %s missing: give every agent's folder, or --partial to merge these on purpose (the result says partial)", strings.Join(missing, ", "))
	}
	res := &Result{Agents: as, hlogs: map[string][2][]*hdr.Histogram{}}
	s := &res.Stats
	first := as[0].Stats
	s.Scenario, s.Executor, s.Model, s.Warmup = first.Scenario, first.Executor, first.Model, first.Warmup
	s.Start = first.Start
	for _, a := range as {
		if a.Stats.Start.Before(s.Start) {
			s.Start = a.Stats.Start
		}
	}
	// shift is each agent's start after the earliest, in whole intervals:
	// rows of agents started together (--start-at) fall on the same rows.
	shift := make([]time.Duration, len(as))
	var spread time.Duration
	for i, a := range as {
		d := a.Stats.Start.Sub(s.Start)
		spread = max(spread, d)
		shift[i] = d.Round(interval)
	}
	if spread > 100*time.Millisecond {
		res.Notes = append(res.Notes, fmt.Sprintf("the agents started up to %v apart (no common --start-at): their timeline rows are aligned to the nearest second", spread.Round(time.Millisecond)))
	}
	var endReasons []string
	for i, a := range as {
		st := a.Stats
		s.Duration = max(s.Duration, shift[i]+st.Duration)
		s.Elapsed = max(s.Elapsed, shift[i]+st.Elapsed)
		s.Aborted = s.Aborted || st.Aborted
		s.VUs += st.VUs
		s.Dropped += st.Dropped
		s.Interrupted += st.Interrupted
		s.Timeout = max(s.Timeout, st.Timeout)
		if st.EndReason != "" && !slices.Contains(endReasons, st.EndReason) {
			endReasons = append(endReasons, st.EndReason)
		}
		for c, m := range st.ErrorExamples {
			if s.ErrorExamples == nil {
				s.ErrorExamples = map[string]string{}
			}
			if _, ok := s.ErrorExamples[c]; !ok {
				s.ErrorExamples[c] = m
			}
		}
		for _, e := range st.Events {
			e.At += st.Start.Sub(s.Start)
			s.Events = addEvent(s.Events, e)
		}
	}
	s.EndReason = strings.Join(endReasons, "; ")
	slices.SortStableFunc(s.Events, func(a, b results.Event) int { return cmp.Compare(a.At, b.At) })

	tl, keys := mergeTimeline(as, shift)
	if err := res.mergeOps(as, shift, tl, keys); err != nil {
		return nil, err
	}
	s.Timeline = tl
	s.Iterations = s.Ops[0].Count
	var ths []results.Threshold
	for _, t := range first.Thresholds {
		ths = append(ths, t.Threshold)
	}
	if len(ths) > 0 {
		s.Thresholds, _ = s.Check(ths)
	}
	res.CPU = mergeCPU(as, *s)
	ps := make([]map[string]string, len(as))
	for i, a := range as {
		ps[i] = a.Params
	}
	res.Params = commonParams(ps)
	if len(missing) > 0 {
		res.Params["partial"] = "true"
		res.Params["missing_segments"] = strings.Join(missing, ",")
		res.Notes = append(res.Notes, fmt.Sprintf("partial: segment(s) %s missing; rates and counts are those of %d agents", strings.Join(missing, ", "), len(as)))
	}
	return res, nil
}

// check rejects agents that did not run the same thing or are not
// segments of one split run (a whole run, another agent count, another
// start time), and a segment given twice. It returns the segments of the
// run that are missing.
func check(as []*Agent) (missing []string, err error) {
	first := as[0]
	seen := map[string]string{}
	var errs []error
	var count int
	for _, a := range as {
		if a.Stats.Scenario != first.Stats.Scenario || a.Stats.Executor != first.Stats.Executor || a.Stats.Warmup != first.Stats.Warmup {
			errs = append(errs, fmt.Errorf("%s ran %s/%s with %v warm-up, %s ran %s/%s with %v: not one run's agents",
				a.Dir, a.Stats.Scenario, a.Stats.Executor, a.Stats.Warmup, first.Dir, first.Stats.Scenario, first.Stats.Executor, first.Stats.Warmup))
			continue
		}
		if at, at0 := a.Params["start_at"], first.Params["start_at"]; at != at0 {
			errs = append(errs, fmt.Errorf("%s started at %q, %s at %q: not one run's agents", a.Dir, at, first.Dir, at0))
			continue
		}
		seg := a.Params["segment"]
		if seg == "" {
			if len(as) > 1 {
				errs = append(errs, fmt.Errorf("%s is a whole run (no --segment): not an agent of a split run", a.Dir))
			}
			continue
		}
		sg, err := load.ParseSegment(seg)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", a.Dir, err))
			continue
		}
		if count == 0 {
			count = sg.Count
		} else if sg.Count != count {
			errs = append(errs, fmt.Errorf("%s is segment %s, another folder one of %d agents: not one run's agents", a.Dir, seg, count))
			continue
		}
		if d, ok := seen[seg]; ok {
			errs = append(errs, fmt.Errorf("%s and %s are both segment %s: its samples would count twice", d, a.Dir, seg))
		}
		seen[seg] = a.Dir
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for i := range count {
		if s := (load.Segment{Index: i, Count: count}).String(); seen[s] == "" {
			missing = append(missing, s)
		}
	}
	return missing, nil
}

// addEvent appends e unless an identical event (same action, arguments
// and error, within a second) is there already: each agent stamps what
// was done to the shared target.
func addEvent(es []results.Event, e results.Event) []results.Event {
	for _, x := range es {
		d := x.At - e.At
		if x.Action == e.Action && x.Args == e.Args && x.Err == e.Err && d < time.Second && d > -time.Second {
			return es
		}
	}
	return append(es, e)
}

// rowKey identifies a merged timeline row: its start offset, in ms.
type rowKey int64

func keyOf(d time.Duration) rowKey { return rowKey(d.Round(time.Millisecond) / time.Millisecond) }

// mergeTimeline sums the agents' rows that start at the same offset
// (after the agent's shift). Percentiles of measured rows are filled in
// by mergeOps from the interval histograms; warm-up rows, which have
// none, keep the highest of the agents' (an upper bound).
func mergeTimeline(as []*Agent, shift []time.Duration) ([]results.TimelineRow, []rowKey) {
	rows := map[rowKey]*results.TimelineRow{}
	for i, a := range as {
		for _, r := range a.Stats.Timeline {
			k := keyOf(r.Start + shift[i])
			m := rows[k]
			if m == nil {
				m = &results.TimelineRow{Start: r.Start + shift[i], End: r.End + shift[i], Warmup: r.Warmup}
				rows[k] = m
			}
			m.End = max(m.End, r.End+shift[i])
			m.Warmup = m.Warmup || r.Warmup
			m.VUs += r.VUs
			m.ActiveVUs += r.ActiveVUs
			m.Dropped += r.Dropped
			for _, o := range r.Ops {
				j := slices.IndexFunc(m.Ops, func(x results.OpInterval) bool { return x.Op == o.Op })
				if j < 0 {
					m.Ops = append(m.Ops, results.OpInterval{Op: o.Op})
					j = len(m.Ops) - 1
				}
				x := &m.Ops[j]
				x.Count += o.Count
				x.Errors += o.Errors
				x.P50, x.P95, x.P99, x.Max = max(x.P50, o.P50), max(x.P95, o.P95), max(x.P99, o.P99), max(x.Max, o.Max)
			}
		}
	}
	keys := slices.Sorted(maps.Keys(rows))
	out := make([]results.TimelineRow, len(keys))
	for i, k := range keys {
		r := rows[k]
		sortOps(r.Ops, func(o results.OpInterval) string { return o.Op })
		out[i] = *r
	}
	return out, keys
}

// sortOps puts IterationOp first, then the others by name, as the engine
// does.
func sortOps[T any](ops []T, name func(T) string) {
	slices.SortStableFunc(ops, func(a, b T) int {
		na, nb := name(a), name(b)
		switch {
		case na == nb:
			return 0
		case na == results.IterationOp:
			return -1
		case nb == results.IterationOp:
			return 1
		}
		return strings.Compare(na, nb)
	})
}

// mergeOps adds the agents' histograms per operation and series: over
// the whole measured window for the summary, and per timeline row for
// the merged HDR logs and the rows' percentiles.
func (res *Result) mergeOps(as []*Agent, shift []time.Duration, tl []results.TimelineRow, keys []rowKey) error {
	s := &res.Stats
	var names []string
	for _, a := range as {
		for _, o := range a.Stats.Ops {
			if !slices.Contains(names, o.Name) {
				names = append(names, o.Name)
			}
		}
	}
	sortOps(names, func(n string) string { return n })
	for _, name := range names {
		op := results.OpStats{Name: name}
		var total [2]*hdr.Histogram
		var rowsH [2]map[rowKey]*hdr.Histogram
		for i, a := range as {
			o, ok := a.Stats.Op(name)
			if !ok {
				continue
			}
			op.Count += o.Count
			op.OK += o.OK
			op.Errors += o.Errors
			op.OutOfRange += o.OutOfRange
			for c, n := range o.ErrorClasses {
				if op.ErrorClasses == nil {
					op.ErrorClasses = map[string]int64{}
				}
				op.ErrorClasses[c] += n
			}
			hs := a.hists[name]
			if s.Model != results.ModelOpen || hs[1] == nil {
				hs[1] = hs[0] // closed model: service time is latency
			}
			for ser := range 2 {
				for _, h := range hs[ser] {
					if total[ser] == nil {
						total[ser] = like(h)
						rowsH[ser] = map[rowKey]*hdr.Histogram{}
					}
					if d := total[ser].Merge(h); d != 0 {
						return fmt.Errorf("%s: %s: %d samples outside the histogram's range", a.Dir, name, d)
					}
					if h.TotalCount() == 0 {
						continue
					}
					k, ok := rowOf(a, h, shift[i], keys)
					if !ok {
						return fmt.Errorf("%s: %s: an interval at %d ms matches no row of its timeline", a.Dir, name, h.StartTimeMs())
					}
					if rowsH[ser][k] == nil {
						rowsH[ser][k] = like(h)
					}
					rowsH[ser][k].Merge(h)
				}
			}
		}
		if total[0] != nil {
			if n := total[0].TotalCount(); n != op.Count {
				return fmt.Errorf("%s: the HDR logs hold %d samples, the summaries %d", name, n, op.Count)
			}
			op.Latency, op.Service = load.Dist(total[0]), load.Dist(total[1])
		}
		if s.Duration > 0 {
			op.Rate = float64(op.Count) / s.Duration.Seconds()
		}
		s.Ops = append(s.Ops, op)

		// The merged HDR logs: one interval per measured row, and each
		// measured row's percentiles from its merged histogram.
		var hl [2][]*hdr.Histogram
		for j, k := range keys {
			r := &tl[j]
			if r.Warmup || total[0] == nil {
				continue
			}
			for ser := range 2 {
				h := rowsH[ser][k]
				if h == nil {
					h = like(total[ser])
				}
				h.SetStartTimeMs(s.Start.Add(r.Start).UnixMilli())
				h.SetEndTimeMs(s.Start.Add(r.End).UnixMilli())
				hl[ser] = append(hl[ser], h)
			}
			x := slices.IndexFunc(r.Ops, func(o results.OpInterval) bool { return o.Op == name })
			if h := rowsH[0][k]; x >= 0 && h != nil {
				d := load.Dist(h)
				r.Ops[x].P50, r.Ops[x].P95, r.Ops[x].P99, r.Ops[x].Max = d.P50, d.P95, d.P99, d.Max
			}
		}
		res.hlogs[name] = hl
	}
	return nil
}

// like returns an empty histogram of h's range and precision.
func like(h *hdr.Histogram) *hdr.Histogram {
	return hdr.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
}

// rowOf finds the merged row of agent a's interval histogram h: the row
// whose start is nearest the interval's (the log keeps milliseconds).
func rowOf(a *Agent, h *hdr.Histogram, shift time.Duration, keys []rowKey) (rowKey, bool) {
	off := time.Duration(h.StartTimeMs()-a.Stats.Start.UnixMilli())*time.Millisecond + shift
	k := keyOf(off)
	i := sort.Search(len(keys), func(i int) bool { return keys[i] >= k })
	best, bestD := rowKey(0), int64(math.MaxInt64)
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= len(keys) {
			continue
		}
		if d := abs(int64(keys[j] - k)); d < bestD {
			best, bestD = keys[j], d
		}
	}
	return best, bestD <= 2 // ms of rounding in the log's timestamps
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// mergeCPU: the agents measured one server; its CPU over the window is
// the agent's with the longest window, divided among all the agents'
// operations.
func mergeCPU(as []*Agent, s results.Stats) results.ServerCPU {
	var best *results.ServerCPU
	var reason string
	for _, a := range as {
		c := a.CPU
		if !c.Available {
			reason = cmp.Or(reason, c.Reason)
			continue
		}
		if best == nil || c.Window > best.Window {
			best = &c
		}
	}
	if best == nil {
		return results.ServerCPU{Reason: cmp.Or(reason, "no agent measured the server's CPU")}
	}
	r := results.ServerCPU{Available: true, Source: best.Source, Resolution: best.Resolution,
		CPU: best.CPU, Window: best.Window, Cores: best.Cores, IdleCores: best.IdleCores, Baseline: best.Baseline}
	ms := r.CPU * 1000
	if it, ok := s.Op(results.IterationOp); ok && it.OK > 0 {
		r.PerIteration = ms / float64(it.OK)
		if r.Baseline > 0 {
			r.NetPerIteration = max(ms-r.IdleCores*r.Window*1000, 0) / float64(it.OK)
		}
	}
	if len(s.Ops) == 2 {
		if o := s.Ops[1]; o.OK > 0 {
			r.PerOp = map[string]float64{o.Name: ms / float64(o.OK)}
		}
	}
	return r
}

// agentKeys are the params that name one agent.
var agentKeys = []string{"segment", "agent_host", "agent_pid"}

// commonParams keeps the params every agent shares and names the agents.
func commonParams(ps []map[string]string) map[string]string {
	p := maps.Clone(ps[0])
	if p == nil {
		p = map[string]string{}
	}
	for _, k := range agentKeys {
		delete(p, k)
	}
	for _, q := range ps[1:] {
		for k, v := range p {
			if q[k] != v {
				delete(p, k)
			}
		}
	}
	var segs []string
	for _, q := range ps {
		segs = append(segs, cmp.Or(q["segment"], "?"))
	}
	p["agents"] = fmt.Sprint(len(ps))
	p["segments"] = strings.Join(segs, ",")
	return p
}

// WriteDir writes the merged folder as a single run writes it: the HDR
// logs, timeline.csv and, last, summary.json. dir must not be one of the
// agents' folders.
func (res *Result) WriteDir(dir string) error {
	for _, a := range res.Agents {
		if same(a.Dir, dir) {
			return fmt.Errorf("merge: the output %s is one of the agents' folders", dir)
		}
	}
	return fileutil.WriteDir(dir, results.SummaryFile, res.writeFiles)
}

// writeFiles writes the merged folder's files into dir, summary.json last.
func (res *Result) writeFiles(dir string) error {
	for name, hl := range res.hlogs {
		for ser, file := range hlogNames(name) {
			if ser == 1 && res.Stats.Model != results.ModelOpen {
				continue
			}
			if err := fileutil.WriteFile(filepath.Join(dir, file), 0o644, func(w io.Writer) error {
				return res.writeHlog(w, name, ser, hl[ser])
			}); err != nil {
				return err
			}
		}
	}
	if err := fileutil.WriteFile(filepath.Join(dir, results.TimelineFile), 0o644, func(w io.Writer) error {
		return results.WriteTimelineCSV(w, res.Stats.Timeline)
	}); err != nil {
		return err
	}
	return fileutil.WriteFile(filepath.Join(dir, results.SummaryFile), 0o644, func(w io.Writer) error {
		return results.WriteLoadSummary(w, results.LoadSummary{Stats: res.Stats, ServerCPU: res.CPU, Params: res.Params})
	})
}

func (res *Result) writeHlog(w io.Writer, op string, ser int, hs []*hdr.Histogram) error {
	bw := bufio.NewWriter(w)
	lw := hdr.NewHistogramLogWriter(bw)
	base := res.Stats.Start.UnixMilli()
	lw.SetBaseTime(base)
	series := load.SeriesLatency
	if ser == 1 {
		series = load.SeriesService
	}
	if err := errors.Join(
		lw.OutputLogFormatVersion(),
		lw.OutputComment(fmt.Sprintf("[kcbench op=%s series=%s unit=us merged=%d agents]", op, series, len(res.Agents))),
		load.WriteHlogTimes(bw, base),
		lw.OutputLegend(),
	); err != nil {
		return err
	}
	for _, h := range hs {
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func same(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && filepath.Clean(x) == filepath.Clean(y)
}
