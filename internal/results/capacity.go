package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// DefaultMinAchieved is the share of the asked rate a passing capacity
// step must achieve unless its search says otherwise.
const DefaultMinAchieved = 0.95

// CapacitySchema is the version of capacity.json.
const CapacitySchema = 1

// CapacityKind is capacity.json's "kind", telling it apart from other JSON files.
const CapacityKind = "capacity"

// Files a capacity search writes into its folder (WriteDir).
const (
	CapacityFile = "capacity.json"
	StepsFile    = "steps.csv"
)

// Phases of a capacity step.
const (
	StepWarmup = "warmup" // discarded: not judged against the search
	StepRamp   = "ramp"   // rising by Settings.Step from Settings.Start
	StepSearch = "search" // binary search between the last pass and the first failure
	// StepProbe: the adaptive search's short rising steps that warm the
	// server up and estimate its limit; like the warm-up, not judged.
	StepProbe = "probe"
	// StepConfirm: the adaptive search's long step at the answer, which
	// must pass for the answer to stand.
	StepConfirm = "confirm"
)

// Search modes (CapacitySettings.Mode).
const (
	ModeLinear   = "linear"   // fixed start, step and step length
	ModeAdaptive = "adaptive" // probe, bracket around the estimate, bisect to a relative precision
	// ModeFixed: the linear search's ramp fixed in advance (start, step,
	// max rate), run by the agents of a split search (kcbench capacity
	// --segment) and judged after kcbench merge joined their steps; its
	// resolution is the step.
	ModeFixed = "fixed"
)

// CapacityStep is one constant-arrival-rate run of a search.
type CapacityStep struct {
	Index    int     `json:"index"` // 0-based, in the order run
	Phase    string  `json:"phase"`
	Rate     float64 `json:"rate"`       // asked, iterations per second
	Duration float64 `json:"duration_s"` // measured window
	// Achieved is iterations finished per second of the measured window,
	// failed ones included; OKRate counts the successful ones only.
	Achieved    float64 `json:"achieved_rate"`
	OKRate      float64 `json:"ok_rate"`
	Iterations  int64   `json:"iterations"`
	OK          int64   `json:"ok"`
	Errors      int64   `json:"errors"`
	Dropped     int64   `json:"dropped"`     // arrivals that found no free VU
	Interrupted int64   `json:"interrupted"` // iterations cut off at the end of the step
	DroppedPct  float64 `json:"dropped_pct"` // of the arrivals
	ErrorPct    float64 `json:"error_pct"`   // of the finished iterations
	// Iteration latency from the intended start (open model), in ms.
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	// Server figures; 0 when unknown.
	CPUMsPerOp  float64 `json:"cpu_ms_per_op,omitempty"` // server CPU-ms per successful iteration
	ServerCores float64 `json:"server_cores,omitempty"`  // server CPU time over the window
	RSSBytes    int64   `json:"rss_bytes,omitempty"`     // server peak RSS during the step
	// Database is the database's work over the step (nil when unknown).
	Database *DBCost `json:"database,omitempty"`
	// Directory is the LDAP directory's CPU over the step (nil when the
	// users are not in LDAP).
	Directory *DirectoryCost `json:"directory,omitempty"`
	// SLOs are the SLOs evaluated on the step.
	SLOs []ThresholdResult `json:"slos"`
	// Pass is true when the step met every SLO and every guard (achieved
	// rate, dropped arrivals, successful iterations); Failures says why
	// not, one reason each, and Kinds is the kind of each.
	Pass     bool          `json:"pass"`
	Failures []string      `json:"failures,omitempty"`
	Kinds    []FailureKind `json:"failure_kinds,omitempty"`
	Note     string        `json:"note,omitempty"`
	Start    time.Time     `json:"start"`
}

// FailureKind is the kind of one reason a capacity step failed.
type FailureKind string

