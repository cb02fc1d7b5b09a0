package sizing

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kcbench/kcbench/internal/results"
)

// Flag returns o as a command-line option: --name=value.
func (o Option) Flag() string { return "--" + o.Name + "=" + o.Value }

// load describes the input load in one line.
func (in Input) load() string {
	return fmt.Sprintf("%s logins/s, %s client-credential grants/s, %s refresh-token requests/s, %s logouts/s",
		num(in.LoginsPerSec), num(in.ClientCredentialsPerSec), num(in.RefreshesPerSec), num(in.LogoutsPerSec))
}

// WriteText writes a plain-text explanation of r to w: the input, every
// step of the arithmetic, a summary and the notes.
func (r Result) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	in := r.Input
	fmt.Fprintf(bw, "Keycloak sizing for %s\n", in.load())
	fmt.Fprintf(bw, "Rates:  %s\n", in.Rates)
	mem := fmt.Sprintf("%s MiB per pod, %s MiB non-heap, heap %s %% of the limit",
		num(in.Memory.RequestMiB), num(in.Memory.NonHeapMiB), num(in.Memory.HeapPct))
	if in.Memory.Source != "" {
		mem += " (" + in.Memory.Source + ")"
	}
	fmt.Fprintf(bw, "Memory: %s\n", mem)
	shape := fmt.Sprintf("%d %s, %d %s, CPU limit headroom %s %%",
		in.Pods, plural(in.Pods, "pod", "pods"), in.Sites, plural(in.Sites, "site", "sites"), num(in.HeadroomPct))
	if in.Sites == 2 {
		shape = fmt.Sprintf("%d %s per site, 2 sites active-active (second site: %s), CPU limit headroom %s %%",
			in.Pods, plural(in.Pods, "pod", "pods"), in.SecondSite, num(in.HeadroomPct))
	}
	fmt.Fprintf(bw, "Shape:  %s\n", shape)

	whatW, formulaW := 0, 0
	for _, s := range r.Steps {
		whatW = max(whatW, utf8.RuneCountInString(s.What))
		formulaW = max(formulaW, utf8.RuneCountInString(s.Formula))
	}
	section := ""
	for _, s := range r.Steps {
		if s.Section != section {
			section = s.Section
			fmt.Fprintf(bw, "\n%s\n", sectionTitle(section))
		}
		fmt.Fprintf(bw, "  %s  %s  = %s %s\n", pad(s.What, whatW), pad(s.Formula, formulaW), num(s.Value), s.Unit)
	}

	fmt.Fprintf(bw, "\nResult\n")
	for _, s := range r.Sites {
		p := s.Pod
		fmt.Fprintf(bw, "  %s: %d %s, each CPU %s vCPU request / %s vCPU limit, memory %s MiB request / %s MiB limit (heap max %s MiB)\n",
			s.Name, s.Pods, plural(s.Pods, "pod", "pods"), num(p.CPURequest.VCPU()), num(p.CPULimit.VCPU()),
			num(float64(p.MemoryRequest)), num(float64(p.MemoryLimit)), num(float64(p.HeapMax)))
	}
	if len(r.Sites) > 1 {
		t := r.Totals
		fmt.Fprintf(bw, "  all sites: %d pods, CPU %s vCPU request / %s vCPU limit, memory %s MiB request / %s MiB limit\n",
			t.Pods, num(t.CPURequest.VCPU()), num(t.CPULimit.VCPU()), num(float64(t.MemoryRequest)), num(float64(t.MemoryLimit)))
	}
	d := r.Database
	fmt.Fprintf(bw, "  database: about %s–%s vCPU plus %s vCPU idle, about %s write IOPS (%s session req/s)\n",
		num(d.ApproxVCPUMin), num(d.ApproxVCPUMax), num(d.IdleVCPU), num(d.ApproxWriteIOPS), num(d.RequestsPerSec))
	if c := r.Caches; c.Raise {
		flags := make([]string, len(c.Options))
		for i, o := range c.Options {
			flags[i] = o.Flag()
		}
		fmt.Fprintf(bw, "  caches: %s\n", strings.Join(flags, " "))
	} else if c.ConcurrentClients > 0 {
		fmt.Fprintf(bw, "  caches: defaults (%s entries each) suffice\n", num(DefaultCacheMaxCount))
	}

	if len(r.Notes) > 0 {
		fmt.Fprintf(bw, "\nNotes\n")
		for _, n := range r.Notes {
			fmt.Fprintf(bw, "  - %s\n", n)
		}
	}
	return bw.Flush()
}

