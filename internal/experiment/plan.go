package experiment

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

// Point is one cell of the matrix.
type Point struct {
	// ID is stable and is the point's folder name.
	ID      string
	Variant Variant
	Mode    dataset.Mode
	Tenants int
	Repeat  int // 1-based
	// Stack is the stack config of the point's variant (Dirs, Name, Logf
	// are the runner's business).
	Stack stack.KeycloakOptions
	// Topology is the variant's nodes, balancer and CPU limits.
	Topology stack.Topology
	// LDAP is where the variant's users live (a private slapd) when not
	// in Keycloak's database.
	LDAP stack.LDAPOptions
	PG   string
	// DBDurable: the database syncs its writes (StackSpec.DBDurable).
	DBDurable bool
	Spec      dataset.Spec
	// Sessions are the user sessions the point's realms hold, written
	// after seeding when SeedSessions (some point of the file has any).
	Sessions     dataset.SessionSpec
	SeedSessions bool
}

// Params are the point's coordinates, as results record them, with the
// topology (nodes, node_cpus, lb) so that compare, gate and size treat it
// as a factor.
func (p Point) Params() map[string]string {
	m := map[string]string{"mode": string(p.Mode), "tenants": fmt.Sprint(p.Tenants), "variant": p.Variant.Name, "repeat": fmt.Sprint(p.Repeat)}
	for k, v := range p.Topology.Params() {
		m[k] = v
	}
	// The database and the directory, where not the default (PostgreSQL,
	// users in it), so that results of other experiments keep their
	// params.
	if p.Stack.DB != "" {
		m["db"] = p.Stack.DB
	}
	if p.LDAP.Enabled() {
		m["ldap"], m["ldap_import"] = p.LDAP.Server, "off"
		if p.LDAP.Import {
			m["ldap_import"] = "on"
		}
	}
	// the embedded caches' sizes, "cache_users": "20000" (unset: Keycloak's own)
	for name, n := range p.Stack.CacheSizes {
		m[results.ParamCachePrefix+name] = fmt.Sprint(n)
	}
	maps.Copy(m, p.tlsParams())
	if p.Stack.VolatileSessions {
		m[stack.ParamPersistentSessions] = "off"
	}
	if p.SeedSessions {
		m[ParamSessions], m[ParamOfflineSessions] = fmt.Sprint(p.Sessions.Online), fmt.Sprint(p.Sessions.Offline)
	}
	maps.Copy(m, ShapeParams(p.Spec.Content.Shape))
	return m
}

// ShapeParams are a dataset shape's knobs as result params, those set
// ("roles_per_user": "10"); none for the default shape.
func ShapeParams(h dataset.Shape) map[string]string {
	m := map[string]string{}
	for k, v := range map[string]int{"roles_per_user": h.RolesPerUser, "client_roles_per_user": h.ClientRolesPerUser,
		"groups_per_user": h.GroupsPerUser, "composite_depth": h.CompositeDepth, "composite_width": h.CompositeWidth,
		"mappers_per_client": h.MappersPerClient, "group_depth": h.GroupDepth, "group_fanout": h.GroupFanout,
		"scopes_per_client": h.ScopesPerClient} {
		if v != 0 {
			m[k] = fmt.Sprint(v)
		}
	}
	return m
}

// The params of the seeded sessions (dataset.sessions, offline_sessions).
const (
	ParamSessions        = "sessions"
	ParamOfflineSessions = "offline_sessions"
)

// tlsParams are the point's TLS as result params, as the running stack
// records them (stack.RunParams): tls (on or off), and with TLS the
// certificate's key type (tls_key) and, with a balancer, its TLS mode
// (lb_tls).
func (p Point) tlsParams() map[string]string {
	if p.Stack.PlainHTTP {
		return map[string]string{results.ParamTLS: "off"}
	}
	m := map[string]string{results.ParamTLS: "on", stack.ParamTLSKey: p.Stack.TLSKeyType()}
	if p.Topology.LB != "" && p.Topology.LB != stack.LBNone {
		m[stack.ParamLBTLS] = cmp.Or(p.Topology.LBTLS, stack.LBTLSPassthrough)
	}
	return m
}

