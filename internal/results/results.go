// Package results is the on-disk format of kcbench's results: one folder
// per point of an experiment, written by internal/experiment and read by
// internal/report, internal/sizing's calibration and the regression gate.
// A report can always be rebuilt from these files alone.
//
//	results/<experiment>/
//	  experiment.yaml            the experiment file as run
//	  <point-id>/
//	    manifest.json            versions, options, machine, start/end
//	    summary.json             seed, boot, per-workload stats (written last:
//	                             its presence marks the point done)
//	    timeline.csv             per-second rows of every workload and phase
//	    observe.csv              per-second server samples
//	    <phase>-<workload>-<op>.hlog   HDR interval logs
//
// The file-format types (per-op Stats, thresholds, capacity.json, scenario,
// operation and phase names) live here; load and experiment write them,
// report and sizing read them. results imports no stage of the pipeline.
package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// Schema is the version of these files.
const Schema = 1

// File names inside a point folder.
const (
	ManifestFile = "manifest.json"
	SummaryFile  = "summary.json"
	TimelineFile = "timeline.csv"
	ObserveFile  = "observe.csv"
)

// Point status.
const (
	StatusDone    = "done"
	StatusAborted = "aborted" // a watchdog limit was crossed
	StatusFailed  = "failed"  // an error stopped the point
)

// Machine describes where a point ran.
type Machine struct {
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	RAMBytes int64  `json:"ram_bytes"`
	Kernel   string `json:"kernel"`
	Hostname string `json:"hostname"`
}

// Manifest is manifest.json.
type Manifest struct {
	Schema     int               `json:"schema"`
	Kcbench    string            `json:"kcbench"`
	Experiment string            `json:"experiment"`
	Point      string            `json:"point"`
	Params     map[string]string `json:"params"` // mode, tenants, variant, repeat…
	Keycloak   string            `json:"keycloak_version"`
	Java       string            `json:"java_version"`
	Postgres   string            `json:"postgres_version,omitempty"`
	Options    json.RawMessage   `json:"options,omitempty"` // stack options as run
	Dataset    json.RawMessage   `json:"dataset,omitempty"` // dataset spec as seeded
	Target     string            `json:"target"`
	External   bool              `json:"external,omitempty"`
	Machine    Machine           `json:"machine"`
	Seed       int64             `json:"seed"`
	Start      time.Time         `json:"start"`
	End        time.Time         `json:"end,omitzero"`
}

// Seed is how the point's dataset was reached.
type Seed struct {
	Tenants   int     `json:"tenants"`
	Added     int     `json:"added"`
	Strategy  string  `json:"strategy"`
	Seconds   float64 `json:"seconds"`
	ServerCPU float64 `json:"server_cpu_s,omitempty"`
	// Restored is set when a snapshot brought the dataset.
	Restored       string  `json:"restored_snapshot,omitempty"`
	RestoreSeconds float64 `json:"restore_s,omitempty"`
	// Recorded: the snapshot held the point's whole dataset, and Added,
	// Seconds, ServerCPU and Strategy are those of the seeding run that
	// made it (its dataset manifest's record), not of this point's run.
	Recorded bool `json:"from_seed_record,omitempty"`
	// AdminAPISample: the point's last tenants were made through
	// Keycloak's admin API (the fast strategy) and timed, the rest by
	// Strategy; Seconds and ServerCPU hold both parts.
	AdminAPISample *SeedSample `json:"admin_api_sample,omitempty"`
	// Sessions: the user sessions written after seeding (experiment files'
	// dataset.sessions, offline_sessions).
	Sessions *SessionSeed `json:"sessions,omitempty"`
}

// SessionSeed is what writing a point's user sessions found and did.
type SessionSeed struct {
	Online         int     `json:"online"`
	Offline        int     `json:"offline"`
	WrittenOnline  int     `json:"written_online"`
	WrittenOffline int     `json:"written_offline"`
	Seconds        float64 `json:"seconds"`
	// DBGrowthBytes is how much the database grew while they were
	// written.
	DBGrowthBytes int64 `json:"db_growth_bytes,omitempty"`
}

// SeedSample is a timed sample of tenants made through the admin API.
type SeedSample struct {
	Tenants   int     `json:"tenants"`
	Seconds   float64 `json:"seconds"`
	ServerCPU float64 `json:"server_cpu_s,omitempty"`
}

// PerTenant is the sample's seconds per tenant (0 without tenants).
func (s *SeedSample) PerTenant() float64 {
	if s == nil || s.Tenants <= 0 {
		return 0
	}
	return s.Seconds / float64(s.Tenants)
}

// Boot is the restart measured before the cold phase.
type Boot struct {
	Seconds    float64 `json:"seconds"`
	RSSBytes   int64   `json:"rss_bytes"`
	CPUSeconds float64 `json:"cpu_s"`
	// HeapAfterGCBytes is Keycloak's heap in use right after a full
	// garbage collection at ready (summed over its nodes): what it holds
	// live before any load; 0 when unknown.
	HeapAfterGCBytes int64 `json:"heap_after_gc_bytes,omitempty"`
}

