package scenario

import (
	"fmt"
	"math"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

// executorConfig is one executor's part of a Config, a type per executor
// as k6 has them: the settings it takes, their checks, and the engine's
// executor they make. Config keeps the flat keys of flags and experiment
// files; Config.executorConfig picks the executor's.
type executorConfig interface {
	// validate adds the problems of the executor's own settings.
	validate(p *problems)
	// executor makes the engine's executor; warmup comes before the
	// measured time, or is the first part of the stages.
	executor(warmup, gracefulStop time.Duration) load.Executor
	// maxVUs is the most VUs the run may have (0 when none is set).
	maxVUs() int
	// length is the run's time, warm-up included (per-vu-iterations: at
	// most), graceful stop excluded.
	length(warmup time.Duration) time.Duration
	// describe says what it runs, e.g. "10 VUs for 30s".
	describe() string
	// open reports the open model: arrivals at a rate, not VUs looping.
	open() bool
}

// constantVUs: VUs looping for Duration.
type constantVUs struct {
	VUs      int
	Duration time.Duration
}

// perVUIterations: each of VUs runs Iterations, within MaxDuration.
type perVUIterations struct {
	VUs, Iterations int
	MaxDuration     time.Duration
}

// constantArrivalRate: Rate arrivals per second for Duration, on VUs
// allocated up front and up to MaxVUs.
type constantArrivalRate struct {
	Rate        float64
	Duration    time.Duration
	VUs, MaxVUs int
}

// rampingVUs: from StartVUs, VUs move to each stage's target.
type rampingVUs struct {
	StartVUs int
	Stages   Stages
}

// rampingArrivalRate: from StartRate, the arrival rate moves to each
// stage's target, on VUs allocated up front and up to MaxVUs.
type rampingArrivalRate struct {
	StartRate   float64
	Stages      Stages
	VUs, MaxVUs int
}

// executorConfig is c's executor's part (constant-vus for a name no
// executor has: Validate says so).
func (c *Config) executorConfig() executorConfig {
	switch c.Executor {
	case load.NamePerVUIterations:
		return perVUIterations{VUs: c.VUs, Iterations: c.Iterations, MaxDuration: c.Duration}
	case load.NameConstantArrivalRate:
		return constantArrivalRate{Rate: c.Rate, Duration: c.Duration, VUs: c.VUs, MaxVUs: c.MaxVUs}
	case load.NameRampingVUs:
		return rampingVUs{StartVUs: c.StartVUs, Stages: c.Stages}
	case load.NameRampingArrivalRate:
		return rampingArrivalRate{StartRate: c.StartRate, Stages: c.Stages, VUs: c.VUs, MaxVUs: c.MaxVUs}
	default:
		return constantVUs{VUs: c.VUs, Duration: c.Duration}
	}
}

func checkDuration(p *problems, d time.Duration) {
	if d <= 0 || d > MaxDuration {
		p.add("duration: %v: must be positive and at most %v", d, MaxDuration)
	}
}

func checkVUs(p *problems, vus int) {
	if vus < 1 || vus > MaxVUs {
		p.add("vus: %d: must be between 1 and %d", vus, MaxVUs)
	}
}

// checkOpenVUs checks an arrival-rate executor's VUs: up front and at
// most, one of them at least 1.
func checkOpenVUs(p *problems, vus, maxVUs int) {
	if vus < 1 && maxVUs < 1 || vus < 0 || vus > MaxVUs {
		p.add("vus: %d: must be between 1 and %d", vus, MaxVUs)
	}
	if maxVUs < 0 || maxVUs > MaxVUs {
		p.add("max_vus: %d: must be between 0 and %d", maxVUs, MaxVUs)
	}
	if maxVUs != 0 && maxVUs < vus {
		p.add("max_vus: %d: must not be less than vus (%d)", maxVUs, vus)
	}
}

func (e constantVUs) validate(p *problems) { checkDuration(p, e.Duration); checkVUs(p, e.VUs) }
func (e constantVUs) executor(warmup, gs time.Duration) load.Executor {
	return load.ConstantVUs{VUs: e.VUs, Duration: warmup + e.Duration, GracefulStop: gs}
}
func (e constantVUs) maxVUs() int                               { return e.VUs }
func (e constantVUs) length(warmup time.Duration) time.Duration { return warmup + e.Duration }
func (e constantVUs) describe() string                          { return fmt.Sprintf("%d VUs for %v", e.VUs, e.Duration) }
func (e constantVUs) open() bool                                { return false }

func (e perVUIterations) validate(p *problems) {
	checkDuration(p, e.MaxDuration)
	checkVUs(p, e.VUs)
	if e.Iterations < 1 || e.Iterations > MaxIterations {
		p.add("iterations: %d: must be between 1 and %d", e.Iterations, MaxIterations)
	}
}
func (e perVUIterations) executor(warmup, gs time.Duration) load.Executor {
	return load.PerVUIterations{VUs: e.VUs, Iterations: e.Iterations, MaxDuration: warmup + e.MaxDuration, GracefulStop: gs}
}
func (e perVUIterations) maxVUs() int { return e.VUs }
func (e perVUIterations) length(warmup time.Duration) time.Duration {
	return warmup + e.MaxDuration
}
func (e perVUIterations) describe() string {
	return fmt.Sprintf("%d VUs × %d iterations (at most %v)", e.VUs, e.Iterations, e.MaxDuration)
}
func (e perVUIterations) open() bool { return false }

func (e constantArrivalRate) validate(p *problems) {
	checkDuration(p, e.Duration)
	if !(e.Rate > 0 && e.Rate <= MaxRate) {
		p.add("rate: %v: must be > 0 and at most %g per second", e.Rate, float64(MaxRate))
	}
	checkOpenVUs(p, e.VUs, e.MaxVUs)
}
func (e constantArrivalRate) executor(warmup, gs time.Duration) load.Executor {
	return load.ConstantArrivalRate{Rate: e.Rate, Duration: warmup + e.Duration, PreAllocatedVUs: e.VUs, MaxVUs: e.MaxVUs, GracefulStop: gs}
}
func (e constantArrivalRate) maxVUs() int { return max(e.VUs, e.MaxVUs) }
func (e constantArrivalRate) length(warmup time.Duration) time.Duration {
	return warmup + e.Duration
}
func (e constantArrivalRate) describe() string { return fmt.Sprintf("%g/s for %v", e.Rate, e.Duration) }
func (e constantArrivalRate) open() bool       { return true }

func (e rampingVUs) validate(p *problems) {
	if e.StartVUs < 0 || e.StartVUs > MaxVUs {
		p.add("start_vus: %d: must be between 0 and %d", e.StartVUs, MaxVUs)
	}
	for i, s := range e.Stages {
		if s.Target != math.Trunc(s.Target) {
			p.add("stages: stage %d: %g VUs is not a whole number", i+1, s.Target)
		}
	}
}
func (e rampingVUs) executor(_, gs time.Duration) load.Executor {
	x := load.RampingVUs{StartVUs: e.StartVUs, GracefulStop: gs}
	for _, s := range e.Stages {
		x.Stages = append(x.Stages, load.VUStage{Duration: s.Duration, Target: int(s.Target)})
	}
	return x
}
func (e rampingVUs) maxVUs() int {
	n := e.StartVUs
	for _, s := range e.Stages {
		n = max(n, int(s.Target))
	}
	return n
}
func (e rampingVUs) length(time.Duration) time.Duration { return e.Stages.total() }
func (e rampingVUs) describe() string                   { return "stages " + e.Stages.String() }
func (e rampingVUs) open() bool                         { return false }

func (e rampingArrivalRate) validate(p *problems) {
	if !(e.StartRate >= 0 && e.StartRate <= MaxRate) {
		p.add("start_rate: %v: must be between 0 and %g per second", e.StartRate, float64(MaxRate))
	}
	checkOpenVUs(p, e.VUs, e.MaxVUs)
}
func (e rampingArrivalRate) executor(_, gs time.Duration) load.Executor {
	x := load.RampingArrivalRate{StartRate: e.StartRate, PreAllocatedVUs: e.VUs, MaxVUs: e.MaxVUs, GracefulStop: gs}
	for _, s := range e.Stages {
		x.Stages = append(x.Stages, load.Stage{Duration: s.Duration, Target: s.Target})
	}
	return x
}
func (e rampingArrivalRate) maxVUs() int                        { return max(e.VUs, e.MaxVUs) }
func (e rampingArrivalRate) length(time.Duration) time.Duration { return e.Stages.total() }
func (e rampingArrivalRate) describe() string                   { return "stages " + e.Stages.String() }
func (e rampingArrivalRate) open() bool                         { return true }

// total is the stages' time.
func (ss Stages) total() time.Duration {
	var t time.Duration
	for _, s := range ss {
		t += s.Duration
	}
	return t
}
