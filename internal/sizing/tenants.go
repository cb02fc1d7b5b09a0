package sizing

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// Default service-level objectives for the tenant capacity (TenantCapacities).
const (
	DefaultSLOAdminP95     = time.Second
	DefaultSLOTokenP95     = 500 * time.Millisecond
	DefaultSLOMaxErrorRate = 0.01
	DefaultSLOPhase        = results.PhaseWarm
)

// SLO is what must hold at a tenant count for it to count as supported.
// A zero latency or error-rate bound is not checked.
type SLO struct {
	// AdminP95 bounds the 95th percentile of every admin REST operation.
	AdminP95 time.Duration `json:"admin_p95_ns"`
	// TokenP95 bounds the 95th percentile of every token-endpoint operation
	// (grants, refreshes, code exchanges).
	TokenP95 time.Duration `json:"token_p95_ns"`
	// MemoryLimitMiB bounds Keycloak's RSS at ready and during the
	// workloads: the pod's memory limit.
	MemoryLimitMiB float64 `json:"memory_limit_mib"`
	// MaxErrorRate bounds each workload's failed iterations (a fraction).
	MaxErrorRate float64 `json:"max_error_rate"`
	// Phase is the phase whose workloads are checked: results.PhaseWarm,
	// results.PhaseCold, or "" for all. Memory is checked in every phase.
	Phase string `json:"phase"`
}

// Validate reports every problem of s.
func (s SLO) Validate() error {
	var errs []error
	if s.AdminP95 < 0 {
		errs = append(errs, &FieldError{"admin_p95", "must be ≥ 0, got " + s.AdminP95.String()})
	}
	if s.TokenP95 < 0 {
		errs = append(errs, &FieldError{"token_p95", "must be ≥ 0, got " + s.TokenP95.String()})
	}
	positive(&errs, "memory_limit_mib", s.MemoryLimitMiB, MaxMemoryMiB)
	if !finite(s.MaxErrorRate) || s.MaxErrorRate < 0 || s.MaxErrorRate > 1 {
		errs = append(errs, &FieldError{"max_error_rate", "must be in [0, 1], got " + num(s.MaxErrorRate)})
	}
	switch s.Phase {
	case "", results.PhaseWarm, results.PhaseCold:
	default:
		errs = append(errs, &FieldError{"phase", fmt.Sprintf("must be warm, cold or empty (all), got %q", s.Phase)})
	}
	return errors.Join(errs...)
}

// String describes the objectives in one line.
func (s SLO) String() string {
	var parts []string
	if s.AdminP95 > 0 {
		parts = append(parts, "admin API p95 ≤ "+dur(s.AdminP95))
	}
	if s.TokenP95 > 0 {
		parts = append(parts, "token p95 ≤ "+dur(s.TokenP95))
	}
	if s.MaxErrorRate > 0 {
		parts = append(parts, "failed iterations ≤ "+num(100*s.MaxErrorRate)+" %")
	}
	parts = append(parts, "RSS at ready and during the workloads ≤ "+num(s.MemoryLimitMiB)+" MiB", "no aborted or failed point")
	ph := "all phases"
	if s.Phase != "" {
		ph = s.Phase + " phase"
	}
	return strings.Join(parts, ", ") + " (latencies and errors of the " + ph + ")"
}

// LimitMiB is the memory limit the model gives a pod: (request − non-heap)
// ÷ heap share, rounded up to MemoryLimitStepMiB, at least the request.
func (m Memory) LimitMiB() MiB {
	req := ceilQ(m.RequestMiB)
	limit := ceilQ((req-m.NonHeapMiB)*100/m.HeapPct/MemoryLimitStepMiB) * MemoryLimitStepMiB
	return MiB(max(limit, req))
}

// Operation kinds for the latency objectives.
const (
	OpKindAdmin = "admin"
	OpKindToken = "token"
)