// Workload is one workload run in one phase.
type Workload struct {
	Name     string `json:"name"`
	Scenario string `json:"scenario"`
	Phase    string `json:"phase"` // cold, warm, or "" when phases are off
	Stats    Stats  `json:"stats"`
	// ServerCPUMsPerOp is server CPU time per successful iteration (the
	// figure sizing needs); 0 when unknown.
	ServerCPUMsPerOp float64 `json:"server_cpu_ms_per_op"`
	ServerCPUSource  string  `json:"server_cpu_source,omitempty"`
	// Server resource use during the workload.
	MaxRSSBytes int64   `json:"max_rss_bytes,omitempty"`
	MeanCPUPct  float64 `json:"mean_cpu_pct,omitempty"`
	// MeanHeapBytes is the JVM heap in use, on average over the
	// workload; GCPauses the garbage-collection pauses in it and
	// GCPauseMeanMs their mean length (Keycloak's jvm_gc_pause_seconds).
	// 0 when unknown.
	MeanHeapBytes int64   `json:"mean_heap_bytes,omitempty"`
	GCPauses      float64 `json:"gc_pauses,omitempty"`
	GCPauseMeanMs float64 `json:"gc_pause_mean_ms,omitempty"`
	// HeapAfterGCBytes is Keycloak's heap in use right after a full
	// garbage collection once the workload ended (summed over its nodes):
	// what the workload left live; 0 when unknown.
	HeapAfterGCBytes int64 `json:"heap_after_gc_bytes,omitempty"`
	// WarmAfterSeconds is how long the workload ran, warm-up included,
	// before Keycloak served it at its warm cost (observe.WarmAfter); nil
	// when unknown. Of a point's first workload after its restart: how
	// long a restarted node takes to warm.
	WarmAfterSeconds *float64 `json:"warm_after_s,omitempty"`
	// ClientsInUse is how many confidential clients the workload's grants
	// drew from (the sizing guide sizes the caches by it); 0: not
	// recorded.
	ClientsInUse int `json:"clients_in_use,omitempty"`
	// Database is the database's work per successful iteration (nil
	// when unknown).
	Database *DBCost `json:"database,omitempty"`
	// Directory is the LDAP directory's CPU per successful iteration
	// (nil unless the users are in LDAP).
	Directory *DirectoryCost `json:"directory,omitempty"`
	// Connections is how the workload's VUs connected (nil: not
	// recorded, by a kcbench without TLS).
	Connections *Connections `json:"connections,omitempty"`
}

// Capacity is a capacity search run at a point; its folder (Dir, relative
// to the point's) holds capacity.json and steps.csv.
type Capacity struct {
	Name       string  `json:"name"`
	Scenario   string  `json:"scenario"`
	Dir        string  `json:"dir"`
	Found      bool    `json:"found"`
	MaxRate    float64 `json:"max_rate"`
	P99Ms      float64 `json:"p99_ms,omitempty"`
	CPUMsPerOp float64 `json:"cpu_ms_per_op,omitempty"`
	Conclusion string  `json:"conclusion"`
	Seconds    float64 `json:"seconds"` // the search's wall time
}

// Summary is summary.json.
type Summary struct {
	Schema    int               `json:"schema"`
	Point     string            `json:"point"`
	Params    map[string]string `json:"params"`
	Status    string            `json:"status"`
	Reason    string            `json:"reason,omitempty"`
	Seed      *Seed             `json:"seed,omitempty"`
	Boot      *Boot             `json:"boot,omitempty"`
	Workloads []Workload        `json:"workloads"`
	// Capacity lists the capacity searches run at the point.
	Capacity []Capacity `json:"capacity,omitempty"`
	// Unobserved lists what could not be observed (e.g. an external
	// target's process CPU).
	Unobserved []string `json:"unobserved,omitempty"`
	Seconds    float64  `json:"seconds"`
}

// Point is one point folder read back.
type Point struct {
	Dir      string
	Manifest Manifest
	Summary  Summary
}

// ReadPoint reads a point folder, or a `kcbench load --out` run's folder
// as a point of one workload; a folder without summary.json is not done
// and gives an error wrapping os.ErrNotExist.
func ReadPoint(dir string) (*Point, error) {
	p := &Point{Dir: dir}
	if err := readJSON(filepath.Join(dir, ManifestFile), &p.Manifest); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			// a load run's folder has no manifest (loadpoint.go)
			if lp, lerr := readLoadPoint(dir); !errors.Is(lerr, errNotLoadRun) && !errors.Is(lerr, os.ErrNotExist) {
				return lp, lerr
			}
		}
		return nil, err
	}
	if err := readJSON(filepath.Join(dir, SummaryFile), &p.Summary); err != nil {
		return nil, err
	}
	if p.Summary.Schema != Schema {
		return nil, fmt.Errorf("%s: schema %d, this kcbench reads %d", dir, p.Summary.Schema, Schema)
	}
	if err := p.Summary.checkFigures(); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	return p, nil
}

// ReadExperiment reads every done point of an experiment folder, sorted by
// point id.
func ReadExperiment(dir string) ([]*Point, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ps []*Point
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p, err := ReadPoint(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // not finished
		}
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no finished points (no */summary.json)", dir)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Manifest.Point < ps[j].Manifest.Point })
	return ps, nil
}

func readJSON(path string, v any) error {
	b, err := fileutil.ReadFile(path, fileutil.MaxResultFile)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Workload finds a workload by name and phase.
func (s *Summary) Workload(name, phase string) *Workload {
	for i := range s.Workloads {
		if s.Workloads[i].Name == name && s.Workloads[i].Phase == phase {
			return &s.Workloads[i]
		}
	}
	return nil
}
