package sizing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The Keycloak 26 sizing guide's figures. Names starting with Guide are the
// guide's own numbers; the others are kcbench's defaults around them.
const (
	// GuideLoginsPerVCPU is the password-based logins per second one vCPU
	// sustains (default argon2 hashing; tested up to GuideTestedLoginsPerSec).
	GuideLoginsPerVCPU = 15.0
	// GuideClientCredentialsPerVCPU is the client-credential grants per second
	// one vCPU sustains (tested up to GuideTestedClientCredentialsPerSec).
	GuideClientCredentialsPerVCPU = 120.0
	// GuideRefreshesPerVCPU is the refresh-token requests per second one vCPU
	// sustains (tested up to GuideTestedRefreshesPerSec).
	GuideRefreshesPerVCPU = 120.0

	// The highest loads the guide was tested with; beyond them the linear
	// rules are extrapolated and Result.Notes says so.
	GuideTestedLoginsPerSec            = 300.0
	GuideTestedClientCredentialsPerSec = 2000.0
	GuideTestedRefreshesPerSec         = 435.0

	// DefaultHeadroomPct is the CPU limit's extra over the request, in percent.
	DefaultHeadroomPct = 150.0
	// DefaultPods is the number of pods per site of the guide's reference setup.
	DefaultPods = 3

	// GuideMemoryRequestMiB is the base memory of one pod, including the realm
	// caches and 10,000 cached sessions.
	GuideMemoryRequestMiB = 1250.0
	// GuideNonHeapMiB is the JVM's non-heap memory.
	GuideNonHeapMiB = 300.0
	// GuideHeapPct is the share of the memory limit the JVM uses for heap in a
	// container (the Keycloak image's -XX:MaxRAMPercentage=70).
	GuideHeapPct = 70.0
	// InitialHeapPct is the Keycloak image's -XX:InitialRAMPercentage.
	InitialHeapPct = 50.0
	// MemoryLimitStepMiB is the step the memory limit is rounded up to.
	MemoryLimitStepMiB = 10

	// Database, per GuideDBRequestsUnit login/logout/refresh requests per
	// second: write IOPS and a vCPU range; the idle load comes on top.
	GuideDBRequestsUnit     = 100.0
	GuideDBWriteIOPSPerUnit = 1400.0
	GuideDBVCPUMinPerUnit   = 0.35
	GuideDBVCPUMaxPerUnit   = 0.7
	GuideDBIdleVCPU         = 0.3
	// ApproxVCPUPlaces and ApproxIOPSPlaces are the decimal places the
	// "about" database figures are truncated to, as in the guide's example:
	// 0.1 vCPU and 100 IOPS.
	ApproxVCPUPlaces = 1
	ApproxIOPSPlaces = -2

	// GuideClientsThreshold is the number of concurrently used clients above
	// which the default users and realms caches are too small.
	GuideClientsThreshold = 2500
	// DefaultCacheMaxCount is the default size of the users and realms caches.
	DefaultCacheMaxCount = 10000
	// UsersCachePerClient and RealmsCachePerClient are the cache entries per
	// concurrently used client once more than GuideConcurrentClientsAt are used.
	UsersCachePerClient  = 2
	RealmsCachePerClient = 4
)

// GuideSource names the guide as the source of Rates and Memory.
const GuideSource = "Keycloak 26 sizing guide"

// Rates are the operations per second one vCPU sustains. They are the guide's
// (GuideRates) or measured ones (RatesFromCPUms).
type Rates struct {
	LoginsPerVCPU            float64 `json:"logins_per_vcpu"`
	ClientCredentialsPerVCPU float64 `json:"client_credentials_per_vcpu"`
	RefreshesPerVCPU         float64 `json:"refreshes_per_vcpu"`
	// Source says where the rates come from, e.g. GuideSource or a results folder.
	Source string `json:"source"`
}