// OpKind classifies a kcbench operation name (results' Op…
// constants): admin REST calls (admin_…) and token-endpoint requests.
// Others (JWKS, discovery, userinfo, the login page…) have no latency
// objective.
func OpKind(op string) string {
	switch {
	case strings.HasPrefix(op, "admin_"):
		return OpKindAdmin
	case slices.Contains([]string{results.OpPasswordGrant, results.OpClientCredentials, results.OpRefresh, results.OpCodeExchange,
		results.OpOfflineGrant, results.OpOfflineRefresh, results.OpSessionLogin}, op):
		return OpKindToken
	}
	return ""
}

// TenantPoint is one point of a multi-tenancy experiment, as the caller
// read it from the results.
type TenantPoint struct {
	Point   string `json:"point"`
	Variant string `json:"variant,omitempty"`
	Mode    string `json:"mode"`
	Tenants int    `json:"tenants"`
	Repeat  int    `json:"repeat,omitempty"`
	// Status is "done", "aborted" or "failed"; Reason says why.
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// ReadyRSSMiB is Keycloak's RSS at ready after the restart; MaxRSSMiB
	// the highest RSS seen during the workloads. 0 when unknown.
	ReadyRSSMiB float64          `json:"ready_rss_mib,omitempty"`
	MaxRSSMiB   float64          `json:"max_rss_mib,omitempty"`
	Workloads   []TenantWorkload `json:"workloads"`
}

// TenantWorkload is one workload of a TenantPoint.
type TenantWorkload struct {
	Name     string `json:"name"`
	Scenario string `json:"scenario"`
	Phase    string `json:"phase,omitempty"`
	// Iterations and Errors of the measured window.
	Iterations int64       `json:"iterations"`
	Errors     int64       `json:"errors"`
	Ops        []OpLatency `json:"ops"`
}

// OpLatency is one operation's 95th percentile latency.
type OpLatency struct {
	Op    string        `json:"op"`
	Count int64         `json:"count"`
	P95   time.Duration `json:"p95_ns"`
}

// Objectives checked by TenantCapacities, as Violation.SLO names them.
const (
	SLOAdminP95  = "admin API p95"
	SLOTokenP95  = "token p95"
	SLOErrors    = "failed iterations"
	SLOReadyRSS  = "RSS at ready"
	SLOMaxRSS    = "max RSS during the workloads"
	SLOPointDone = "point aborted or failed"
)

// Violation is one objective missed at one tenant count.
type Violation struct {
	SLO   string `json:"slo"`
	Point string `json:"point"`
	// What is the measured figure against the bound, for people.
	What string `json:"what"`
}

// TenantCheck is the verdict at one tenant count (all its repeats).
type TenantCheck struct {
	Tenants    int         `json:"tenants"`
	Points     []string    `json:"points"`
	Held       bool        `json:"held"`
	Violations []Violation `json:"violations,omitempty"`
	// The worst figures over the repeats (0 when not measured).
	AdminP95    time.Duration `json:"admin_p95_ns,omitempty"`
	TokenP95    time.Duration `json:"token_p95_ns,omitempty"`
	ErrorRate   float64       `json:"error_rate"`
	ReadyRSSMiB float64       `json:"ready_rss_mib,omitempty"`
	MaxRSSMiB   float64       `json:"max_rss_mib,omitempty"`
}

// TenantCapacity is, for one variant and tenant mode, the largest tenant
// count at which the objectives held and what broke beyond it.
type TenantCapacity struct {
	Variant string        `json:"variant,omitempty"`
	Mode    string        `json:"mode"`
	Checks  []TenantCheck `json:"checks"`
	// MaxHeld is the largest tenant count such that the objectives held at
	// it and at every smaller count tested; 0 when they held at none.
	MaxHeld int `json:"max_held"`
	// FirstBroken is the smallest tenant count where they did not hold
	// (the one beyond MaxHeld); 0 when they held everywhere.
	FirstBroken int `json:"first_broken,omitempty"`
	// BrokeFirst lists the violations at FirstBroken.
	BrokeFirst []Violation `json:"broke_first,omitempty"`
	// FirstBreak gives, per objective, the smallest tenant count where it
	// was missed.
	FirstBreak map[string]int `json:"first_break,omitempty"`
	// RSS at ready against tenants (least squares), when at least two
	// tenant counts have it: MiB per tenant, the intercept, and the tenant
	// count at which the line reaches the memory limit (0 when it does not
	// grow).
	RSSPerTenantMiB  float64  `json:"rss_per_tenant_mib,omitempty"`
	RSSBaseMiB       float64  `json:"rss_base_mib,omitempty"`
	RSSLimitAtTenant float64  `json:"rss_limit_at_tenants,omitempty"`
	Notes            []string `json:"notes,omitempty"`
}

