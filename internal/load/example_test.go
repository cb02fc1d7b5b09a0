package load_test

import (
	"fmt"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

func ExampleRamp() {
	// From 0 to 10 arrivals per second over 10 s, then 10 s at 10/s.
	r := load.Ramp{Start: 0, Stages: []load.Stage{{Target: 10, Duration: 10 * time.Second}, {Target: 10, Duration: 10 * time.Second}}}
	for _, i := range []uint64{0, 2, 8, 50, 149, 150} {
		off, ok := r.At(i)
		fmt.Println(i, off, ok)
	}
	fmt.Println(r)
	// Output:
	// 0 0s true
	// 2 2s true
	// 8 4s true
	// 50 10s true
	// 149 19.9s true
	// 150 0s false
	// Ramp{from 0/s: 10/s over 10s, 10/s over 10s}
}

func ExampleParseThreshold() {
	s := results.Stats{Duration: 10 * time.Second, Ops: []results.OpStats{
		{Name: results.IterationOp, Count: 1000, Errors: 3, Rate: 100},
		{Name: "token", Count: 1000, Rate: 100, Latency: results.Dist{P95: 80 * time.Millisecond}},
	}}
	var ths []results.Threshold
	for _, expr := range []string{"token:p95<100ms", "errors<0.1%", "rate>=100"} {
		th, err := results.ParseThreshold(expr)
		if err != nil {
			panic(err)
		}
		ths = append(ths, th)
	}
	results, err := s.Check(ths)
	for _, r := range results {
		fmt.Println(r)
	}
	fmt.Println(err)
	// Output:
	// ✓ token:p95<100ms (actual 80ms)
	// ✗ errors<0.1% (actual 0.3%)
	// ✓ rate>=100 (actual 100)
	// thresholds failed: errors<0.1%
}
