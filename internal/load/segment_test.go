package load

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

func TestSegmentRangeCoversDisjoint(t *testing.T) {
	for n := 1; n <= 13; n++ {
		for total := 0; total <= 40; total++ {
			next := 0
			sum := 0
			for i := range n {
				s := Segment{Index: i, Count: n}
				lo, hi := s.Range(total)
				if lo != next {
					t.Fatalf("n=%d total=%d agent %d: starts at %d, want %d (gap or overlap)", n, total, i, lo, next)
				}
				want := total / n
				if i < total%n {
					want++ // the remainder goes to the first agents
				}
				if hi-lo != want || s.Share(total) != want {
					t.Fatalf("n=%d total=%d agent %d: %d items, want %d", n, total, i, hi-lo, want)
				}
				next, sum = hi, sum+hi-lo
			}
			if next != total || sum != total {
				t.Fatalf("n=%d total=%d: blocks end at %d, cover %d", n, total, next, sum)
			}
		}
	}
}

func TestSegmentShareRate(t *testing.T) {
	var sum float64
	for i := range 3 {
		sum += Segment{Index: i, Count: 3}.ShareRate(100)
	}
	if sum < 99.999999 || sum > 100.000001 {
		t.Fatalf("shares of 100/s add up to %v", sum)
	}
	if r := (Segment{}).ShareRate(7); r != 7 {
		t.Fatalf("whole run's rate %v, want 7", r)
	}
}

func TestParseSegment(t *testing.T) {
	good := map[string]Segment{"0/3": {0, 3}, "2/3": {2, 3}, "0/1": {0, 1}}
	for in, want := range good {
		got, err := ParseSegment(in)
		if err != nil || got != want {
			t.Errorf("ParseSegment(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"3/3", "1/0", "-1/3", "0/-2", "a/3", "1", "", "1/2/3", "0/10001"} {
		if _, err := ParseSegment(in); err == nil {
			t.Errorf("ParseSegment(%q): no error", in)
		}
	}
}

func FuzzParseSegment(f *testing.F) {
	for _, s := range []string{"0/3", "3/3", "1/0", "x", "0/10000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := ParseSegment(v)
		if err != nil {
			return
		}
		if s.Validate() != nil || s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
			t.Fatalf("ParseSegment(%q) accepted %+v", v, s)
		}
		if s.String() == "" {
			t.Fatalf("%+v prints empty", s)
		}
	})
}

func TestWithStartAt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Users are created at once; the run's clock waits for the start
		// time, so agents that finish their set-up apart start together.
		at := time.Now().Add(5 * time.Second)
		sc := &fakeScenario{iterate: busy(100 * time.Millisecond)}
		e := ConstantVUs{VUs: 2, Duration: time.Second}
		s, err := e.Run(t.Context(), sc, NewRecorder(WithStartAt(at)))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Start.Equal(at) {
			t.Fatalf("start %v, want the start time %v", s.Start, at)
		}
		if s.Iterations != 20 {
			t.Fatalf("%d iterations, want 20", s.Iterations)
		}
	})
}

func TestWithStartAtCancelled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		e := ConstantVUs{VUs: 1, Duration: time.Second}
		_, err := e.Run(ctx, &fakeScenario{}, NewRecorder(WithStartAt(time.Now().Add(time.Hour))))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's deadline", err)
		}
	})
}

// TestStridedUnion: the agents' strided schedules together are exactly
// the full schedule, arrival for arrival, for constant and ramping rates
// and agent counts that do and do not divide the arrivals.
func TestStridedUnion(t *testing.T) {
	scheds := []Schedule{
		Constant{Rate: 500, Duration: 20 * time.Second},
		Constant{Rate: 7, Duration: 3 * time.Second},
		Ramp{Start: 1, Stages: []Stage{{Target: 50, Duration: 5 * time.Second}, {Target: 50, Duration: 2 * time.Second}, {Target: 0, Duration: 3 * time.Second}}},
	}
	for _, full := range scheds {
		var want []time.Duration
		for i := uint64(0); ; i++ {
			off, ok := full.At(i)
			if !ok {
				break
			}
			want = append(want, off)
		}
		for n := 1; n <= 4; n++ {
			got := make([]time.Duration, len(want))
			seen := 0
			for a := range n {
				s := stride(full, Segment{Index: a, Count: n})
				for k := uint64(0); ; k++ {
					off, ok := s.At(k)
					if !ok {
						break
					}
					j := a + int(k)*n
					if j >= len(want) || got[j] != 0 && j != 0 {
						t.Fatalf("%v over %d agents: agent %d's arrival %d is arrival %d of the full schedule, beyond or twice", full, n, a, k, j)
					}
					got[j] = off
					seen++
				}
			}
			if seen != len(want) {
				t.Fatalf("%v over %d agents: %d arrivals, want %d", full, n, seen, len(want))
			}
			for j := range want {
				if got[j] != want[j] {
					t.Fatalf("%v over %d agents: arrival %d at %v, want %v", full, n, j, got[j], want[j])
				}
			}
		}
	}
	if off, ok := (Strided{S: Constant{Rate: 1}, Seg: Segment{Index: 1, Count: 2}}).At(math.MaxUint64); ok {
		t.Errorf("arrival past the end of uint64 at %v", off)
	}
}

// TestSplitOpenRun: three agents at 1/3 each (strided) make the arrivals
// one process at the full rate makes.
func TestSplitOpenRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		full := ConstantArrivalRate{Rate: 500, Duration: 2 * time.Second, PreAllocatedVUs: 10, MaxVUs: 50, GracefulStop: time.Second}
		one, err := full.Run(t.Context(), &fakeScenario{iterate: busy(10 * time.Millisecond)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for i := range 3 {
			e := full
			e.Segment = Segment{Index: i, Count: 3}
			s, err := e.Run(t.Context(), &fakeScenario{iterate: busy(10 * time.Millisecond)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			sum += s.Iterations
		}
		if one.Iterations != 1000 || sum != one.Iterations {
			t.Fatalf("3 agents made %d iterations, one process %d (want 1000)", sum, one.Iterations)
		}
		if err := (ConstantArrivalRate{Rate: 1, Duration: time.Second, PreAllocatedVUs: 1, Segment: Segment{Index: 3, Count: 3}}).Validate(); err == nil {
			t.Error("segment 3/3 accepted")
		}
	})
}
