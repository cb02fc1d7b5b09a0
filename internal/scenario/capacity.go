package scenario

import (
	"context"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/h1"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// Capacity step defaults.
const (
	// CapacityGrace is the least time iterations running at the end of a
	// step may finish in; iterations still running after it are cut off
	// and count against the step.
	CapacityGrace = 5 * time.Second
	// CapacityConns bounds the idle connections kept between steps.
	CapacityConns = 1024
	// rssEvery is how often the server's RSS is read during a step.
	rssEvery = time.Second
)

// CapacityStepper binds a capacity search to a Keycloak: each step runs
// Config's scenario under a constant arrival rate (its Step method is a
// capacity.StepFunc).
type CapacityStepper struct {
	// Config is the workload; the executor fields are set per step.
	Config   Config
	Target   kc.Target
	Manifest *dataset.Manifest
	// SLOs size the VU pool and the graceful stop (their largest latency
	// limit; 1 s without one).
	SLOs []results.Threshold
	// MaxVUs caps the VUs of a step (0: 2 × rate × the latency limit + 10).
	MaxVUs int
	// Grace is the least graceful stop of a step (0: CapacityGrace); it is
	// at least 4 × the latency limit.
	Grace time.Duration
	// HTTPClient is shared by the steps (NewHTTPClient when nil).
	HTTPClient *http.Client
	Progress   func(load.Progress)
	// IntervalHook, when set, sees every interval of every step (live
	// metrics; RunInput.IntervalHook).
	IntervalHook func(load.Interval)
	// RSS reads the server's RSS; nil when unknown.
	RSS func() (int64, error)
	// EarlyEnd, when set, makes each judged step's check that ends it as
	// soon as it has failed (capacity.Options.EarlyEnd); warm-ups and
	// probes run their whole length (capacity.StepPhase).
	EarlyEnd func(rate float64, d time.Duration) func(load.Interval) string
	// Prove proves the setup before the first step (RunInput.Prove),
	// naming KeycloakVersion when it fails.
	Prove           bool
	KeycloakVersion string
	proved          bool

	// users are the VUs' state, kept from step to step.
	users UserCache
}

// prove sets in to prove the setup when it is the first step run.
func (s *CapacityStepper) prove(in *RunInput) {
	in.Prove, in.KeycloakVersion = s.Prove && !s.proved, s.KeycloakVersion
	s.proved = true
}

// UserCache keeps VUs' state across runs of one workload (RunInput.Users).
// A capacity search's steps would otherwise make their VUs anew, each
// step: an introspect or userinfo VU logs a user in when it is made (a
// refresh VU once did, before its sessions moved to a pool, which the
// cache keeps too), so every step began with a burst of logins, and a
// step that fell behind made more VUs and more logins as it went, until
// the server never caught up again (docs/results/capacity-search). The
// zero value is ready; runs using it must not overlap.
type UserCache struct {
	mu    sync.Mutex
	users []load.User // all made so far
	free  []load.User // not yet taken by the current run
	made  int         // users made by the current run
	// sessions are the refresh scenario's, kept from run to run
	sessions sessionPools
	// registered are the users the registration scenario made: its VUs
	// outlive a run here, and each run's finish deletes what they made.
	registered registered
}

// Reuse returns sc, whose NewUser hands out the users earlier runs made
// before it makes new ones; it starts a run.
func (c *UserCache) Reuse(sc load.Scenario) load.Scenario {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.free = append(c.free[:0], c.users...)
	c.made = 0
	return &reuse{Scenario: sc, c: c}
}

// Made is how many users the current run made anew.
func (c *UserCache) Made() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.made
}

type reuse struct {
	load.Scenario
	c *UserCache
}

func (r *reuse) NewUser(ctx context.Context, id int) (load.User, error) {
	c := r.c
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		u := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return u, nil
	}
	c.mu.Unlock()
	u, err := r.Scenario.NewUser(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.users = append(c.users, u)
	c.made++
	c.mu.Unlock()
	return u, nil
}

// latency is the largest latency SLO, or 1 s without one.
func (s *CapacityStepper) latency() time.Duration {
	if l, ok := capacity.LatencyLimit(s.SLOs); ok && l > 0 {
		return time.Duration(l * float64(time.Millisecond))
	}
	return time.Second
}

// VUs returns the VUs allocated up front and at most for a step at rate:
// by Little's law a step that meets a latency SLO L needs about rate × L
// VUs at once; twice that leaves room for bursts, so that an arrival is
// dropped only when the server is past its SLO anyway.
func (s *CapacityStepper) VUs(rate float64) (pre, most int) {
	most = s.MaxVUs
	if most == 0 {
		most = int(math.Ceil(2*rate*s.latency().Seconds())) + 10
	}
	pre = min(most, max(10, int(math.Ceil(rate/10))))
	return pre, most
}

