package load

import (
	"context"
	"errors"
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
