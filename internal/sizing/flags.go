package sizing

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/results"
)

// MeasuredSource names kcbench's CPU-ms figures as the source of the rates.
const MeasuredSource = "measured by kcbench"

// MemoryOverrideSource names --memory-request-mib as the source of the memory.
const MemoryOverrideSource = "--memory-request-mib"

// Defaults of kcbench size's live and tenant modes.
const (
	defaultMetricsInterval = 30 * time.Second
	defaultPeak            = 1.0
)

// Flags are the flags of kcbench size.
type Flags struct {
	in                       Input
	asJSON, k8s              bool
	loginMs, ccMs, refreshMs float64
	memoryRequestMiB         float64

	// --from: costs measured in a results folder.
	from, variant string
	// --from-metrics: the load a running Keycloak reports.
	fromMetrics cliutil.List
	caFile      string
	insecure    bool
	interval    time.Duration
	peak        float64
	// --tenants-from: the tenant capacity under SLOs.
	tenantsFrom              string
	sloAdminP95, sloTokenP95 time.Duration
	sloErrorPct              float64
	sloPhase                 string
	memoryLimitMiB           float64
}

// loadFlags set the load, costFlags the cost per operation, sloFlags the
// objectives of --tenants-from.
func loadFlags() []string { return []string{"logins", "client-credentials", "refresh", "logouts"} }
func costFlags() []string { return []string{"login-cpu-ms", "cc-cpu-ms", "refresh-cpu-ms"} }
func sloFlags() []string {
	return []string{"slo-admin-p95", "slo-token-p95", "slo-error-rate", "slo-phase", "memory-limit-mib"}
}