// The kinds of a step's failures.
const (
	FailInterrupted FailureKind = "interrupted"  // the search was interrupted during the step
	FailEndedEarly  FailureKind = "ended_early"  // the step ended before its time (an early verdict, the server down)
	FailNoIteration FailureKind = "no_iteration" // no iteration finished
	FailAllFailed   FailureKind = "all_failed"   // every iteration failed
	FailTooFewOK    FailureKind = "too_few_ok"   // fewer successful iterations than a step needs
	FailAchieved    FailureKind = "achieved"     // the achieved rate fell short of the asked one
	FailDropped     FailureKind = "dropped"      // arrivals found no free VU
	FailCutOff      FailureKind = "cut_off"      // iterations still running at the step's end
	FailLatencyRise FailureKind = "latency_rise" // latency rose through the step
	FailFault       FailureKind = "fault"        // the caller found the step at fault (agents out of step)
	FailSLO         FailureKind = "slo"          // an SLO failed
)

// OnlyFailure reports whether k is the step's one failure.
func (s CapacityStep) OnlyFailure(k FailureKind) bool {
	return len(s.Kinds) == 1 && s.Kinds[0] == k
}

// CapacitySettings are a search's options as run.
type CapacitySettings struct {
	Mode         string  `json:"mode,omitempty"` // ModeLinear when empty (older files)
	Start        float64 `json:"start"`
	Step         float64 `json:"step"`
	StepDuration float64 `json:"step_duration_s"`
	Warmup       float64 `json:"warmup_s"`
	Resolution   float64 `json:"resolution"`
	MaxRate      float64 `json:"max_rate,omitempty"`
	MinOK        int64   `json:"min_ok"`
	MinAchieved  float64 `json:"min_achieved_pct"`
	MaxDropped   float64 `json:"max_dropped_pct"`
	Pause        float64 `json:"pause_s"`
	// Adaptive mode: the relative precision the bisection stops at, the
	// server cores the CPU-bound prediction assumed (0: unknown), the
	// bounds of a step's length (chosen from the rate and the SLO's
	// percentile) and the latency rise through a step that fails it.
	PrecisionPct    float64 `json:"precision_pct,omitempty"`
	Cores           float64 `json:"cores,omitempty"`
	MinStepDuration float64 `json:"min_step_duration_s,omitempty"`
	MaxStepDuration float64 `json:"max_step_duration_s,omitempty"`
	MaxLatencyRise  float64 `json:"max_latency_rise_pct,omitempty"`
}

// Judged is false for the warm-up and the probe: steps that never decide
// the answer.
func (s CapacityStep) Judged() bool { return JudgedPhase(s.Phase) }

// JudgedPhase reports whether a step of the phase decides the answer: not
// the warm-up, not the probe.
func JudgedPhase(phase string) bool { return phase != StepWarmup && phase != StepProbe }

// Verdict is "discarded" for the warm-up, "pass", or "fail: " and the
// reasons.
func (s CapacityStep) Verdict() string {
	switch {
	case s.Phase == StepProbe && s.Pass:
		return "probe: kept up"
	case s.Phase == StepProbe:
		return "probe: " + strings.Join(s.Failures, "; ")
	case s.Phase == StepWarmup:
		return "discarded"
	case !s.Pass:
		return "fail: " + strings.Join(s.Failures, "; ")
	}
	return "pass"
}

