package results

import (
	"bytes"
	"math"
	"testing"
)

func TestRepeats(t *testing.T) {
	t.Parallel()
	found := func(rate float64) *CapacityResult {
		return &CapacityResult{Scenario: "jwks", Found: true, MaxRate: rate}
	}
	none := &CapacityResult{Scenario: "jwks"}
	measured := func(rate, cpu, cores float64) *CapacityResult {
		r := found(rate)
		r.CPUMsPerOp, r.ServerCores = cpu, cores
		return r
	}
	booted := func(r *CapacityResult, s float64) *CapacityResult {
		r.BootSeconds = s
		return r
	}
	for _, tc := range []struct {
		name      string
		in        []*CapacityResult
		mean, pct float64
		min, max  float64
		text      string
	}{
		{"three", []*CapacityResult{found(1150), found(1100), found(1100)}, 3350.0 / 3, 100 * 50 / (3350.0 / 3), 1100, 1150,
			"repeats: 1,150 / 1,100 / 1,100/s, mean 1,117/s, spread (max−min)/mean 4.5 %, each within 3.0 % of the mean\n"},
		{"same", []*CapacityResult{found(40), found(40)}, 40, 0, 40, 40,
			"repeats: 40 / 40/s, mean 40/s, spread (max−min)/mean 0.0 %, each within 0.0 % of the mean\n"},
		{"one not found", []*CapacityResult{found(200), none, found(100)}, 150, 100 * 100 / 150.0, 100, 200,
			"repeats: 200 / none / 100/s, mean 150/s, spread (max−min)/mean 66.7 %, each within 33.3 % of the mean (over the 2 that found a rate)\n"},
		{"one found", []*CapacityResult{none, found(12.5)}, 12.5, 0, 12.5, 12.5,
			"repeats: none / 12.5/s, only one found a rate (12.5/s): no spread\n"},
		{"server's cost", []*CapacityResult{measured(783, 2.14, 1.67), measured(836, 2.04, 1.68), measured(962, 1.77, 1.70)}, 860.333333333333333, 100 * 179 / 860.333333333333333, 783, 962,
			"repeats: 783 / 836 / 962/s, mean 860/s, spread (max−min)/mean 20.8 %, each within 11.8 % of the mean\n" +
				"server at the answers: 2.14 / 2.04 / 1.77 CPU-ms per operation (spread 18.7 %), 1.67 / 1.68 / 1.70 cores busy (spread 1.8 %): " +
				"the answers moved with the server's cost per operation (a JVM still warming up, or another JVM), not with the cores the search left it\n"},
		{"the search's", []*CapacityResult{measured(900, 2, 1.8), measured(1000, 2, 2), none},
			950, 100 * 100 / 950.0, 900, 1000,
			"repeats: 900 / 1,000 / none/s, mean 950/s, spread (max−min)/mean 10.5 %, each within 5.3 % of the mean (over the 2 that found a rate)\n" +
				"server at the answers: 2.00 / 2.00 CPU-ms per operation (spread 0.0 %), 1.80 / 2.00 cores busy (spread 10.5 %): " +
				"the answers moved with how busy the server was where each search stopped, not with its cost per operation (near its limit a step tips over at loads that differ from run to run)\n"},
		{"both", []*CapacityResult{measured(900, 2, 1.8), measured(1000, 1.8, 2)},
			950, 100 * 100 / 950.0, 900, 1000,
			"repeats: 900 / 1,000/s, mean 950/s, spread (max−min)/mean 10.5 %, each within 5.3 % of the mean\n" +
				"server at the answers: 2.00 / 1.80 CPU-ms per operation (spread 10.5 %), 1.80 / 2.00 cores busy (spread 10.5 %)\n"},
		{"restarted", []*CapacityResult{booted(measured(30, 35, 1.1), 15.2), booted(measured(16, 64, 1.0), 14.8)},
			23, 100 * 14 / 23.0, 16, 30,
			"repeats, each on a freshly restarted Keycloak: 30 / 16/s, mean 23/s, spread (max−min)/mean 60.9 %, each within 30.4 % of the mean\n" +
				"server at the answers: 35.00 / 64.00 CPU-ms per operation (spread 58.6 %), 1.10 / 1.00 cores busy (spread 9.5 %): " +
				"the answers moved with the server's cost per operation, which differs from one boot of the JVM to the next\n"},
		{"one restarted", []*CapacityResult{booted(found(40), 15), found(40)}, 40, 0, 40, 40,
			"repeats: 40 / 40/s, mean 40/s, spread (max−min)/mean 0.0 %, each within 0.0 % of the mean\n"},
		{"none found", []*CapacityResult{none, none}, 0, 0, 0, 0,
			"repeats: none / none/s, no rate met the SLOs\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := NewCapacityRepeats(tc.in)
			if len(r.Repeats) != len(tc.in) || r.Scenario != "jwks" || r.Kind != "capacity-repeats" {
				t.Fatalf("repeats %+v", r)
			}
			for i, x := range r.Repeats {
				if x.Repeat != i+1 || x.Found != tc.in[i].Found || x.MaxRate != tc.in[i].MaxRate || x.CPUMsPerOp != tc.in[i].CPUMsPerOp || x.BootSeconds != tc.in[i].BootSeconds {
					t.Errorf("repeat %d: %+v", i, x)
				}
			}
			if math.Abs(r.Mean-tc.mean) > 1e-9 || math.Abs(r.SpreadPct-tc.pct) > 1e-9 || r.Min != tc.min || r.Max != tc.max {
				t.Errorf("mean %g spread %g%% min %g max %g; want %g %g%% %g %g", r.Mean, r.SpreadPct, r.Min, r.Max, tc.mean, tc.pct, tc.min, tc.max)
			}
			if want := tc.name == "restarted"; r.Restarted != want {
				t.Errorf("restarted %v, want %v", r.Restarted, want)
			}
			var b bytes.Buffer
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.text {
				t.Errorf("text %q\nwant %q", b.String(), tc.text)
			}
		})
	}
}
