package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestConstantAt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		sched Constant
		i     uint64
		off   time.Duration
		ok    bool
	}{
		{"first", Constant{200, 5 * time.Second}, 0, 0, true},
		{"second", Constant{200, 5 * time.Second}, 1, 5 * time.Millisecond, true},
		{"last", Constant{200, 5 * time.Second}, 999, 4995 * time.Millisecond, true},
		{"end", Constant{200, 5 * time.Second}, 1000, 0, false},
		{"fractional", Constant{3, time.Second}, 1, 333333333 * time.Nanosecond, true},
		{"slow", Constant{0.5, time.Minute}, 2, 4 * time.Second, true},
		{"unbounded", Constant{10, 0}, 1_000_000, 100_000 * time.Second, true},
		{"zero rate", Constant{0, time.Second}, 0, 0, false},
		{"negative rate", Constant{-1, time.Second}, 0, 0, false},
		{"NaN rate", Constant{math.NaN(), time.Second}, 0, 0, false},
		{"overflow", Constant{1e-9, 0}, 1 << 40, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, ok := tt.sched.At(tt.i)
			if off != tt.off || ok != tt.ok {
				t.Errorf("%v.At(%d) = %v, %v; want %v, %v", tt.sched, tt.i, off, ok, tt.off, tt.ok)
			}
		})
	}
}

func TestRampAt(t *testing.T) {
	t.Parallel()
	up := Ramp{Start: 0, Stages: []Stage{{10, 10 * time.Second}}}             // N(t) = t²/2
	down := Ramp{Start: 10, Stages: []Stage{{0, 10 * time.Second}}}           // N(t) = 10t − t²/2
	hold := Ramp{Start: 0, Stages: []Stage{{100, 0}, {100, 2 * time.Second}}} // jump, then 100/s
	multi := Ramp{Start: 0, Stages: []Stage{
		{10, 2 * time.Second}, // 10 arrivals
		{10, 1 * time.Second}, // 10 arrivals
		{0, 2 * time.Second},  // 10 arrivals
	}}
	tests := []struct {
		name  string
		sched Ramp
		i     uint64
		off   time.Duration
		ok    bool
	}{
		{"up first", up, 0, 0, true},
		{"up 2", up, 2, 2 * time.Second, true},
		{"up 8", up, 8, 4 * time.Second, true},
		{"up 32", up, 32, 8 * time.Second, true},
		{"up end", up, 50, 0, false},
		{"down first", down, 0, 0, true},
		{"down 18", down, 18, 2 * time.Second, true}, // t² − 20t + 36 = 0
		{"down 32", down, 32, 4 * time.Second, true},
		{"down end", down, 50, 0, false},
		{"jump first", hold, 0, 0, true},
		{"jump 150", hold, 150, 1500 * time.Millisecond, true},
		{"jump end", hold, 200, 0, false},
		{"multi stage 1", multi, 5, 1414213562 * time.Nanosecond, true}, // √2 s
		{"multi stage 2", multi, 10, 2 * time.Second, true},
		{"multi stage 2b", multi, 15, 2500 * time.Millisecond, true},
		{"multi stage 3", multi, 20, 3 * time.Second, true},
		{"multi stage 3b", multi, 29, 3*time.Second + 1367544468*time.Nanosecond, true}, // 10τ − 2.5τ² = 9
		{"multi end", multi, 30, 0, false},
		{"no stages", Ramp{Start: 5}, 0, 0, false},
		{"all zero", Ramp{Stages: []Stage{{0, time.Minute}}}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, ok := tt.sched.At(tt.i)
			if ok != tt.ok || absDur(off-tt.off) > time.Microsecond {
				t.Errorf("%v.At(%d) = %v, %v; want %v, %v", tt.sched, tt.i, off, ok, tt.off, tt.ok)
			}
		})
	}
}

func TestRampEqualsConstant(t *testing.T) {
	t.Parallel()
	c := Constant{Rate: 37.5, Duration: 20 * time.Second}
	r := Ramp{Start: 37.5, Stages: []Stage{{37.5, 20 * time.Second}}}
	for i := range uint64(800) {
		co, cok := c.At(i)
		ro, rok := r.At(i)
		if cok != rok || absDur(co-ro) > time.Nanosecond {
			t.Fatalf("At(%d): constant %v,%v ramp %v,%v", i, co, cok, ro, rok)
		}
	}
}

