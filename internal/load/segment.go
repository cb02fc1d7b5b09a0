package load

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxSegments bounds the number of agents a run is split over.
const MaxSegments = 10_000

// Segment is agent Index (0-based) of Count agents that run one load
// together, each its share of the work. The zero Segment is the whole run.
//
// Shares are pure functions of (Index, Count), so agents that never talk
// to each other agree on who does what: integer totals (VUs, users) are
// split into Count blocks whose sizes differ by at most one, the first
// total%Count agents taking one more; rates are divided evenly.
type Segment struct {
	Index, Count int
}

// Whole reports whether s is the whole run (no split).
func (s Segment) Whole() bool { return s.Count <= 1 }

// String is "i/n", or "" for the zero Segment.
func (s Segment) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Validate reports a Segment that names no agent.
func (s Segment) Validate() error {
	switch {
	case s.Count == 0 && s.Index == 0:
		return nil
	case s.Count < 1 || s.Count > MaxSegments:
		return fmt.Errorf("segment %d/%d: the number of agents must be between 1 and %d", s.Index, s.Count, MaxSegments)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("segment %d/%d: the index must be between 0 and %d", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// ParseSegment reads "i/n": agent i (0-based) of n.
func ParseSegment(v string) (Segment, error) {
	a, b, ok := strings.Cut(v, "/")
	if !ok {
		return Segment{}, fmt.Errorf("segment %q: want INDEX/AGENTS, e.g. 0/3", v)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err := errors.Join(err1, err2); err != nil {
		return Segment{}, fmt.Errorf("segment %q: want INDEX/AGENTS, e.g. 0/3", v)
	}
	s := Segment{Index: i, Count: n}
	if n == 0 {
		return Segment{}, fmt.Errorf("segment %q: the number of agents must be between 1 and %d", v, MaxSegments)
	}
	return s, s.Validate()
}

// Range returns the block [lo, hi) of 0..total-1 that s owns. The blocks
// of agents 0..Count-1 are disjoint, in order, and cover 0..total-1; their
// sizes differ by at most one, the first total%Count being the larger.
func (s Segment) Range(total int) (lo, hi int) {
	if s.Whole() || total <= 0 {
		return 0, max(total, 0)
	}
	q, r := total/s.Count, total%s.Count
	lo = s.Index*q + min(s.Index, r)
	hi = lo + q
	if s.Index < r {
		hi++
	}
	return lo, hi
}

// Share is s's part of an integer total: the size of Range(total).
func (s Segment) Share(total int) int {
	lo, hi := s.Range(total)
	return hi - lo
}

// ShareRate is s's part of a rate: rate/Count.
func (s Segment) ShareRate(rate float64) float64 {
	if s.Whole() {
		return rate
	}
	return rate / float64(s.Count)
}

// Strided is the part of schedule S that agent Seg of a split open-model
// run makes: arrivals Seg.Index, Seg.Index+Count, Seg.Index+2·Count… of
// S. The agents' arrivals together are exactly S's, each at the time S
// gives it, so N agents make the arrivals of one process at the full rate
// (not N schedules at 1/N of it, each rounded on its own).
type Strided struct {
	S   Schedule
	Seg Segment
}

var _ Schedule = Strided{}

// At implements Schedule.
func (s Strided) At(i uint64) (time.Duration, bool) {
	if s.Seg.Whole() {
		return s.S.At(i)
	}
	n := uint64(s.Seg.Count)
	if i > (math.MaxUint64-uint64(s.Seg.Index))/n {
		return 0, false
	}
	return s.S.At(uint64(s.Seg.Index) + i*n)
}

func (s Strided) String() string { return fmt.Sprintf("%v, arrivals %s", s.S, s.Seg) }

// stride returns s as agent seg makes it.
func stride(s Schedule, seg Segment) Schedule {
	if seg.Whole() {
		return s
	}
	return Strided{S: s, Seg: seg}
}