// GuideRates returns the Keycloak 26 sizing guide's per-vCPU rates.
func GuideRates() Rates {
	return Rates{
		LoginsPerVCPU:            GuideLoginsPerVCPU,
		ClientCredentialsPerVCPU: GuideClientCredentialsPerVCPU,
		RefreshesPerVCPU:         GuideRefreshesPerVCPU,
		Source:                   GuideSource,
	}
}

// RatesFromCPUms converts measured server CPU time per operation, in
// milliseconds (kcbench's cost per operation), into per-vCPU rates: one vCPU
// gives 1000 CPU-ms per second, so rate = 1000 ÷ ms. A cost that is not
// positive gives a rate of 0, which Validate rejects.
func RatesFromCPUms(loginMs, clientCredentialsMs, refreshMs float64, source string) Rates {
	return Rates{
		LoginsPerVCPU:            perVCPU(loginMs),
		ClientCredentialsPerVCPU: perVCPU(clientCredentialsMs),
		RefreshesPerVCPU:         perVCPU(refreshMs),
		Source:                   source,
	}
}

func perVCPU(ms float64) float64 {
	if !(ms > 0) || math.IsInf(ms, 0) {
		return 0
	}
	return 1000 / ms
}

// CPUms returns the CPU milliseconds per operation the rates imply (1000 ÷ rate).
func (r Rates) CPUms() (login, clientCredentials, refresh float64) {
	return perVCPU(r.LoginsPerVCPU), perVCPU(r.ClientCredentialsPerVCPU), perVCPU(r.RefreshesPerVCPU)
}

// String describes the rates for logs and headers.
func (r Rates) String() string {
	s := fmt.Sprintf("%s logins, %s client-credential grants, %s refreshes per vCPU",
		num(r.LoginsPerVCPU), num(r.ClientCredentialsPerVCPU), num(r.RefreshesPerVCPU))
	if r.Source != "" {
		s += " (" + r.Source + ")"
	}
	return s
}

func (r Rates) problems(prefix string) []error {
	var errs []error
	positive(&errs, prefix+"logins_per_vcpu", r.LoginsPerVCPU, MaxRate)
	positive(&errs, prefix+"client_credentials_per_vcpu", r.ClientCredentialsPerVCPU, MaxRate)
	positive(&errs, prefix+"refreshes_per_vcpu", r.RefreshesPerVCPU, MaxRate)
	return errs
}

// Validate reports every problem with the rates, joined.
func (r Rates) Validate() error { return errors.Join(r.problems("")...) }

// Memory is the per-pod memory model: what a pod uses (the request) and how
// the JVM splits the limit into heap and non-heap.
type Memory struct {
	// RequestMiB is the memory one pod uses: the guide's base, or a measured RSS.
	RequestMiB float64 `json:"request_mib"`
	// NonHeapMiB is the JVM's non-heap memory.
	NonHeapMiB float64 `json:"non_heap_mib"`
	// HeapPct is the share of the memory limit used for heap, in percent.
	HeapPct float64 `json:"heap_pct"`
	Source  string  `json:"source"`
}

// GuideMemory returns the guide's memory model: 1250 MB per pod, 300 MB
// non-heap, heap 70 % of the limit.
func GuideMemory() Memory {
	return Memory{
		RequestMiB: GuideMemoryRequestMiB,
		NonHeapMiB: GuideNonHeapMiB,
		HeapPct:    GuideHeapPct,
		Source:     GuideSource,
	}
}

func (m Memory) problems(prefix string) []error {
	var errs []error
	positive(&errs, prefix+"request_mib", m.RequestMiB, MaxMemoryMiB)
	nonNegative(&errs, prefix+"non_heap_mib", m.NonHeapMiB, MaxMemoryMiB)
	if finite(m.RequestMiB) && finite(m.NonHeapMiB) && m.RequestMiB > 0 && m.NonHeapMiB >= m.RequestMiB {
		errs = append(errs, &FieldError{prefix + "non_heap_mib",
			fmt.Sprintf("must be below request_mib (%s), got %s", num(m.RequestMiB), num(m.NonHeapMiB))})
	}
	if !finite(m.HeapPct) || m.HeapPct <= 0 || m.HeapPct > 100 {
		errs = append(errs, &FieldError{prefix + "heap_pct", "must be in (0, 100], got " + num(m.HeapPct)})
	}
	return errs
}