// TestRampAgainstIntegration checks the closed form against a brute-force
// numeric integration of the rate curve on random ramps.
func TestRampAgainstIntegration(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 20 {
		r := Ramp{Start: float64(rng.IntN(50))}
		for range 1 + rng.IntN(4) {
			r.Stages = append(r.Stages, Stage{
				Target:   float64(rng.IntN(200)),
				Duration: time.Duration(rng.IntN(5000)) * time.Millisecond,
			})
		}
		want := integrate(r, 100*time.Microsecond)
		var got []time.Duration
		for i := uint64(0); ; i++ {
			off, ok := r.At(i)
			if !ok {
				break
			}
			got = append(got, off)
		}
		// The integration may disagree about an arrival exactly at the end.
		if d := len(got) - len(want); d < -1 || d > 1 {
			t.Fatalf("ramp %d %v: %d arrivals, integration %d", n, r, len(got), len(want))
		}
		for i := range min(len(got), len(want)) {
			if absDur(got[i]-want[i]) > 5*time.Microsecond {
				t.Fatalf("ramp %d %v: arrival %d at %v, integration %v", n, r, i, got[i], want[i])
			}
		}
		if !slices.IsSorted(got) {
			t.Fatalf("ramp %d %v: arrivals out of order", n, r)
		}
	}
}

// integrate finds the arrival times of r by stepping through time in steps
// of dt, accumulating the trapezoid area under the rate curve (exact for a
// linear rate) and interpolating the crossing of each integer.
func integrate(r Ramp, dt time.Duration) []time.Duration {
	rate := func(t float64) float64 { // rate at t seconds
		from, t0 := r.Start, 0.0
		for _, s := range r.Stages {
			d := s.Duration.Seconds()
			if t < t0+d {
				return from + (s.Target-from)*(t-t0)/d
			}
			t0 += d
			from = s.Target
		}
		return from
	}
	end := r.Duration().Seconds()
	step := dt.Seconds()
	var out []time.Duration
	var area float64
	next := 0.0
	for t := 0.0; t < end; t += step {
		h := min(step, end-t)
		a := (rate(t) + rate(t+h)) / 2 * h
		for next < area+a {
			// Linear interpolation inside the step.
			frac := (next - area) / a
			out = append(out, time.Duration(math.Round((t+frac*h)*1e9)))
			next++
		}
		area += a
	}
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func TestScheduleString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    interface{ String() string }
		want string
	}{
		{Constant{200, 5 * time.Second}, "Constant{200/s for 5s}"},
		{Constant{0.5, 0}, "Constant{0.5/s}"},
		{Ramp{Start: 0, Stages: []Stage{{100, 10 * time.Second}, {100, time.Minute}}}, "Ramp{from 0/s: 100/s over 10s, 100/s over 1m0s}"},
		{Ramp{Start: 5}, "Ramp{from 5/s}"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestVUSteps(t *testing.T) {
	t.Parallel()
	s := time.Second
	tests := []struct {
		name   string
		start  int
		stages []VUStage
		want   []vuStep
	}{
		{"hold", 3, []VUStage{{3, s}}, []vuStep{{0, 3}}},
		{"up", 0, []VUStage{{4, 4 * s}}, []vuStep{{0, 0}, {500 * time.Millisecond, 1}, {1500 * time.Millisecond, 2}, {2500 * time.Millisecond, 3}, {3500 * time.Millisecond, 4}}},
		{"down", 2, []VUStage{{0, 2 * s}}, []vuStep{{0, 2}, {500 * time.Millisecond, 1}, {1500 * time.Millisecond, 0}}},
		{"jump", 1, []VUStage{{1, s}, {5, 0}, {5, s}}, []vuStep{{0, 1}, {s, 5}}},
		{"up hold down", 0, []VUStage{{2, 2 * s}, {2, s}, {0, s}}, []vuStep{{0, 0}, {500 * time.Millisecond, 1}, {1500 * time.Millisecond, 2}, {3*s + 250*time.Millisecond, 1}, {3*s + 750*time.Millisecond, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := vuSteps(tt.start, tt.stages); !slices.Equal(got, tt.want) {
				t.Errorf("vuSteps = %v, want %v", got, tt.want)
			}
		})
	}
}

func (s vuStep) String() string { return fmt.Sprintf("%v:%d", s.At, s.VUs) }
