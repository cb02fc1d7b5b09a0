package sizing

import (
	"fmt"
	"math"
	"strconv"
)

// MilliCPU is a CPU quantity in millicores (1000 = one vCPU).
type MilliCPU int64

// VCPU returns m in vCPU.
func (m MilliCPU) VCPU() float64 { return float64(m) / 1000 }

// String returns m as a Kubernetes quantity: "3" for whole vCPUs, else "7500m".
func (m MilliCPU) String() string {
	if m%1000 == 0 {
		return strconv.FormatInt(int64(m/1000), 10)
	}
	return strconv.FormatInt(int64(m), 10) + "m"
}

// MiB is a memory quantity in mebibytes.
type MiB int64

// String returns m as a Kubernetes quantity, e.g. "1360Mi".
func (m MiB) String() string { return strconv.FormatInt(int64(m), 10) + "Mi" }

// Pod is the resources of one Keycloak pod.
type Pod struct {
	CPURequest    MilliCPU `json:"cpu_request_millicores"`
	CPULimit      MilliCPU `json:"cpu_limit_millicores"`
	MemoryRequest MiB      `json:"memory_request_mib"`
	MemoryLimit   MiB      `json:"memory_limit_mib"`
	// HeapMax and HeapInitial are what the Keycloak image's RAM percentages
	// give for MemoryLimit; set them with -Xmx/-Xms outside a container.
	HeapMax     MiB `json:"heap_max_mib"`
	HeapInitial MiB `json:"heap_initial_mib"`
}

// Site is one site's pods. Result.Sites[0] is the primary site.
type Site struct {
	Name string `json:"name"`
	// Strategy is set on the second site only.
	Strategy SiteStrategy `json:"strategy,omitempty"`
	Pods     int          `json:"pods"`
	Pod      Pod          `json:"pod"`
	// FailoverPods is the pod count this site must scale to when the other
	// site fails (SecondSiteHalf only).
	FailoverPods int `json:"failover_pods,omitempty"`
}

// Totals sum the resources over all pods of all sites.
type Totals struct {
	Pods          int      `json:"pods"`
	CPURequest    MilliCPU `json:"cpu_request_millicores"`
	CPULimit      MilliCPU `json:"cpu_limit_millicores"`
	MemoryRequest MiB      `json:"memory_request_mib"`
	MemoryLimit   MiB      `json:"memory_limit_mib"`
}

// CPU is the exact (unrounded) Keycloak CPU demand of one site, in vCPU.
type CPU struct {
	LoginsVCPU            float64 `json:"logins_vcpu"`
	ClientCredentialsVCPU float64 `json:"client_credentials_vcpu"`
	RefreshesVCPU         float64 `json:"refreshes_vcpu"`
	TotalVCPU             float64 `json:"total_vcpu"`
	PerPodVCPU            float64 `json:"per_pod_vcpu"`
}

// Database is the database demand, with sessions stored in the database.
// VCPUMin, VCPUMax and WriteIOPS are exact; the Approx fields are the same
// truncated to 0.1 vCPU and 100 IOPS, as the guide prints them.
// IdleVCPU comes on top of the range.
type Database struct {
	RequestsPerSec  float64 `json:"requests_per_sec"`
	VCPUMin         float64 `json:"vcpu_min"`
	VCPUMax         float64 `json:"vcpu_max"`
	IdleVCPU        float64 `json:"idle_vcpu"`
	WriteIOPS       float64 `json:"write_iops"`
	ApproxVCPUMin   float64 `json:"approx_vcpu_min"`
	ApproxVCPUMax   float64 `json:"approx_vcpu_max"`
	ApproxWriteIOPS float64 `json:"approx_write_iops"`
}

// Caches is the users and realms cache sizing. Options holds the Keycloak
// options to set, empty when the default sizes suffice.
type Caches struct {
	ConcurrentClients int      `json:"concurrent_clients"`
	Raise             bool     `json:"raise"`
	UsersMaxCount     int      `json:"users_max_count"`
	RealmsMaxCount    int      `json:"realms_max_count"`
	Options           []Option `json:"options,omitempty"`
}