// tlsDesc describes a point's TLS for the plan: "off", "rsa-2048",
// "ecdsa-p256, lb terminate".
func (p Point) tlsDesc() string {
	tp := p.tlsParams()
	if tp[results.ParamTLS] == "off" {
		return "off"
	}
	s := tp[stack.ParamTLSKey]
	if m := tp[stack.ParamLBTLS]; m != "" {
		s += ", lb " + m
	}
	return s
}

// backends describes a point's database and where its users live, for
// the plan: "postgres", "mariadb", "postgres (durable)", "postgres,
// users in slapd (import off)".
func (p Point) backends() string {
	s := stack.DBPostgres
	if p.Stack.DB != "" {
		s = p.Stack.DB
	}
	if p.DBDurable {
		s += " (durable)"
	}
	if p.LDAP.Enabled() {
		imp := "off"
		if p.LDAP.Import {
			imp = "on"
		}
		s += ", users in " + p.LDAP.Server + " (import " + imp + ")"
	}
	if p.Stack.VolatileSessions {
		s += ", sessions in memory only"
	}
	if p.SeedSessions {
		s += fmt.Sprintf(", %d online + %d offline sessions", p.Sessions.Online, p.Sessions.Offline)
	}
	return s
}

// Plan lists the points in the order the runner takes them: by variant,
// then mode, then tenant count ascending (so that a dataset grows), then
// repeat. It is pure and deterministic.
func Plan(f *File) ([]Point, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	tenants := slices.Clone(f.Dataset.Tenants)
	content := f.content()
	if p, err := dataset.LookupPreset(f.Dataset.Preset); err == nil && len(tenants) == 0 {
		tenants = []int{p.Tenants}
	}
	slices.Sort(tenants)
	tenants = slices.Compact(tenants)
	var pts []Point
	for _, v := range f.Variants {
		ko := stack.KeycloakOptions{
			Version: f.Stack.KeycloakVersion, JavaHome: f.Stack.JavaHome, Heap: f.Stack.Heap,
			HTTPThreads: f.Stack.HTTPThreads, DBPoolSize: f.Stack.DBPoolSize,
			CacheSizes: f.Stack.CacheSizes, BuildOptions: f.Stack.BuildOptions, ExtraOptions: f.Stack.Options,
		}
		policy := f.Dataset.PasswordPolicy
		if v.KeycloakVersion != "" {
			ko.Version = v.KeycloakVersion
		}
		if v.Heap != "" {
			ko.Heap = v.Heap
		}
		if v.HTTPThreads != 0 {
			ko.HTTPThreads = v.HTTPThreads
		}
		if v.DBPoolSize != 0 {
			ko.DBPoolSize = v.DBPoolSize
		}
		if v.CacheSizes != nil {
			ko.CacheSizes = v.CacheSizes
		}
		if v.Options != nil {
			ko.ExtraOptions = append(slices.Clone(ko.ExtraOptions), v.Options...)
		}
		if v.PasswordPolicy != "" {
			policy = v.PasswordPolicy
		}
		ko.DB = dbOf(f.Stack, v)
		ko.PlainHTTP, ko.TLSKey = tlsOf(f.Stack, v)
		ko.VolatileSessions = !*cmp.Or(v.PersistentSessions, f.Stack.PersistentSessions, new(true))
		ldap := ldapOf(f.Stack, v)
		pol, _ := dataset.ParsePolicy(policy)
		vc := content
		vc.Shape = f.shapeOf(v)
		for _, m := range f.Dataset.Modes {
			mode := dataset.Mode(m)
			for _, n := range tenants {
				for r := 1; r <= f.Repeats; r++ {
					spec := dataset.Spec{Mode: mode, Tenants: n, Content: vc, Policy: pol, Prefix: "kcb", Seed: int64(f.Seed)}
					id := fmt.Sprintf("%s-%s-n%05d-r%d", v.Name, mode, n, r)
					pts = append(pts, Point{ID: id, Variant: v, Mode: mode, Tenants: n, Repeat: r, Stack: ko, Topology: topologyOf(f.Stack, v), LDAP: ldap, PG: f.Stack.PGVersion, DBDurable: f.Stack.DBDurable, Spec: spec,
						Sessions: f.sessionsOf(v), SeedSessions: f.hasSessions()})
				}
			}
		}
	}
	return pts, nil
}

