package scenario

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/load"
)

// TestPoolSliceDisjoint: the users the agents of a split run draw are
// disjoint, and together they are every user of the dataset, for user
// counts that do and do not divide by the agents, with and without skew.
func TestPoolSliceDisjoint(t *testing.T) {
	for _, users := range []int{1, 2, 7, 9} {
		for _, agents := range []int{1, 2, 3, 4} {
			for _, skew := range []float64{0, 1} {
				content := dataset.DefaultContent
				content.Users = users
				spec := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 4, Content: content, Prefix: "kcb", Seed: 1}
				m := dataset.NewManifest(spec, "http://kc")
				p, err := NewManifestPool(m, skew)
				if err != nil {
					t.Fatal(err)
				}
				owner := map[string]int{}
				for i := range agents {
					q, err := p.Slice(load.Segment{Index: i, Count: agents})
					if err != nil {
						t.Fatalf("users=%d agents=%d agent %d: %v", users, agents, i, err)
					}
					// Every user the slice can draw, by listing it, and a
					// sample of draws stays inside the listing.
					mine := map[string]bool{}
					for k, tn := range q.tenants {
						for u := range tn.Users {
							name := tn.ID + "/" + m.Username(tn.Index, 1+q.firstUser(k)+u)
							if o, ok := owner[name]; ok {
								t.Fatalf("users=%d agents=%d: user %s in agents %d and %d", users, agents, name, o, i)
							}
							owner[name] = i
							mine[name] = true
						}
					}
					r := rand.New(rand.NewPCG(uint64(i), 2))
					for range 500 {
						if tn, u := q.pick(r); !mine[tn.ID+"/"+u] {
							t.Fatalf("users=%d agents=%d agent %d drew %s, not its own", users, agents, i, u)
						}
					}
				}
				if len(owner) != 4*users {
					t.Fatalf("users=%d agents=%d: agents cover %d users, want %d", users, agents, len(owner), 4*users)
				}
			}
		}
	}
}

func TestConfigSplit(t *testing.T) {
	c := Config{Scenario: "password-grant", Executor: load.NameConstantVUs, VUs: 10, Duration: time.Second}
	c.ApplyDefaults()
	var vus int
	for i := range 3 {
		s, err := c.Split(load.Segment{Index: i, Count: 3})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{4, 3, 3}[i]; s.VUs != want {
			t.Errorf("agent %d: %d VUs, want %d", i, s.VUs, want)
		}
		if (i == 0) != (s.Seed == c.Seed) {
			t.Errorf("agent %d: seed %d (whole run %d)", i, s.Seed, c.Seed)
		}
		vus += s.VUs
	}
	if vus != 10 {
		t.Errorf("VUs add up to %d", vus)
	}
	if _, err := (Config{Executor: load.NameConstantVUs, VUs: 2}).Split(load.Segment{Index: 2, Count: 3}); err == nil {
		t.Error("2 VUs over 3 agents: no error")
	}
	// ramping-vus whose stages give an agent no VU (MaxVUsAtOnce, at least
	// 1, hid it before the executor configs).
	r := Config{Executor: load.NameRampingVUs, Stages: Stages{{Duration: time.Second, Target: 2}}}
	if _, err := r.Split(load.Segment{Index: 2, Count: 3}); err == nil || !strings.Contains(err.Error(), "gets no VUs") {
		t.Errorf("ramping-vus to 2 over 3 agents: %v", err)
	}
	if _, err := r.Split(load.Segment{Index: 1, Count: 2}); err != nil {
		t.Errorf("ramping-vus to 2 over 2 agents: %v", err)
	}
	o := Config{Scenario: "client-credentials", Executor: load.NameRampingArrivalRate, VUs: 2, MaxVUs: 30, StartRate: 3,
		Stages: Stages{{Duration: time.Second, Target: 90}}}
	s, err := o.Split(load.Segment{Index: 2, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.StartRate != 1 || s.Stages[0].Target != 30 || s.VUs != 1 || s.MaxVUs != 10 || o.Stages[0].Target != 90 {
		t.Errorf("split %+v (original stages %v)", s, o.Stages)
	}
}

func TestAgentExecutor(t *testing.T) {
	whole := Config{Scenario: "client-credentials", Executor: load.NameConstantArrivalRate, Rate: 300, VUs: 30, Duration: time.Second}
	whole.ApplyDefaults()
	seg := load.Segment{Index: 1, Count: 3}
	share, err := whole.Split(seg)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := share.AgentExecutor(whole, seg).(load.ConstantArrivalRate)
	if !ok || e.Rate != 300 || e.Segment != seg || e.PreAllocatedVUs != 10 {
		t.Fatalf("agent executor %+v: want the whole rate strided, 10 VUs", e)
	}
	rw := Config{Scenario: "client-credentials", Executor: load.NameRampingArrivalRate, StartRate: 30, VUs: 30, MaxVUs: 90,
		Stages: Stages{{Duration: time.Second, Target: 90}}}
	rw.ApplyDefaults()
	rs, err := rw.Split(seg)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := rs.AgentExecutor(rw, seg).(load.RampingArrivalRate)
	if !ok || r.StartRate != 30 || r.Stages[0].Target != 90 || r.Segment != seg || r.MaxVUs != 30 {
		t.Fatalf("ramping agent executor %+v", r)
	}
	c := Config{Scenario: "password-grant", Executor: load.NameConstantVUs, VUs: 9, Duration: time.Second}
	c.ApplyDefaults()
	cs, _ := c.Split(seg)
	if v, ok := cs.AgentExecutor(c, seg).(load.ConstantVUs); !ok || v.VUs != 3 {
		t.Fatalf("closed model: %+v", v)
	}
}
