package sizing

import (
	"context"
	"errors"
	"fmt"
	"github.com/kcbench/kcbench/internal/kc"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/observe"
)

// metricsScrapeTimeout bounds one GET of /metrics.
const metricsScrapeTimeout = 10 * time.Second

// observeLoad reads every URL's /metrics, waits interval, reads them again
// and returns the rates between the two reads (summed over the URLs, one
// per Keycloak pod) times peak.
func observeLoad(ctx context.Context, d Deps, urls []string, interval time.Duration, peak float64) (Live, error) {
	var names []string
	for _, u := range urls {
		names = append(names, observe.MetricsURL(u))
	}
	scrapeAll := func() (Snapshot, error) {
		all := Snapshot{}
		for _, u := range urls {
			s, err := scrapeSnapshot(ctx, d.HC, u)
			if err != nil {
				return nil, kc.Untrusted(u, err)
			}
			all.Merge(observe.MetricsURL(u), s)
		}
		return all, nil
	}
	d.Logf("size: reading %s, again in %s", strings.Join(names, ", "), interval)
	t0 := d.Now()
	before, err := scrapeAll()
	if err != nil {
		return Live{}, err
	}
	if err := d.Sleep(ctx, interval); err != nil {
		return Live{}, err
	}
	t1 := d.Now()
	after, err := scrapeAll()
	if err != nil {
		return Live{}, err
	}
	live, err := LiveRates(before, after, t1.Sub(t0), peak)
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

// scrapeSnapshot reads {managementURL}/metrics and keeps the families the
// live sizing reads.
func scrapeSnapshot(ctx context.Context, hc *http.Client, managementURL string) (Snapshot, error) {
	u := observe.MetricsURL(managementURL)
	fams, err := observe.ScrapeText(ctx, hc, managementURL)
	var se *observe.StatusError
	switch {
	case err == nil:
		return SnapshotOf(fams), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		return nil, fmt.Errorf("--from-metrics: %s: HTTP 404: metrics are served on Keycloak's management interface "+
			"(port 9000 by default) when it runs with %s", u, OptMetricsEnabled)
	case errors.As(err, &se):
		return nil, fmt.Errorf("--from-metrics: %w", err)
	}
	var ue *url.Error
	switch {
	case errors.As(err, &ue) && ue.Op == "parse":
		return nil, cliutil.Usagef("--from-metrics %s: %v", managementURL, err)
	case errors.As(err, &ue):
		return nil, fmt.Errorf("--from-metrics: cannot read %s: %w (is Keycloak running, and is this its management "+
			"URL, port 9000 by default?)", u, ue.Err)
	}
	return nil, fmt.Errorf("--from-metrics: %w", err)
}
