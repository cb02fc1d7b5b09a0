package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// A segmented capacity agent (kcbench capacity --segment i/n) cannot
// judge its steps: it runs 1/n of each. It writes, into its folder, the
// fixed schedule it runs (CapacityAgentFile, before its first step) and
// each step's share as a load folder (StepDir: summary.json,
// timeline.csv, the HDR logs); kcbench merge joins the agents' steps and
// judges them. The folder holds no capacity.json: it is not a finding.
const (
	CapacityAgentFile   = "capacity-agent.json"
	CapacityAgentKind   = "capacity-agent"
	CapacityAgentSchema = 1
)

// Params of a split search's step folders (beside the agent's own).
const (
	ParamCapacityStep  = "capacity_step"
	ParamCapacityPhase = "capacity_phase"
	ParamCapacityRate  = "capacity_rate"         // the whole step's rate
	ParamServerRSSPeak = "server_rss_peak_bytes" // over the step, when known
)

// StepDir is the folder, inside an agent's, of step i's share.
func StepDir(i int) string { return fmt.Sprintf("step-%03d", i) }

// ScheduledStep is one step of a fixed schedule.
type ScheduledStep struct {
	Index    int       `json:"index"`
	Phase    string    `json:"phase"` // StepWarmup or StepRamp
	Rate     float64   `json:"rate"`  // the whole step's, all agents together
	Duration float64   `json:"duration_s"`
	Start    time.Time `json:"start"` // when every agent starts it
}

// CapacityAgent is capacity-agent.json.
type CapacityAgent struct {
	Schema   int               `json:"schema"`
	Kind     string            `json:"kind"`
	Scenario string            `json:"scenario"`
	Segment  string            `json:"segment"` // "i/n"
	StartAt  time.Time         `json:"start_at"`
	Gap      float64           `json:"gap_s"` // between one step's end and the next's start
	SLOs     []Threshold       `json:"slos"`
	Settings CapacitySettings  `json:"settings"`
	Params   map[string]string `json:"params,omitempty"`
	Steps    []ScheduledStep   `json:"steps"`
}

// WriteDir writes dir/capacity-agent.json (dir created if needed).
func (a *CapacityAgent) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return fileutil.WriteFile(filepath.Join(dir, CapacityAgentFile), 0o644, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(a)
	})
}

// IsCapacityAgentDir reports whether dir holds a capacity-agent.json.
func IsCapacityAgentDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, CapacityAgentFile))
	return err == nil
}

// ReadCapacityAgentDir reads dir/capacity-agent.json.
func ReadCapacityAgentDir(dir string) (*CapacityAgent, error) {
	path := filepath.Join(dir, CapacityAgentFile)
	var a CapacityAgent
	if err := readJSON(path, &a); err != nil {
		return nil, err
	}
	if a.Kind != CapacityAgentKind {
		return nil, fmt.Errorf("%s: kind %q, not a capacity agent's", path, a.Kind)
	}
	if a.Schema != CapacityAgentSchema {
		return nil, fmt.Errorf("%s: schema %d, this kcbench reads %d", path, a.Schema, CapacityAgentSchema)
	}
	if len(a.Steps) == 0 {
		return nil, errors.New(path + ": no steps")
	}
	return &a, nil
}
