package experiment

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/results"
)

const tiny = `
name: tiny
dataset:
  modes: [realms, orgs]
  tenants: [3, 1]
workloads:
  - name: token
    scenario: client-credentials
    vus: 2
    duration: 5s
`

func TestParseAndPlan(t *testing.T) {
	f, err := Parse([]byte(tiny))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Phases) != 2 || f.Repeats != 1 || f.Variants[0].Name != "default" || !*f.Dataset.Snapshots {
		t.Fatalf("defaults not applied: %+v", f)
	}
	pts, err := Plan(f)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range pts {
		ids = append(ids, p.ID)
	}
	want := "default-realms-n00001-r1 default-realms-n00003-r1 default-orgs-n00001-r1 default-orgs-n00003-r1"
	if strings.Join(ids, " ") != want {
		t.Fatalf("plan %v, want %s (ascending tenants per mode)", ids, want)
	}
	again, _ := Plan(f)
	for i := range pts {
		if again[i].ID != pts[i].ID {
			t.Fatal("plan is not deterministic")
		}
	}
	if pts[3].Spec.Tenants != 3 || pts[3].Spec.Mode != "orgs" {
		t.Errorf("spec %+v", pts[3].Spec)
	}
}

func TestVariantsOverrideOneFactor(t *testing.T) {
	f, err := Parse([]byte(tiny + `
variants:
  - name: a
  - name: b
    keycloak_version: 26.5.6
    password_policy: pbkdf2-sha512:1
repeats: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := Plan(f)
	if len(pts) != 2*2*2*2 {
		t.Fatalf("%d points", len(pts))
	}
	last := pts[len(pts)-1]
	if last.Stack.Version != "26.5.6" || last.Spec.Policy.String() != "pbkdf2-sha512:1" || last.Repeat != 2 {
		t.Errorf("variant b: %+v", last)
	}
	if pts[0].Stack.Version != "26.7.3" {
		t.Errorf("variant a: %s", pts[0].Stack.Version)
	}
}

func TestTopologyVariants(t *testing.T) {
	f, err := Parse([]byte(tiny + `
stack:
  node_cpus: 2
variants:
  - name: one
  - name: two
    nodes: 2
    node_cpus: 1
  - name: sticky
    nodes: 2
    lb_sticky: true
    lb_tls: terminate # the balancer reads AUTH_SESSION_ID only where TLS ends
`))
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := Plan(f)
	byVariant := map[string]Point{}
	for _, p := range pts {
		byVariant[p.Variant.Name] = p
	}
	for name, want := range map[string]map[string]string{
		"one":    {"nodes": "1", "node_cpus": "2", "lb": "none"},
		"two":    {"nodes": "2", "node_cpus": "1", "lb": "haproxy"},
		"sticky": {"nodes": "2", "node_cpus": "2", "lb": "haproxy+sticky", "lb_tls": "terminate"},
	} {
		got := byVariant[name].Params()
		for k, v := range want {
			if got[k] != v {
				t.Errorf("variant %s: param %s = %q, want %q", name, k, got[k], v)
			}
		}
	}
	if byVariant["two"].Topology.Nodes != 2 || byVariant["one"].Topology.Nodes != 1 {
		t.Errorf("topologies %+v %+v", byVariant["one"].Topology, byVariant["two"].Topology)
	}
}

func TestBadFiles(t *testing.T) {
	cases := map[string]string{
		"":                         "empty experiment file",
		"name: x\nbogus: 1\n":      "line 2: field bogus not found",
		"name: x\nwarmup: soon\n":  "line 2",
		"name: x\nworkloads: []\n": "runs no workload",
		"name: x\ndataset:\n  tenants: []\n  modes: []\nworkloads:\n  - scenario: jwks\n":                                                     "",
		"name: x\ndataset:\n  tenants: [0]\nworkloads:\n  - scenario: jwks\n":                                                                 "dataset.tenants[0]",
		"name: x\ndataset:\n  modes: [silos]\nworkloads:\n  - scenario: jwks\n":                                                               "dataset.modes[0]",
		"name: x\nworkloads:\n  - scenario: nope\n":                                                                                           `workloads[0] (nope): scenario: "nope": unknown`,
		"name: x\nworkloads:\n  - scenario: jwks\n    duration: -1s\n":                                                                        "duration",
		"name: x\nworkloads:\n  - scenario: jwks\n  - scenario: jwks\n":                                                                       "used twice",
		"name: x\nwatchdog:\n  max_rss: lots\nworkloads:\n  - scenario: jwks\n":                                                               "watchdog.max_rss",
		"name: x\nphases: [hot]\nworkloads:\n  - scenario: jwks\n":                                                                            "phases[0]",
		"name: 'a b'\nworkloads:\n  - scenario: jwks\n":                                                                                       "name:",
		"name: x\nworkloads:\n  - scenario: jwks\n    vus: many\n":                                                                            "line 4",
		"name: x\nworkloads:\n  - scenario: jwks\n    capacity: {slo: 'p99<<1'}\n":                                                            "workloads[0] (jwks).capacity: slo:",
		"name: x\nworkloads:\n  - scenario: jwks\n    capacity: {step: -5}\n":                                                                 "workloads[0] (jwks).capacity: step: -5",
		"name: x\nworkloads:\n  - scenario: jwks\n    capacity: {step_duration: 2}\n":                                                         "line 4",
		"name: x\nworkloads:\n  - scenario: jwks\n    capacity: {precision_pct: 60}\n":                                                        "capacity: precision_pct: 60: must be a percentage above 0 and at most 50",
		"name: x\nworkloads:\n  - scenario: jwks\n    capacity: {slo: 'max>5ms'}\n":                                                           "capacity: slo:",
		"name: x\nworkloads:\n  - scenario: jwks\n    capacity: {rate: 5}\n":                                                                  "field rate not found",
		"name: x\nstack: {nodes: 9}\nworkloads:\n  - scenario: jwks\n":                                                                        "stack.nodes: 9",
		"name: x\nstack: {lb: nginx}\nworkloads:\n  - scenario: jwks\n":                                                                       `stack: lb "nginx"`,
		"name: x\nstack: {node_cpus: -1}\nworkloads:\n  - scenario: jwks\n":                                                                   "stack: node cpus -1",
		"name: x\nvariants:\n  - {name: a, nodes: 5}\nworkloads:\n  - scenario: jwks\n":                                                       "variants[0].nodes: 5",
		"name: x\nstack: {nodes: 2, lb: none}\nvariants:\n  - {name: a, lb_sticky: true}\nworkloads:\n  - scenario: jwks\n":                   "variants[0]: lb_sticky needs a balancer",
		"name: x\nstack: {latency: 'node-db=-1ms'}\nworkloads:\n  - scenario: jwks\n":                                                         "stack.latency: latency node-db: \"-1ms\": latency cannot be negative",
		"name: x\nstack: {latency: 'node-node=5ms'}\nworkloads:\n  - scenario: jwks\n":                                                        "stack: latency node-node needs 2 nodes or more",
		"name: x\nvariants:\n  - {name: a, latency: 'node-node=5ms'}\nworkloads:\n  - scenario: jwks\n":                                       "variants[0]: latency node-node needs 2 nodes or more",
		"name: x\nworkloads:\n  - scenario: jwks\n    events: ['10s latency node-db=50ms']\n":                                                 "no proxy on the node-db link",
		"name: x\nworkloads:\n  - scenario: jwks\n    events: ['10s explode']\n":                                                              `workloads[0] (jwks).events: event "10s explode": unknown action`,
		"name: x\nworkloads:\n  - scenario: jwks\n    duration: 30s\n    events: ['40s kill']\n":                                              "after the run's end (30s",
		"name: x\nstack: {nodes: 3}\nworkloads:\n  - scenario: jwks\n    events: ['10s kill node=4']\n":                                       "node 4 does not exist then",
		"name: x\nstack: {nodes: 3}\nvariants:\n  - {name: two, nodes: 2}\nworkloads:\n  - scenario: jwks\n    events: ['10s kill node=3']\n": "(variant two): event \"10s kill node=3\": node 3 does not exist",
		"name: x\nworkloads:\n  - scenario: jwks\n    capacity: {}\n    events: ['1s kill']\n":                                                "events apply to load workloads, not to capacity searches",
		"name: x\nreferences:\n  - {chart: sweep-seed-time, points: [[1, 2]]}\nworkloads:\n  - scenario: jwks\n":                              "references[0].label: empty",
		"name: x\nreferences:\n  - {label: a, chart: c, points: [[1, 2, 3]]}\nworkloads:\n  - scenario: jwks\n":                               "want 2 elements",
		"name: x\nreferences:\n  - {label: a, chart: c}\nworkloads:\n  - scenario: jwks\n":                                                    "references[0].points: none",
	}
	for in, want := range cases {
		_, err := Parse([]byte(in))
		if want == "" {
			if err == nil {
				t.Errorf("%q: want an error", in)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestCapacityWorkload(t *testing.T) {
	f, err := Parse([]byte(tiny + `
  - name: cc-capacity
    scenario: client-credentials
    capacity:
      start_rate: 50
      step: 25
      step_duration: 20s
      warmup: 10s
`))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Workload[1].Capacity
	o, err := c.Options(0.5)
	if err != nil {
		t.Fatal(err)
	}
	if results.FormatSLOs(o.SLOs) != capacity.DefaultSLOs || o.Start != 50 || o.Step != 25 || o.StepDuration != 10*time.Second ||
		o.Warmup != 5*time.Second || o.Resolution != 2.5 {
		t.Errorf("options (scale 0.5) %+v", o)
	}
	pts, _ := Plan(f)
	without, _ := Parse([]byte(tiny))
	// The search adds its warm-up and about a dozen steps to each point.
	if d := Estimate(f, pts, 1) - Estimate(without, pts, 1); d != time.Duration(len(pts))*(10*time.Second+12*(20*time.Second+capacity.DefaultPause)) {
		t.Errorf("estimate grows by %v", d)
	}
	if half, full := Estimate(without, pts, 0.5), Estimate(without, pts, 1); half >= full {
		t.Errorf("estimate at scale 0.5 %v, at 1 %v", half, full)
	}
}

func TestCalibrateCosts(t *testing.T) {
	// Points seeded at 0.5 s × N^0.5 per realm tenant and 0.05 s per
	// organization, booting in 8 s, with 20 s of overhead each.
	law := PowerLaw{A: 0.5, K: 0.5}
	var pts []*results.Point
	prev := map[string]int{}
	for _, m := range []string{"realms", "orgs"} {
		for _, n := range []int{1, 10, 100, 250} {
			var seed float64
			for i := prev[m] + 1; i <= n; i++ {
				seed += law.At(float64(i))
				if m == "orgs" {
					seed -= law.At(float64(i)) - 0.05
				}
			}
			sum := results.Summary{Status: results.StatusDone, Params: map[string]string{"mode": m, "tenants": fmt.Sprint(n)},
				Seed: &results.Seed{Tenants: n, Added: n - prev[m], Seconds: seed}, Boot: &results.Boot{Seconds: 8},
				Workloads: []results.Workload{{Stats: results.Stats{Elapsed: time.Minute}}}}
			sum.Seconds = seed + 8 + 60 + 20
			pts = append(pts, &results.Point{Summary: sum})
			prev[m] = n
		}
	}
	pts = append(pts, &results.Point{Summary: results.Summary{Status: results.StatusAborted, Seconds: 1e6}}) // not counted
	c, err := CalibrateCosts(pts)
	if err != nil {
		t.Fatal(err)
	}
	if r := c.SeedPerTenant["realms"]; math.Abs(r.K-0.5) > 0.05 || math.Abs(r.A-0.5) > 0.1 {
		t.Errorf("realms seed law %v, want 0.5 s × N^0.5", r)
	}
	if o := c.SeedPerTenant["orgs"]; math.Abs(o.At(1000)-0.05) > 0.005 {
		t.Errorf("orgs seed law %v, want 0.05 s", o)
	}
	if math.Abs(c.Boot["realms"].At(100)-8) > 0.01 || math.Abs(c.Overhead-20) > 0.01 {
		t.Errorf("boot %v, overhead %v", c.Boot["realms"], c.Overhead)
	}
	if !strings.Contains(c.Source, "fitted to 8 finished points") {
		t.Errorf("source %q", c.Source)
	}
	// Growing realms from 250 to 1000 costs the law's sum.
	var want float64
	for i := 251; i <= 1000; i++ {
		want += law.At(float64(i))
	}
	if got := c.seed("realms", 250, 1000).Seconds(); math.Abs(got-want)/want > 0.1 {
		t.Errorf("seed 250→1000: %.0f s, want about %.0f s", got, want)
	}
	if _, err := CalibrateCosts(pts[len(pts)-1:]); err == nil {
		t.Error("no finished point: want an error")
	}
}

func TestParseBytesAndPercent(t *testing.T) {
	for in, want := range map[string]int64{"8GiB": 8 << 30, "6000MiB": 6000 << 20, "1g": 1 << 30, "512MB": 512e6} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v", in, got, err)
		}
	}
	if _, err := ParseBytes("-1GiB"); err == nil {
		t.Error("negative size accepted")
	}
	if p, err := ParsePercent("50%"); err != nil || p != 0.5 {
		t.Errorf("50%% = %v %v", p, err)
	}
	if _, err := ParsePercent("150%"); err == nil {
		t.Error("150% accepted")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(tiny))
	f.Add([]byte("name: x\nworkloads:\n  - scenario: jwks\n    stages: '1s:2'\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse(b)
		if err != nil {
			return
		}
		if _, err := Plan(file); err != nil {
			t.Fatalf("a valid file does not plan: %v", err)
		}
	})
}

// TestReferencesWritten: an experiment file's published figures reach the
// results folder as results.ReferencesFile, where the report reads them.
func TestReferencesWritten(t *testing.T) {
	f, err := Parse([]byte("name: x\nreferences:\n  - label: study\n    chart: sweep-seed-time\n    series: realms\n    points: [[1000, 3540], [100, 157]]\nworkloads:\n  - scenario: jwks\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []results.Reference{{Chart: "sweep-seed-time", Label: "study", Series: "realms", Points: [][2]float64{{1000, 3540}, {100, 157}}}}
	if !reflect.DeepEqual(f.References, want) {
		t.Fatalf("references %+v, want %+v", f.References, want)
	}
	dir := t.TempDir()
	if err := results.WriteReferences(dir, f.References); err != nil {
		t.Fatal(err)
	}
	got, err := results.ReadReferences(dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
	if err := results.WriteReferences(dir, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := results.ReadReferences(dir); err != nil || got != nil {
		t.Errorf("after writing none: %+v, %v; want nothing", got, err)
	}
}

// Realm seeding as measured on a 2-core box (the multitenancy study's
// growth steps to 250 realms: 0.48 s per realm at 10, 0.49 at 100, 0.79 at
// 250): flat, then each realm dearer than the last. A straight line fits
// it better than a power law, and predicts the 500 → 1,000 step (1,317 s
// measured) far closer.
func TestCalibrateCostsLinearSeed(t *testing.T) {
	var pts []*results.Point
	for _, s := range []struct {
		n, added int
		secs     float64
	}{{1, 1, 2.31}, {10, 9, 4.33}, {100, 90, 44.2}, {250, 150, 118.2}} {
		pts = append(pts, &results.Point{Summary: results.Summary{Status: results.StatusDone, Seconds: s.secs + 500,
			Params: map[string]string{"mode": "realms", "tenants": fmt.Sprint(s.n)},
			Seed:   &results.Seed{Tenants: s.n, Added: s.added, Seconds: s.secs}}})
	}
	c, err := CalibrateCosts(pts)
	if err != nil {
		t.Fatal(err)
	}
	law := c.SeedPerTenant["realms"]
	if law.B <= 0 || !strings.Contains(law.String(), "ms × N") {
		t.Fatalf("realms seed law %v, want a straight line", law)
	}
	if got := c.seed("realms", 500, 1000).Seconds(); got < 0.7*1317 || got > 1.3*1317 {
		t.Errorf("seed 500→1000: %.0f s predicted, 1,317 s measured: want within 30 %%", got)
	}
	// a recorded seed (the dataset came from a snapshot) took none of the
	// point's time: the overhead is not reduced by it
	pts = append(pts, &results.Point{Summary: results.Summary{Status: results.StatusDone, Seconds: 500,
		Params: map[string]string{"mode": "realms", "tenants": "1000"},
		Seed:   &results.Seed{Tenants: 1000, Added: 500, Seconds: 1317, Recorded: true}}})
	if c, err = CalibrateCosts(pts); err != nil || math.Abs(c.Overhead-500) > 1 {
		t.Errorf("overhead %.1f s, want 500 (the recorded seed left out), %v", c.Overhead, err)
	}
}

// TestAdminAPISampleNeedsClone: a sample of tenants through the admin API
// goes with the clone strategy (fast and rest make them all that way).
func TestAdminAPISampleNeedsClone(t *testing.T) {
	base := "name: s\ndataset:\n  modes: [realms]\n  tenants: [1, 10]\n%s\nworkloads:\n  - name: j\n    scenario: jwks\n"
	for _, c := range []struct {
		ds, err string
	}{
		{"  admin_api_sample: 5", ""},
		{"  strategy: clone\n  admin_api_sample: 5", ""},
		{"  strategy: fast\n  admin_api_sample: 5", "the fast strategy makes every tenant through the admin API"},
		{"  strategy: rest\n  admin_api_sample: 5", "the rest strategy"},
		{"  admin_api_sample: -1", "must not be negative"},
	} {
		f, err := Parse([]byte(fmt.Sprintf(base, c.ds)))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.ds, err)
		case c.err == "" && f.Dataset.AdminAPISample != 5:
			t.Errorf("%q: sample %d", c.ds, f.Dataset.AdminAPISample)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want an error saying %q", c.ds, err, c.err)
		}
	}
}

// TestCalibrateCostsAdminAPISample: points that cloned most tenants and
// made the last ones through the admin API calibrate two laws, and the
// estimate of a sampled file uses each for its share.
func TestCalibrateCostsAdminAPISample(t *testing.T) {
	api := PowerLaw{A: 0.25, B: 0.004} // s per tenant through the admin API
	const clone = 0.03                 // s per cloned tenant
	const k = 20
	var pts []*results.Point
	prev := 0
	for _, n := range []int{100, 250, 500, 1000} {
		var sample float64
		for i := n - k + 1; i <= n; i++ {
			sample += api.At(float64(i))
		}
		bulk := clone * float64(n-k-prev)
		pts = append(pts, &results.Point{Summary: results.Summary{Status: results.StatusDone, Seconds: bulk + sample + 400,
			Params: map[string]string{"mode": "realms", "tenants": fmt.Sprint(n)},
			Seed: &results.Seed{Tenants: n, Added: n - prev, Seconds: bulk + sample,
				AdminAPISample: &results.SeedSample{Tenants: k, Seconds: sample}}}})
		prev = n
	}
	c, err := CalibrateCosts(pts)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.AdminAPIPerTenant["realms"].At(1250), api.At(1250); math.Abs(got-want)/want > 0.05 {
		t.Errorf("admin API at 1,250: %.2f s per tenant, want %.2f (%s)", got, want, c.Source)
	}
	if got := c.SeedPerTenant["realms"].At(1250); math.Abs(got-clone)/clone > 0.05 {
		t.Errorf("clone at 1,250: %.3f s per tenant, want %.3f (%s)", got, clone, c.Source)
	}
	if !strings.Contains(c.Source, "admin API per tenant") {
		t.Errorf("source %q: want the admin-API law", c.Source)
	}
	// 0 → 1,000 → 1,500 with a sample of 20 per point
	f, err := Parse([]byte("name: s\ndataset:\n  modes: [realms]\n  tenants: [1000, 1500]\n  admin_api_sample: 20\nphases: []\nworkloads:\n  - name: j\n    scenario: jwks\n"))
	if err != nil {
		t.Fatal(err)
	}
	all, err := Plan(f)
	if err != nil {
		t.Fatal(err)
	}
	without := *f
	without.Dataset.AdminAPISample = 0
	sampled, plain := c.Estimate(f, all, 1), c.Estimate(&without, all, 1)
	// each point's last 20 tenants through the API instead of cloned
	var want float64
	for _, n := range []int{1000, 1500} {
		for i := n - 19; i <= n; i++ {
			want += api.At(float64(i)) - clone
		}
	}
	if d := (sampled - plain).Seconds(); math.Abs(d-want)/want > 0.05 {
		t.Errorf("the samples add %.0f s, want %.0f", d, want)
	}
}

// TestRecordedSeed: a point whose whole dataset came back from a snapshot
// keeps the seeding that made it, the clone of the bulk and the admin-API
// sample apart.
func TestRecordedSeed(t *testing.T) {
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	m := &dataset.Manifest{Seeds: []dataset.SeedEvent{
		{At: at, Strategy: "fast", From: 0, To: 1, Added: 1, Seconds: 2.2, ServerCPUSec: 3},
		{At: at.Add(time.Minute), Strategy: "fast", From: 1, To: 10, Added: 9, Seconds: 6.1, ServerCPUSec: 10},
		{At: at.Add(2 * time.Minute), Strategy: "clone", From: 10, To: 80, Added: 70, Seconds: 1.4, ServerCPUSec: 2},
		{At: at.Add(3 * time.Minute), Strategy: "fast", From: 80, To: 100, Added: 20, Seconds: 19, ServerCPUSec: 35},
	}}
	var s results.Seed
	recordedSeed(&s, m, 100, true)
	if s.Added != 90 || s.Seconds != 20.4 || s.ServerCPU != 37 || s.Strategy != "clone" || !s.Recorded ||
		s.AdminAPISample == nil || *s.AdminAPISample != (results.SeedSample{Tenants: 20, Seconds: 19, ServerCPU: 35}) {
		t.Errorf("100: %+v sample %+v", s, s.AdminAPISample)
	}
	// every tenant the point added was in the sample: no clone before it
	s = results.Seed{}
	recordedSeed(&s, m, 10, true)
	if s.Added != 9 || s.Seconds != 6.1 || s.AdminAPISample == nil || s.AdminAPISample.Tenants != 9 {
		t.Errorf("10: %+v sample %+v", s, s.AdminAPISample)
	}
	// without a sample in the file, the last run is the seed
	s = results.Seed{}
	recordedSeed(&s, m, 100, false)
	if s.Added != 20 || s.Strategy != "fast" || s.AdminAPISample != nil {
		t.Errorf("unsampled: %+v", s)
	}
	s = results.Seed{}
	if recordedSeed(&s, m, 50, true); s.Recorded {
		t.Errorf("no record of 50: %+v", s)
	}
}

// Variants that differ only in what the running server feels share their
// dataset snapshots; a variant with another Keycloak, database or
// topology has its own.
func TestSnapshotsShared(t *testing.T) {
	f, err := Parse([]byte(tiny + `
variants:
  - name: small
    cache_sizes: {users: 10000}
  - name: big
    cache_sizes: {users: 200000}
    heap: 2g
  - name: quota
    node_cpus: 0.5
  - name: pair
    nodes: 2
  - name: old
    keycloak_version: 26.0.0
`))
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := Plan(f)
	name := map[string]string{}
	r := &Runner{File: f}
	for _, p := range pts {
		name[p.Variant.Name] = r.snapshotName(p, 3)
	}
	if name["small"] != name["big"] || name["quota"] != name["small"] {
		t.Errorf("cache, heap and CPU quota variants: snapshots %q, %q and %q, want one", name["small"], name["big"], name["quota"])
	}
	for _, v := range []string{"pair", "old"} {
		if name[v] == name["small"] || name[v] == "" {
			t.Errorf("variant %s: snapshot %q, want its own (small: %q)", v, name[v], name["small"])
		}
	}
}

// The plan charges a dataset shared by variants once: the second cache
// variant restores the first one's snapshot.
func TestEstimateSharedSnapshots(t *testing.T) {
	const file = `
name: big
dataset:
  modes: [realms]
  tenants: [1]
  users: 100000
workloads:
  - scenario: jwks
    duration: 10s
variants:
  - name: a
    cache_sizes: {users: 10000}
  - name: b
    cache_sizes: {users: 200000}
`
	// est estimates the file with extra variants, keeping its first
	// variants only
	est := func(extra string, variants int) time.Duration {
		f, err := Parse([]byte(file + extra))
		if err != nil {
			t.Fatal(err)
		}
		f.Variants = f.Variants[:variants]
		pts, _ := Plan(f)
		return Estimate(f, pts, 1)
	}
	seed := time.Duration(DefaultCosts.SeedPerUser * 100000 * float64(time.Second))
	shared, single := est("", 2), est("", 1)
	if got := shared - single; got >= seed || got <= 0 {
		t.Errorf("two variants sharing a dataset: %v, one: %v; the second should not seed (%v)", shared, single, seed)
	}
	apart := est("  - name: c\n    keycloak_version: 26.0.0\n", 3)
	if got := apart - shared; got < seed {
		t.Errorf("a third variant on another Keycloak adds %v, want its own seed (≥ %v)", got, seed)
	}
}

// TestSessionsPlan: the dataset's sessions and a variant's own reach every
// point and its params (every point's, once a point has any); bad counts,
// MariaDB and online sessions kept in memory are refused at load.
func TestSessionsPlan(t *testing.T) {
	base := "name: s\ndataset:\n  modes: [realms]\n  tenants: [1]\n%s\nworkloads:\n  - name: j\n    scenario: jwks\nvariants:\n%s"
	f, err := Parse([]byte(fmt.Sprintf(base, "  sessions: 100\n  offline_sessions: 7",
		"  - name: none\n    sessions: 0\n    offline_sessions: 0\n  - name: default\n  - name: big\n    sessions: 1000\n")))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := Plan(f)
	if err != nil || len(pts) != 3 {
		t.Fatalf("%d points, %v", len(pts), err)
	}
	for i, want := range []string{"0/0", "100/7", "1000/7"} {
		p := pts[i].Params()
		if got := p[ParamSessions] + "/" + p[ParamOfflineSessions]; got != want || !pts[i].SeedSessions {
			t.Errorf("point %s: sessions %s (seeded %v), want %s", pts[i].ID, got, pts[i].SeedSessions, want)
		}
	}
	// Without sessions anywhere: no params, nothing seeded.
	f, _ = Parse([]byte(fmt.Sprintf(base, "", "  - name: a\n")))
	if pts, _ := Plan(f); pts[0].SeedSessions || pts[0].Params()[ParamSessions] != "" {
		t.Errorf("a file without sessions: %+v", pts[0].Params())
	}
	for _, c := range []struct{ ds, variants, err string }{
		{"  sessions: -1", "  - name: a\n", "sessions: -1: must be between 0 and"},
		{"  offline_sessions: 100000000", "  - name: a\n", "offline_sessions: 100000000: must be between 0 and"},
		{"", "  - name: a\n    sessions: -5\n", "variants[0].sessions: -5"},
		{"  sessions: 10", "  - name: m\n    db: mariadb\n", "not MariaDB's"},
		{"  sessions: 10", "  - name: m\n    persistent_sessions: false\n", "kept in memory only"},
		{"  offline_sessions: 10", "  - name: m\n    persistent_sessions: false\n", ""},
	} {
		_, err := Parse([]byte(fmt.Sprintf(base, c.ds, c.variants)))
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q %q: %v, want %q", c.ds, c.variants, err, c.err)
		}
	}
}
