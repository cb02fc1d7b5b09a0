package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/kcbench/kcbench/internal/sizing"
)

// metricsScrapeTimeout bounds one GET of /metrics.
const metricsScrapeTimeout = 10 * time.Second

// metricsURL is managementURL's /metrics; a URL already ending in /metrics
// is kept.
func metricsURL(managementURL string) string {
	u := strings.TrimRight(managementURL, "/")
	if strings.HasSuffix(u, "/metrics") {
		return u
	}
	return u + "/metrics"
}

// observeLoad reads every URL's /metrics, waits interval, reads them again
// and returns the rates between the two reads (summed over the URLs, one
// per Keycloak pod) times peak.
func observeLoad(ctx context.Context, e *env, d sizeDeps, urls []string, interval time.Duration, peak float64) (sizing.Live, error) {
	var names []string
	for _, u := range urls {
		names = append(names, metricsURL(u))
	}
	scrapeAll := func() (sizing.Snapshot, error) {
		all := sizing.Snapshot{}
		for _, u := range urls {
			s, err := scrapeSnapshot(ctx, d.hc, u)
			if err != nil {
				return nil, err
			}
			all.Merge(metricsURL(u), s)
		}
		return all, nil
	}
	e.logf("size: reading %s, again in %s", strings.Join(names, ", "), interval)
	t0 := d.now()
	before, err := scrapeAll()
	if err != nil {
		return sizing.Live{}, err
	}
	if err := d.sleep(ctx, interval); err != nil {
		return sizing.Live{}, err
	}
	t1 := d.now()
	after, err := scrapeAll()
	if err != nil {
		return sizing.Live{}, err
	}
	live, err := sizing.LiveRates(before, after, t1.Sub(t0), peak)
	live.Source = strings.Join(names, " + ")
	if err != nil {
		return live, fmt.Errorf("--from-metrics %s: %w", live.Source, err)
	}
	if len(urls) == 1 {
		live.Notes = append(live.Notes, "These are one Keycloak's rates. Behind a load balancer with several pods, give every "+
			"pod's management URL (repeat --from-metrics): the guide's rates are cluster totals.")
	}
	return live, nil
}

// scrapeSnapshot GETs {managementURL}/metrics and keeps the families the
// live sizing reads.
func scrapeSnapshot(ctx context.Context, hc *http.Client, managementURL string) (sizing.Snapshot, error) {
	u := metricsURL(managementURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, usagef("--from-metrics %s: %v", managementURL, err)
	}
	// The classic text format: the parser does not read OpenMetrics.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("--from-metrics: cannot read %s: %w (is Keycloak running, and is this its management "+
			"URL, port 9000 by default?)", u, err)
	}
	defer func() {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("--from-metrics: %s: HTTP 404: metrics are served on Keycloak's management interface "+
			"(port 9000 by default) when it runs with %s", u, sizing.OptMetricsEnabled)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("--from-metrics: %s: HTTP %d", u, resp.StatusCode)
	}
	s, err := parseSnapshot(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("--from-metrics: %s: %w", u, err)
	}
	return s, nil
}

// parseSnapshot reads Prometheus text exposition format and keeps the
// counters of sizing.MetricUserEvents and sizing.MetricHashValidations. A
// family absent from the text has no key in the snapshot.
func parseSnapshot(r io.Reader) (sizing.Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	s := sizing.Snapshot{}
	for _, name := range []string{sizing.MetricUserEvents, sizing.MetricHashValidations} {
		f, ok := fams[name]
		if !ok {
			// Some exposers name the family without the _total suffix.
			f, ok = fams[strings.TrimSuffix(name, "_total")]
		}
		if !ok {
			continue
		}
		cs := []sizing.Counter{}
		for _, m := range f.GetMetric() {
			v, ok := counterValue(m)
			if !ok {
				continue
			}
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			cs = append(cs, sizing.Counter{Labels: labels, Value: v})
		}
		s[name] = cs
	}
	return s, nil
}

func counterValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}
