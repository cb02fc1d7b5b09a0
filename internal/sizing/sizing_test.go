package sizing

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// workedExample is the guide's calculation example (single cluster).
func workedExample() Input {
	in := DefaultInput()
	in.LoginsPerSec = 45
	in.ClientCredentialsPerSec = 360
	in.RefreshesPerSec = 360
	in.LogoutsPerSec = 5
	in.Pods = 3
	return in
}

func mustCalculate(t *testing.T, in Input) Result {
	t.Helper()
	r, err := Calculate(in)
	if err != nil {
		t.Fatalf("Calculate(%+v): %v", in, err)
	}
	return r
}

func TestWorkedExample(t *testing.T) {
	t.Parallel()
	r := mustCalculate(t, workedExample())

	if got, want := r.CPU.TotalVCPU, 9.0; got != want {
		t.Errorf("cluster vCPU = %v, want %v", got, want)
	}
	if len(r.Sites) != 1 {
		t.Fatalf("sites = %d, want 1", len(r.Sites))
	}
	want := Pod{
		CPURequest:    3000, // 3 vCPU
		CPULimit:      7500, // 7.5 vCPU
		MemoryRequest: 1250,
		MemoryLimit:   1360,
		HeapMax:       952,
		HeapInitial:   680,
	}
	if got := r.Sites[0].Pod; got != want {
		t.Errorf("pod = %+v, want %+v", got, want)
	}
	if r.Sites[0].Pods != 3 {
		t.Errorf("pods = %d, want 3", r.Sites[0].Pods)
	}
	wantDB := Database{
		RequestsPerSec:  410,
		VCPUMin:         1.435,
		VCPUMax:         2.87,
		IdleVCPU:        0.3,
		WriteIOPS:       5740,
		ApproxVCPUMin:   1.4,
		ApproxVCPUMax:   2.8,
		ApproxWriteIOPS: 5700,
	}
	if !closeDB(r.Database, wantDB) {
		t.Errorf("database = %+v, want %+v", r.Database, wantDB)
	}
	// The guide's printed figures must be exactly these doubles, not 1.4000000000000001.
	if r.Database.ApproxVCPUMin != 1.4 || r.Database.ApproxVCPUMax != 2.8 || r.Database.ApproxWriteIOPS != 5700 {
		t.Errorf("approx database = %v–%v vCPU, %v IOPS; want exactly 1.4–2.8, 5700",
			r.Database.ApproxVCPUMin, r.Database.ApproxVCPUMax, r.Database.ApproxWriteIOPS)
	}
	wantTotals := Totals{Pods: 3, CPURequest: 9000, CPULimit: 22500, MemoryRequest: 3750, MemoryLimit: 4080}
	if r.Totals != wantTotals {
		t.Errorf("totals = %+v, want %+v", r.Totals, wantTotals)
	}
	if r.Caches.Raise || len(r.Caches.Options) != 0 {
		t.Errorf("caches = %+v, want defaults", r.Caches)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes = %q, want none", r.Notes)
	}
}

func closeDB(a, b Database) bool {
	const tol = 1e-9
	for _, p := range [][2]float64{
		{a.RequestsPerSec, b.RequestsPerSec}, {a.VCPUMin, b.VCPUMin}, {a.VCPUMax, b.VCPUMax},
		{a.IdleVCPU, b.IdleVCPU}, {a.WriteIOPS, b.WriteIOPS}, {a.ApproxVCPUMin, b.ApproxVCPUMin},
		{a.ApproxVCPUMax, b.ApproxVCPUMax}, {a.ApproxWriteIOPS, b.ApproxWriteIOPS},
	} {
		if d := p[0] - p[1]; d > tol || d < -tol {
			return false
		}
	}
	return true
}

// goldenCases are rendered to testdata/<name>.txt (WriteText) and
// testdata/<name>.yaml (WriteK8s).
func goldenCases() map[string]Input {
	two := workedExample()
	two.Sites = 2
	two.SecondSite = SecondSiteHalf
	two.ConcurrentClients = 6000

	calibrated := workedExample()
	calibrated.Rates = RatesFromCPUms(77, 6.8, 7.2, "kcbench, 2 vCPU, argon2 default")
	calibrated.Memory.RequestMiB = 900
	calibrated.Memory.Source = "measured RSS"
	calibrated.LoginsPerSec = 400
	calibrated.Pods = 4
	calibrated.HeadroomPct = 100

	return map[string]Input{
		"worked_example":              workedExample(),
		"two_sites_half_6000_clients": two,
		"calibrated":                  calibrated,
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	for name, in := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := mustCalculate(t, in)
			var txt, yaml bytes.Buffer
			if err := r.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteK8s(&yaml); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", name+".txt"), txt.Bytes())
			checkGolden(t, filepath.Join("testdata", name+".yaml"), yaml.Bytes())
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.Check(t, path, got, *update, "go test -update")
}

func TestResultJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for name, in := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := mustCalculate(t, in)
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back Result
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, r) {
				t.Errorf("round trip changed the result:\n got %+v\nwant %+v", back, r)
			}
		})
	}
}