// content is what each tenant of f's points holds (the default shape:
// variants set their own).
func (f *File) content() dataset.Content {
	content := dataset.DefaultContent
	if p, err := dataset.LookupPreset(f.Dataset.Preset); f.Dataset.Preset != "" && err == nil {
		content = p.Content
	}
	content.OTPUsers = f.Dataset.OTPUsers
	content.UMAResources = f.Dataset.UMAResources
	content.BrokerUsers = f.Dataset.BrokerUsers
	content.SAMLClients = f.Dataset.SAMLClients
	if f.Dataset.Users > 0 {
		content.Users = f.Dataset.Users
	}
	if f.Dataset.Clients > 0 {
		content.Clients = f.Dataset.Clients
	}
	return content
}

// Estimate guesses the plan's duration with DefaultCosts at scale.
func Estimate(f *File, pts []Point, scale float64) time.Duration {
	return DefaultCosts.Estimate(f, pts, scale)
}

// Estimate guesses the plan's duration: per point seeding what it adds,
// boot, the phases (times scale, as Runner.Scale does; 0: 1), capacity
// searches and the overhead.
func (c Costs) Estimate(f *File, pts []Point, scale float64) time.Duration {
	if scale <= 0 {
		scale = 1
	}
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	var total time.Duration
	prev := map[string]int{}
	saved := map[string][]int{} // dataset → the tenant counts of its snapshots
	for _, p := range pts {
		key := p.Variant.Name + "/" + string(p.Mode)
		from := prev[key]
		if from > p.Tenants {
			from = 0
		}
		prev[key] = p.Tenants
		if *f.Dataset.Snapshots && noSnapshotReason(p) == "" {
			// the largest snapshot at or below N, maybe another variant's
			ds := p.datasetKey()
			for _, n := range saved[ds] {
				if n <= p.Tenants && n > from {
					from = n
				}
			}
			saved[ds] = append(saved[ds], p.Tenants)
		}
		if p.Repeat == 1 {
			// the sample's tenants through the admin API, the rest by
			// the file's strategy
			k := min(max(f.Dataset.AdminAPISample, 0), p.Tenants-from)
			total += c.seed(p.Mode, from, p.Tenants-k) + c.adminAPI(p.Mode, p.Tenants-k, p.Tenants) +
				seconds(c.SeedPerUser*float64((p.Tenants-from)*p.Spec.Content.Users))
		}
		total += seconds(c.Boot[p.Mode].At(float64(p.Tenants))) + seconds(c.Overhead)
		for _, ph := range f.Phases {
			if ph == "warm" {
				total += sc(f.Warmup.Duration)
			}
			for _, w := range f.Workload {
				if w.Capacity == nil {
					c := w.Config.Scaled(scale)
					total += c.Total()
				}
			}
		}
		for _, w := range f.Workload {
			if w.Capacity != nil {
				total += w.Capacity.estimate(scale)
			}
		}
	}
	return total
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// seed is the time to grow a mode's dataset from tenants from to to.
func (c Costs) seed(m dataset.Mode, from, to int) time.Duration {
	return sumLaw(c.SeedPerTenant[m], from, to)
}

// adminAPI is the time to make tenants from+1..to through the admin API
// (an admin_api_sample).
func (c Costs) adminAPI(m dataset.Mode, from, to int) time.Duration {
	law, ok := c.AdminAPIPerTenant[m]
	if !ok {
		law = DefaultCosts.AdminAPIPerTenant[m]
	}
	return sumLaw(law, from, to)
}

func sumLaw(law PowerLaw, from, to int) time.Duration {
	var s float64
	for n := from + 1; n <= to; n++ {
		s += law.At(float64(n))
	}
	return seconds(s)
}

// PowerLaw is y = A × x^K + B × x: a power law, or (K 0, B > 0) a
// straight line, as realm seeding is (each realm makes the next dearer).
type PowerLaw struct {
	A, K, B float64
}

// At is the law's value at x.
func (l PowerLaw) At(x float64) float64 { return l.A*math.Pow(max(x, 1), l.K) + l.B*max(x, 1) }

func (l PowerLaw) String() string {
	if l.B > 0 {
		return fmt.Sprintf("%.3g s + %.3g ms × N", l.A, 1000*l.B)
	}
	return fmt.Sprintf("%.3g s × N^%.2f", l.A, l.K)
}

// Costs are what Estimate assumes a point costs, per tenant mode.
type Costs struct {
	// SeedPerTenant is the seed time of the N-th tenant, in seconds.
	SeedPerTenant map[dataset.Mode]PowerLaw
	// AdminAPIPerTenant is the time of the N-th tenant made through the
	// admin API (the fast strategy), for a file's admin_api_sample.
	AdminAPIPerTenant map[dataset.Mode]PowerLaw
	// SeedPerUser is the seed time of each user of a tenant added, in
	// seconds, on top of SeedPerTenant (which holds a tenant of a few
	// users); 0 in calibrated costs, whose tenants held their users.
	SeedPerUser float64
	// Boot is the restart's time to ready with N tenants, in seconds.
	Boot map[dataset.Mode]PowerLaw
	// Overhead is the rest of a point, in seconds: snapshots, the
	// stack's start, VU set-up, writing the files.
	Overhead float64
	// Source says where the figures come from.
	Source string
	// Strategies are the seeding strategies of the points calibrated
	// from (none for the defaults).
	Strategies []string
}

// DefaultCosts are figures of a 2-core box: a realm tenant costs about
// 0.6 s growing with the realm count, an organization tenant 0.1 s, each
// user 6 ms more (one realm of 2,000 users: 13.2 s, clone strategy); boot
// 10 s.
var DefaultCosts = Costs{
	SeedPerTenant: map[dataset.Mode]PowerLaw{dataset.ModeRealms: {A: 0.3, K: 0.25}, dataset.ModeOrgs: {A: 0.1}},
	// The multitenancy sweep's fast growth steps to 1,000 tenants,
	// Keycloak 26.7.3, 4 in parallel (docs/results/multitenancy).
	AdminAPIPerTenant: map[dataset.Mode]PowerLaw{dataset.ModeRealms: {A: 0.25, B: 0.00316}, dataset.ModeOrgs: {A: 0.15, B: 0.00033}},
	SeedPerUser:       0.006,
	Boot:              map[dataset.Mode]PowerLaw{dataset.ModeRealms: {A: 10}, dataset.ModeOrgs: {A: 10}},
	Overhead:          10,
	Source:            "kcbench's defaults for a 2-core box",
}

// CalibrateCosts fits Costs to finished points: per mode, the seed time
// per added tenant as a power law of the tenant count (each point's mean
// taken at the middle of the range it added), the boot time likewise, and
// the mean overhead. Modes without two points to fit keep the defaults'
// exponent. A point's admin-API sample is fitted apart (AdminAPIPerTenant),
// the rest of its seed time to SeedPerTenant. It says what it fitted in
// Source.
func CalibrateCosts(pts []*results.Point) (Costs, error) {
	cal := calibration{seeds: map[dataset.Mode][]obs{}, samples: map[dataset.Mode][]obs{}, boots: map[dataset.Mode][]obs{}}
	for _, p := range pts {
		if p.Summary.Status == results.StatusDone {
			cal.add(p.Summary)
		}
	}
	if len(cal.over) == 0 {
		return Costs{}, errors.New("no finished point to calibrate from")
	}
	c := Costs{SeedPerTenant: map[dataset.Mode]PowerLaw{}, AdminAPIPerTenant: map[dataset.Mode]PowerLaw{}, Boot: map[dataset.Mode]PowerLaw{},
		Strategies: cal.strategies}
	var parts []string
	for _, m := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		c.SeedPerTenant[m], c.Boot[m] = DefaultCosts.SeedPerTenant[m], DefaultCosts.Boot[m]
		if os := cal.seeds[m]; len(os) > 0 {
			c.SeedPerTenant[m] = seedFit(os, DefaultCosts.SeedPerTenant[m])
			parts = append(parts, fmt.Sprintf("%s seed per tenant %s (%d points)", m, c.SeedPerTenant[m], len(os)))
		}
		c.AdminAPIPerTenant[m] = DefaultCosts.AdminAPIPerTenant[m]
		if os := cal.samples[m]; len(os) > 0 {
			c.AdminAPIPerTenant[m] = seedFit(os, DefaultCosts.AdminAPIPerTenant[m])
			parts = append(parts, fmt.Sprintf("%s admin API per tenant %s (%d samples)", m, c.AdminAPIPerTenant[m], len(os)))
		}
		if os := cal.boots[m]; len(os) > 0 {
			c.Boot[m] = fitPowerLaw(os, DefaultCosts.Boot[m])
			parts = append(parts, fmt.Sprintf("%s boot %s", m, c.Boot[m]))
		}
	}
	for _, o := range cal.over {
		c.Overhead += o / float64(len(cal.over))
	}
	parts = append(parts, fmt.Sprintf("overhead %.0f s per point", c.Overhead))
	c.Source = fmt.Sprintf("fitted to %d finished points: %s", len(cal.over), strings.Join(parts, "; "))
	return c, nil
}

