package scenario

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// mix runs other scenarios in proportion to their weights: each iteration
// of a mix VU is one iteration of a part drawn at random by weight, run by
// the VU's own user of that part (created with the mix VU).
type mix struct {
	env   *Env
	parts []mixPart // by name
	cum   []int     // cumulative weights
}

type mixPart struct {
	name   string
	weight int
	sc     load.Scenario
}

var _ load.Scenario = (*mix)(nil)

func newMix(env *Env) (load.Scenario, error) {
	m, err := buildMix(env)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// MaxMixWeight bounds one weight of a mix, so that the weights' sum
// cannot overflow.
const MaxMixWeight = 1_000_000

// ParseMix reads weights written as name=weight[,name=weight…].
func ParseMix(s string) (map[string]int, error) {
	m := map[string]int{}
	for part := range strings.SplitSeq(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(part), "=")
		name, w = strings.TrimSpace(name), strings.TrimSpace(w)
		if !ok || name == "" {
			return nil, fmt.Errorf("mix %q: want scenario=weight[,scenario=weight…]", part)
		}
		n, err := strconv.Atoi(w)
		if err != nil || n < 0 || n > MaxMixWeight {
			return nil, fmt.Errorf("mix %q: weight %q: want a whole number from 0 to %d", part, w, MaxMixWeight)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("mix %q: %s given twice", part, name)
		}
		m[name] = n
	}
	return m, nil
}

// MixString writes weights as ParseMix reads them, by name.
func MixString(w map[string]int) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, fmt.Sprintf("%s=%d", name, w[name]))
	}
	return strings.Join(parts, ",")
}

// checkMix reports every problem with mix weights.
func checkMix(weights map[string]int) error {
	reg := registry()
	var errs []error
	total := 0
	for _, name := range slices.Sorted(maps.Keys(weights)) {
		w := weights[name]
		switch _, ok := reg[name]; {
		case name == results.ScenarioMix:
			errs = append(errs, errors.New("a mix cannot contain a mix"))
		case !ok:
			errs = append(errs, fmt.Errorf("%w %q", ErrUnknown, name))
		case w < 0 || w > MaxMixWeight:
			errs = append(errs, fmt.Errorf("weight of %s = %d: must be between 0 and %d", name, w, MaxMixWeight))
		default:
			total += w
		}
	}
	if len(errs) == 0 && total == 0 {
		errs = append(errs, errors.New("the weights add up to zero"))
	}
	return errors.Join(errs...)
}

func buildMix(env *Env) (*mix, error) {
	weights := env.Mix
	if len(weights) == 0 {
		weights = DefaultMix()
	}
	if err := checkMix(weights); err != nil {
		return nil, err
	}
	reg := registry()
	m := &mix{env: env}
	var errs []error
	total := 0
	for _, name := range slices.Sorted(maps.Keys(weights)) {
		w := weights[name]
		if w == 0 {
			continue
		}
		if err := env.validate(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		sc, err := reg[name].build(env)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		total += w
		m.parts = append(m.parts, mixPart{name: name, weight: w, sc: sc})
		m.cum = append(m.cum, total)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *mix) Name() string { return results.ScenarioMix }

// prepare prepares the parts that have work to do before the clock
// starts (a mix VU has a user of every part).
func (m *mix) prepare(ctx context.Context, vus int) error {
	for _, p := range m.parts {
		if pr, ok := p.sc.(preparer); ok {
			if err := pr.prepare(ctx, vus); err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
		}
	}
	return nil
}

// finish finishes the parts that have work to do when the run ends.
func (m *mix) finish(ctx context.Context) error {
	var errs []error
	for _, p := range m.parts {
		if f, ok := p.sc.(finisher); ok {
			errs = append(errs, f.finish(ctx))
		}
	}
	return errors.Join(errs...)
}

// Weights returns the parts' weights.
func (m *mix) Weights() map[string]int {
	w := map[string]int{}
	for _, p := range m.parts {
		w[p.name] = p.weight
	}
	return w
}

func (m *mix) NewUser(ctx context.Context, id int) (load.User, error) {
	u := &mixUser{m: m, rng: m.env.rng(results.ScenarioMix, id), users: make([]load.User, len(m.parts))}
	for i, p := range m.parts {
		pu, err := p.sc.NewUser(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		u.users[i] = pu
	}
	return u, nil
}

type mixUser struct {
	m     *mix
	rng   *rand.Rand
	users []load.User
}

func (u *mixUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	i := pickWeighted(u.m.cum, u.rng.IntN(u.m.cum[len(u.m.cum)-1]))
	return u.users[i].Iterate(ctx, rec)
}

// pickWeighted returns the part whose share of the cumulative weights cum
// holds x, 0 ≤ x < cum[len(cum)-1].
func pickWeighted(cum []int, x int) int {
	return sort.SearchInts(cum, x+1)
}
