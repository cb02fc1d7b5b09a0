package observe

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/common/expfmt"
)

// testdata/keycloak-metrics.txt is a real scrape of Keycloak 26.7.3's
// management /metrics (kcbench up, 21 client-credentials grants, one admin
// call, then curl with Accept: text/plain;version=0.0.4).
func TestParseMetricsCapture(t *testing.T) {
	t.Parallel()
	m := parseCapture(t, "testdata/keycloak-metrics.txt")
	want := Metrics{
		HeapUsed:       8388608 + 6.178048e7 + 2.5165824e7, // survivor + old + eden
		HeapCommitted:  8388608 + 8.5983232e7 + 9.8566144e7,
		GCCount:        42,
		GCPauseSeconds: 1.11,
		HTTPRequests:   21 + 1, // token + admin; /health/ready and /metrics left out
		DBPoolActive:   0,
		DBPoolAwaiting: 0,
		DBPoolMaxUsed:  4,
		CPUSeconds:     45.33, // process_cpu_time_ns_total 4.533E10
		WorkerActive:   1,
		WorkerQueue:    0,
	}
	caches := m.CacheEntries
	m.CacheEntries = nil
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
	for cache, n := range map[string]float64{"realms": 55, "users": 2, "sessions": 0, "realmRevisions": 125} {
		if caches[cache] != n {
			t.Errorf("cache %s: %v entries, want %v", cache, caches[cache], n)
		}
	}
	m.CacheEntries = caches
	if miss := m.Missing(); len(miss) != 0 {
		t.Errorf("missing %v", miss)
	}
}

// The capture cpu_test.go uses (same version, another build, labels
// without trailing commas) must parse too.
func TestParseMetricsOtherCapture(t *testing.T) {
	t.Parallel()
	m := parseCapture(t, "testdata/keycloak-26.7.3-metrics.txt")
	if miss := m.Missing(); len(miss) != 0 {
		t.Errorf("missing %v", miss)
	}
	if m.GCCount != 48 || m.HeapUsed <= 0 || m.CPUSeconds <= 1 {
		t.Errorf("implausible: %+v", m)
	}
}

func TestParseMetricsTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		check      func(Metrics) bool
		missing    int
	}{
		{"empty", "", func(m Metrics) bool { return math.IsNaN(m.HeapUsed) && m.CacheEntries == nil }, 11},
		{"seconds counter wins over nanos", "process_cpu_time_ns_total 3e9\nprocess_cpu_seconds_total 2\n",
			func(m Metrics) bool { return m.CPUSeconds == 2 }, 10},
		{"http histogram (histograms enabled)", `# TYPE http_server_requests_seconds histogram
http_server_requests_seconds_bucket{uri="/realms/{realm}/protocol/{protocol}/token",le="0.1"} 3
http_server_requests_seconds_bucket{uri="/realms/{realm}/protocol/{protocol}/token",le="+Inf"} 5
http_server_requests_seconds_count{uri="/realms/{realm}/protocol/{protocol}/token"} 5
http_server_requests_seconds_sum{uri="/realms/{realm}/protocol/{protocol}/token"} 0.4
http_server_requests_seconds_bucket{uri="/health/live",le="+Inf"} 7
http_server_requests_seconds_count{uri="/health/live"} 7
http_server_requests_seconds_sum{uri="/health/live"} 0.1
`, func(m Metrics) bool { return m.HTTPRequests == 5 }, 10},
		{"only management requests", `# TYPE http_server_requests_seconds summary
http_server_requests_seconds_count{uri="/metrics"} 9
http_server_requests_seconds_sum{uri="/metrics"} 0.1
`, func(m Metrics) bool { return m.HTTPRequests == 0 }, 10},
		{"nonheap and other pools ignored", `# TYPE jvm_memory_used_bytes gauge
jvm_memory_used_bytes{area="nonheap",id="Metaspace"} 100
jvm_memory_used_bytes{area="heap",id="G1 Eden Space"} 7
# TYPE worker_pool_queue_size gauge
worker_pool_queue_size{pool_name="vert.x-internal-blocking"} 3
worker_pool_queue_size{pool_name="vert.x-worker-thread"} 4
`, func(m Metrics) bool { return m.HeapUsed == 7 && m.WorkerQueue == 4 }, 9},
		{"unknown cache sizes (-1) skipped", `# TYPE vendor_statistics_approximate_entries gauge
vendor_statistics_approximate_entries{cache="realms",node="a"} 3
vendor_statistics_approximate_entries{cache="realms",node="b"} 4
vendor_statistics_approximate_entries{cache="work",node="a"} -1
`, func(m Metrics) bool {
			return reflect.DeepEqual(m.CacheEntries, map[string]float64{"realms": 7})
		}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := parseMetrics(strings.NewReader(c.text))
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(m) {
				t.Errorf("got %+v", m)
			}
			if got := len(m.Missing()); got != c.missing {
				t.Errorf("missing %v, want %d families", m.Missing(), c.missing)
			}
		})
	}
}

