package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kcbench/kcbench/internal/sizing"
)

// measuredSource names kcbench's CPU-ms figures as the source of the rates.
const measuredSource = "measured by kcbench"

// memoryOverrideSource names --memory-request-mib as the source of the memory.
const memoryOverrideSource = "--memory-request-mib"

// sizeFlags are the flags of kcbench size.
type sizeFlags struct {
	in                       sizing.Input
	asJSON, k8s              bool
	loginMs, ccMs, refreshMs float64
	memoryRequestMiB         float64
}

func (f *sizeFlags) register(fs *flag.FlagSet) {
	f.in = sizing.DefaultInput()
	fs.Float64Var(&f.in.LoginsPerSec, "logins", 0, "`N` password logins per second (cluster total)")
	fs.Float64Var(&f.in.ClientCredentialsPerSec, "client-credentials", 0, "`N` client-credential grants per second (cluster total)")
	fs.Float64Var(&f.in.RefreshesPerSec, "refresh", 0, "`N` refresh-token requests per second (cluster total)")
	fs.Float64Var(&f.in.LogoutsPerSec, "logouts", 0, "`N` logouts per second; they cost only database CPU and IOPS in the guide's model")
	fs.IntVar(&f.in.Pods, "pods", sizing.DefaultPods, "`N` Keycloak pods per site; the cluster CPU is divided evenly over them")
	fs.Float64Var(&f.in.HeadroomPct, "headroom", sizing.DefaultHeadroomPct, "CPU limit's extra over the request, in `PCT` (limit = request × (1 + PCT/100))")
	fs.IntVar(&f.in.Sites, "sites", 1, "`N`: 1, or 2 for two active-active sites (same pods and memory; CPU per --second-site)")
	fs.TextVar(&f.in.SecondSite, "second-site", sizing.SecondSiteSame,
		"`STRATEGY` for the CPU of the second site with --sites 2: same (fast failover, most expensive), half-requests "+
			"(half the requests, same limits), or half (half of both; scale to twice the pods on failover)")
	fs.IntVar(&f.in.ConcurrentClients, "concurrent-clients", 0,
		fmt.Sprintf("`N` clients used at the same time; above %d the users and realms caches are raised to %d× and %d× that",
			sizing.GuideClientsThreshold, sizing.UsersCachePerClient, sizing.RealmsCachePerClient))
	fs.BoolVar(&f.asJSON, "json", false, "print the sizing as JSON (the Result with its input and steps); "+
		"with the CPU-ms flags an object with guide, measured, rates_comparison and sizing_comparison")
	fs.BoolVar(&f.k8s, "k8s", false, "print YAML for a Keycloak CR's spec: instances, resources (requests and limits) "+
		"and the cache options; with the CPU-ms flags, for the measured sizing")
	fs.Float64Var(&f.loginMs, "login-cpu-ms", 0, "`MS`: server CPU-ms per login as kcbench measures it (with --cc-cpu-ms and --refresh-cpu-ms: "+
		"size with rate = 1000 ÷ CPU-ms and compare with the guide)")
	fs.Float64Var(&f.ccMs, "cc-cpu-ms", 0, "`MS`: server CPU-ms per client-credential grant as kcbench measures it (see --login-cpu-ms)")
	fs.Float64Var(&f.refreshMs, "refresh-cpu-ms", 0, "`MS`: server CPU-ms per refresh-token request as kcbench measures it (see --login-cpu-ms)")
	fs.Float64Var(&f.memoryRequestMiB, "memory-request-mib", 0,
		fmt.Sprintf("`MIB`: memory request per pod, e.g. a measured RSS, instead of the guide's %g (must exceed the %g MiB non-heap)",
			sizing.GuideMemoryRequestMiB, sizing.GuideNonHeapMiB))
}

