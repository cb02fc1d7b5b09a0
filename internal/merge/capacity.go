package merge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// minLate is the least lateness of an agent's step start that fails the
// step; a longer step tolerates lateTolerance of its length.
const (
	minLate       = 50 * time.Millisecond
	lateTolerance = 0.01
)

// IsCapacity reports whether dirs are a split search's agents' folders
// (kcbench capacity --segment) rather than a split load run's; a mix of
// both is an error.
func IsCapacity(dirs []string) (bool, error) {
	var n int
	for _, d := range dirs {
		if results.IsCapacityAgentDir(d) {
			n++
		}
	}
	if n > 0 && n < len(dirs) {
		return false, fmt.Errorf("merge: %d of the %d folders are a split capacity search's agents (%s), the others not: merge one run's agents at a time", n, len(dirs), results.CapacityAgentFile)
	}
	return n > 0, nil
}

// CapacityMerge is the merge of a split search's agents.
type CapacityMerge struct {
	Result *results.CapacityResult
	// Notes say what the merge could not make exact.
	Notes []string
	dirs  []string
}

// Capacity joins the folders of a split search's agents (kcbench capacity
// --segment i/n, one folder per agent): for each step of their common
// schedule the agents' shares are merged as a split load run's are (HDR
// histograms added, counts, errors and dropped arrivals summed), then
// judged as a search judges its steps (capacity.JudgeSchedule): the
// answer is the highest rate that passed below the first failing step,
// within the schedule's step. A step that an agent started late (the
// agents' loads did not overlap) fails. Every agent of the split must be
// given, once; steps that some agent did not run end the merged schedule.
func Capacity(dirs []string) (*CapacityMerge, error) {
	if len(dirs) == 0 {
		return nil, errors.New("merge: no folders given")
	}
	var as []*results.CapacityAgent
	for _, d := range dirs {
		a, err := results.ReadCapacityAgentDir(d)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	if err := checkSchedules(dirs, as); err != nil {
		return nil, err
	}
	first := as[0]
	cm := &CapacityMerge{dirs: dirs}
	var ms []capacity.StepResult
	for i, p := range first.Steps {
		var stepDirs []string
		for _, d := range dirs {
			sd := filepath.Join(d, results.StepDir(i))
			if _, err := os.Stat(filepath.Join(sd, results.SummaryFile)); err == nil {
				stepDirs = append(stepDirs, sd)
			}
		}
		if len(stepDirs) < len(dirs) {
			cm.note(fmt.Sprintf("step %d and later: run by %d of the %d agents only, left out", i, len(stepDirs), len(dirs)))
			break
		}
		m, err := mergeStep(p, stepDirs)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i, err)
		}
		for _, n := range m.notes {
			cm.note(fmt.Sprintf("step %d: %s", i, n))
		}
		ms = append(ms, m.StepResult)
	}
	r, err := capacity.JudgeSchedule(capacity.OptionsOf(first.SLOs, first.Settings), first.Steps, ms)
	if err != nil {
		return nil, err
	}
	r.Scenario = first.Scenario
	var ps []map[string]string
	for _, a := range as {
		ps = append(ps, a.Params)
	}
	r.Params = commonParams(ps)
	cm.Result = r
	return cm, nil
}

func (cm *CapacityMerge) note(n string) {
	if !slices.Contains(cm.Notes, n) {
		cm.Notes = append(cm.Notes, n)
	}
}

// checkSchedules wants every agent of one split search, once: the same
// scenario, SLOs, settings and schedule.
func checkSchedules(dirs []string, as []*results.CapacityAgent) error {
	first := as[0]
	var errs []error
	seen := map[int]string{}
	var n int
	for i, a := range as {
		seg, err := load.ParseSegment(a.Segment)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dirs[i], err))
			continue
		}
		n = seg.Count
		if d, ok := seen[seg.Index]; ok {
			errs = append(errs, fmt.Errorf("%s and %s are both segment %s: its samples would count twice", d, dirs[i], seg))
		}
		seen[seg.Index] = dirs[i]
		if i == 0 {
			continue
		}
		other := func(what string) {
			errs = append(errs, fmt.Errorf("%s and %s differ in their %s: not one split search's agents", dirs[0], dirs[i], what))
		}
		f0, _ := load.ParseSegment(first.Segment)
		switch {
		case seg.Count != f0.Count:
			other("number of agents")
		case a.Scenario != first.Scenario:
			other("scenario")
		case results.FormatSLOs(a.SLOs) != results.FormatSLOs(first.SLOs):
			other("SLOs")
		case a.Settings != first.Settings:
			other("settings")
		case !a.StartAt.Equal(first.StartAt) || !sameSteps(a.Steps, first.Steps):
			other("schedule (--start-at, the steps)")
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var missing []string
	for i := range n {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("merge: segment(s) %v missing: each step's rate is the sum of every agent's share, so a split search needs all %d agents' folders", missing, n)
	}
	return nil
}