// CapacityResult is a search's outcome, capacity.json (internal/capacity's package doc describes
// its fields).
type CapacityResult struct {
	Schema   int    `json:"schema"`
	Kind     string `json:"kind"`
	Scenario string `json:"scenario"`
	// Params describe what was searched (server version, dataset, target,
	// machine…); the caller fills them. "repeat" tells repeats apart.
	Params   map[string]string `json:"params,omitempty"`
	SLOs     []Threshold       `json:"slos"`
	Settings CapacitySettings  `json:"settings"`

	// Found is true when at least one step met every SLO.
	Found bool `json:"found"`
	// MaxRate is the highest asked rate that met every SLO (0 if none);
	// the true limit lies below FirstFailedRate when that is set.
	MaxRate         float64 `json:"max_rate"`
	FirstFailedRate float64 `json:"first_failed_rate,omitempty"`
	// BestStep is the index of the step that set MaxRate (-1 if none).
	BestStep int `json:"best_step"`
	// Figures of the best step: achieved rate, latency, server CPU.
	Achieved    float64 `json:"achieved_rate"`
	P95         float64 `json:"p95_ms"`
	P99         float64 `json:"p99_ms"`
	CPUMsPerOp  float64 `json:"cpu_ms_per_op,omitempty"`
	ServerCores float64 `json:"server_cores,omitempty"`
	// OpsPerCPUSecond is 1000 / CPUMsPerOp: the operations per second one
	// fully busy vCPU of server would sustain at this cost.
	OpsPerCPUSecond float64 `json:"ops_per_cpu_second,omitempty"`
	// MaxRSSBytes is the highest server RSS seen in any step.
	MaxRSSBytes int64 `json:"max_rss_bytes,omitempty"`
	// Capped is true when the search stopped at Settings.MaxRate without
	// an SLO failing: the server may take more.
	Capped bool `json:"capped"`
	// Interrupted is true when the search was cancelled; the figures are
	// those reached so far.
	Interrupted bool `json:"interrupted,omitempty"`
	// Conclusion says in one sentence what the search found, or plainly
	// that even the starting rate failed.
	Conclusion string `json:"conclusion"`
	// Adaptive mode: the CPU-bound limit the probe predicted (cores ÷ CPU
	// per operation; 0: unknown), the rate the bracket started from, the
	// answer's resolution (first_failed_rate − max_rate, in % of max_rate)
	// and whether the server's cores were the limit (cpu_bound: its cores
	// were busy at the first failure).
	Predicted     float64  `json:"predicted_rate,omitempty"`
	Estimate      float64  `json:"estimated_rate,omitempty"`
	ResolutionPct float64  `json:"resolution_pct,omitempty"`
	CPUBound      CPUBound `json:"cpu_bound,omitempty"`
	// FailedBelow counts the judged steps at or below the answer that
	// failed: steps that a warming server, or a limit whose latency is
	// unsteady, failed before a step at the same rate or above passed
	// (repeats of such a search spread more).
	FailedBelow int `json:"failed_at_or_below,omitempty"`
	// ServerUptime is how long the server had been up (ready) when the
	// search began, in seconds: the local stack's youngest node; 0 when
	// unknown.
	ServerUptime float64 `json:"server_uptime_s,omitempty"`
	// Elapsed is the search's wall time, probe and pauses included.
	Elapsed float64 `json:"elapsed_s,omitempty"`
	// Server boot, when the caller measured one before the search.
	BootSeconds     float64 `json:"boot_s,omitempty"`
	RSSAtReadyBytes int64   `json:"rss_at_ready_bytes,omitempty"`

	Steps []CapacityStep `json:"steps"`
	Start time.Time      `json:"start"`
	End   time.Time      `json:"end"`
}

// Best returns the step that set MaxRate, or nil.
func (r *CapacityResult) Best() *CapacityStep {
	if r.BestStep < 0 || r.BestStep >= len(r.Steps) {
		return nil
	}
	return &r.Steps[r.BestStep]
}

// StepAt returns the last passing or failing judged step (warm-up
// excluded) run at rate, or nil.
func (r *CapacityResult) StepAt(rate float64) *CapacityStep {
	for i := len(r.Steps) - 1; i >= 0; i-- {
		s := &r.Steps[i]
		if s.Phase != StepWarmup && sameRate(s.Rate, rate) {
			return s
		}
	}
	return nil
}

func sameRate(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b)) }

// CommonRate is the highest ramp rate that every result passed: the rate
// at which their latency and CPU are compared like for like (the ramps of
// searches with the same start and step run the same rates). ok is false
// when no ramp rate passed in all of them.
func CommonRate(rs []*CapacityResult) (rate float64, ok bool) {
	if len(rs) == 0 {
		return 0, false
	}
	for _, s := range rs[0].Steps {
		if s.Phase != StepRamp || !s.Pass || (ok && s.Rate <= rate) {
			continue
		}
		all := true
		for _, r := range rs[1:] {
			if t := r.StepAt(s.Rate); t == nil || !t.Pass {
				all = false
				break
			}
		}
		if all {
			rate, ok = s.Rate, true
		}
	}
	return rate, ok
}

// WriteJSON writes r as indented JSON.
func (r *CapacityResult) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // SLOs read p99<500ms, not p99\u003c500ms
	return enc.Encode(r)
}