func (f *Flags) Register(fs *flag.FlagSet) {
	f.in = DefaultInput()
	fs.Float64Var(&f.in.LoginsPerSec, "logins", 0, "`N` password logins per second (cluster total)")
	fs.Float64Var(&f.in.ClientCredentialsPerSec, "client-credentials", 0, "`N` client-credential grants per second (cluster total)")
	fs.Float64Var(&f.in.RefreshesPerSec, "refresh", 0, "`N` refresh-token requests per second (cluster total)")
	fs.Float64Var(&f.in.LogoutsPerSec, "logouts", 0, "`N` logouts per second; they cost only database CPU and IOPS in the guide's model")
	fs.IntVar(&f.in.Pods, "pods", DefaultPods, "`N` Keycloak pods per site; the cluster CPU is divided evenly over them")
	fs.Float64Var(&f.in.HeadroomPct, "headroom", DefaultHeadroomPct, "CPU limit's extra over the request, in `PCT` (limit = request × (1 + PCT/100))")
	fs.IntVar(&f.in.Sites, "sites", 1, "`N`: 1, or 2 for two active-active sites (same pods and memory; CPU per --second-site)")
	fs.TextVar(&f.in.SecondSite, "second-site", SecondSiteSame,
		"`STRATEGY` for the CPU of the second site with --sites 2: same (fast failover, most expensive), half-requests "+
			"(half the requests, same limits), or half (half of both; scale to twice the pods on failover)")
	fs.IntVar(&f.in.ConcurrentClients, "concurrent-clients", 0,
		fmt.Sprintf("`N` clients used at the same time; above %d the users and realms caches are raised to %d× and %d× that",
			GuideClientsThreshold, UsersCachePerClient, RealmsCachePerClient))
	fs.BoolVar(&f.asJSON, "json", false, "print the sizing as JSON (the Result with its input and steps); "+
		"with the CPU-ms flags an object with guide, measured, rates_comparison and sizing_comparison; with --from one "+
		"such object per variant under variants (with its calibration); with --from-metrics the observed load under observed")
	fs.BoolVar(&f.k8s, "k8s", false, "print YAML for a Keycloak CR's spec: instances, resources (requests and limits) "+
		"and the cache options; with the CPU-ms flags, for the measured sizing; with --from, one document per variant")
	fs.Float64Var(&f.loginMs, "login-cpu-ms", 0, "`MS`: server CPU-ms per login as kcbench measures it (with --cc-cpu-ms and --refresh-cpu-ms: "+
		"size with rate = 1000 ÷ CPU-ms and compare with the guide)")
	fs.Float64Var(&f.ccMs, "cc-cpu-ms", 0, "`MS`: server CPU-ms per client-credential grant as kcbench measures it (see --login-cpu-ms)")
	fs.Float64Var(&f.refreshMs, "refresh-cpu-ms", 0, "`MS`: server CPU-ms per refresh-token request as kcbench measures it (see --login-cpu-ms)")
	fs.Float64Var(&f.memoryRequestMiB, "memory-request-mib", 0,
		fmt.Sprintf("`MIB`: memory request per pod, e.g. a measured RSS, instead of the guide's %g (must exceed the %g MiB non-heap)",
			GuideMemoryRequestMiB, GuideNonHeapMiB))

	fs.StringVar(&f.from, "from", "", "`DIR`: a results folder (results/<experiment>, or one point's folder): size with the server CPU-ms "+
		"per login, client-credential grant and refresh kcbench measured there, per variant, next to the guide's")
	fs.StringVar(&f.variant, "variant", "", "`NAME`: with --from or --tenants-from, only this variant of the experiment")
	fs.Var(&f.fromMetrics, "from-metrics", "`URL`: management URL of a running Keycloak (e.g. http://host:9000); size for the "+
		"logins, client-credential grants, refreshes and logouts per second its /metrics report over --interval, times --peak. "+
		"Repeat it for every pod of a cluster: the rates are summed")
	fs.DurationVar(&f.interval, "interval", defaultMetricsInterval, "`DURATION` between the two reads of /metrics with --from-metrics")
	fs.StringVar(&f.caFile, "ca-file", "", "PEM file of the CA that signed an https --from-metrics URL's certificate (a local stack's: kcbench status prints it)")
	fs.BoolVar(&f.insecure, "insecure-skip-verify", false, "trust any certificate of an https --from-metrics URL")
	fs.Float64Var(&f.peak, "peak", defaultPeak, "`FACTOR` the observed rates are multiplied by (e.g. 3 for a peak of three times the observed load) with --from-metrics")
	fs.StringVar(&f.tenantsFrom, "tenants-from", "", "`DIR`: a multi-tenancy results folder: per mode, the largest tenant count at which "+
		"the SLOs (--slo-*, --memory-limit-mib) held and what broke first beyond it")
	fs.DurationVar(&f.sloAdminP95, "slo-admin-p95", DefaultSLOAdminP95, "`DURATION`: with --tenants-from, the bound on every admin REST operation's p95 (0: not checked)")
	fs.DurationVar(&f.sloTokenP95, "slo-token-p95", DefaultSLOTokenP95, "`DURATION`: with --tenants-from, the bound on every token-endpoint operation's p95 (0: not checked)")
	fs.Float64Var(&f.sloErrorPct, "slo-error-rate", 100*DefaultSLOMaxErrorRate, "`PCT`: with --tenants-from, the most failed iterations a workload may have (0: not checked)")
	fs.StringVar(&f.sloPhase, "slo-phase", DefaultSLOPhase, "`PHASE` whose latencies and errors --tenants-from checks: warm, cold, or all")
	fs.Float64Var(&f.memoryLimitMiB, "memory-limit-mib", 0, "`MIB`: with --tenants-from, the pod memory limit Keycloak's RSS must stay under "+
		"(default: the limit the sizing gives a pod, 1360 with the guide's memory)")
}

// format is the output format the flags ask for.
func (f *Flags) format() string {
	switch {
	case f.asJSON:
		return FormatJSON
	case f.k8s:
		return FormatK8s
	}
	return FormatText
}

func anySet(set map[string]bool, names []string) bool {
	for _, n := range names {
		if set[n] {
			return true
		}
	}
	return false
}

func setOf(set map[string]bool, names []string) []string {
	var out []string
	for _, n := range names {
		if set[n] {
			out = append(out, "--"+n)
		}
	}
	return out
}

