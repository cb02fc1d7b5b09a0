package experiment

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
)

// DefaultAgentSetup is what an agent of a split search leaves, after a
// step's graceful stop (and pause), to write the step and set up the next
// one's VUs before the next step's start.
const DefaultAgentSetup = 2 * time.Second

// AgentGap is the time between the end of one step of a split search and
// the start of the next: Gap when set, else the steps' graceful stop, the
// pause and DefaultAgentSetup.
func (f *Search) AgentGap() time.Duration {
	if f.Gap > 0 {
		return f.Gap
	}
	grace := f.Stepper(kc.Target{}, nil).StepConfig(1, time.Second).GracefulStop
	return grace + max(f.Options.WithDefaults().Pause, 0) + DefaultAgentSetup
}

// RunAgent runs agent seg's share of a split search (kcbench capacity
// --segment): the fixed schedule of f.Options from at
// (capacity.Options.Schedule), every step at its planned instant whatever
// the last one measured, since an agent sees only its share of a step.
// It writes the schedule to dir/capacity-agent.json before the first step
// and each step's share, as a load folder, to dir/step-NNN. It judges
// nothing: kcbench merge joins the agents' folders and judges each step on
// the merged histograms.
func (f *Search) RunAgent(ctx context.Context, tg kc.Target, m *dataset.Manifest, params map[string]string, dir string, seg load.Segment, at time.Time) error {
	o := f.Options
	gap := f.AgentGap()
	steps, err := o.Schedule(at, gap)
	if err != nil {
		return err
	}
	if f.Scenario.Scenario == results.ScenarioMix {
		params = WithParam(params, "mix", scenario.MixString(orDefaultMix(f.Scenario.Mix)))
	}
	a := results.CapacityAgent{Schema: results.CapacityAgentSchema, Kind: results.CapacityAgentKind, Scenario: f.Scenario.Scenario,
		Segment: seg.String(), StartAt: at.UTC(), Gap: gap.Seconds(), SLOs: o.SLOs, Settings: o.FixedSettings(), Params: params, Steps: steps}
	if err := a.WriteDir(dir); err != nil {
		return err
	}
	sr, done := f.runStepper(tg, m, o)
	defer done()
	last := steps[len(steps)-1]
	end := last.Start.Add(seconds(last.Duration))
	f.Logf("capacity: agent %s of a split search: %s against %s, SLOs %s; %d steps from %g/s to %g/s (this agent makes one arrival in %d), %s to %s; kcbench merge judges them",
		seg, f.Scenario.Scenario, tg.BaseURL, results.FormatSLOs(o.SLOs), len(steps), steps[0].Rate, last.Rate, seg.Count,
		at.Local().Format(time.TimeOnly), end.Local().Format(time.TimeOnly))
	for _, p := range steps {
		d := seconds(p.Duration)
		if late := time.Since(p.Start); late > 0 {
			f.Logf("capacity: agent %s is %s late for step %d: the merge will fail the step (give more --step-gap)", seg, late.Round(time.Millisecond), p.Index)
		}
		if !f.Quiet {
			f.Logf("capacity: step %d (%s) %g/s, this agent %.4g/s, at %s for %s", p.Index, p.Phase, p.Rate, seg.ShareRate(p.Rate), p.Start.Local().Format(time.TimeOnly), d)
		}
		res, rss, err := sr.AgentStep(ctx, p.Rate, d, seg, p.Start)
		if res != nil {
			res.Params = WithParam(params, results.ParamCapacityStep, strconv.Itoa(p.Index))
			res.Params[results.ParamCapacityPhase], res.Params[results.ParamCapacityRate] = p.Phase, strconv.FormatFloat(p.Rate, 'g', -1, 64)
			if rss > 0 {
				res.Params[results.ParamServerRSSPeak] = strconv.FormatInt(rss, 10)
			}
			sd := filepath.Join(dir, results.StepDir(p.Index))
			if werr := errors.Join(os.MkdirAll(sd, 0o755), res.WriteDir(sd)); werr != nil {
				return errors.Join(err, werr)
			}
			if it, ok := res.Stats.Op(results.IterationOp); ok && !f.Quiet {
				f.Logf("capacity: step %d: this agent achieved %.1f/s, p99 %s ms, errors %.2f%%, dropped %d (its share only: no verdict)",
					p.Index, it.Rate, results.FormatMs(float64(it.Latency.P99.Microseconds())/1000), 100*it.ErrorRate(), res.Stats.Dropped)
			}
		}
		if err != nil {
			return fmt.Errorf("step %d (%g/s): %w", p.Index, p.Rate, err)
		}
	}
	fmt.Fprintf(f.Stdout, "results: %s (agent %s of a split search: kcbench merge joins the agents' folders and judges the steps)\n", dir, seg)
	return nil
}
