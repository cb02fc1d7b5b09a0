package k8s

import (
	"flag"
	"time"
)

// Synopsis is kcbench k8s's help.
const Synopsis = `k8s manifests|collect [flags]

kcbench k8s manifests --agents N --file run.yaml --image IMAGE --target URL [--manifest dataset.json] [--start-in 2m]
  prints a ConfigMap with the run file, a Secret with the dataset manifest
  (when given) and an Indexed Job of N pods, each running its segment of
  the run (kcbench load --segments N, index from JOB_COMPLETION_INDEX),
  all starting at the same instant, each printing its results as a bundle
  on stdout. Pipe it into kubectl apply -f -.

kcbench k8s manifests --agents N --image IMAGE --target URL [--manifest dataset.json] -- capacity FLAGS...
  the same for a split capacity search: each pod runs kcbench capacity
  FLAGS --segments N --start-at TIME --emit-results, its share of the
  fixed schedule (FLAGS need --max-rate; checked here as an agent would).

kcbench k8s collect --out DIR [LOG...]
  reads the pods' logs (files, or stdin: kubectl logs -l
  app.kubernetes.io/instance=NAME --tail=-1 --prefix | kcbench k8s collect
  --out DIR), writes each agent's folder to DIR/agent-<i> and the exact
  merge of them to DIR/merged (as kcbench merge; a split capacity
  search's agents merge and are judged step by step).`

// RegisterFlags adds the flags of kcbench k8s manifests that set o, and
// --start-in and --start-at.
func (o *Options) RegisterFlags(fs *flag.FlagSet) (startIn *time.Duration, startAt *string) {
	fs.IntVar(&o.Agents, "agents", 0, "`N` agent pods, each running 1/N of the load")
	fs.StringVar(&o.Image, "image", "", "container `IMAGE` with kcbench on its PATH")
	fs.StringVar(&o.Target, "target", "", "Keycloak's `URL` as the pods reach it, e.g. http://keycloak-service:8080")
	fs.StringVar(&o.MgmtURL, "management-url", "", "Keycloak's management `URL` (server CPU from /metrics), e.g. http://keycloak-service:9000")
	fs.StringVar(&o.Name, "name", "kcbench", "`NAME` of the Job, ConfigMap and Secret")
	fs.StringVar(&o.Namespace, "namespace", "", "`NS` of the objects (default: kubectl's)")
	fs.StringVar(&o.CPU, "cpu", "1", "CPU request and limit per agent")
	fs.StringVar(&o.Memory, "memory", "512Mi", "memory request and limit per agent")
	startIn = fs.Duration("start-in", 2*time.Minute, "the agents start this long after now (time to apply and pull the image)")
	startAt = fs.String("start-at", "", "`TIME` (RFC 3339) the agents start at, instead of --start-in")
	return startIn, startAt
}