// Inputs turns the flags into the Input to size and, when the three CPU-ms
// flags are given, the guide's Input for the same load to compare it with
// (nil otherwise). --memory-request-mib changes the Input to size only. It
// reports every problem at once, named by flag, as a usage error.
func (f *Flags) Inputs(set map[string]bool) (in Input, guide *Input, err error) {
	var problems []string
	if f.asJSON && f.k8s {
		problems = append(problems, "--json and --k8s: pick one")
	}
	if set["second-site"] && f.in.Sites != 2 {
		problems = append(problems, "--second-site: only applies with --sites 2")
	}
	problems = append(problems, f.modeProblems(set)...)

	in = f.in
	compare := false

	msFlags := []struct {
		name string
		v    float64
	}{{"login-cpu-ms", f.loginMs}, {"cc-cpu-ms", f.ccMs}, {"refresh-cpu-ms", f.refreshMs}}
	var given, missing []string
	msOK := true
	for _, m := range msFlags {
		if !set[m.name] {
			missing = append(missing, "--"+m.name)
			continue
		}
		given = append(given, "--"+m.name)
		if !(m.v > 0) || math.IsInf(m.v, 0) {
			problems = append(problems, fmt.Sprintf("--%s: must be a finite number of milliseconds > 0, got %g", m.name, m.v))
			msOK = false
		}
	}
	switch {
	case len(given) > 0 && len(missing) > 0:
		problems = append(problems, fmt.Sprintf("missing %s: --login-cpu-ms, --cc-cpu-ms and --refresh-cpu-ms go together",
			strings.Join(missing, " and ")))
	case len(given) == 3 && msOK:
		in.Rates = RatesFromCPUms(f.loginMs, f.ccMs, f.refreshMs, MeasuredSource)
		compare = true
	}

	if set["memory-request-mib"] {
		m := f.memoryRequestMiB
		if !(m > GuideNonHeapMiB) || math.IsInf(m, 0) {
			problems = append(problems, fmt.Sprintf("--memory-request-mib: must be a finite number above the %g MiB non-heap memory, got %g",
				GuideNonHeapMiB, m))
		} else {
			in.Memory.RequestMiB = m
			in.Memory.Source = MemoryOverrideSource
		}
	}

	if err := in.Validate(); err != nil {
		problems = append(problems, flagProblems(err)...)
	}
	switch len(problems) {
	case 0:
	case 1:
		return in, nil, cliutil.Usagef("size: %s", problems[0])
	default:
		return in, nil, cliutil.Usagef("size: %d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	if compare {
		g := f.in
		return in, &g, nil
	}
	return in, nil, nil
}

// modeProblems checks the flags of the --from, --from-metrics and
// --tenants-from modes: what each needs, and what does not go together.
func (f *Flags) modeProblems(set map[string]bool) []string {
	var problems []string
	if f.tenantsFrom != "" {
		var off []string
		for _, n := range []string{"from", "from-metrics", "k8s"} {
			if set[n] {
				off = append(off, "--"+n)
			}
		}
		off = append(off, setOf(set, loadFlags())...)
		off = append(off, setOf(set, costFlags())...)
		if len(off) > 0 {
			problems = append(problems, fmt.Sprintf("--tenants-from reports tenant capacity, not a sizing for a load: drop %s",
				strings.Join(off, ", ")))
		}
	} else if given := setOf(set, sloFlags()); len(given) > 0 {
		problems = append(problems, fmt.Sprintf("%s: only with --tenants-from", strings.Join(given, ", ")))
	}
	if f.tenantsFrom == "" && len(f.fromMetrics) == 0 && (f.from == "" || anySet(set, loadFlags())) &&
		f.in.LoginsPerSec+f.in.ClientCredentialsPerSec+f.in.RefreshesPerSec == 0 {
		problems = append(problems, "size needs a rate: give --logins N, --client-credentials N or --refresh N per second "+
			"(logouts alone cost no Keycloak CPU), or --from-metrics URL to read them from a running Keycloak")
	}
	if set["from"] && f.from == "" {
		problems = append(problems, "--from: want a results folder, e.g. results/quickstart")
	}
	if set["tenants-from"] && f.tenantsFrom == "" {
		problems = append(problems, "--tenants-from: want a results folder, e.g. results/multitenancy")
	}
	if f.from != "" {
		if given := setOf(set, costFlags()); len(given) > 0 {
			problems = append(problems, fmt.Sprintf("--from and %s: both give the cost per operation; pick one", strings.Join(given, ", ")))
		}
	}
	if set["variant"] && f.from == "" && f.tenantsFrom == "" {
		problems = append(problems, "--variant: only with --from or --tenants-from")
	}
	if len(f.fromMetrics) > 0 {
		if given := setOf(set, loadFlags()); len(given) > 0 {
			problems = append(problems, fmt.Sprintf("--from-metrics and %s: both give the load; pick one", strings.Join(given, ", ")))
		}
		for _, u := range f.fromMetrics {
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				problems = append(problems, fmt.Sprintf("--from-metrics %q: want Keycloak's management URL, e.g. http://127.0.0.1:9000", u))
			}
		}
		if f.interval <= 0 || f.interval > time.Hour {
			problems = append(problems, fmt.Sprintf("--interval: must be > 0 and at most 1h, got %s", f.interval))
		}
		if !(f.peak > 0 && f.peak <= 1000) {
			problems = append(problems, fmt.Sprintf("--peak: must be a factor > 0 and at most 1000, got %g", f.peak))
		}
	} else if given := setOf(set, []string{"interval", "peak"}); len(given) > 0 {
		problems = append(problems, fmt.Sprintf("%s: only with --from-metrics", strings.Join(given, ", ")))
	}
	if f.tenantsFrom != "" {
		if f.sloAdminP95 < 0 {
			problems = append(problems, fmt.Sprintf("--slo-admin-p95: must be ≥ 0, got %s", f.sloAdminP95))
		}
		if f.sloTokenP95 < 0 {
			problems = append(problems, fmt.Sprintf("--slo-token-p95: must be ≥ 0, got %s", f.sloTokenP95))
		}
		if !(f.sloErrorPct >= 0 && f.sloErrorPct <= 100) {
			problems = append(problems, fmt.Sprintf("--slo-error-rate: must be a percentage from 0 to 100, got %g", f.sloErrorPct))
		}
		switch f.sloPhase {
		case results.PhaseWarm, results.PhaseCold, "all":
		default:
			problems = append(problems, fmt.Sprintf("--slo-phase: want warm, cold or all, got %q", f.sloPhase))
		}
		if set["memory-limit-mib"] && !(f.memoryLimitMiB > 0 && f.memoryLimitMiB <= MaxMemoryMiB) {
			problems = append(problems, fmt.Sprintf("--memory-limit-mib: must be a number of MiB > 0 and at most %d, got %g", MaxMemoryMiB, f.memoryLimitMiB))
		}
	}
	return problems
}