// sizeUsage explains the guide's rules for kcbench size -h. Its numbers come
// from the sizing package's constants, so they cannot drift from the code.
func sizeUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, `Usage: kcbench size --logins N --client-credentials N --refresh N [--logouts N] [flags]

Sizes Keycloak pods, the database and the caches for a target load with the
rules of the %s, and prints every number with the
arithmetic that produced it:

  Keycloak vCPU     logins/s ÷ %g + client-credential grants/s ÷ %g + refreshes/s ÷ %g
                    (cluster total; logouts cost no Keycloak CPU)
  CPU per pod       request = vCPU ÷ pods, limit = request × (1 + headroom)
  memory per pod    request = %g MiB (realm caches and 10,000 sessions);
                    limit = (request − %g MiB non-heap) ÷ %g, rounded up to %d MiB
  database          per %g login + logout + refresh req/s: %g–%g vCPU and %g write
                    IOPS, plus %g vCPU idle (sessions stored in the database)
  caches            above %d concurrently used clients: users cache %d×, realms
                    cache %d× the clients

The guide's rates are replaced by measured ones with --login-cpu-ms, --cc-cpu-ms
and --refresh-cpu-ms together (rate per vCPU = 1000 ÷ CPU-ms); the output then
puts the guide's figures and the measured ones side by side with their ratio.
For now they are given by flag; reading them from a results folder comes later.

Flags:
`, sizing.GuideSource,
		sizing.GuideLoginsPerVCPU, sizing.GuideClientCredentialsPerVCPU, sizing.GuideRefreshesPerVCPU,
		sizing.GuideMemoryRequestMiB, sizing.GuideNonHeapMiB, sizing.GuideHeapPct/100, sizing.MemoryLimitStepMiB,
		sizing.GuideDBRequestsUnit, sizing.GuideDBVCPUMinPerUnit, sizing.GuideDBVCPUMaxPerUnit, sizing.GuideDBWriteIOPSPerUnit,
		sizing.GuideDBIdleVCPU,
		sizing.GuideClientsThreshold, sizing.UsersCachePerClient, sizing.RealmsCachePerClient)
	fs.PrintDefaults()
}

func cmdSize(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "size", "size [flags]")
	fs.Usage = func() { sizeUsage(e.stderr, fs) }
	var f sizeFlags
	f.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })

	in, guide, err := f.inputs(set)
	if err != nil {
		return err
	}
	r, err := sizing.Calculate(in)
	if err != nil {
		return err // inputs has validated in; this is a bug, not a usage error
	}
	switch {
	case f.k8s:
		return r.WriteK8s(e.stdout)
	case guide == nil && f.asJSON:
		return writeJSON(e.stdout, r)
	case guide == nil:
		return r.WriteText(e.stdout)
	}

	gr, err := sizing.Calculate(*guide)
	if err != nil {
		return err
	}
	rates := sizing.Compare(gr.Input.Rates, r.Input.Rates)
	figures := sizing.CompareResults(gr, r)
	if f.asJSON {
		return writeJSON(e.stdout, struct {
			Guide            sizing.Result     `json:"guide"`
			Measured         sizing.Result     `json:"measured"`
			RatesComparison  sizing.Comparison `json:"rates_comparison"`
			SizingComparison sizing.Comparison `json:"sizing_comparison"`
		}{gr, r, rates, figures})
	}
	if err := r.WriteText(e.stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nCompared with the %s (ratio = measured ÷ guide)\n\n", sizing.GuideSource)
	fmt.Fprintf(e.stdout, "Rates (a ratio above 1 means more operations per vCPU, or more CPU-ms per operation)\n")
	if err := rates.WriteText(e.stdout); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nSizing for this load (a ratio above 1 means more resources)\n")
	return figures.WriteText(e.stdout)
}

// inputs turns the flags into the Input to size and, when the three CPU-ms
// flags are given, the guide's Input for the same load to compare it with
// (nil otherwise). --memory-request-mib changes the Input to size only. It
// reports every problem at once, named by flag, as a usage error.
func (f *sizeFlags) inputs(set map[string]bool) (in sizing.Input, guide *sizing.Input, err error) {
	var problems []string
	if f.asJSON && f.k8s {
		problems = append(problems, "--json and --k8s: pick one")
	}
	if set["second-site"] && f.in.Sites != 2 {
		problems = append(problems, "--second-site: only applies with --sites 2")
	}

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
		in.Rates = sizing.RatesFromCPUms(f.loginMs, f.ccMs, f.refreshMs, measuredSource)
		compare = true
	}

	if set["memory-request-mib"] {
		m := f.memoryRequestMiB
		if !(m > sizing.GuideNonHeapMiB) || math.IsInf(m, 0) {
			problems = append(problems, fmt.Sprintf("--memory-request-mib: must be a finite number above the %g MiB non-heap memory, got %g",
				sizing.GuideNonHeapMiB, m))
		} else {
			in.Memory.RequestMiB = m
			in.Memory.Source = memoryOverrideSource
		}
	}

	if err := in.Validate(); err != nil {
		problems = append(problems, flagProblems(err)...)
	}
	switch len(problems) {
	case 0:
	case 1:
		return in, nil, usagef("size: %s", problems[0])
	default:
		return in, nil, usagef("size: %d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	if compare {
		g := f.in
		return in, &g, nil
	}
	return in, nil, nil
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
	var fe *sizing.FieldError
	if errors.As(err, &fe) {
		return []string{flagFor(fe.Field) + ": " + fe.Problem}
	}
	return []string{err.Error()}
}

// flagFor names the flag that sets the sizing.Input field at the JSON path field.
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
