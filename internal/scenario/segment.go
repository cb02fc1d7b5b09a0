package scenario

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/kcbench/kcbench/internal/load"
)

// Split returns agent s's share of c, for a run split over s.Count agents
// (load.Segment): its share of the VUs (closed model: every VU; open
// model: the VUs allocated up front and at most), of the arrival rate and
// of every stage's target. The seed differs per agent, so that agents do
// not repeat each other's choices. Split(the zero Segment) is c.
//
// A closed-model run whose VUs do not reach every agent is an error: an
// agent without VUs would measure nothing. An open-model agent does not
// run a schedule of its own at the share rate: AgentExecutor has it make
// every N-th arrival of the whole run's schedule.
func (c Config) Split(s load.Segment) (Config, error) {
	if err := s.Validate(); err != nil {
		return c, err
	}
	if s.Whole() {
		return c, nil
	}
	open := c.executorConfig().open()
	var errs []error
	share := func(key string, n int, atLeastOne bool) int {
		v := s.Share(n)
		if n > 0 && v == 0 {
			if !atLeastOne {
				errs = append(errs, fmt.Errorf("%s: %d cannot be split over %d agents: agent %d gets none", key, n, s.Count, s.Index))
			}
			v = 1 // open model: a VU allocated up front adds no load
		}
		return v
	}
	c.VUs = share("vus", c.VUs, open)
	c.MaxVUs = share("max_vus", c.MaxVUs, open)
	c.StartVUs = s.Share(c.StartVUs)
	c.Rate = s.ShareRate(c.Rate)
	c.StartRate = s.ShareRate(c.StartRate)
	c.Stages = slices.Clone(c.Stages)
	for i := range c.Stages {
		if c.Executor == load.NameRampingVUs {
			c.Stages[i].Target = float64(s.Share(int(math.Round(c.Stages[i].Target))))
		} else {
			c.Stages[i].Target = s.ShareRate(c.Stages[i].Target)
		}
	}
	if c.Executor == load.NameRampingVUs && c.executorConfig().maxVUs() == 0 {
		errs = append(errs, fmt.Errorf("stages: agent %d of %d gets no VUs", s.Index, s.Count))
	}
	if s.Index > 0 {
		c.Seed += uint64(s.Index) * 0x9e3779b97f4a7c15 // distinct, reproducible per agent
	}
	return c, errors.Join(errs...)
}

// AgentExecutor is the executor of c, agent s's share (Split) of whole:
// in the open model it makes arrivals s.Index, s.Index+N… of whole's
// schedule (load.Strided), so that the agents together make exactly the
// arrivals of one process at the full rate, at the same instants.
func (c *Config) AgentExecutor(whole Config, s load.Segment) load.Executor {
	ex := c.NewExecutor()
	if s.Whole() {
		return ex
	}
	switch e := ex.(type) {
	case load.ConstantArrivalRate:
		e.Rate, e.Segment = whole.Rate, s
		return e
	case load.RampingArrivalRate:
		w := whole.NewExecutor().(load.RampingArrivalRate)
		w.PreAllocatedVUs, w.MaxVUs, w.Segment = e.PreAllocatedVUs, e.MaxVUs, s
		return w
	}
	return ex
}

// Slice returns the pool agent s of a split run draws from: in every
// tenant, its block of the users (load.Segment.Range), so that agents
// never log in the same user (the block's position rotates with the
// tenant). A tenant with fewer users than agents is left to the agents
// its users fall to; the tenant choice (uniform or
// zipf) is then over the tenants the agent has users in. A pool of one
// hand-given user is shared by all agents.
func (p *Pool) Slice(s load.Segment) (*Pool, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Whole() || p.single {
		return p, nil
	}
	q := *p
	q.tenants, q.userLo = nil, nil
	for i, t := range p.tenants {
		// The blocks rotate with the tenant, so that tenants with fewer
		// users than agents spread over the agents.
		lo, hi := load.Segment{Index: (s.Index + i) % s.Count, Count: s.Count}.Range(t.Users)
		if hi == lo {
			continue
		}
		t.Users = hi - lo
		q.tenants = append(q.tenants, t)
		q.userLo = append(q.userLo, p.firstUser(i)+lo)
	}
	if len(q.tenants) == 0 {
		return nil, fmt.Errorf("segment %s: no users left for this agent: every tenant has fewer users than the %d agents", s, s.Count)
	}
	q.zipf = nil
	if q.skew > 0 {
		q.zipf = newZipf(len(q.tenants), q.skew)
	}
	return &q, nil
}

// firstUser is the 0-based offset of tenant i's first user in the pool.
func (p *Pool) firstUser(i int) int {
	if p.userLo == nil {
		return 0
	}
	return p.userLo[i]
}
