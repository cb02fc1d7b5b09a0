package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// ReferencesFile, in an experiment's folder, holds the published figures
// its file names (references:), drawn beside the measured ones.
const ReferencesFile = "references.json"

// Reference is a published curve: points (x, y) in the units of the report
// chart it belongs to, e.g. the Keycloak study's p99 against the injected
// round trip, or a blog's seed time against the tenant count.
type Reference struct {
	// Chart is the report chart's name (its file charts/<Chart>.png),
	// e.g. sweep-seed-time or latency-node-node-refresh.
	Chart string `json:"chart" yaml:"chart"`
	// Label is the line's legend, e.g. "study, realms (26.0, 6 cores)".
	Label string `json:"label" yaml:"label"`
	// Series is the measured line it compares with (its legend, e.g.
	// "realms" or "26.7.3 p99"): the report's comparison table pairs
	// their values at the same x. Empty: drawn, not compared.
	Series string `json:"series,omitempty" yaml:"series"`
	// Source says where the figures were published.
	Source string `json:"source,omitempty" yaml:"source"`
	// Note says what differs from the measured run (hardware, version,
	// workload), shown under the comparison table.
	Note   string       `json:"note,omitempty" yaml:"note"`
	Points [][2]float64 `json:"points" yaml:"points"`
}

// Check says what is wrong with r, or nil.
func (r Reference) Check() error {
	var errs []error
	if strings.TrimSpace(r.Chart) == "" {
		errs = append(errs, errors.New("chart: empty (the report chart's name, e.g. sweep-seed-time)"))
	}
	if strings.TrimSpace(r.Label) == "" {
		errs = append(errs, errors.New("label: empty"))
	}
	if len(r.Points) == 0 {
		errs = append(errs, errors.New("points: none (want [[x, y], …])"))
	}
	for i, p := range r.Points {
		for _, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				errs = append(errs, fmt.Errorf("points[%d]: %v is not a number", i, p))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// WriteReferences writes refs into the experiment folder dir (removes the
// file when there are none).
func WriteReferences(dir string, refs []Reference) error {
	path := filepath.Join(dir, ReferencesFile)
	if len(refs) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b, err := json.MarshalIndent(refs, "", "  ")
	if err != nil {
		return err
	}
	return fileutil.WriteAtomic(path, append(b, '\n'), 0o644)
}

// ReadReferences reads the experiment folder dir's references; none when
// it has no file.
func ReadReferences(dir string) ([]Reference, error) {
	var refs []Reference
	err := readJSON(filepath.Join(dir, ReferencesFile), &refs)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i, r := range refs {
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("%s: [%d]: %w", ReferencesFile, i, err)
		}
	}
	return refs, nil
}
