package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// nodesFile is what each node of a cluster (or a CPU-limited node) did
// over a capacity search, as kcbench capacity writes it beside
// capacity.json (experiment.NodesFile; the stack's NodeSamples).
const nodesFile = "nodes.json"

type nodesJSON struct {
	Nodes []struct {
		Node       int   `json:"node"`
		CPUNs      int64 `json:"cpu_ns"`
		RSSBytes   int64 `json:"rss_bytes"`
		Throttling *struct {
			Periods   int64 `json:"nr_periods"`
			Throttled int64 `json:"nr_throttled"`
			TimeNs    int64 `json:"throttled_ns"`
		} `json:"throttling"`
		Requests *int64 `json:"lb_requests"`
	} `json:"nodes"`
	BalancerCPUNs int64 `json:"balancer_cpu_ns"`
}

// nodeTable is the per-node table of a search folder's nodes.json, so
// that an uneven balance shows; nil when there is none.
func nodeTable(dir, label string) (*Table, error) {
	b, err := fileutil.ReadFile(filepath.Join(dir, nodesFile), fileutil.MaxResultFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d nodesJSON
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", nodesFile, err)
	}
	if len(d.Nodes) == 0 {
		return nil, nil
	}
	var cpuSum, reqSum int64
	for _, n := range d.Nodes {
		cpuSum += n.CPUNs
		if n.Requests != nil {
			reqSum += *n.Requests
		}
	}
	share := func(v, sum int64) string {
		if sum <= 0 {
			return "-"
		}
		return strconv.FormatFloat(100*float64(v)/float64(sum), 'f', 1, 64)
	}
	t := &Table{Title: "Nodes: " + label,
		Header:  []string{"node", "requests from the balancer", "requests %", "CPU s", "CPU %", "throttled periods %", "throttled s", "RSS MiB"},
		Caption: "What each node did over the search; an even balance gives every node the same share of requests and CPU."}
	for _, n := range d.Nodes {
		req, reqPct := "-", "-"
		if n.Requests != nil {
			req, reqPct = strconv.FormatInt(*n.Requests, 10), share(*n.Requests, reqSum)
		}
		thrPct, thrS := "-", "-"
		if th := n.Throttling; th != nil {
			thrPct = share(th.Throttled, th.Periods)
			thrS = fmtFixed(1)(time.Duration(th.TimeNs).Seconds())
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(n.Node), req, reqPct, fmtFixed(1)(time.Duration(n.CPUNs).Seconds()),
			share(n.CPUNs, cpuSum), thrPct, thrS, optNum(float64(n.RSSBytes)/mib, fmtFixed(0))})
	}
	if d.BalancerCPUNs > 0 {
		t.Caption += fmt.Sprintf(" HAProxy used %.1f s of CPU (not in the server's CPU-ms/op).", time.Duration(d.BalancerCPUNs).Seconds())
	}
	return t, nil
}