// ErrNoTenantPoints is returned by TenantCapacities without points.
var ErrNoTenantPoints = errors.New("no finished points")

// TenantCapacities checks slo at every tenant count of every variant and
// mode, and reports per variant and mode the largest tenant count at which
// it held, contiguously from the smallest count tested, and what broke at
// the next count. A count holds when every repeat meets every objective.
// It is pure: the caller reads the results.
func TenantCapacities(pts []TenantPoint, slo SLO) ([]TenantCapacity, error) {
	if err := slo.Validate(); err != nil {
		return nil, err
	}
	if len(pts) == 0 {
		return nil, ErrNoTenantPoints
	}
	type key struct{ variant, mode string }
	groups := map[key][]TenantPoint{}
	var keys []key
	for _, p := range pts {
		k := key{p.Variant, p.Mode}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], p)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.variant, b.variant), cmp.Compare(a.mode, b.mode)) })
	var out []TenantCapacity
	for _, k := range keys {
		out = append(out, capacity(k.variant, k.mode, groups[k], slo))
	}
	return out, nil
}

func capacity(variant, mode string, pts []TenantPoint, slo SLO) TenantCapacity {
	c := TenantCapacity{Variant: variant, Mode: mode, FirstBreak: map[string]int{}}
	phase := slo.Phase
	if phase != "" && !slices.ContainsFunc(pts, func(p TenantPoint) bool {
		return slices.ContainsFunc(p.Workloads, func(w TenantWorkload) bool { return w.Phase == phase })
	}) {
		c.Notes = append(c.Notes, fmt.Sprintf("No workload ran in the %s phase; the workloads of every phase are checked.", phase))
		phase = ""
	}
	byN := map[int][]TenantPoint{}
	var ns []int
	for _, p := range pts {
		if _, ok := byN[p.Tenants]; !ok {
			ns = append(ns, p.Tenants)
		}
		byN[p.Tenants] = append(byN[p.Tenants], p)
	}
	slices.Sort(ns)
	broken := false
	for _, n := range ns {
		reps := byN[n]
		slices.SortFunc(reps, func(a, b TenantPoint) int {
			return cmp.Or(cmp.Compare(a.Repeat, b.Repeat), cmp.Compare(a.Point, b.Point))
		})
		ch := TenantCheck{Tenants: n}
		for _, p := range reps {
			ch.Points = append(ch.Points, p.Point)
			check(&ch, p, slo, phase)
		}
		ch.Held = len(ch.Violations) == 0
		for _, v := range ch.Violations {
			if _, ok := c.FirstBreak[v.SLO]; !ok {
				c.FirstBreak[v.SLO] = n
			}
		}
		switch {
		case ch.Held && !broken:
			c.MaxHeld = n
		case !ch.Held && !broken:
			broken = true
			c.FirstBroken, c.BrokeFirst = n, ch.Violations
		case ch.Held && broken:
			c.Notes = append(c.Notes, fmt.Sprintf("The objectives held again at %d tenants, above the first break at %d: "+
				"noise or an unstable point; more repeats would tell.", n, c.FirstBroken))
		}
		c.Checks = append(c.Checks, ch)
	}
	if len(c.FirstBreak) == 0 {
		c.FirstBreak = nil
	}
	c.fitRSS(slo.MemoryLimitMiB)
	return c
}

