package observe

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"
)

// MetricUptime is the JVM's time since start, in seconds (a gauge).
const MetricUptime = "process_uptime_seconds"

// MetricClusterSize is the number of nodes in a Keycloak node's cluster
// view (Infinispan's gauge, labelled with the node's name); every 26.x
// line exposes it, 1 on a node alone.
const MetricClusterSize = "vendor_cluster_size"

// Pod is what one Keycloak pod's management metrics say of it.
type Pod struct {
	URL    string        // its management URL
	Uptime time.Duration // the JVM's time since start
	// Node is the node's name in the cluster and ClusterSize the nodes in
	// its view; "" and 0 when its metrics do not say.
	Node        string
	ClusterSize int
}

// ReadPods scrapes each management URL once.
func ReadPods(ctx context.Context, hc *http.Client, managementURLs []string) ([]Pod, error) {
	pods := make([]Pod, 0, len(managementURLs))
	for _, u := range managementURLs {
		fams, err := ScrapeText(ctx, hc, u)
		if err != nil {
			return nil, err
		}
		v := sum(fams[MetricUptime], nil, value)
		if math.IsNaN(v) || v < 0 {
			return nil, fmt.Errorf("%s: no %s", MetricsURL(u), MetricUptime)
		}
		p := Pod{URL: u, Uptime: time.Duration(v * float64(time.Second))}
		if f := fams[MetricClusterSize]; f != nil {
			for _, m := range f.GetMetric() {
				if n := value(m); n > float64(p.ClusterSize) && n < math.MaxInt32 {
					p.ClusterSize, p.Node = int(n), label(m, "node")
				}
			}
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// Youngest is the shortest uptime of pods: the coldest JVM's.
func Youngest(pods []Pod) time.Duration {
	if len(pods) == 0 {
		return 0
	}
	return slices.MinFunc(pods, func(a, b Pod) int { return int(a.Uptime - b.Uptime) }).Uptime
}

// ClusterSize is the largest cluster view any pod reports (0: none says).
func ClusterSize(pods []Pod) int {
	n := 0
	for _, p := range pods {
		n = max(n, p.ClusterSize)
	}
	return n
}

// PodsWarning says why CPU summed over pods is not the whole cluster's:
// two URLs that reached the same node (a Service's URL, which lands on
// another pod each scrape), or a cluster larger than the URLs given. It is
// "" when neither is seen.
func PodsWarning(pods []Pod) string {
	seen := map[string]string{}
	for _, p := range pods {
		if p.Node == "" {
			continue
		}
		if first, ok := seen[p.Node]; ok {
			return fmt.Sprintf("%s and %s reached the same Keycloak node (%s): server CPU counts it twice; give each pod's own management URL (a Service's URL lands on any pod)",
				first, p.URL, p.Node)
		}
		seen[p.Node] = p.URL
	}
	if n := ClusterSize(pods); n > len(pods) {
		return fmt.Sprintf("Keycloak's cluster has %d nodes (%s) and server CPU is read from %d management URL(s): the CPU per operation counts %d of the %d pods' work; give --management-url once per pod",
			n, MetricClusterSize, len(pods), len(pods), n)
	}
	return ""
}