// StepConfig is the workload of one step.
func (s *CapacityStepper) StepConfig(rate float64, d time.Duration) Config {
	c := s.Config
	c.Executor = load.NameConstantArrivalRate
	c.Rate, c.Duration, c.Warmup = rate, d, 0
	c.VUs, c.MaxVUs = s.VUs(rate)
	grace := s.Grace
	if grace == 0 {
		grace = CapacityGrace
	}
	c.GracefulStop = max(grace, 4*s.latency())
	c.ApplyDefaults()
	return c
}

// NewHTTPClient is a client sized for search o's steps: up to its cap, or
// about 20 steps up the ramp (adaptive: up to CapacityConns).
func (s *CapacityStepper) NewHTTPClient(o capacity.Options) *http.Client {
	top := max(o.MaxRate, o.Start+20*o.Step)
	if o.Adaptive && o.MaxRate == 0 {
		top = math.Inf(1) // the adaptive search may go anywhere
	}
	_, most := s.VUs(min(top, capacity.MaxRate))
	timeout := s.Config.Timeout
	if timeout == 0 {
		timeout = load.DefaultHTTPTimeout
	}
	tr := LoadTransport(s.Target, timeout, min(most, CapacityConns), netip.Addr{})
	tr.Resume = s.Config.TLSResumption
	return &http.Client{Transport: tr}
}

// LoadTransport is the load engine's client transport for target tg:
// requests bounded by timeout, up to conns kept-alive connections (shared
// by the VUs under the reuse policy), from local (when valid), trusting
// tg's CA over https.
func LoadTransport(tg kc.Target, timeout time.Duration, conns int, local netip.Addr) *h1.Transport {
	cfg, _ := tg.TLSConfig() // a bad CA file: Target.Validate says so
	return &h1.Transport{Timeout: timeout, MaxIdlePerHost: conns, LocalAddr: local, TLSConfig: cfg}
}

// Step runs one step; it implements capacity.StepFunc.
func (s *CapacityStepper) Step(ctx context.Context, st capacity.Step) (capacity.StepResult, error) {
	rate, d := st.Rate, st.Duration
	in := RunInput{Target: s.Target, Manifest: s.Manifest, Config: s.StepConfig(rate, d), HTTPClient: s.HTTPClient, Progress: s.Progress, IntervalHook: s.IntervalHook}
	if s.EarlyEnd != nil && st.Judged() {
		in.EarlyEnd = s.EarlyEnd(rate, d)
	}
	if s.HTTPClient != nil {
		in.Users = &s.users // a user keeps the client it was made with: a shared one
	}
	s.prove(&in)
	stopRSS, peak := watchRSS(s.RSS)
	res, err := Run(ctx, in)
	stopRSS()
	if res == nil {
		return capacity.StepResult{}, err
	}
	sr := capacity.StepResult{Stats: res.Stats, RSSBytes: peak(), DB: res.DB, Directory: res.Directory}
	if res.CPU.Available {
		sr.CPUMsPerOp, sr.ServerCores = res.CPU.PerIteration, res.CPU.Cores
	} else if res.CPU.Reason != "" {
		sr.Note = "server CPU unavailable: " + res.CPU.Reason
	}
	return sr, err
}

// AgentStep runs agent seg's share of one step of a split search's fixed
// schedule (capacity.Options.Schedule): rate is the whole step's, of
// which the agent makes every seg.Count-th arrival (RunInput.Segment),
// and the step's clock starts at at on every agent. It returns the run's
// result, whose Recorder holds the HDR histograms a merge needs, and the
// server's peak RSS over the step (0: unknown).
func (s *CapacityStepper) AgentStep(ctx context.Context, rate float64, d time.Duration, seg load.Segment, at time.Time) (*RunResult, int64, error) {
	in := RunInput{Target: s.Target, Manifest: s.Manifest, Config: s.StepConfig(rate, d), HTTPClient: s.HTTPClient, Progress: s.Progress,
		IntervalHook: s.IntervalHook, Segment: seg, StartAt: at}
	if s.HTTPClient != nil {
		in.Users = &s.users
	}
	s.prove(&in)
	stopRSS, peak := watchRSS(s.RSS)
	res, err := Run(ctx, in)
	stopRSS()
	return res, peak(), err
}

// watchRSS calls read every second until stopped; peak returns the
// highest value seen (0 when read is nil or always fails).
func watchRSS(read func() (int64, error)) (stop func(), peak func() int64) {
	var (
		mu   sync.Mutex
		high int64
		wg   sync.WaitGroup
	)
	sample := func() {
		if rss, err := read(); err == nil {
			mu.Lock()
			high = max(high, rss)
			mu.Unlock()
		}
	}
	done := make(chan struct{})
	if read != nil {
		sample()
		wg.Go(func() {
			t := time.NewTicker(rssEvery)
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					sample()
				}
			}
		})
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(done)
			wg.Wait()
			if read != nil {
				sample()
			}
		})
	}
	return stop, func() int64 { mu.Lock(); defer mu.Unlock(); return high }
}