// obs is one observation of a cost: y at x tenants, of weight w (the
// tenants it stands for).
type obs struct{ x, y, w float64 }

// calibration gathers the finished points' observations by mode.
type calibration struct {
	seeds, samples, boots map[dataset.Mode][]obs
	over                  []float64 // each point's time beyond its parts
	strategies            []string
}

// add takes one finished point's seed, admin-API sample, boot and the
// rest of its time.
func (cal *calibration) add(s results.Summary) {
	m := dataset.Mode(s.Params["mode"])
	n := 0
	fmt.Sscan(s.Params["tenants"], &n)
	rest := s.Seconds
	if sd := s.Seed; sd != nil {
		if sd.Added > 0 && sd.Strategy != "" && !slices.Contains(cal.strategies, sd.Strategy) {
			cal.strategies = append(cal.strategies, sd.Strategy)
		}
		rest -= sd.RestoreSeconds
		if !sd.Recorded { // a restored dataset's record took none of this point's time
			rest -= sd.Seconds
		}
		top, added, secs := n, sd.Added, sd.Seconds
		if sm := sd.AdminAPISample; sm.PerTenant() > 0 {
			// the sample made the last tenants; the strategy the rest
			cal.samples[m] = append(cal.samples[m], obs{float64(n) - float64(sm.Tenants-1)/2, sm.PerTenant(), float64(sm.Tenants)})
			top -= sm.Tenants
			added -= sm.Tenants
			secs -= sm.Seconds
		}
		if added > 0 && secs > 0 {
			mid := float64(top) - float64(added-1)/2
			o := obs{mid, secs / float64(added), float64(added)}
			cal.seeds[m] = append(cal.seeds[m], o)
			if sd.Strategy == string(dataset.Fast) || sd.Strategy == string(dataset.Rest) {
				// every tenant through the admin API
				cal.samples[m] = append(cal.samples[m], o)
			}
		}
	}
	if b := s.Boot; b != nil && b.Seconds > 0 {
		cal.boots[m] = append(cal.boots[m], obs{float64(n), b.Seconds, 1})
		rest -= b.Seconds
	}
	for _, w := range s.Workloads {
		rest -= w.Stats.Elapsed.Seconds() // warm-up included
	}
	for _, cs := range s.Capacity {
		rest -= cs.Seconds
	}
	cal.over = append(cal.over, max(rest, 0))
}