// SiteStrategy sizes the CPU of the second site in an active-active setup.
// Memory and pod count are always the same as the first site's.
type SiteStrategy string

const (
	// SecondSiteSame keeps CPU requests and limits: fast failover, most expensive.
	SecondSiteSame SiteStrategy = "same"
	// SecondSiteHalfRequests halves the CPU requests and keeps the limits: no
	// scaling on failover, but CPU pressure and slower responses at peaks.
	SecondSiteHalfRequests SiteStrategy = "half-requests"
	// SecondSiteHalf halves CPU requests and limits: cheapest; on failover the
	// remaining site must scale to twice its pods (manually or by an HPA).
	SecondSiteHalf SiteStrategy = "half"
)

// ErrUnknownStrategy is returned for a SiteStrategy that is none of the above.
var ErrUnknownStrategy = errors.New("unknown second-site strategy (want same, half-requests or half)")

// Valid reports whether s is one of the defined strategies.
func (s SiteStrategy) Valid() bool {
	switch s {
	case SecondSiteSame, SecondSiteHalfRequests, SecondSiteHalf:
		return true
	}
	return false
}

func (s SiteStrategy) String() string { return string(s) }

// MarshalText implements encoding.TextMarshaler.
func (s SiteStrategy) MarshalText() ([]byte, error) { return []byte(s), nil }

// UnmarshalText implements encoding.TextUnmarshaler, so one value parses from
// flags (flag.TextVar), JSON and YAML alike.
func (s *SiteStrategy) UnmarshalText(b []byte) error {
	v := SiteStrategy(b)
	if !v.Valid() {
		return fmt.Errorf("%w: %q", ErrUnknownStrategy, b)
	}
	*s = v
	return nil
}

// Input is the target load and the deployment shape. Start from DefaultInput:
// Calculate applies no hidden defaults, so a zero HeadroomPct really means no
// headroom, and zero Rates or Memory are rejected by Validate.
type Input struct {
	LoginsPerSec            float64 `json:"logins_per_sec"`
	ClientCredentialsPerSec float64 `json:"client_credentials_per_sec"`
	RefreshesPerSec         float64 `json:"refreshes_per_sec"`
	// LogoutsPerSec only counts for the database.
	LogoutsPerSec float64 `json:"logouts_per_sec"`
	// Pods per site; the cluster CPU is divided over them.
	Pods int `json:"pods"`
	// HeadroomPct is the CPU limit's extra over the request, in percent.
	HeadroomPct float64 `json:"headroom_pct"`
	// Sites is 1, or 2 for active-active; SecondSite then sizes the second.
	Sites      int          `json:"sites"`
	SecondSite SiteStrategy `json:"second_site,omitempty"`
	// ConcurrentClients is the number of distinct clients used at the same time.
	ConcurrentClients int    `json:"concurrent_clients,omitempty"`
	Rates             Rates  `json:"rates"`
	Memory            Memory `json:"memory"`
}

// DefaultInput returns an Input with no load and the guide's defaults:
// DefaultPods pods, DefaultHeadroomPct headroom, one site (SecondSiteSame if
// a second is added), GuideRates and GuideMemory.
func DefaultInput() Input {
	return Input{
		Pods:        DefaultPods,
		HeadroomPct: DefaultHeadroomPct,
		Sites:       1,
		SecondSite:  SecondSiteSame,
		Rates:       GuideRates(),
		Memory:      GuideMemory(),
	}
}

// ErrInvalidInput is matched (errors.Is) by every error Validate returns.
var ErrInvalidInput = errors.New("invalid sizing input")