// flagProblems lists the problems in err, a joined sizing validation error,
// one per field, named by the flag that sets the field.
func flagProblems(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, flagProblems(e)...)
		}
		return out
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return []string{flagFor(fe.Field) + ": " + fe.Problem}
	}
	return []string{err.Error()}
}

// flagFor names the flag that sets the Input field at the JSON path field.
func flagFor(field string) string {
	switch field {
	case "logins_per_sec":
		return "--logins"
	case "client_credentials_per_sec":
		return "--client-credentials"
	case "refreshes_per_sec":
		return "--refresh"
	case "logouts_per_sec":
		return "--logouts"
	case "pods":
		return "--pods"
	case "headroom_pct":
		return "--headroom"
	case "sites":
		return "--sites"
	case "second_site":
		return "--second-site"
	case "concurrent_clients":
		return "--concurrent-clients"
	case "rates.logins_per_vcpu":
		return "--login-cpu-ms (as a rate per vCPU)"
	case "rates.client_credentials_per_vcpu":
		return "--cc-cpu-ms (as a rate per vCPU)"
	case "rates.refreshes_per_vcpu":
		return "--refresh-cpu-ms (as a rate per vCPU)"
	case "memory.request_mib", "memory.non_heap_mib":
		return "--memory-request-mib (" + field + ")"
	}
	return field
}