// wls is the weighted least-squares line through the points f maps os
// to: its slope (ok false with fewer than two points or no spread in x),
// and the intercept that goes with a given slope.
func wls(os []obs, f func(obs) (x, y float64)) (slope float64, ok bool, intercept func(b float64) float64) {
	var sw, sx, sy, sxx, sxy float64
	for _, o := range os {
		x, y := f(o)
		sw += o.w
		sx += o.w * x
		sy += o.w * y
		sxx += o.w * x * x
		sxy += o.w * x * y
	}
	if d := sw*sxx - sx*sx; len(os) >= 2 && d > 1e-9 {
		slope, ok = (sw*sxy-sx*sy)/d, true
	}
	return slope, ok, func(b float64) float64 { return (sy - b*sx) / sw }
}

// fitPowerLaw is the power law through os: the line of log y on log x,
// its exponent within [0, 2] (def's with too few points).
func fitPowerLaw(os []obs, def PowerLaw) PowerLaw {
	k, ok, intercept := wls(os, func(o obs) (float64, float64) { return math.Log(max(o.x, 1)), math.Log(o.y) })
	if ok {
		k = min(max(k, 0), 2)
	} else {
		k = def.K
	}
	return PowerLaw{A: math.Exp(intercept(k)), K: k}
}

// fitLine fits y = a + b × x (b ≥ 0); ok is false when it has no positive
// intercept.
func fitLine(os []obs) (PowerLaw, bool) {
	b, ok, intercept := wls(os, func(o obs) (float64, float64) { return o.x, o.y })
	if !ok {
		return PowerLaw{}, false
	}
	b = max(b, 0)
	a := intercept(b)
	return PowerLaw{A: a, B: b}, a > 0
}

