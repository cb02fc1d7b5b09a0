package load

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// noop records one operation and returns.
func noop(_ context.Context, _ int, _ int64, rec OpRecorder) error {
	rec.Record("op", time.Now(), nil)
	return nil
}

// BenchmarkEngineClosed measures the engine's cost per iteration of a no-op
// scenario that records one operation: one VU, closed model.
func BenchmarkEngineClosed(b *testing.B) {
	b.ReportAllocs()
	sc := &fakeScenario{iterate: noop}
	s, err := PerVUIterations{VUs: 1, Iterations: b.N, MaxDuration: time.Hour}.Run(b.Context(), sc, nil)
	if err != nil {
		b.Fatal(err)
	}
	if s.Iterations != int64(b.N) {
		b.Fatalf("%d iterations, want %d", s.Iterations, b.N)
	}
}

// BenchmarkEngineOpen measures the scheduler loop's cost per arrival: the
// schedule asks for far more than the VUs can take, so the loop runs flat
// out handing arrivals to free VUs and dropping the rest.
func BenchmarkEngineOpen(b *testing.B) {
	b.ReportAllocs()
	sc := &fakeScenario{iterate: noop}
	const rate = 1e8
	vus := 2 * runtime.GOMAXPROCS(0)
	e := ConstantArrivalRate{
		Rate:            rate,
		Duration:        time.Duration(float64(b.N) / rate * float64(time.Second)),
		PreAllocatedVUs: vus,
		GracefulStop:    time.Second,
	}
	if e.Duration <= 0 {
		e.Duration = 1
	}
	s, err := e.Run(b.Context(), sc, nil)
	if err != nil {
		b.Fatal(err)
	}
	if n := s.Iterations + s.Dropped; n > 0 {
		b.ReportMetric(float64(s.Dropped)/float64(n), "dropped/arrival")
	}
	if s.Iterations > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(s.Iterations), "ns/iteration")
	}
}

// BenchmarkRecord measures OpRecorder.Record, one VU per goroutine.
func BenchmarkRecord(b *testing.B) {
	b.ReportAllocs()
	rec := NewRecorder()
	b.RunParallel(func(pb *testing.PB) {
		v := rec.newVU(context.Background())
		start := time.Now()
		n := 0
		for pb.Next() {
			v.Record("op", start, nil)
			if n++; n == 1<<16 { // stand in for the merge emptying the buffer
				v.mu.Lock()
				v.buf = v.buf[:0]
				v.mu.Unlock()
				n = 0
			}
		}
	})
}
