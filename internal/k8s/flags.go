package k8s

import (
	"flag"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// Synopsis is the usage line of kcbench k8s (its help page is cmd/kcbench/help).
const Synopsis = `k8s manifests|collect [flags]`

// RegisterFlags adds the flags of kcbench k8s manifests that set o, and
// --start-in and --start-at.
func (o *Options) RegisterFlags(fs *flag.FlagSet) (startIn *time.Duration, startAt *string) {
	fs.IntVar(&o.Agents, "agents", 0, "`N` agent pods, each running 1/N of the load")
	fs.StringVar(&o.Image, "image", "", "container `IMAGE` with kcbench on its PATH")
	fs.StringVar(&o.Target, "target", "", "Keycloak's `URL` as the pods reach it, e.g. http://keycloak-service:8080")
	fs.Var((*cliutil.List)(&o.MgmtURLs), "management-url", "a Keycloak pod's management `URL` (server CPU from /metrics), once per pod, e.g. http://keycloak-0.keycloak-discovery:9000: a Service's URL reaches another pod each scrape")
	fs.StringVar(&o.Name, "name", "kcbench", "`NAME` of the Job, ConfigMap and Secret")
	fs.StringVar(&o.Namespace, "namespace", "", "`NS` of the objects (default: kubectl's)")
	fs.StringVar(&o.CPU, "cpu", "1", "CPU request and limit per agent")
	fs.StringVar(&o.Memory, "memory", "512Mi", "memory request and limit per agent")
	startIn = fs.Duration("start-in", 2*time.Minute, "the agents start this long after now (time to apply and pull the image)")
	startAt = fs.String("start-at", "", "`TIME` (RFC 3339) the agents start at, instead of --start-in")
	return startIn, startAt
}
