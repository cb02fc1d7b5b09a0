package results

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A `kcbench load --out` folder reads as a point of one workload, with
// the server CPU, the database's cost and the params its summary holds.
func TestReadPointOfALoadRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	st := Stats{Scenario: ScenarioClientCredentials, Executor: "constant-arrival-rate", Model: ModelOpen,
		Start: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Duration: 10 * time.Second, Elapsed: 11 * time.Second,
		Iterations: 1000, Ops: []OpStats{{Name: IterationOp, Count: 1000, OK: 1000, Rate: 100, Latency: Dist{P50: 2 * time.Millisecond, P95: 4 * time.Millisecond, Max: 9 * time.Millisecond}}}}
	var b bytes.Buffer
	if err := WriteStatsJSON(&b, st); err != nil {
		t.Fatal(err)
	}
	sum := strings.TrimSuffix(strings.TrimSpace(b.String()), "}") +
		`, "server_cpu": {"available": true, "source": "proc", "cpu_ms_per_iteration": 1.75},
  "database": {"cpu_ms_per_op": 0.5},
  "params": {"target": "local", "keycloak_version": "26.7.3", "machine_cores": "2"}}`
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(sum), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Summary.Workloads) != 1 {
		t.Fatalf("%d workloads, want 1", len(p.Summary.Workloads))
	}
	w := p.Summary.Workloads[0]
	if w.Name != ScenarioClientCredentials || w.Stats.Iterations != 1000 || w.ServerCPUMsPerOp != 1.75 || w.ServerCPUSource != "proc" {
		t.Errorf("workload %+v", w)
	}
	if w.Database == nil {
		t.Error("the database's cost was not read")
	}
	if p.Summary.Status != StatusDone || p.Manifest.Keycloak != "26.7.3" || p.Manifest.Machine.Cores != 2 || p.Manifest.Point != "run1" {
		t.Errorf("point %+v / %+v", p.Summary, p.Manifest)
	}
	if !p.Manifest.End.Equal(st.Start.Add(st.Elapsed)) {
		t.Errorf("end %v", p.Manifest.End)
	}

	// an aborted run says why
	st.Aborted, st.EndReason = true, "Keycloak exited"
	b.Reset()
	if err := WriteStatsJSON(&b, st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := ReadPoint(dir); err != nil || p.Summary.Status != StatusAborted || p.Summary.Reason != "Keycloak exited" {
		t.Errorf("aborted run: %v %+v", err, p)
	}

	// neither a point's nor a run's summary: the manifest is missing
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), []byte(`{"workloads": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPoint(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), ManifestFile) {
		t.Errorf("an experiment point without its manifest: %v", err)
	}
	// not done yet
	os.Remove(filepath.Join(dir, SummaryFile))
	if _, err := ReadPoint(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a folder without summary.json: %v", err)
	}
}