// logErr is the weighted squared error of l on os, in log space.
func logErr(l PowerLaw, os []obs) float64 {
	var e float64
	for _, o := range os {
		d := math.Log(l.At(o.x)) - math.Log(o.y)
		e += o.w * d * d
	}
	return e
}

// seedFit is the power law, or the straight line where it fits the points
// better (realms: flat, then each realm dearer than the last; a power law
// fitted to the flat part underestimates the large N).
func seedFit(os []obs, def PowerLaw) PowerLaw {
	pl := fitPowerLaw(os, def)
	if l, ok := fitLine(os); ok && logErr(l, os) < logErr(pl, os) {
		return l
	}
	return pl
}

// WritePlan prints the plan as a table with the estimate at scale, from
// costs (nil: DefaultCosts).
func WritePlan(w io.Writer, f *File, pts []Point, scale float64, costs *Costs) error {
	if costs == nil {
		costs = &DefaultCosts
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "point\tvariant\tmode\ttenants\trepeat\tkeycloak\tpassword policy\ttopology\ttls\tdatabase\n")
	for _, p := range pts {
		tp := p.Topology.Params()
		top := tp["nodes"] + " node"
		if tp["nodes"] != "1" {
			top += "s"
		}
		if tp["node_cpus"] != "0" {
			top += " × " + tp["node_cpus"] + " CPU"
		}
		if tp["lb"] != stack.LBNone {
			top += ", " + tp["lb"]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.Variant.Name, p.Mode, p.Tenants, p.Repeat, p.Stack.Version, p.Spec.Policy, top, p.tlsDesc(), p.backends())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	searches := 0
	for _, wl := range f.Workload {
		if wl.Capacity != nil {
			searches++
		}
	}
	what := fmt.Sprintf("phases %v; %d workloads per phase", f.Phases, len(f.Workload)-searches)
	if searches > 0 {
		what += fmt.Sprintf(", then %d capacity searches", searches)
	}
	fmt.Fprintf(w, "\n%d points; %s; estimated %s (%s)\n", len(pts), what, costs.Estimate(f, pts, scale).Round(time.Minute), costs.Source)
	if len(costs.Strategies) > 0 && !slices.Contains(costs.Strategies, f.Dataset.Strategy) {
		fmt.Fprintf(w, "note: the points calibrated from were seeded by %s, this file seeds by %s: its seed times are those of the other strategy\n",
			strings.Join(costs.Strategies, ", "), f.Dataset.Strategy)
	}
	return nil
}