// check adds p's figures and violations to ch.
func check(ch *TenantCheck, p TenantPoint, slo SLO, phase string) {
	if p.Status != "" && p.Status != "done" {
		what := p.Status
		if p.Reason != "" {
			what += ": " + p.Reason
		}
		ch.Violations = append(ch.Violations, Violation{SLO: SLOPointDone, Point: p.Point, What: what})
	}
	if p.ReadyRSSMiB > 0 {
		ch.ReadyRSSMiB = max(ch.ReadyRSSMiB, p.ReadyRSSMiB)
		if p.ReadyRSSMiB > slo.MemoryLimitMiB {
			ch.Violations = append(ch.Violations, Violation{SLO: SLOReadyRSS, Point: p.Point,
				What: fmt.Sprintf("%s MiB > %s MiB", num(math.Round(p.ReadyRSSMiB)), num(slo.MemoryLimitMiB))})
		}
	}
	if p.MaxRSSMiB > 0 {
		ch.MaxRSSMiB = max(ch.MaxRSSMiB, p.MaxRSSMiB)
		if p.MaxRSSMiB > slo.MemoryLimitMiB {
			ch.Violations = append(ch.Violations, Violation{SLO: SLOMaxRSS, Point: p.Point,
				What: fmt.Sprintf("%s MiB > %s MiB", num(math.Round(p.MaxRSSMiB)), num(slo.MemoryLimitMiB))})
		}
	}
	for _, w := range p.Workloads {
		if phase != "" && w.Phase != phase {
			continue
		}
		where := w.Name
		if w.Phase != "" {
			where = w.Phase + " " + w.Name
		}
		if w.Iterations > 0 {
			rate := float64(w.Errors) / float64(w.Iterations)
			ch.ErrorRate = max(ch.ErrorRate, rate)
			if slo.MaxErrorRate > 0 && rate > slo.MaxErrorRate {
				ch.Violations = append(ch.Violations, Violation{SLO: SLOErrors, Point: p.Point,
					What: fmt.Sprintf("%s: %s %% > %s %% (%d of %d)", where, num(100*rate), num(100*slo.MaxErrorRate), w.Errors, w.Iterations)})
			}
		}
		for _, o := range w.Ops {
			if o.Count == 0 {
				continue
			}
			var bound time.Duration
			var name string
			switch OpKind(o.Op) {
			case OpKindAdmin:
				ch.AdminP95 = max(ch.AdminP95, o.P95)
				bound, name = slo.AdminP95, SLOAdminP95
			case OpKindToken:
				ch.TokenP95 = max(ch.TokenP95, o.P95)
				bound, name = slo.TokenP95, SLOTokenP95
			default:
				continue
			}
			if bound > 0 && o.P95 > bound {
				ch.Violations = append(ch.Violations, Violation{SLO: name, Point: p.Point,
					What: fmt.Sprintf("%s %s: %s > %s", where, o.Op, dur(o.P95), dur(bound))})
			}
		}
	}
}

// fitRSS fits RSS at ready = base + perTenant × tenants by least squares
// over the points that have it.
func (c *TenantCapacity) fitRSS(limit float64) {
	var xs, ys []float64
	for _, ch := range c.Checks {
		if ch.ReadyRSSMiB > 0 {
			xs, ys = append(xs, float64(ch.Tenants)), append(ys, ch.ReadyRSSMiB)
		}
	}
	if len(xs) < 2 {
		return
	}
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return
	}
	c.RSSPerTenantMiB = (n*sxy - sx*sy) / d
	c.RSSBaseMiB = (sy - c.RSSPerTenantMiB*sx) / n
	if c.RSSPerTenantMiB > 0 {
		c.RSSLimitAtTenant = max((limit-c.RSSBaseMiB)/c.RSSPerTenantMiB, 0)
	}
}

// dur formats a latency: 1.234s, 250ms, 0.8ms.
func dur(d time.Duration) string {
	ms := float64(d.Microseconds()) / 1000
	switch {
	case d >= time.Second:
		return num(math.Round(d.Seconds()*100)/100) + " s"
	case ms >= 10:
		return num(math.Round(ms)) + " ms"
	}
	return num(math.Round(ms*10)/10) + " ms"
}