func TestInputJSONRejectsUnknownStrategy(t *testing.T) {
	t.Parallel()
	var in Input
	err := json.Unmarshal([]byte(`{"second_site":"double"}`), &in)
	if err == nil {
		t.Fatal("want an error for an unknown second_site")
	}
}

func TestCompare(t *testing.T) {
	t.Parallel()
	measured := RatesFromCPUms(80, 6, 10, "measured")
	c := Compare(GuideRates(), measured)
	if c.A != GuideSource || c.B != "measured" {
		t.Errorf("sources = %q, %q", c.A, c.B)
	}
	want := []Row{
		{What: "logins per vCPU", Unit: "1/s", A: 15, B: 12.5, Ratio: 12.5 / 15},
		{What: "client-credential grants per vCPU", Unit: "1/s", A: 120, B: 1000.0 / 6, Ratio: 1000.0 / 6 / 120},
		{What: "refresh-token requests per vCPU", Unit: "1/s", A: 120, B: 100, Ratio: 100.0 / 120},
		{What: "CPU per login", Unit: "ms", A: 1000.0 / 15, B: 80, Ratio: 80 / (1000.0 / 15)},
		{What: "CPU per client-credential grant", Unit: "ms", A: 1000.0 / 120, B: 6, Ratio: 6 / (1000.0 / 120)},
		{What: "CPU per refresh-token request", Unit: "ms", A: 1000.0 / 120, B: 10, Ratio: 10 / (1000.0 / 120)},
	}
	if len(c.Rows) != len(want) {
		t.Fatalf("rows = %d, want %d", len(c.Rows), len(want))
	}
	for i, w := range want {
		g := c.Rows[i]
		if g.What != w.What || g.Unit != w.Unit || !near(g.A, w.A) || !near(g.B, w.B) || !near(g.Ratio, w.Ratio) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
	// Zero A gives ratio 0 (not NaN/Inf, which JSON cannot carry).
	z := Compare(Rates{}, measured)
	for _, r := range z.Rows {
		if r.Ratio != 0 {
			t.Errorf("%s: ratio = %v with A = 0, want 0", r.What, r.Ratio)
		}
	}
	if _, err := json.Marshal(z); err != nil {
		t.Errorf("marshal comparison with zero A: %v", err)
	}
}

func TestCompareResults(t *testing.T) {
	t.Parallel()
	guide := mustCalculate(t, workedExample())
	in := workedExample()
	in.Rates = RatesFromCPUms(1000.0/30, 1000.0/240, 1000.0/240, "twice as fast")
	fast := mustCalculate(t, in)
	c := CompareResults(guide, fast)
	byWhat := map[string]Row{}
	for _, r := range c.Rows {
		byWhat[r.What] = r
	}
	for what, ratio := range map[string]float64{
		"Keycloak CPU, cluster total": 0.5,
		"CPU request per pod":         0.5,
		"CPU limit per pod":           0.5,
	} {
		if r, ok := byWhat[what]; !ok || !near(r.Ratio, ratio) {
			t.Errorf("%s: row %+v, want ratio %v", what, r, ratio)
		}
	}
	// Memory and the database come from the guide's models, not from a
	// measurement: never printed as measured figures.
	for _, what := range []string{"memory limit per pod", "database write IOPS", "database vCPU, low"} {
		if r := byWhat[what]; !r.NotMeasured || r.B != 0 {
			t.Errorf("%s: row %+v, want not measured", what, r)
		}
	}
	var buf bytes.Buffer
	if err := c.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "compare_results.txt"), buf.Bytes())
}

func near(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
}

// Rounding up stays up for large figures: 666,666.667 vCPU on one pod was
// printed as 666,666.666 (the noise margin grew with the figure).
func TestRoundUpLargeFigures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		vcpu float64
		want MilliCPU
	}{
		{10_000_000.0 / 15, 666_666_667},
		{0.7 * 4, 2800},
		{1e-3, 1},
		{123_456.0001, 123_456_001},
	} {
		if got := millicores(c.vcpu); got != c.want {
			t.Errorf("millicores(%v) = %d, want %d", c.vcpu, got, c.want)
		}
	}
}

func TestValidateRefusesAPodNoMachineHolds(t *testing.T) {
	t.Parallel()
	in := DefaultInput()
	in.LoginsPerSec, in.Pods = 10_000_000, 1
	err := in.Validate()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "pods" || !strings.Contains(fe.Problem, "give 1,303 pods or more") {
		t.Fatalf("Validate = %v", err)
	}
	in.Pods = 1303
	if err := in.Validate(); err != nil {
		t.Errorf("1,303 pods: %v", err)
	}
}