func sameSteps(a, b []results.ScheduledStep) bool {
	return slices.EqualFunc(a, b, func(x, y results.ScheduledStep) bool {
		return x.Index == y.Index && x.Phase == y.Phase && x.Rate == y.Rate && x.Duration == y.Duration && x.Start.Equal(y.Start)
	})
}

type mergedStep struct {
	capacity.StepResult
	notes []string
}

// mergeStep merges the agents' shares of step p and finds what keeps it
// from being one run at p's rate.
func mergeStep(p results.ScheduledStep, dirs []string) (mergedStep, error) {
	res, err := Read(dirs, Options{})
	if err != nil {
		return mergedStep{}, err
	}
	m := mergedStep{StepResult: capacity.StepResult{Stats: res.Stats}}
	for _, n := range res.Notes {
		if !strings.HasPrefix(n, "the agents started up to") { // a fault below
			m.notes = append(m.notes, n)
		}
	}
	if res.CPU.Available {
		m.CPUMsPerOp, m.ServerCores = res.CPU.PerIteration, res.CPU.Cores
	} else if res.CPU.Reason != "" {
		m.Note = "server CPU unavailable: " + res.CPU.Reason
	}
	d := time.Duration(p.Duration * float64(time.Second))
	tol := max(minLate, time.Duration(lateTolerance*float64(d)))
	for _, a := range res.Agents {
		if rss, err := strconv.ParseInt(a.Params[results.ParamServerRSSPeak], 10, 64); err == nil {
			m.RSSBytes = max(m.RSSBytes, rss)
		}
		if late := a.Stats.Start.Sub(p.Start); late > tol || late < -tol {
			m.Faults = append(m.Faults, fmt.Sprintf("agent %s started it %s off its planned start: the agents' loads did not overlap",
				a.Params["segment"], late.Round(time.Millisecond)))
		}
		if r := a.Params[results.ParamCapacityRate]; r != "" && r != strconv.FormatFloat(p.Rate, 'g', -1, 64) {
			return m, fmt.Errorf("%s ran %s/s, the schedule says %g/s", a.Dir, r, p.Rate)
		}
	}
	return m, nil
}

// WriteDir writes capacity.json and steps.csv into dir, which must not be
// one of the agents' folders.
func (cm *CapacityMerge) WriteDir(dir string) error {
	for _, d := range cm.dirs {
		if same(d, dir) {
			return fmt.Errorf("merge: the output %s is one of the agents' folders", dir)
		}
	}
	return cm.Result.WriteDir(dir)
}

// CapacityReadWrite merges and judges a split capacity search's agents
// (Capacity), writes the result to out, logs the notes and prints the
// finding to stdout as a search does (kcbench merge).
func CapacityReadWrite(dirs []string, out string, stdout io.Writer, logf func(string, ...any)) (*results.CapacityResult, error) {
	start := time.Now()
	cm, err := Capacity(dirs)
	if err != nil {
		return nil, err
	}
	if err := write(out, cm, cm.Notes, logf); err != nil {
		return nil, err
	}
	r := cm.Result
	logf("merge: %d agents of a split capacity search (segments %s), %d steps, in %s; results in %s",
		len(dirs), r.Params["segments"], len(r.Steps), time.Since(start).Round(time.Millisecond), out)
	if err := capacity.WriteText(stdout, r); err != nil {
		return r, err
	}
	_, err = fmt.Fprintf(stdout, "results: %s\n", out)
	return r, err
}
