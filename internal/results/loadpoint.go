package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// ParamVariant is the param naming a point's variant (the experiment's
// variant, or a load run's "load <scenario>").
const ParamVariant = "variant"

// The injected round trip on each latency link, in milliseconds (absent:
// none), and the one measured through its proxy at start.
const (
	ParamLatency                = "latency" // as --latency takes it: node-node=5ms,node-db=2ms
	ParamLatencyNodeNodeMs      = "latency_node_node_ms"
	ParamLatencyNodeDBMs        = "latency_node_db_ms"
	ParamLatencyNodeNodeMeasure = "latency_node_node_measured_ms"
	ParamLatencyNodeDBMeasure   = "latency_node_db_measured_ms"
)

// MeasuredParam reports whether the param k is a measurement taken at
// the run (a measured round trip), not a setting: repeats of one point
// differ in it.
func MeasuredParam(k string) bool { return strings.HasSuffix(k, "_measured_ms") }

// errNotLoadRun: summary.json is not a `kcbench load --out` run's.
var errNotLoadRun = errors.New("not a load run's summary")

// readLoadPoint reads the folder of one `kcbench load --out` run (or of
// agents merged by kcbench merge): summary.json without manifest.json. It
// reads as a point of one workload named after the scenario, so that
// report and size --from take it as they take an experiment's point.
func readLoadPoint(dir string) (*Point, error) {
	path := filepath.Join(dir, SummaryFile)
	b, err := fileutil.ReadFile(path, fileutil.MaxResultFile)
	if err != nil {
		return nil, err
	}
	var experiment struct {
		Workloads json.RawMessage `json:"workloads"` // set: an experiment point's summary
	}
	if err := json.Unmarshal(b, &experiment); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if experiment.Workloads != nil {
		return nil, errNotLoadRun
	}
	var x LoadSummary
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st := x.Stats
	if st.Scenario == "" || len(st.Ops) == 0 {
		return nil, errNotLoadRun
	}
	id := filepath.Base(filepath.Clean(dir))
	status, reason := StatusDone, ""
	if st.Aborted || st.EndReason != "" {
		status, reason = StatusAborted, st.EndReason
	}
	cores, _ := strconv.Atoi(x.Params["machine_cores"])
	p := &Point{Dir: dir,
		Manifest: Manifest{Schema: Schema, Point: id, Params: x.Params, Keycloak: x.Params["keycloak_version"],
			Target: x.Params["target"], External: x.Params["target"] == "external",
			Machine: Machine{Cores: cores}, Start: st.Start, End: st.Start.Add(st.Elapsed)},
		// the run's one configuration, named for the report (its params
		// stay in the manifest: they describe the run, they are no factor)
		Summary: Summary{Schema: Schema, Point: id, Params: map[string]string{ParamVariant: "load " + st.Scenario}, Status: status, Reason: reason,
			Workloads: []Workload{{Name: st.Scenario, Scenario: st.Scenario, Stats: st,
				ServerCPUMsPerOp: x.ServerCPU.PerIteration, ServerCPUSource: x.ServerCPU.Source,
				Database: x.Database, Directory: x.Directory}},
			Seconds: st.Elapsed.Seconds()},
	}
	if err := p.Summary.checkFigures(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