func sectionTitle(s string) string {
	switch s {
	case SectionCPU:
		return s + " (cluster total, divided over the pods)"
	case SectionDatabase:
		return s + " (user sessions stored in it; per 100 login/logout/refresh req/s)"
	case SectionCaches:
		return s + " (users and realms, by concurrently used clients)"
	}
	return s
}

// WriteK8s writes r as YAML for a Keycloak custom resource's spec: instances,
// resources (requests and limits of CPU and memory) and, when more than
// GuideClientsThreshold clients are used concurrently, additionalOptions for
// the caches. Comments explain the Deployment equivalents and the heap. With
// two sites it writes one YAML document per site, separated by "---".
func (r Result) WriteK8s(w io.Writer) error {
	bw := bufio.NewWriter(w)
	in := r.Input
	fmt.Fprintf(bw, "# Keycloak sizing for %s\n", in.load())
	fmt.Fprintf(bw, "# Rates: %s\n", in.Rates)
	fmt.Fprintf(bw, "# Fields of a Keycloak CR's spec. In a Deployment: replicas, the container's resources,\n")
	fmt.Fprintf(bw, "# and each additionalOption as a container argument (--name=value).\n")
	d := r.Database
	fmt.Fprintf(bw, "# Database (not part of this spec): about %s–%s vCPU plus %s vCPU idle, about %s write IOPS.\n",
		num(d.ApproxVCPUMin), num(d.ApproxVCPUMax), num(d.IdleVCPU), num(d.ApproxWriteIOPS))
	for i, s := range r.Sites {
		if i > 0 {
			fmt.Fprintf(bw, "---\n")
		}
		fmt.Fprintf(bw, "# %s", s.Name)
		if s.Strategy != "" {
			fmt.Fprintf(bw, " (second-site strategy %q)", s.Strategy)
		}
		if s.FailoverPods > 0 {
			fmt.Fprintf(bw, ": scale to %d instances when site 1 fails", s.FailoverPods)
		}
		fmt.Fprintf(bw, "\n")
		p := s.Pod
		fmt.Fprintf(bw, "instances: %d\n", s.Pods)
		fmt.Fprintf(bw, "resources:\n")
		fmt.Fprintf(bw, "  requests:\n    cpu: %s\n    memory: %s\n", quote(p.CPURequest.String()), quote(p.MemoryRequest.String()))
		fmt.Fprintf(bw, "  limits:\n    cpu: %s\n    memory: %s\n", quote(p.CPULimit.String()), quote(p.MemoryLimit.String()))
		if c := r.Caches; c.Raise {
			fmt.Fprintf(bw, "# more than %s concurrently used clients: larger users and realms caches\n", num(GuideClientsThreshold))
			fmt.Fprintf(bw, "additionalOptions:\n")
			for _, o := range c.Options {
				fmt.Fprintf(bw, "  - name: %s\n    value: %s\n", o.Name, quote(o.Value))
			}
		}
		writeHeapHint(bw, in.Memory, p)
	}
	return bw.Flush()
}

// writeHeapHint explains the heap that the memory limit gives. The Keycloak
// image runs the JVM with -XX:MaxRAMPercentage=70 -XX:InitialRAMPercentage=50.
func writeHeapHint(w io.Writer, m Memory, p Pod) {
	if m.HeapPct == GuideHeapPct {
		fmt.Fprintf(w, "# Heap: the Keycloak image's -XX:MaxRAMPercentage=%s -XX:InitialRAMPercentage=%s give %s max / %s initial heap\n",
			num(GuideHeapPct), num(InitialHeapPct), p.HeapMax, p.HeapInitial)
		fmt.Fprintf(w, "# under the %s limit. Outside that image set JAVA_OPTS_KC_HEAP=\"-Xms%dm -Xmx%dm\".\n",
			p.MemoryLimit, p.HeapInitial, p.HeapMax)
		return
	}
	fmt.Fprintf(w, "# Heap: set JAVA_OPTS_KC_HEAP=\"-XX:MaxRAMPercentage=%s -XX:InitialRAMPercentage=%s\" for %s max heap\n",
		num(m.HeapPct), num(InitialHeapPct), p.HeapMax)
	fmt.Fprintf(w, "# under the %s limit (outside a container: \"-Xms%dm -Xmx%dm\").\n", p.MemoryLimit, p.HeapInitial, p.HeapMax)
}

func quote(s string) string { return strconv.Quote(s) }

func pad(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

// num formats x for people (results.FormatNum: 1357.142857 → "1,357.143").
func num(x float64) string { return results.FormatNum(x) }