// FieldError is one problem with one Input field. Field is the JSON path.
type FieldError struct {
	Field   string
	Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// Unwrap makes errors.Is(err, ErrInvalidInput) true.
func (e *FieldError) Unwrap() error { return ErrInvalidInput }

// Validate reports every problem of in, joined with errors.Join (nil if none).
// Each is a *FieldError. It does not change in.
func (in Input) Validate() error {
	var errs []error
	nonNegative(&errs, "logins_per_sec", in.LoginsPerSec, MaxRate)
	nonNegative(&errs, "client_credentials_per_sec", in.ClientCredentialsPerSec, MaxRate)
	nonNegative(&errs, "refreshes_per_sec", in.RefreshesPerSec, MaxRate)
	nonNegative(&errs, "logouts_per_sec", in.LogoutsPerSec, MaxRate)
	if in.Pods < 1 || in.Pods > MaxPods {
		errs = append(errs, &FieldError{"pods", fmt.Sprintf("must be between 1 and %d, got %d", MaxPods, in.Pods)})
	}
	nonNegative(&errs, "headroom_pct", in.HeadroomPct, MaxHeadroomPct)
	if in.Sites != 1 && in.Sites != 2 {
		errs = append(errs, &FieldError{"sites", "must be 1 or 2, got " + strconv.Itoa(in.Sites)})
	}
	switch {
	case in.Sites == 2 && in.SecondSite == "":
		errs = append(errs, &FieldError{"second_site", "required with 2 sites (same, half-requests or half)"})
	case in.SecondSite != "" && !in.SecondSite.Valid():
		errs = append(errs, &FieldError{"second_site", fmt.Sprintf("%v: %q", ErrUnknownStrategy, string(in.SecondSite))})
	}
	if in.ConcurrentClients < 0 || in.ConcurrentClients > MaxConcurrentClients {
		errs = append(errs, &FieldError{"concurrent_clients", fmt.Sprintf("must be between 0 and %d, got %d", MaxConcurrentClients, in.ConcurrentClients)})
	}
	errs = append(errs, in.Rates.problems("rates.")...)
	errs = append(errs, in.Memory.problems("memory.")...)
	if len(errs) == 0 {
		errs = append(errs, in.podCPUProblem())
	}
	return errors.Join(errs...)
}

// podCPUProblem refuses a load whose CPU, divided over the pods, gives a
// pod more than MaxPodVCPU: such a figure is no sizing, more pods are.
func (in Input) podCPUProblem() error {
	r := in.Rates
	total := in.LoginsPerSec/r.LoginsPerVCPU + in.ClientCredentialsPerSec/r.ClientCredentialsPerVCPU + in.RefreshesPerSec/r.RefreshesPerVCPU
	if total/float64(in.Pods) <= MaxPodVCPU {
		return nil
	}
	need := int(ceilQ(total / MaxPodVCPU))
	return &FieldError{"pods", fmt.Sprintf("%s vCPU over %d %s is %s vCPU a pod, more than the %d vCPU one pod can use: give %s pods or more",
		num(total), in.Pods, plural(in.Pods, "pod", "pods"), num(total/float64(in.Pods)), MaxPodVCPU, num(float64(need)))}
}

// Upper bounds of the inputs: far beyond any real deployment, low enough
// that every figure derived from them stays exact in float64 and int64.
const (
	MaxRate              = 1e7     // operations per second (cluster total), or per vCPU
	MaxMemoryMiB         = 1 << 20 // 1 TiB per pod
	MaxPods              = 10_000
	MaxHeadroomPct       = 1000
	MaxConcurrentClients = 1_000_000_000
	// MaxPodVCPU bounds the CPU request of one pod: far beyond what one
	// Keycloak JVM puts to use; a larger load needs more pods.
	MaxPodVCPU = 512
)

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func nonNegative(errs *[]error, field string, x, hi float64) {
	if !finite(x) || x < 0 || x > hi {
		*errs = append(*errs, &FieldError{field, "must be a number between 0 and " + num(hi) + ", got " + num(x)})
	}
}

func positive(errs *[]error, field string, x, hi float64) {
	if !finite(x) || x <= 0 || x > hi {
		*errs = append(*errs, &FieldError{field, "must be a number > 0 and at most " + num(hi) + ", got " + num(x)})
	}
}
