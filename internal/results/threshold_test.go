package results

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseThreshold(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		want  Threshold
		canon string
	}{
		{"p95<500ms", Threshold{"", "p95", "<", 500}, "p95<500ms"},
		{"p99<=1s", Threshold{"", "p99", "<=", 1000}, "p99<=1000ms"},
		{"errors<1%", Threshold{"", "errors", "<", 1}, "errors<1%"},
		{"errors < 0.5 %", Threshold{"", "errors", "<", 0.5}, "errors<0.5%"},
		{"errors<0.01", Threshold{"", "errors", "<", 1}, "errors<1%"},
		{"rate>100", Threshold{"", "rate", ">", 100}, "rate>100"},
		{"rate>=99.5/s", Threshold{"", "rate", ">=", 99.5}, "rate>=99.5"},
		{"max<2s", Threshold{"", "max", "<", 2000}, "max<2000ms"},
		{"token:p95<500ms", Threshold{"token", "p95", "<", 500}, "token:p95<500ms"},
		{" token : P95 < 250 ", Threshold{"token", "p95", "<", 250}, "token:p95<250ms"},
		{"iteration:avg<1.5s", Threshold{"", "avg", "<", 1500}, "avg<1500ms"},
		{"med<300µs", Threshold{"", "p50", "<", 0.3}, "p50<0.3ms"},
		{"mean>1ms", Threshold{"", "avg", ">", 1}, "avg>1ms"},
		{"admin/users:p99.9<1m", Threshold{"admin/users", "p99.9", "<", 60000}, "admin/users:p99.9<60000ms"},
		{"min>=0", Threshold{"", "min", ">=", 0}, "min>=0ms"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseThreshold(tt.in)
			if err != nil {
				t.Fatalf("ParseThreshold(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseThreshold(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if s := got.String(); s != tt.canon {
				t.Errorf("String() = %q, want %q", s, tt.canon)
			}
		})
	}
}

func TestParseThresholdErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", "p95", "p95 500ms", "<500ms", ":p95<1", "p97<1s", "p95<", "p95<fast", "p95<-1s",
		"errors<", "errors<x%", "errors<-1%", "rate>NaN", "rate>Inf", "rate>1e999", "tok en:p95<1",
		"p95<<1", "p95=<1", "a:b:p95<1",
		// limits no measurement can meet, or no figure can be
		"errors<200%", "errors<2", "errors<=100.5%", "p99.9<0ms", "p95<=0", "max<0s", "rate<0", "errors<0%",
	} {
		if got, err := ParseThreshold(in); err == nil {
			t.Errorf("ParseThreshold(%q) = %+v, want an error", in, got)
		}
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{
		"p95<500ms", "p99<=1s", "errors<1%", "rate>100", "max<2s", "token:p95<500ms",
		"errors<0.01", "rate>=5/s", "med<1e-3", "x:min>0.000001ms", "p99.9<1h2m3.5s",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			return
		}
		canon := th.String()
		again, err := ParseThreshold(canon)
		if err != nil {
			t.Fatalf("ParseThreshold(%q) ok, but its String %q fails: %v", s, canon, err)
		}
		if again != th {
			t.Fatalf("round trip of %q via %q: %+v != %+v", s, canon, again, th)
		}
		if th.Unit() == "" || th.Evaluate(Stats{}).Pass {
			t.Fatalf("%q passes without data", s)
		}
	})
}

func thresholdStats() Stats {
	return Stats{
		Duration: 10 * time.Second,
		Ops: []OpStats{
			{Name: IterationOp, Count: 1000, OK: 980, Errors: 20, Rate: 100,
				Latency: Dist{Min: time.Millisecond, Mean: 50 * time.Millisecond, P50: 40 * time.Millisecond, P90: 90 * time.Millisecond,
					P95: 120 * time.Millisecond, P99: 400 * time.Millisecond, P999: 900 * time.Millisecond, Max: 1500 * time.Millisecond}},
			{Name: "token", Count: 1000, OK: 1000, Rate: 100,
				Latency: Dist{P95: 30 * time.Millisecond, Max: 80 * time.Millisecond}},
			{Name: "idle"},
		},
	}
}

func TestThresholdEvaluate(t *testing.T) {
	t.Parallel()
	s := thresholdStats()
	tests := []struct {
		expr   string
		pass   bool
		actual float64
	}{
		{"p95<500ms", true, 120},
		{"p95<120ms", false, 120},
		{"p95<=120ms", true, 120},
		{"p99<=300ms", false, 400},
		{"p99.9<1s", true, 900},
		{"max<2s", true, 1500},
		{"max<1s", false, 1500},
		{"min>=1ms", true, 1},
		{"avg<50ms", false, 50},
		{"med<41ms", true, 40},
		{"p90<0.1s", true, 90},
		{"errors<1%", false, 2},
		{"errors<=2%", true, 2},
		{"rate>100", false, 100},
		{"rate>=100", true, 100},
		{"token:p95<50ms", true, 30},
		{"token:errors<0.001", true, 0},
		{"token:max>100ms", false, 80},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			th, err := ParseThreshold(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			r := th.Evaluate(s)
			if r.Pass != tt.pass || r.Actual != tt.actual || r.NoData {
				t.Errorf("Evaluate = %+v, want pass=%v actual=%v", r, tt.pass, tt.actual)
			}
		})
	}
	for _, expr := range []string{"idle:p95<1s", "missing:errors<1%", "missing:rate>=0"} {
		th, _ := ParseThreshold(expr)
		if r := th.Evaluate(s); r.Pass || !r.NoData {
			t.Errorf("%s: Evaluate = %+v, want a failure for lack of data", expr, r)
		}
	}
}

func TestStatsCheck(t *testing.T) {
	t.Parallel()
	s := thresholdStats()
	parse := func(exprs ...string) []Threshold {
		var ths []Threshold
		for _, e := range exprs {
			th, err := ParseThreshold(e)
			if err != nil {
				t.Fatal(err)
			}
			ths = append(ths, th)
		}
		return ths
	}
	res, err := s.Check(parse("p95<500ms", "token:p95<50ms"))
	if err != nil || len(res) != 2 {
		t.Fatalf("Check = %v, %v; want 2 passing results", res, err)
	}
	res, err = s.Check(parse("p95<500ms", "errors<1%", "idle:max<1s"))
	if !errors.Is(err, ErrThresholdsFailed) {
		t.Fatalf("Check error = %v, want ErrThresholdsFailed", err)
	}
	if !strings.Contains(err.Error(), "errors<1%, idle:max<1000ms") {
		t.Errorf("error %q does not name the failed thresholds", err)
	}
	if len(res) != 3 || !res[0].Pass || res[1].Pass || res[2].Pass {
		t.Errorf("results = %v", res)
	}
	if got, want := res[1].String(), "✗ errors<1% (actual 2%)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := res[2].String(), "✗ idle:max<1000ms (no data)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestThresholdText(t *testing.T) {
	t.Parallel()
	var th Threshold
	if err := th.UnmarshalText([]byte("token:p95<500ms")); err != nil {
		t.Fatal(err)
	}
	b, err := th.MarshalText()
	if err != nil || string(b) != "token:p95<500ms" {
		t.Errorf("MarshalText = %q, %v", b, err)
	}
	if err := th.UnmarshalText([]byte("nonsense")); err == nil {
		t.Error("UnmarshalText(nonsense) succeeded")
	}
}
