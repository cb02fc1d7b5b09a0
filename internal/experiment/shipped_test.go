package experiment

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/experiments"
)

// Every shipped experiment parses, validates (events included) and plans.
func TestShippedExperiments(t *testing.T) {
	ents, err := fs.ReadDir(experiments.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		b, err := fs.ReadFile(experiments.FS, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(b)
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if pts, err := Plan(f); err != nil || len(pts) == 0 {
			t.Errorf("%s: plan: %d points, %v", e.Name(), len(pts), err)
		}
		if e.Name() == "resilience.yaml" {
			fs, err := f.Workload[0].Faults(0.5)
			if err != nil || len(fs) != 3 || fs[0].At.Seconds() != 30 {
				t.Errorf("resilience events at half scale: %+v, %v", fs, err)
			}
		}
	}
}