// Option is one Keycloak configuration option, named without leading
// dashes: {Name: "cache-embedded-users-max-count", Value: "20000"} is
// --cache-embedded-users-max-count=20000 on the command line.
type Option struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Step is one line of the arithmetic: What was computed, the Formula with
// the numbers put in (including any rounding), and the resulting Value.
type Step struct {
	Section string  `json:"section"`
	What    string  `json:"what"`
	Formula string  `json:"formula"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
}

// Result is a complete sizing. It echoes its Input so that it describes
// itself, and Steps show how every number was reached.
type Result struct {
	Input    Input    `json:"input"`
	CPU      CPU      `json:"cpu"`
	Sites    []Site   `json:"sites"`
	Totals   Totals   `json:"totals"`
	Database Database `json:"database"`
	Caches   Caches   `json:"caches"`
	// Notes are caveats: extrapolation beyond the tested loads, failover duties…
	Notes []string `json:"notes,omitempty"`
	Steps []Step   `json:"steps"`
}

// Sections of Result.Steps, in order.
const (
	SectionCPU        = "Keycloak CPU"
	SectionMemory     = "Memory per pod"
	SectionSecondSite = "Second site"
	SectionDatabase   = "Database"
	SectionCaches     = "Caches"
)

// Calculate sizes in. It validates in first and returns the joined problems
// (see Validate) instead of a Result if there are any. It is pure.
func Calculate(in Input) (Result, error) {
	if err := in.Validate(); err != nil {
		return Result{}, err
	}
	r := Result{Input: in}
	primary := Site{Name: "site 1", Pods: in.Pods}
	r.cpu(&primary.Pod)
	r.memory(&primary.Pod)
	r.Sites = append(r.Sites, primary)
	if in.Sites == 2 {
		r.Sites = append(r.Sites, r.secondSite(primary))
	}
	for _, s := range r.Sites {
		n := int64(s.Pods)
		r.Totals.Pods += s.Pods
		r.Totals.CPURequest += s.Pod.CPURequest * MilliCPU(n)
		r.Totals.CPULimit += s.Pod.CPULimit * MilliCPU(n)
		r.Totals.MemoryRequest += s.Pod.MemoryRequest * MiB(n)
		r.Totals.MemoryLimit += s.Pod.MemoryLimit * MiB(n)
	}
	r.database()
	r.caches()
	r.extrapolationNotes()
	return r, nil
}

func (r *Result) step(section, what, formula string, value float64, unit string) {
	r.Steps = append(r.Steps, Step{Section: section, What: what, Formula: formula, Value: value, Unit: unit})
}

func (r *Result) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

func (r *Result) cpu(p *Pod) {
	in := r.Input
	c := &r.CPU
	c.LoginsVCPU = in.LoginsPerSec / in.Rates.LoginsPerVCPU
	c.ClientCredentialsVCPU = in.ClientCredentialsPerSec / in.Rates.ClientCredentialsPerVCPU
	c.RefreshesVCPU = in.RefreshesPerSec / in.Rates.RefreshesPerVCPU
	c.TotalVCPU = c.LoginsVCPU + c.ClientCredentialsVCPU + c.RefreshesVCPU
	c.PerPodVCPU = c.TotalVCPU / float64(in.Pods)

	r.step(SectionCPU, "logins",
		fmt.Sprintf("%s/s ÷ %s per vCPU", num(in.LoginsPerSec), num(in.Rates.LoginsPerVCPU)),
		c.LoginsVCPU, "vCPU")
	r.step(SectionCPU, "client-credential grants",
		fmt.Sprintf("%s/s ÷ %s per vCPU", num(in.ClientCredentialsPerSec), num(in.Rates.ClientCredentialsPerVCPU)),
		c.ClientCredentialsVCPU, "vCPU")
	r.step(SectionCPU, "refresh-token requests",
		fmt.Sprintf("%s/s ÷ %s per vCPU", num(in.RefreshesPerSec), num(in.Rates.RefreshesPerVCPU)),
		c.RefreshesVCPU, "vCPU")
	r.step(SectionCPU, "cluster total",
		fmt.Sprintf("%s + %s + %s", num(c.LoginsVCPU), num(c.ClientCredentialsVCPU), num(c.RefreshesVCPU)),
		c.TotalVCPU, "vCPU")

	p.CPURequest = millicores(c.PerPodVCPU)
	f := fmt.Sprintf("%s vCPU ÷ %d %s", num(c.TotalVCPU), in.Pods, plural(in.Pods, "pod", "pods"))
	if roundedAway(float64(p.CPURequest), c.PerPodVCPU*1000) {
		f += fmt.Sprintf(" = %s, rounded up to 1m", num(c.PerPodVCPU))
	}
	r.step(SectionCPU, "CPU request per pod", f, p.CPURequest.VCPU(), "vCPU")

	exact := float64(p.CPURequest) * (100 + in.HeadroomPct) / 100
	p.CPULimit = MilliCPU(ceilQ(exact))
	f = fmt.Sprintf("%s vCPU × (1 + %s %%)", num(p.CPURequest.VCPU()), num(in.HeadroomPct))
	if roundedAway(float64(p.CPULimit), exact) {
		f += fmt.Sprintf(" = %s, rounded up to 1m", num(exact/1000))
	}
	r.step(SectionCPU, "CPU limit per pod", f, p.CPULimit.VCPU(), "vCPU")

	if c.TotalVCPU == 0 {
		r.note("No load was given: the CPU request is 0; Keycloak still needs CPU to start and to run background tasks.")
	}
}

func (r *Result) memory(p *Pod) {
	m := r.Input.Memory
	p.MemoryRequest = MiB(ceilQ(m.RequestMiB))
	f := "base"
	if m.Source != "" {
		f += " (" + m.Source + ")"
	}
	if roundedAway(float64(p.MemoryRequest), m.RequestMiB) {
		f += fmt.Sprintf(", %s rounded up to 1 MiB", num(m.RequestMiB))
	}
	r.step(SectionMemory, "memory request", f, float64(p.MemoryRequest), "MiB")

	exact := (float64(p.MemoryRequest) - m.NonHeapMiB) * 100 / m.HeapPct
	limit := ceilQ(exact/MemoryLimitStepMiB) * MemoryLimitStepMiB
	f = fmt.Sprintf("(%s − %s) ÷ %s = %s, rounded up to %d MiB",
		num(float64(p.MemoryRequest)), num(m.NonHeapMiB), num(m.HeapPct/100), num(exact), MemoryLimitStepMiB)
	if limit < float64(p.MemoryRequest) {
		limit = float64(p.MemoryRequest)
		f += fmt.Sprintf(", raised to the request (%s)", num(limit))
		r.note("The memory limit formula gives %s MiB, below the %s MiB request; the limit is set to the request.",
			num(exact), num(limit))
	}
	p.MemoryLimit = MiB(limit)
	r.step(SectionMemory, "memory limit", f, limit, "MiB")

	p.HeapMax = MiB(floorQ(limit * m.HeapPct / 100))
	r.step(SectionMemory, "max heap", fmt.Sprintf("%s %% of the %s MiB limit", num(m.HeapPct), num(limit)),
		float64(p.HeapMax), "MiB")
	p.HeapInitial = MiB(floorQ(limit * InitialHeapPct / 100))
	r.step(SectionMemory, "initial heap", fmt.Sprintf("%s %% of the %s MiB limit", num(InitialHeapPct), num(limit)),
		float64(p.HeapInitial), "MiB")
}

func (r *Result) secondSite(primary Site) Site {
	s := Site{Name: "site 2", Strategy: r.Input.SecondSite, Pods: primary.Pods, Pod: primary.Pod}
	req, lim := primary.Pod.CPURequest.VCPU(), primary.Pod.CPULimit.VCPU()
	reqF, limF := "same as site 1", "same as site 1"
	switch s.Strategy {
	case SecondSiteHalfRequests:
		s.Pod.CPURequest = MilliCPU(ceilQ(float64(primary.Pod.CPURequest) / 2))
		reqF = fmt.Sprintf("50 %% of %s vCPU", num(req))
		r.note("Second site (%s): on failover the remaining site runs on its CPU limits without scaling; "+
			"expect CPU pressure and slower responses at peaks.", s.Strategy)
	case SecondSiteHalf:
		s.Pod.CPURequest = MilliCPU(ceilQ(float64(primary.Pod.CPURequest) / 2))
		s.Pod.CPULimit = MilliCPU(ceilQ(float64(primary.Pod.CPULimit) / 2))
		reqF = fmt.Sprintf("50 %% of %s vCPU", num(req))
		limF = fmt.Sprintf("50 %% of %s vCPU", num(lim))
		s.FailoverPods = 2 * s.Pods
		r.note("Second site (%s): when site 1 fails, scale site 2 from %d to %d pods "+
			"(manually or with a HorizontalPodAutoscaler); the cluster needs that spare capacity.",
			s.Strategy, s.Pods, s.FailoverPods)
	}
	r.step(SectionSecondSite, "pods", "same count and memory as site 1", float64(s.Pods), plural(s.Pods, "pod", "pods"))
	r.step(SectionSecondSite, "CPU request per pod", reqF, s.Pod.CPURequest.VCPU(), "vCPU")
	r.step(SectionSecondSite, "CPU limit per pod", limF, s.Pod.CPULimit.VCPU(), "vCPU")
	if s.FailoverPods > 0 {
		r.step(SectionSecondSite, "pods on failover", fmt.Sprintf("2 × %d", s.Pods), float64(s.FailoverPods), "pods")
	}
	return s
}

func (r *Result) database() {
	in := r.Input
	d := &r.Database
	d.RequestsPerSec = in.LoginsPerSec + in.RefreshesPerSec + in.LogoutsPerSec
	units := d.RequestsPerSec / GuideDBRequestsUnit
	d.VCPUMin = units * GuideDBVCPUMinPerUnit
	d.VCPUMax = units * GuideDBVCPUMaxPerUnit
	d.WriteIOPS = units * GuideDBWriteIOPSPerUnit
	d.IdleVCPU = GuideDBIdleVCPU
	d.ApproxVCPUMin = truncPlaces(d.VCPUMin, ApproxVCPUPlaces)
	d.ApproxVCPUMax = truncPlaces(d.VCPUMax, ApproxVCPUPlaces)
	d.ApproxWriteIOPS = truncPlaces(d.WriteIOPS, ApproxIOPSPlaces)

	about := func(exact float64, places int) string {
		return fmt.Sprintf(" = %s, truncated to %s", num(exact), num(math.Pow10(-places)))
	}
	r.step(SectionDatabase, "session requests",
		fmt.Sprintf("%s logins + %s refreshes + %s logouts", num(in.LoginsPerSec), num(in.RefreshesPerSec), num(in.LogoutsPerSec)),
		d.RequestsPerSec, "req/s")
	r.step(SectionDatabase, "vCPU, low",
		fmt.Sprintf("%s ÷ %s × %s", num(d.RequestsPerSec), num(GuideDBRequestsUnit), num(GuideDBVCPUMinPerUnit))+about(d.VCPUMin, ApproxVCPUPlaces),
		d.ApproxVCPUMin, "vCPU")
	r.step(SectionDatabase, "vCPU, high",
		fmt.Sprintf("%s ÷ %s × %s", num(d.RequestsPerSec), num(GuideDBRequestsUnit), num(GuideDBVCPUMaxPerUnit))+about(d.VCPUMax, ApproxVCPUPlaces),
		d.ApproxVCPUMax, "vCPU")
	r.step(SectionDatabase, "idle load", "on top of the range", d.IdleVCPU, "vCPU")
	r.step(SectionDatabase, "write IOPS",
		fmt.Sprintf("%s ÷ %s × %s", num(d.RequestsPerSec), num(GuideDBRequestsUnit), num(GuideDBWriteIOPSPerUnit))+about(d.WriteIOPS, ApproxIOPSPlaces),
		d.ApproxWriteIOPS, "IOPS")
}

func (r *Result) caches() {
	n := r.Input.ConcurrentClients
	c := &r.Caches
	c.ConcurrentClients = n
	c.UsersMaxCount, c.RealmsMaxCount = DefaultCacheMaxCount, DefaultCacheMaxCount
	if n == 0 {
		return
	}
	if n <= GuideClientsThreshold {
		f := fmt.Sprintf("%s concurrent clients ≤ %s: default", num(float64(n)), num(GuideClientsThreshold))
		r.step(SectionCaches, "users cache", f, DefaultCacheMaxCount, "entries")
		r.step(SectionCaches, "realms cache", f, DefaultCacheMaxCount, "entries")
		return
	}
	c.Raise = true
	size := func(what string, per int) int {
		v := per * n
		f := fmt.Sprintf("%d × %s concurrent clients", per, num(float64(n)))
		if v < DefaultCacheMaxCount {
			f += fmt.Sprintf(" = %s, kept at the default", num(float64(v)))
			v = DefaultCacheMaxCount
		}
		r.step(SectionCaches, what, f, float64(v), "entries")
		return v
	}
	c.UsersMaxCount = size("users cache", UsersCachePerClient)
	c.RealmsMaxCount = size("realms cache", RealmsCachePerClient)
	c.Options = []Option{
		{Name: "cache-embedded-users-max-count", Value: strconv.Itoa(c.UsersMaxCount)},
		{Name: "cache-embedded-realms-max-count", Value: strconv.Itoa(c.RealmsMaxCount)},
	}
}

func (r *Result) extrapolationNotes() {
	in := r.Input
	g := GuideRates()
	if in.Rates.LoginsPerVCPU != g.LoginsPerVCPU || in.Rates.ClientCredentialsPerVCPU != g.ClientCredentialsPerVCPU ||
		in.Rates.RefreshesPerVCPU != g.RefreshesPerVCPU {
		return // measured rates: the user's own test range applies
	}
	for _, c := range []struct {
		what        string
		rate, limit float64
	}{
		{"logins", in.LoginsPerSec, GuideTestedLoginsPerSec},
		{"client-credential grants", in.ClientCredentialsPerSec, GuideTestedClientCredentialsPerSec},
		{"refresh-token requests", in.RefreshesPerSec, GuideTestedRefreshesPerSec},
	} {
		if c.rate > c.limit {
			r.note("%s %s/s is beyond the %s/s the guide tested; its linear rule is extrapolated.",
				c.what, num(c.rate), num(c.limit))
		}
	}
}

// eps absorbs floating-point error before rounding: 0.7 × 4 is
// 2.7999999999999998. It is relative, and small enough (float64 carries
// about 16 digits) that rounding 666,666,666.67 up still gives
// 666,666,667.
func eps(q float64) float64 { return 1e-12 * math.Max(1, math.Abs(q)) }

// ceilQ rounds q up to an integer, ignoring floating-point noise above one.
func ceilQ(q float64) float64 { return math.Ceil(q - eps(q)) }

// floorQ rounds q down to an integer, ignoring floating-point noise below one.
func floorQ(q float64) float64 { return math.Floor(q + eps(q)) }

// roundedAway reports whether rounding moved exact to rounded by more than
// floating-point noise.
func roundedAway(rounded, exact float64) bool { return math.Abs(rounded-exact) > eps(exact) }

func millicores(vcpu float64) MilliCPU { return MilliCPU(ceilQ(vcpu * 1000)) }

// truncPlaces truncates x ≥ 0 to the given number of decimal places, which
// may be negative: (1.435, 1) → 1.4, (2.87, 1) → 2.8, (5740, -2) → 5700.
func truncPlaces(x float64, places int) float64 {
	if x <= 0 || !finite(x) {
		return x
	}
	if places >= 0 {
		f := math.Pow10(places)
		return floorQ(x*f) / f // divide last, so 14/10 is the double nearest 1.4
	}
	f := math.Pow10(-places)
	return floorQ(x/f) * f
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
