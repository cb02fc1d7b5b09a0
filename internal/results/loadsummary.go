package results

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
)

// ServerCPU is the server's CPU time over a run's measured window, per
// successful operation.
type ServerCPU struct {
	Available bool    `json:"available"`
	Source    string  `json:"source,omitempty"`
	Reason    string  `json:"unavailable_reason,omitempty"`
	CPU       float64 `json:"cpu_s,omitempty"`
	Window    float64 `json:"window_s,omitempty"`
	Cores     float64 `json:"cores,omitempty"` // CPU / Window
	// PerIteration is CPU-ms per successful iteration.
	PerIteration float64 `json:"cpu_ms_per_iteration,omitempty"`
	// PerOp is CPU-ms per successful operation when an iteration is one
	// operation (otherwise an iteration's CPU cannot be told apart between
	// its operations).
	PerOp map[string]float64 `json:"cpu_ms_per_op,omitempty"`
	// Resolution is the sampler's granularity.
	Resolution string `json:"resolution,omitempty"`
	// IdleCores is the server's CPU use before the run, without load
	// (when measured: scenario.Config.CPUBaseline), and NetPerIteration is
	// PerIteration without it: (CPU − IdleCores × Window) per successful
	// iteration.
	IdleCores       float64 `json:"idle_cores,omitempty"`
	Baseline        float64 `json:"baseline_s,omitempty"`
	NetPerIteration float64 `json:"net_cpu_ms_per_iteration,omitempty"`
	// Warning says why CPU may not be the whole server's (a cluster's pods
	// that were not all measured).
	Warning string `json:"warning,omitempty"`
}

// Write renders the figures as the end of a summary.
func (r ServerCPU) Write(w io.Writer) error {
	if !r.Available {
		_, err := fmt.Fprintf(w, "server cpu:   unavailable: %s\n", r.Reason)
		return err
	}
	if _, err := fmt.Fprintf(w, "server cpu:   %.2f s over %.1f s measured (%.2f cores), from %s\n", r.CPU, r.Window, r.Cores, r.Source); err != nil {
		return err
	}
	if r.Warning != "" {
		if _, err := fmt.Fprintf(w, "  warning: %s\n", r.Warning); err != nil {
			return err
		}
	}
	if r.PerIteration > 0 {
		if _, err := fmt.Fprintf(w, "  %.2f ms per successful iteration\n", r.PerIteration); err != nil {
			return err
		}
	}
	if r.Baseline > 0 {
		if _, err := fmt.Fprintf(w, "  %.2f ms per successful iteration net of the idle %.3f cores (measured for %.0f s before)\n",
			r.NetPerIteration, r.IdleCores, r.Baseline); err != nil {
			return err
		}
	}
	for _, op := range slices.Sorted(maps.Keys(r.PerOp)) {
		if _, err := fmt.Fprintf(w, "  %.2f ms per successful %s\n", r.PerOp[op], op); err != nil {
			return err
		}
	}
	return nil
}

// LoadSummary is summary.json of a `kcbench load --out` run (and of
// agents merged by kcbench merge): the engine's Stats, and beside them, at
// the same level, the server's CPU, the database's and the directory's
// work, the connections and the run's params.
type LoadSummary struct {
	Stats       Stats
	ServerCPU   ServerCPU
	Database    *DBCost
	Directory   *DirectoryCost
	Connections *Connections
	Params      map[string]string
}

type loadSummaryJSON struct {
	statsJSON
	ServerCPU   ServerCPU         `json:"server_cpu"`
	Database    *DBCost           `json:"database,omitempty"`
	Directory   *DirectoryCost    `json:"directory,omitempty"`
	Connections *Connections      `json:"connections,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
}

// MarshalJSON writes the Stats' fields and the others beside them.
func (s LoadSummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(loadSummaryJSON{statsJSON: s.Stats.toJSON(), ServerCPU: s.ServerCPU, Database: s.Database,
		Directory: s.Directory, Connections: s.Connections, Params: s.Params})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *LoadSummary) UnmarshalJSON(b []byte) error {
	var j loadSummaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = LoadSummary{ServerCPU: j.ServerCPU, Database: j.Database, Directory: j.Directory, Connections: j.Connections, Params: j.Params}
	return j.statsJSON.stats(&s.Stats)
}

// WriteLoadSummary writes s as indented JSON.
func WriteLoadSummary(w io.Writer, s LoadSummary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