// WriteTenantsText writes the capacities: per variant and mode a table of
// tenant counts with their worst figures and verdict, the largest count
// that held and what broke first beyond it.
func WriteTenantsText(w io.Writer, caps []TenantCapacity, slo SLO) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Tenant capacity: the largest tenant count at which every objective held\n")
	fmt.Fprintf(bw, "Objectives: %s\n", slo)
	for _, c := range caps {
		title := c.Mode + " mode"
		if c.Variant != "" {
			title = "variant " + c.Variant + ", " + title
		}
		fmt.Fprintf(bw, "\n%s\n", title)
		rows := [][]string{{"tenants", "admin p95", "token p95", "failed", "RSS ready", "RSS max", "verdict"}}
		for _, ch := range c.Checks {
			verdict := "held"
			if !ch.Held {
				kinds := []string{}
				for _, v := range ch.Violations {
					if !slices.Contains(kinds, v.SLO) {
						kinds = append(kinds, v.SLO)
					}
				}
				verdict = "broke: " + strings.Join(kinds, ", ")
			}
			rows = append(rows, []string{fmt.Sprint(ch.Tenants), optDur(ch.AdminP95), optDur(ch.TokenP95),
				num(100*ch.ErrorRate) + " %", optMiB(ch.ReadyRSSMiB), optMiB(ch.MaxRSSMiB), verdict})
		}
		writeTable(bw, rows, []bool{true, true, true, true, true, true, false})
		switch {
		case c.MaxHeld == 0:
			fmt.Fprintf(bw, "  held at no tenant count tested (the smallest is %d)\n", c.Checks[0].Tenants)
		case c.FirstBroken == 0:
			fmt.Fprintf(bw, "  held up to %d %s, the most tested: test more tenants to find the limit\n", c.MaxHeld, plural(c.MaxHeld, "tenant", "tenants"))
		default:
			fmt.Fprintf(bw, "  held up to %d %s\n", c.MaxHeld, plural(c.MaxHeld, "tenant", "tenants"))
		}
		if c.FirstBroken > 0 {
			fmt.Fprintf(bw, "  broke first at %d tenants:\n", c.FirstBroken)
			for _, v := range c.BrokeFirst {
				fmt.Fprintf(bw, "    - %s: %s (%s)\n", v.SLO, v.What, v.Point)
			}
		}
		if len(c.FirstBreak) > 1 {
			order := []string{SLOPointDone, SLOReadyRSS, SLOMaxRSS, SLOAdminP95, SLOTokenP95, SLOErrors}
			slos := slices.Clone(order)
			slices.SortStableFunc(slos, func(a, b string) int { return cmp.Compare(c.FirstBreak[a], c.FirstBreak[b]) })
			var parts []string
			for _, s := range slos {
				if n, ok := c.FirstBreak[s]; ok {
					parts = append(parts, fmt.Sprintf("%s at %d", s, n))
				}
			}
			fmt.Fprintf(bw, "  each objective first missed: %s\n", strings.Join(parts, "; "))
		}
		if c.RSSPerTenantMiB != 0 {
			fmt.Fprintf(bw, "  RSS at ready ≈ %s MiB + %s MiB per tenant (least squares over %d tenant counts)",
				num(c.RSSBaseMiB), num(c.RSSPerTenantMiB), countRSS(c.Checks))
			if c.RSSLimitAtTenant > 0 {
				fmt.Fprintf(bw, "; reaches %s MiB at about %s tenants", num(slo.MemoryLimitMiB), num(math.Floor(c.RSSLimitAtTenant)))
				if last := c.Checks[len(c.Checks)-1].Tenants; c.RSSLimitAtTenant > float64(last) {
					fmt.Fprintf(bw, " (extrapolated beyond the %d tested)", last)
				}
			}
			fmt.Fprintln(bw)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(bw, "  - %s\n", n)
		}
	}
	return bw.Flush()
}

func countRSS(chs []TenantCheck) int {
	n := 0
	for _, ch := range chs {
		if ch.ReadyRSSMiB > 0 {
			n++
		}
	}
	return n
}

func optDur(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return dur(d)
}

func optMiB(x float64) string {
	if x == 0 {
		return "–"
	}
	return num(math.Round(x)) + " MiB"
}
