package capacity

import (
	"io/fs"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

// TestNextReplaysPublishedSearches replays every adaptive search
// published in docs/results, measured on a real Keycloak: after each
// prefix of its steps the rules ask for the step that ran next (phase,
// rate and, where it ran to its end, length), say done after the last,
// and reach the published answer.
func TestNextReplaysPublishedSearches(t *testing.T) {
	var paths []string
	err := filepath.WalkDir("../../docs/results", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "capacity.json" {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	replayed := 0
	for _, p := range paths {
		r, err := results.ReadCapacity(p)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(p)
		if r.Settings.Mode != results.ModeAdaptive || r.Interrupted || olderRules[filepath.Base(filepath.Dir(dir))] {
			continue
		}
		replayed++
		t.Run(strings.TrimPrefix(dir, "../../docs/results/"), func(t *testing.T) {
			o := OptionsOf(r.SLOs, r.Settings).WithDefaults()
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			for k, ran := range r.Steps {
				next, done, err := Next(o, r.Steps[:k])
				if err != nil || done {
					t.Fatalf("after %d steps: done %v, %v", k, done, err)
				}
				if next.Phase != ran.Phase || next.Rate != ran.Rate {
					t.Fatalf("after %d steps the rules ask for %s at %g/s; %s at %g/s ran", k, next.Phase, next.Rate, ran.Phase, ran.Rate)
				}
				if ran.Pass && math.Abs(next.Duration.Seconds()-ran.Duration) > 0.5 { // a failure may end early
					t.Errorf("step %d: the rules ask for %v, %gs ran", k, next.Duration, ran.Duration)
				}
			}
			if next, done, err := Next(o, r.Steps); !done || err != nil {
				t.Fatalf("after the last step: %+v, done %v, %v", next, done, err)
			}
			got := *r
			decide(o, r.Steps).answer(&got)
			if got.Found != r.Found || got.MaxRate != r.MaxRate || got.BestStep != r.BestStep || got.FirstFailedRate != r.FirstFailedRate ||
				got.Estimate != r.Estimate || got.Predicted != r.Predicted || got.Capped != r.Capped {
				t.Errorf("answer %+v, published %+v", answerOf(&got), answerOf(r))
			}
		})
	}
	if replayed < 12 {
		t.Errorf("replayed %d published searches, want at least 12", replayed)
	}
}

// olderRules are the published runs made before the rules last changed
// (2026-11-27: settling after probes that all fell behind; the bisection
// of slow steps on to Precision): they ran other steps.
var olderRules = map[string]bool{
	"postgres-realms-n00001-r1": true, "mariadb-realms-n00001-r1": true, "ldap-realms-n00001-r1": true,
}

func answerOf(r *results.CapacityResult) []any {
	return []any{r.Found, r.MaxRate, r.BestStep, r.FirstFailedRate, r.Estimate, r.Predicted, r.Capped}
}

// TestNextRefusesStepsItWouldNotAsk: a record the rules would not have
// made is an error, not a silent answer.
func TestNextRefusesStepsItWouldNotAsk(t *testing.T) {
	o := adaptiveOpts(t, 2).WithDefaults()
	first, done, err := Next(o, nil)
	if err != nil || done || first.Phase != results.StepProbe || first.Rate != o.Start {
		t.Fatalf("first step: %+v, %v, %v", first, done, err)
	}
	wrong := []results.CapacityStep{{Phase: results.StepProbe, Rate: 2 * o.Start, Pass: true, OK: 40}}
	if _, done, err := Next(o, wrong); err == nil || !done {
		t.Errorf("a probe at twice the start: done %v, %v", done, err)
	}
}
