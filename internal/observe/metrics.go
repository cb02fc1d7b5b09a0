package observe

import (
	"context"
	"fmt"
	"github.com/kcbench/kcbench/internal/results"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// DefaultScrapeTimeout bounds one GET of /metrics when the caller gives no
// http.Client of its own.
const DefaultScrapeTimeout = 5 * time.Second

// Metric families Metrics reads, as Keycloak 26 exposes them.
const (
	MetricMemoryUsed      = "jvm_memory_used_bytes"      // gauge {area="heap"|"nonheap", id}
	MetricMemoryCommitted = "jvm_memory_committed_bytes" // gauge {area, id}
	MetricGCPause         = "jvm_gc_pause_seconds"       // summary {action, cause, gc}
	MetricHTTPRequests    = "http_server_requests_seconds"
	MetricPoolActive      = "agroal_active_count"   // gauge {datasource}
	MetricPoolAwaiting    = "agroal_awaiting_count" // gauge {datasource}
	MetricPoolMaxUsed     = "agroal_max_used_count" // gauge {datasource}
	MetricWorkerActive    = "worker_pool_active"    // gauge {pool_name}
	MetricWorkerQueue     = "worker_pool_queue_size"
	MetricCacheEntries    = "vendor_statistics_approximate_entries" // gauge {cache, node}
)

// WorkerPool is the pool_name of the pool that runs Keycloak's HTTP
// requests (sized by http-pool-max-threads).
const WorkerPool = "vert.x-worker-thread"

// Metrics is one scrape of Keycloak's management /metrics, reduced to
// what kcbench charts. Every value is NaN when its family is absent.
// Counters are cumulative since the server started.
type Metrics struct {
	HeapUsed, HeapCommitted float64 // bytes, summed over the heap pools
	GCCount                 float64 // GC pauses (counter)
	GCPauseSeconds          float64 // time paused (counter)
	// HTTPRequests counts finished HTTP requests (counter), except the
	// management ones (/metrics, /health…), so scraping does not count
	// itself.
	HTTPRequests   float64
	DBPoolActive   float64 // connections in use
	DBPoolAwaiting float64 // threads waiting for a connection
	DBPoolMaxUsed  float64 // high-water mark of connections in use
	CPUSeconds     float64 // JVM CPU time (counter)
	WorkerActive   float64 // busy request threads
	WorkerQueue    float64 // requests waiting for a thread
	// CacheEntries is the approximate entry count per Infinispan cache
	// (realms, users, sessions…), summed over nodes. Nil when absent.
	CacheEntries map[string]float64
}

// Missing names the families a scrape lacked, sorted.
func (m Metrics) Missing() []string {
	var out []string
	for _, c := range []struct {
		name string
		v    float64
	}{
		{MetricMemoryUsed, m.HeapUsed},
		{MetricMemoryCommitted, m.HeapCommitted},
		{MetricGCPause, m.GCCount},
		{MetricHTTPRequests, m.HTTPRequests},
		{MetricPoolActive, m.DBPoolActive},
		{MetricPoolAwaiting, m.DBPoolAwaiting},
		{MetricPoolMaxUsed, m.DBPoolMaxUsed},
		{MetricCPUNanos, m.CPUSeconds},
		{MetricWorkerActive, m.WorkerActive},
		{MetricWorkerQueue, m.WorkerQueue},
	} {
		if math.IsNaN(c.v) {
			out = append(out, c.name)
		}
	}
	if m.CacheEntries == nil {
		out = append(out, MetricCacheEntries)
	}
	sort.Strings(out)
	return out
}

// Families is one read of Prometheus text: family name → family.
type Families map[string]*dto.MetricFamily

// ParseText reads Prometheus text exposition format (version 0.0.4); it is
// kcbench's one parser of it. It makes its own parser, so concurrent calls
// are safe.
func ParseText(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// Counter is one series of a counter family: its labels and value.
type Counter struct {
	Labels map[string]string `json:"labels"`
	Value  float64           `json:"value"`
}

// Counters returns the series of counter (or untyped) family name, also
// found under name without its _total suffix, as some exposers spell it;
// ok is false when the family is absent.
func (f Families) Counters(name string) (cs []Counter, ok bool) {
	fam, ok := f[name]
	if !ok {
		fam, ok = f[strings.TrimSuffix(name, "_total")]
	}
	if !ok {
		return nil, false
	}
	cs = []Counter{}
	for _, m := range fam.GetMetric() {
		if m.Counter == nil && m.Untyped == nil {
			continue
		}
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		cs = append(cs, Counter{Labels: labels, Value: value(m)})
	}
	return cs, true
}

func metricsFrom(fams map[string]*dto.MetricFamily) Metrics {
	heap := func(m *dto.Metric) bool { return label(m, "area") == "heap" }
	worker := func(m *dto.Metric) bool { return label(m, "pool_name") == WorkerPool }
	app := func(m *dto.Metric) bool { return !managementPath(label(m, "uri")) }
	m := Metrics{
		HeapUsed:       sum(fams[MetricMemoryUsed], heap, value),
		HeapCommitted:  sum(fams[MetricMemoryCommitted], heap, value),
		GCCount:        sum(fams[MetricGCPause], nil, count),
		GCPauseSeconds: sum(fams[MetricGCPause], nil, total),
		HTTPRequests:   sum(fams[MetricHTTPRequests], app, count),
		DBPoolActive:   sum(fams[MetricPoolActive], nil, value),
		DBPoolAwaiting: sum(fams[MetricPoolAwaiting], nil, value),
		DBPoolMaxUsed:  sum(fams[MetricPoolMaxUsed], nil, value),
		CPUSeconds:     sum(fams[MetricCPUSeconds], nil, value),
		WorkerActive:   sum(fams[MetricWorkerActive], worker, value),
		WorkerQueue:    sum(fams[MetricWorkerQueue], worker, value),
	}
	if f := fams[MetricHTTPRequests]; f != nil && math.IsNaN(m.HTTPRequests) {
		m.HTTPRequests = 0 // only management requests so far
	}
	if math.IsNaN(m.CPUSeconds) {
		m.CPUSeconds = sum(fams[MetricCPUNanos], nil, value) / 1e9
	}
	if f := fams[MetricCacheEntries]; f != nil {
		m.CacheEntries = map[string]float64{}
		for _, x := range f.GetMetric() {
			// Infinispan reports -1 for "unknown".
			if v := value(x); v >= 0 {
				m.CacheEntries[label(x, "cache")] += v
			}
		}
	}
	return m
}

// managementPath reports whether uri is served by the management
// interface rather than by Keycloak's applications.
func managementPath(uri string) bool {
	return uri == "/metrics" || uri == "/health" || strings.HasPrefix(uri, "/health/") ||
		strings.HasPrefix(uri, "/metrics/")
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sum adds get(m) over the family's metrics that keep accepts (all when
// keep is nil). It is NaN when the family is absent or nothing matched.
func sum(f *dto.MetricFamily, keep func(*dto.Metric) bool, get func(*dto.Metric) float64) float64 {
	if f == nil {
		return math.NaN()
	}
	total, n := 0.0, 0
	for _, m := range f.GetMetric() {
		if keep != nil && !keep(m) {
			continue
		}
		if v := get(m); !math.IsNaN(v) {
			total += v
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return total
}

// value is a gauge's, counter's or untyped sample's value.
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return math.NaN()
}

// count is a summary's or histogram's _count.
func count(m *dto.Metric) float64 {
	switch {
	case m.Summary != nil:
		return float64(m.Summary.GetSampleCount())
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return math.NaN()
}

// total is a summary's or histogram's _sum.
func total(m *dto.Metric) float64 {
	switch {
	case m.Summary != nil:
		return m.Summary.GetSampleSum()
	case m.Histogram != nil:
		return m.Histogram.GetSampleSum()
	}
	return math.NaN()
}

// MetricsURL is managementURL's /metrics; a URL already ending in
// /metrics is kept.
func MetricsURL(managementURL string) string {
	u := strings.TrimRight(managementURL, "/")
	if strings.HasSuffix(u, "/metrics") {
		return u
	}
	return u + "/metrics"
}

// StatusError is a /metrics answer other than 200 OK.
type StatusError struct {
	URL  string
	Code int
}

func (e *StatusError) Error() string { return fmt.Sprintf("%s: HTTP %d", e.URL, e.Code) }

// ScrapeText GETs {managementURL}/metrics and parses it (see ParseText).
// hc nil means a client with DefaultScrapeTimeout. An answer other than
// 200 is a *StatusError.
func ScrapeText(ctx context.Context, hc *http.Client, managementURL string) (Families, error) {
	if hc == nil {
		hc = &http.Client{Timeout: DefaultScrapeTimeout}
	}
	u := MetricsURL(managementURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	// Ask for the classic text format: the parser rejects OpenMetrics.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{URL: u, Code: resp.StatusCode}
	}
	fams, err := ParseText(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	return fams, nil
}

// Scrape GETs {managementURL}/metrics and reduces it to Metrics.
func Scrape(ctx context.Context, hc *http.Client, managementURL string) (Metrics, error) {
	fams, err := ScrapeText(ctx, hc, managementURL)
	if err != nil {
		return Metrics{}, fmt.Errorf("scrape: %w", err)
	}
	return metricsFrom(fams), nil
}

// MetricsSource samples Keycloak's management /metrics: heap, GC, HTTP
// requests, DB pool, worker pool and cache sizes, and, when CPU is set,
// the JVM's CPU % (for targets whose process kcbench cannot see).
type MetricsSource struct {
	URL    string       // the management URL, e.g. http://127.0.0.1:9000
	Client *http.Client // nil: DefaultScrapeTimeout
	CPU    bool         // fill KCCPUPct from the process CPU counter

	gcCount, gcPause, reqs, cpu counter
	missing                     map[string]bool // families absent from every scrape so far
	scraped                     bool
}

var _ Source = (*MetricsSource)(nil)

// NewMetricsSource scrapes managementURL/metrics.
func NewMetricsSource(managementURL string, hc *http.Client, cpu bool) *MetricsSource {
	return &MetricsSource{URL: managementURL, Client: hc, CPU: cpu}
}

// Name implements Source.
func (s *MetricsSource) Name() string {
	return "keycloak metrics (" + strings.TrimRight(s.URL, "/") + "/metrics)"
}

// results.ObserveSample implements Source. Counter rates start with the second sample.
func (s *MetricsSource) Sample(ctx context.Context) (results.ObserveSample, error) {
	m, err := Scrape(ctx, s.Client, s.URL)
	now := time.Now()
	out := results.BlankObserveSample(now)
	if err != nil {
		return out, err
	}
	s.noteMissing(m.Missing())
	out.HeapUsed = m.HeapUsed
	out.HeapCommitted = m.HeapCommitted
	out.GCCount = s.gcCount.rate(m.GCCount, now)
	out.GCPauseSeconds = s.gcPause.rate(m.GCPauseSeconds, now)
	out.HTTPRequests = s.reqs.rate(m.HTTPRequests, now)
	out.DBPoolActive = m.DBPoolActive
	out.DBPoolAwaiting = m.DBPoolAwaiting
	out.DBPoolMaxUsed = m.DBPoolMaxUsed
	out.WorkerActive = m.WorkerActive
	out.WorkerQueue = m.WorkerQueue
	if s.CPU {
		out.KCCPUPct = s.cpu.rate(m.CPUSeconds, now) * 100
	}
	if m.CacheEntries != nil {
		out.CacheRealms = entries(m.CacheEntries, "realms")
		out.CacheUsers = entries(m.CacheEntries, "users")
		out.CacheSessions = entries(m.CacheEntries, "sessions")
	}
	return out, nil
}

func entries(m map[string]float64, cache string) float64 {
	if v, ok := m[cache]; ok {
		return v
	}
	return math.NaN()
}

// noteMissing keeps the families absent from every scrape.
func (s *MetricsSource) noteMissing(now []string) {
	if !s.scraped {
		s.scraped = true
		s.missing = map[string]bool{}
		for _, n := range now {
			s.missing[n] = true
		}
		return
	}
	still := map[string]bool{}
	for _, n := range now {
		if s.missing[n] {
			still[n] = true
		}
	}
	s.missing = still
}

// Unavailable lists the metric families no scrape had; the Recorder adds
// them to its own Unavailable.
func (s *MetricsSource) Unavailable() []string {
	var out []string
	for n := range s.missing {
		if n == MetricCPUNanos && !s.CPU {
			continue
		}
		out = append(out, fmt.Sprintf("keycloak metric %s: not exposed by %s", n, strings.TrimRight(s.URL, "/")+"/metrics"))
	}
	sort.Strings(out)
	return out
}
