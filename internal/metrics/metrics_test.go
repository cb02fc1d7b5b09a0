package metrics

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
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
	for _, n := range []string{NameOperations, NameErrors, NameDropped, NameVUs, NameActiveVUs, NameWarmup, NameElapsed} {
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
}