func TestParseMetricsError(t *testing.T) {
	t.Parallel()
	_, err := parseMetrics(strings.NewReader("jvm_memory_used_bytes{area=\"heap\" 1\n"))
	var pe expfmt.ParseError
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Fatalf("got %v, want an expfmt.ParseError on line 1", err)
	}
}

func TestScrape(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		if !strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
			http.Error(w, "wants text", http.StatusNotAcceptable)
			return
		}
		w.Write([]byte("agroal_active_count{datasource=\"default\"} 3\n"))
	}))
	defer srv.Close()
	m, err := Scrape(t.Context(), nil, srv.URL+"/")
	if err != nil || m.DBPoolActive != 3 {
		t.Fatalf("%+v %v", m, err)
	}
	if _, err := Scrape(t.Context(), srv.Client(), srv.URL+"/nope"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("404: %v", err)
	}
}

// handlerTransport serves requests in-process, so that a synctest bubble
// holds no network goroutines.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func TestMetricsSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64 // scrapes so far
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			k := n.Add(1) - 1
			// Each second: 10 requests, 2 GCs of 50 ms, 0.5 s of CPU.
			fmt.Fprintf(w, `# TYPE http_server_requests_seconds summary
http_server_requests_seconds_count{uri="/admin/realms"} %d
http_server_requests_seconds_sum{uri="/admin/realms"} 1
# TYPE jvm_gc_pause_seconds summary
jvm_gc_pause_seconds_count{gc="G1 Young Generation"} %d
jvm_gc_pause_seconds_sum{gc="G1 Young Generation"} %g
# TYPE process_cpu_time_ns_total counter
process_cpu_time_ns_total %d
# TYPE jvm_memory_used_bytes gauge
jvm_memory_used_bytes{area="heap",id="eden"} 1000
`, 10*k, 2*k, 0.1*float64(k), 5e8*k)
		})
		src := NewMetricsSource("http://kc.invalid:9000", &http.Client{Transport: handlerTransport{h}}, true)
		s, err := src.Sample(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.HeapUsed != 1000 || !math.IsNaN(s.HTTPRequests) || !math.IsNaN(s.KCCPUPct) {
			t.Fatalf("first: %+v", s)
		}
		time.Sleep(time.Second)
		s, err = src.Sample(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.HTTPRequests != 10 || s.GCCount != 2 || s.GCPauseSeconds != 0.1 || s.KCCPUPct != 50 {
			t.Fatalf("second: http %v/s gc %v/s paused %v s/s cpu %v%%", s.HTTPRequests, s.GCCount, s.GCPauseSeconds, s.KCCPUPct)
		}
		gaps := src.Unavailable()
		if len(gaps) == 0 || !strings.Contains(strings.Join(gaps, "\n"), MetricPoolActive) ||
			strings.Contains(strings.Join(gaps, "\n"), MetricCPUNanos) {
			t.Fatalf("unavailable: %q", gaps)
		}
	})
}

// parseCapture parses a /metrics capture.
func parseCapture(t *testing.T, path string) Metrics {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := parseMetrics(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// parseMetrics reads Prometheus text exposition format into Metrics.
func parseMetrics(r io.Reader) (Metrics, error) {
	fams, err := ParseText(r)
	if err != nil {
		return Metrics{}, err
	}
	return metricsFrom(fams), nil
}