// stepsHeader is steps.csv's header.
var stepsHeader = []string{"index", "phase", "rate", "achieved_rate", "ok_rate", "duration_s",
	"iterations", "ok", "errors", "dropped", "interrupted", "dropped_pct", "error_pct",
	"p50_ms", "p95_ms", "p99_ms", "max_ms", "cpu_ms_per_op", "server_cores", "rss_bytes", "pass", "failures"}

// WriteStepsCSV writes one row per step.
func (r *CapacityResult) WriteStepsCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(stepsHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	f3 := func(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, s := range r.Steps {
		fails := ""
		for k, x := range s.Failures {
			if k > 0 {
				fails += "; "
			}
			fails += x
		}
		if err := cw.Write([]string{strconv.Itoa(s.Index), s.Phase, f(s.Rate), f3(s.Achieved), f3(s.OKRate), f3(s.Duration),
			i(s.Iterations), i(s.OK), i(s.Errors), i(s.Dropped), i(s.Interrupted), f3(s.DroppedPct), f3(s.ErrorPct),
			f3(s.P50), f3(s.P95), f3(s.P99), f3(s.Max), f3(s.CPUMsPerOp), f3(s.ServerCores), i(s.RSSBytes),
			strconv.FormatBool(s.Pass), fails}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteDir writes steps.csv and capacity.json into a temporary folder
// beside dir and moves them into dir (created if needed), capacity.json
// last, so that a capacity.json means a complete result and a failed write
// (a full disk) leaves dir as it was.
func (r *CapacityResult) WriteDir(dir string) error {
	return fileutil.WriteDir(dir, CapacityFile, func(tmp string) error {
		if err := fileutil.WriteFile(filepath.Join(tmp, StepsFile), 0o644, r.WriteStepsCSV); err != nil {
			return err
		}
		return fileutil.WriteFile(filepath.Join(tmp, CapacityFile), 0o644, r.WriteJSON)
	})
}

// ErrNotCapacity means a JSON file is not a capacity result.
var ErrNotCapacity = errors.New("not a capacity result")

// ReadCapacity reads a capacity.json.
func ReadCapacity(path string) (*CapacityResult, error) {
	var r CapacityResult
	if err := readJSON(path, &r); err != nil {
		return nil, err
	}
	if r.Kind != CapacityKind {
		return nil, fmt.Errorf("%s: %w (kind %q)", path, ErrNotCapacity, r.Kind)
	}
	if r.Schema != CapacitySchema {
		return nil, fmt.Errorf("%s: schema %d, this kcbench reads %d", path, r.Schema, CapacitySchema)
	}
	if err := r.checkFigures(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// ReadCapacityDir reads dir/capacity.json.
func ReadCapacityDir(dir string) (*CapacityResult, error) {
	return ReadCapacity(filepath.Join(dir, CapacityFile))
}

// FindCapacityDirs lists dir itself when it holds a capacity.json, else its
// immediate subfolders that do (repeats, or the versions of a matrix),
// sorted by name. It returns nothing, without error, when there is none.
func FindCapacityDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, CapacityFile)); err == nil {
		return []string{dir}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(sub, CapacityFile)); err == nil {
			out = append(out, sub)
		}
	}
	return out, nil
}

// CPUBound says whether a search's limit was the server's cores. In JSON
// it is true or false, left out when unknown; files of kcbench before it
// said "yes" or "no", which it reads too.
type CPUBound int8

// The values of CPUBound.
const (
	CPUBoundUnknown CPUBound = iota // the server's cores or CPU unknown
	CPUBoundYes
	CPUBoundNo
)

// MarshalJSON writes true or false (null when unknown; omitempty leaves
// it out).
func (c CPUBound) MarshalJSON() ([]byte, error) {
	switch c {
	case CPUBoundYes:
		return []byte("true"), nil
	case CPUBoundNo:
		return []byte("false"), nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads true, false, "yes", "no" or null.
func (c *CPUBound) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "true", `"yes"`:
		*c = CPUBoundYes
	case "false", `"no"`:
		*c = CPUBoundNo
	case "null", `""`:
		*c = CPUBoundUnknown
	default:
		return fmt.Errorf("cpu_bound: %s is not true, false or null", b)
	}
	return nil
}
