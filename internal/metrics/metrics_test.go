package metrics

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kcbench/kcbench/internal/load"
)

// scrape reads the server's metrics as Prometheus would.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mf, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return mf
}

func TestCollectorServes(t *testing.T) {
	c := NewCollector()
	h := hdr.New(1, 60_000_000, 3)
	for _, us := range []int64{500, 800, 3000, 40_000, 2_000_000} { // 0.5 ms … 2 s
		h.RecordValue(us)
	}
	c.Observe(load.Interval{End: 1e9, VUs: 4, ActiveVUs: 2, Dropped: 3, Ops: []load.IntervalOp{
		{Name: "iteration", Count: 5, Errors: 1, Classes: map[string]int64{"http_5xx": 1}, Latency: h},
	}})
	c.Observe(load.Interval{End: 2e9, VUs: 5, ActiveVUs: 1, Dropped: 1, Ops: []load.IntervalOp{{Name: "iteration", Count: 5, Latency: h}}})
	s, err := Serve("127.0.0.1:0", c, map[string]string{"segment": "1/3"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mf := scrape(t, s.Addr())
	val := func(name string) *dto.Metric {
		f := mf[name]
		if f == nil || len(f.Metric) == 0 {
			t.Fatalf("no %s", name)
		}
		m := f.Metric[0]
		var seg bool
		for _, l := range m.Label {
			seg = seg || (l.GetName() == "segment" && l.GetValue() == "1/3")
		}
		if !seg {
			t.Errorf("%s lacks the segment label: %v", name, m.Label)
		}
		return m
	}
	if v := val(NameOperations).GetCounter().GetValue(); v != 10 {
		t.Errorf("operations %v, want 10", v)
	}
	if v := val(NameErrors).GetCounter().GetValue(); v != 1 {
		t.Errorf("errors %v, want 1", v)
	}
	if v := val(NameDropped).GetCounter().GetValue(); v != 4 {
		t.Errorf("dropped %v, want 4", v)
	}
	if v := val(NameVUs).GetGauge().GetValue(); v != 5 {
		t.Errorf("vus %v, want the last interval's 5", v)
	}
	hist := val(NameLatency).GetHistogram()
	if hist.GetSampleCount() != 10 {
		t.Errorf("latency count %d", hist.GetSampleCount())
	}
	want := map[float64]uint64{0.001: 4, 0.005: 6, 0.05: 8, 1: 8, 2.5: 10, 60: 10}
	for _, b := range hist.Bucket {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
	if sum := hist.GetSampleSum(); sum < 2*2.04 || sum > 2*2.05 {
		t.Errorf("latency sum %v s, want about 4.09", sum)
	}
}

func TestCheckAddr(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:9464", "[::1]:9464", "localhost:0", "127.0.0.5:1"} {
		if err := CheckAddr(ok, false); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"0.0.0.0:9464", ":9464", "10.0.0.1:9464", "9464", "example.com:1"} {
		if err := CheckAddr(bad, false); err == nil {
			t.Errorf("%s: accepted without --metrics-allow-remote", bad)
		}
	}
	if err := CheckAddr("0.0.0.0:9464", true); err != nil {
		t.Errorf("allowed remote: %v", err)
	}
}

// TestSeedProgress: the progress callback a seeder calls records tenants
// done of planned and the phase; a scrape from inside the callback, as
// one in the middle of a seed would, sees the figures of that call.
func TestSeedProgress(t *testing.T) {
	c := NewCollector()
	s, err := Serve("127.0.0.1:0", c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if mf := scrape(t, s.Addr()); mf[NameSeedDone] != nil || mf[NamePhase] != nil {
		t.Errorf("seeding figures before any seeding: %v %v", mf[NameSeedDone], mf[NamePhase])
	}
	gauge := func(mf map[string]*dto.MetricFamily, name string) float64 {
		if f := mf[name]; f != nil && len(f.Metric) == 1 {
			return f.Metric[0].GetGauge().GetValue()
		}
		t.Fatalf("no single %s", name)
		return 0
	}
	c.SetPhase("seed", "realms-500")
	var calls, next int
	progress := c.SeedProgress(func(done, total int) { next++ })
	for _, p := range [][2]int{{2, 5}, {3, 5}, {5, 5}} { // two tenants there before, three seeded
		progress(p[0], p[1])
		calls++
		mf := scrape(t, s.Addr())
		if d, n := gauge(mf, NameSeedDone), gauge(mf, NameSeedPlan); d != float64(p[0]) || n != float64(p[1]) {
			t.Errorf("after progress(%d, %d): scraped %v done of %v", p[0], p[1], d, n)
		}
		ph := mf[NamePhase].GetMetric()[0]
		labels := map[string]string{}
		for _, l := range ph.Label {
			labels[l.GetName()] = l.GetValue()
		}
		if ph.GetGauge().GetValue() != 1 || labels["phase"] != "seed" || labels["point"] != "realms-500" {
			t.Errorf("phase %v = %v", labels, ph.GetGauge().GetValue())
		}
	}
	if next != calls {
		t.Errorf("the next callback (the progress bar) was called %d times of %d", next, calls)
	}
	// No collector (no --metrics-addr): the callback is the next one.
	var none *Collector
	if none.SeedProgress(nil) != nil || none.Hook() != nil {
		t.Error("a nil Collector adds a callback")
	}
	none.SetPhase("seed", "")
	none.Observe(load.Interval{})
}

// TestDashboard: the shipped Grafana dashboard is valid JSON, and every
// kcbench metric its queries use is one this package serves.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("../../dashboards/grafana-kcbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, n := range []string{NameOperations, NameErrors, NameDropped, NameVUs, NameActiveVUs, NameWarmup, NameElapsed, NameSeedDone, NameSeedPlan, NamePhase} {
		served[n] = true
	}
	for _, s := range []string{"_bucket", "_count", "_sum"} {
		served[NameLatency+s] = true
	}
	names := regexp.MustCompile(`kcbench_[a-z_]+`)
	var queries int
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			queries++
			for _, n := range names.FindAllString(tg.Expr, -1) {
				if !served[n] {
					t.Errorf("panel %q queries %s, which kcbench does not serve", p.Title, n)
				}
			}
		}
	}
	if queries < 8 {
		t.Errorf("%d queries", queries)
	}
	if b := string(b); !strings.Contains(b, NameSeedDone) || !strings.Contains(b, NameSeedPlan) {
		t.Error("no panel shows the seeding progress")
	}
}
