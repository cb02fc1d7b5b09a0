package experiment

import (
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kcbench/kcbench/internal/capacity"
	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// File is an experiment file.
type File struct {
	Name     string      `yaml:"name"`
	Stack    StackSpec   `yaml:"stack"`
	Dataset  DatasetSpec `yaml:"dataset"`
	Phases   []string    `yaml:"phases"` // cold, warm (default both)
	Warmup   Duration    `yaml:"warmup"` // discarded load before the warm phase
	Workload []Workload  `yaml:"workloads"`
	Repeats  int         `yaml:"repeats"`
	Variants []Variant   `yaml:"variants"`
	Watchdog Watchdog    `yaml:"watchdog"`
	// Seed makes VUs' random choices reproducible.
	Seed uint64 `yaml:"seed"`
	// References are published figures the report draws beside the
	// measured ones, on the chart each names, with a comparison table.
	References []results.Reference `yaml:"references"`
}

// Duration reads "30s" from YAML.
type Duration struct{ time.Duration }

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (e.g. 30s, 2m)", n.Line, n.Value)
	}
	d.Duration = v
	return nil
}

// MarshalYAML implements yaml.Marshaler.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// StackSpec configures the local stack of every point (variants may
// override parts of it).
type StackSpec struct {
	KeycloakVersion string         `yaml:"keycloak_version"`
	JavaHome        string         `yaml:"java_home"`
	Heap            string         `yaml:"heap"`
	HTTPThreads     int            `yaml:"http_threads"`
	DBPoolSize      int            `yaml:"db_pool_size"`
	CacheSizes      map[string]int `yaml:"cache_sizes"`
	BuildOptions    []string       `yaml:"build_options"`
	Options         []string       `yaml:"options"`
	PGVersion       string         `yaml:"pg_version"`
	// DBDurable keeps the database's writes durable (as up --db-durable:
	// fsync, synchronous_commit and full_page_writes on; MariaDB flushes
	// each commit); by default a benchmark database does not sync.
	DBDurable bool `yaml:"db_durable"`
	// Topology: Keycloak nodes (1–4), the balancer in front of several
	// (haproxy or none), its AUTH_SESSION_ID stickiness, and each node's
	// CPU quota in cores (0: no limit).
	Nodes    int     `yaml:"nodes"`
	LB       string  `yaml:"lb"`
	LBSticky bool    `yaml:"lb_sticky"`
	NodeCPUs float64 `yaml:"node_cpus"`
	// HAProxy is the haproxy binary (default: haproxy on PATH).
	HAProxy string `yaml:"haproxy"`
	// Latency is injected on the node-db link, as --latency takes it
	// ("node-db=2ms", "node-db=5ms~1ms").
	Latency string `yaml:"latency"`
	// DB is the database Keycloak runs on: postgres (default) or
	// mariadb (a private MariaDB, as up --db mariadb).
	DB string `yaml:"db"`
	// LDAP keeps the dataset's users in a private OpenLDAP: slapd, or
	// off (default); LDAPImport is the provider's import mode (on|off,
	// default off); LDAPCachePolicy its cache policy.
	LDAP            string `yaml:"ldap"`
	LDAPImport      string `yaml:"ldap_import"`
	LDAPCachePolicy string `yaml:"ldap_cache_policy"`
	// TLS: the stack serves HTTPS (absent or true, the default) or plain
	// HTTP (false); TLSKey is its certificate's key type (stack.TLSKeys,
	// default rsa-2048) and LBTLS how a balancer handles TLS
	// (stack.LBTLSModes, default passthrough).
	TLS    *bool  `yaml:"tls"`
	TLSKey string `yaml:"tls_key"`
	LBTLS  string `yaml:"lb_tls"`
	// PersistentSessions: online user sessions in the database (absent
	// or true, Keycloak's default) or in memory only (false).
	PersistentSessions *bool `yaml:"persistent_sessions"`
}

// DatasetSpec says what each point holds.
type DatasetSpec struct {
	Modes   []string `yaml:"modes"`   // realms, orgs
	Tenants []int    `yaml:"tenants"` // ascending after planning
	Preset  string   `yaml:"preset"`
	Users   int      `yaml:"users"`
	Clients int      `yaml:"clients"`
	// OTPUsers are users per tenant with a TOTP credential (otp-login).
	OTPUsers int `yaml:"otp_users"`
	// UMAResources are resources per tenant in a resource server (uma).
	UMAResources int `yaml:"uma_resources"`
	// BrokerUsers are the users of an identity-provider realm every
	// tenant realm brokers (broker-login; realms mode), SAMLClients the
	// SAML clients per tenant (saml-login).
	BrokerUsers int `yaml:"broker_users"`
	SAMLClients int `yaml:"saml_clients"`
	// Sessions and OfflineSessions are the user sessions each point's
	// realms hold, written into the database after seeding (seed
	// --sessions, --offline-sessions); a variant may set its own. With
	// either set anywhere in the file, each point has exactly its count
	// (more, left by an earlier point, are deleted from the database before
	// the point's restart).
	Sessions        int `yaml:"sessions"`
	OfflineSessions int `yaml:"offline_sessions"`
	// The data shape (seed --roles-per-user and the others); a variant
	// may set its own.
	dataset.Shape  `yaml:",inline"`
	PasswordPolicy string `yaml:"password_policy"`
	Strategy       string `yaml:"strategy"`
	// AdminAPISample makes the last tenants each point adds (at most this
	// many) through Keycloak's admin API, one REST call per tenant as the
	// fast strategy does, and times them: provisioning time per tenant at
	// N, measured, while Strategy (clone) makes the rest in seconds. 0:
	// none.
	AdminAPISample int `yaml:"admin_api_sample"`
	// Snapshots saves a snapshot after seeding each point, so that a rerun
	// (or another experiment on the same machine) restores instead of
	// seeding.
	Snapshots *bool `yaml:"snapshots"`
}

// Workload is one scenario × executor, as `kcbench load` takes it, or,
// with Capacity, one scenario under a capacity search.
type Workload struct {
	Name            string `yaml:"name"`
	scenario.Config `yaml:",inline"`
	// Capacity, when set, runs a capacity search of the scenario at each
	// point, after the phases (its own warm-up included); the executor
	// fields do not apply.
	Capacity *CapacitySpec `yaml:"capacity"`
	// Events are timed faults during each run of the workload, as
	// `kcbench load --event` takes them ("30s kill node=2"); their times
	// scale with --scale. After the run the stack is brought back to its
	// topology (nodes started, added ones removed).
	Events []string `yaml:"events"`
	// RecoverySLO is the p99 each run must come back under after an
	// event (0: scenario.DefaultRecoverySLO).
	RecoverySLO Duration `yaml:"recovery_slo"`
}

// Faults are the workload's events, their times multiplied by scale
// (≤ 0: 1).
func (w Workload) Faults(scale float64) ([]stack.Fault, error) {
	if scale <= 0 {
		scale = 1
	}
	var fs []stack.Fault
	var errs []error
	for _, e := range w.Events {
		f, err := stack.ParseFault(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f.At = time.Duration(float64(f.At) * scale)
		fs = append(fs, f)
	}
	return fs, errors.Join(errs...)
}

// CapacitySpec is a capacity search, as `kcbench capacity` takes it.
// Zero fields take the search's defaults. Without start_rate, step,
// step_duration and resolution (or with mode: adaptive) the search is
// adaptive; with any of them (or mode: linear) it is linear.
type CapacitySpec struct {
	SLO          string   `yaml:"slo"` // default capacity.DefaultSLOs
	Mode         string   `yaml:"mode"`
	Precision    float64  `yaml:"precision_pct"` // adaptive; default 1
	Start        float64  `yaml:"start_rate"`
	Step         float64  `yaml:"step"`
	StepDuration Duration `yaml:"step_duration"`
	Warmup       Duration `yaml:"warmup"`
	Resolution   float64  `yaml:"resolution"`
	MaxRate      float64  `yaml:"max_rate"`
	MaxVUs       int      `yaml:"max_vus"`
}

// Options are the search's options with durations multiplied by scale.
func (c *CapacitySpec) Options(scale float64) (capacity.Options, error) {
	slos, err := capacity.ParseSLOs(c.SLO)
	if err != nil {
		return capacity.Options{}, fmt.Errorf("slo: %w", err)
	}
	if scale <= 0 {
		scale = 1
	}
	f := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	var adaptive bool
	switch c.Mode {
	case "":
		adaptive = c.Start == 0 && c.Step == 0 && c.StepDuration.Duration == 0 && c.Resolution == 0
	case results.ModeAdaptive:
		adaptive = true
	case results.ModeLinear:
	default:
		return capacity.Options{}, fmt.Errorf("mode: %q: must be %s or %s", c.Mode, results.ModeAdaptive, results.ModeLinear)
	}
	if adaptive && (c.Step != 0 || c.Resolution != 0) {
		return capacity.Options{}, errors.New("step and resolution apply to the linear search (mode: linear)")
	}
	if !(c.Precision >= 0 && c.Precision <= maxPrecisionPct) {
		return capacity.Options{}, fmt.Errorf("precision_pct: %v: must be a percentage above 0 and at most %v (1 for 1%%; leave it out for the default)", c.Precision, maxPrecisionPct)
	}
	o := capacity.Options{SLOs: slos, Adaptive: adaptive, Precision: c.Precision / 100, Start: c.Start, Step: c.Step,
		StepDuration: f(c.StepDuration.Duration), Warmup: f(c.Warmup.Duration), Resolution: c.Resolution, MaxRate: c.MaxRate}
	if adaptive {
		o.ProbeDuration, o.MinStepDuration, o.MaxStepDuration = f(capacity.DefaultProbeDuration), f(capacity.DefaultMinStepDuration), f(capacity.DefaultMaxStepDuration)
	}
	o = o.WithDefaults()
	return o, o.Validate()
}

// estimate guesses a search's duration (capacity.Options.Estimate).
func (c *CapacitySpec) estimate(scale float64) time.Duration {
	o, err := c.Options(scale)
	if err != nil {
		return 0
	}
	return o.Estimate()
}

// Variant overrides one factor of the stack or dataset.
type Variant struct {
	Name            string         `yaml:"name"`
	KeycloakVersion string         `yaml:"keycloak_version"`
	Heap            string         `yaml:"heap"`
	HTTPThreads     int            `yaml:"http_threads"`
	DBPoolSize      int            `yaml:"db_pool_size"`
	CacheSizes      map[string]int `yaml:"cache_sizes"`
	Options         []string       `yaml:"options"`
	PasswordPolicy  string         `yaml:"password_policy"`
	// Topology overrides (0 / nil: the stack's).
	Nodes    int     `yaml:"nodes"`
	NodeCPUs float64 `yaml:"node_cpus"`
	LBSticky *bool   `yaml:"lb_sticky"`
	// Latency overrides the stack's injected latency ("node-db=0s": none).
	Latency string `yaml:"latency"`
	// DB, LDAP and LDAPImport override the stack's database and where the
	// users live (ldap: off turns a stack's slapd off).
	DB         string `yaml:"db"`
	LDAP       string `yaml:"ldap"`
	LDAPImport string `yaml:"ldap_import"`
	// TLS, TLSKey and LBTLS override the stack's; tls: false also drops
	// the stack's tls_key and lb_tls, which need TLS.
	TLS    *bool  `yaml:"tls"`
	TLSKey string `yaml:"tls_key"`
	LBTLS  string `yaml:"lb_tls"`
	// PersistentSessions: online user sessions in the database (absent
	// or true, Keycloak's default) or in memory only (false).
	PersistentSessions *bool `yaml:"persistent_sessions"`
	// Sessions and OfflineSessions override the dataset's.
	Sessions        *int `yaml:"sessions"`
	OfflineSessions *int `yaml:"offline_sessions"`
	// Shape overrides the dataset's shape, key by key.
	Shape ShapeOverride `yaml:",inline"`
}

// ShapeOverride is a variant's shape: the keys it sets.
type ShapeOverride struct {
	RolesPerUser       *int `yaml:"roles_per_user"`
	ClientRolesPerUser *int `yaml:"client_roles_per_user"`
	GroupsPerUser      *int `yaml:"groups_per_user"`
	CompositeDepth     *int `yaml:"composite_depth"`
	CompositeWidth     *int `yaml:"composite_width"`
	MappersPerClient   *int `yaml:"mappers_per_client"`
	GroupDepth         *int `yaml:"group_depth"`
	GroupFanout        *int `yaml:"group_fanout"`
	ScopesPerClient    *int `yaml:"scopes_per_client"`
}

// shapeOf is variant v's data shape: the dataset's, with v's keys.
func (f *File) shapeOf(v Variant) dataset.Shape {
	d, o := f.Dataset.Shape, v.Shape
	pick := func(base int, over *int) int {
		if over != nil {
			return *over
		}
		return base
	}
	return dataset.Shape{
		RolesPerUser: pick(d.RolesPerUser, o.RolesPerUser), ClientRolesPerUser: pick(d.ClientRolesPerUser, o.ClientRolesPerUser),
		GroupsPerUser: pick(d.GroupsPerUser, o.GroupsPerUser), CompositeDepth: pick(d.CompositeDepth, o.CompositeDepth),
		CompositeWidth: pick(d.CompositeWidth, o.CompositeWidth), MappersPerClient: pick(d.MappersPerClient, o.MappersPerClient),
		GroupDepth: pick(d.GroupDepth, o.GroupDepth), GroupFanout: pick(d.GroupFanout, o.GroupFanout),
		ScopesPerClient: pick(d.ScopesPerClient, o.ScopesPerClient),
	}
}

// Watchdog limits a point; crossing one aborts it, and larger tenant
// counts of that mode (and variant) are skipped.
type Watchdog struct {
	MaxRSS       string   `yaml:"max_rss"`        // e.g. 8GiB, 6000MiB
	MaxErrorRate string   `yaml:"max_error_rate"` // e.g. 50%; time-outs do not count
	PointTimeout Duration `yaml:"point_timeout"`
}

// Load reads and checks an experiment file: unknown keys are errors, and
// every error names the line or the field.
func Load(path string) (*File, error) {
	b, err := fileutil.ReadFile(path, fileutil.MaxConfigFile)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse decodes, applies defaults, then validates. A former key's error
// names the new one.
func Parse(b []byte) (*File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty experiment file")
		}
		if rerr := renamedKey(b, fileRenames); rerr != nil {
			return nil, rerr
		}
		return nil, cleanYAMLError(err)
	}
	f.defaults()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

var yamlPrefix = regexp.MustCompile(`^yaml: (unmarshal errors:\n\s*)?`)

func cleanYAMLError(err error) error {
	s := yamlPrefix.ReplaceAllString(err.Error(), "")
	s = strings.ReplaceAll(s, "in type experiment.", "in ")
	s = strings.ReplaceAll(s, "in type scenario.", "in ")
	return errors.New(s)
}

func (f *File) defaults() {
	if len(f.Phases) == 0 {
		f.Phases = []string{"cold", "warm"}
	}
	if f.Repeats == 0 {
		f.Repeats = 1
	}
	if f.Stack.KeycloakVersion == "" {
		f.Stack.KeycloakVersion = stack.DefaultKeycloakVersion
	}
	if f.Dataset.Modes == nil {
		f.Dataset.Modes = []string{string(dataset.ModeRealms)}
	}
	if f.Dataset.Tenants == nil && f.Dataset.Preset == "" {
		f.Dataset.Tenants = []int{1}
	}
	if f.Dataset.PasswordPolicy == "" {
		f.Dataset.PasswordPolicy = "default"
	}
	if f.Dataset.Strategy == "" {
		f.Dataset.Strategy = string(dataset.Clone)
	}
	if f.Dataset.Snapshots == nil {
		t := true
		f.Dataset.Snapshots = &t
	}
	if f.Seed == 0 {
		f.Seed = scenario.DefaultSeed
	}
	for i := range f.Workload {
		w := &f.Workload[i]
		if w.Capacity != nil {
			if w.Capacity.SLO == "" {
				w.Capacity.SLO = capacity.DefaultSLOs
			}
		} else {
			w.Config.ApplyDefaults() // a search sets the executor per step
		}
		if w.Name == "" {
			w.Name = w.Scenario
		}
	}
	if len(f.Variants) == 0 {
		f.Variants = []Variant{{Name: "default"}}
	}
}

// MaxPoints bounds an experiment's matrix: a point takes minutes, so
// more than this many would run for months.
const MaxPoints = 10_000

// points counts the plan's points without building it.
func (f *File) points() int {
	tenants := map[int]bool{}
	for _, n := range f.Dataset.Tenants {
		tenants[n] = true
	}
	return max(len(f.Variants), 1) * len(f.Dataset.Modes) * max(len(tenants), 1) * max(f.Repeats, 1)
}

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Validate checks a file with defaults applied; it reports every problem,
// each with its path, and changes nothing.
func (f *File) Validate() error {
	p := &problems{seen: map[string]bool{}}
	if !nameRe.MatchString(f.Name) {
		p.add("name: %q: want letters, digits, '-', '_' or '.'", f.Name)
	}
	f.validateStack(p)
	f.validateDataset(p)
	f.validateWorkloads(p)
	f.validateVariants(p)
	f.validateWatchdog(p)
	if f.Repeats < 1 || f.Repeats > 100 {
		p.add("repeats: %d: must be between 1 and 100", f.Repeats)
	}
	if n := f.points(); n > MaxPoints {
		p.add("the matrix has %d points (variants × modes × tenant counts × repeats): at most %d", n, MaxPoints)
	}
	return errors.Join(p.errs...)
}

// problems gathers a file's problems.
type problems struct {
	errs []error
	seen map[string]bool // messages added once
}

func (p *problems) add(format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

// addOnce adds a message that each variant may find again (a problem of
// the stack's) once.
func (p *problems) addOnce(format string, args ...any) {
	if msg := fmt.Sprintf(format, args...); !p.seen[msg] {
		p.seen[msg] = true
		p.errs = append(p.errs, errors.New(msg))
	}
}

// addAll adds each of err's joined errors after prefix.
func (p *problems) addAll(prefix string, err error) {
	if err != nil {
		for _, e := range unjoin(err) {
			p.add("%s%v", prefix, e)
		}
	}
}

// uniqueName checks the name of list[i] and that no earlier one has it.
func (p *problems) uniqueName(list string, i int, name string, seen map[string]bool) {
	if !nameRe.MatchString(name) {
		p.add("%s[%d].name: %q: want letters, digits, '-', '_' or '.'", list, i, name)
	}
	if seen[name] {
		p.add("%s[%d].name: %q is used twice", list, i, name)
	}
	seen[name] = true
}

func (f *File) validateStack(p *problems) {
	if _, err := stack.ParseVersion(f.Stack.KeycloakVersion); err != nil {
		p.add("stack.keycloak_version: %v", err)
	}
	if f.Stack.Nodes < 0 || f.Stack.Nodes > stack.MaxNodes {
		p.add("stack.nodes: %d: must be between 1 and %d", f.Stack.Nodes, stack.MaxNodes)
	}
	if _, err := stack.ParseLatency(f.Stack.Latency); err != nil {
		p.add("stack.latency: %v", err)
	}
	for i, r := range f.References {
		p.addAll(fmt.Sprintf("references[%d].", i), r.Check())
	}
	f.validateBackends("stack.", Variant{}, p.add)
	p.addAll("stack: ", (stack.Topology{LB: f.Stack.LB, NodeCPUs: f.Stack.NodeCPUs}).Validate())
}

func (f *File) validateDataset(p *problems) {
	d := f.Dataset
	for i, m := range d.Modes {
		if _, err := dataset.ParseMode(m); err != nil {
			p.add("dataset.modes[%d]: %v", i, err)
		}
	}
	if d.Preset != "" {
		if _, err := dataset.LookupPreset(d.Preset); err != nil {
			p.add("dataset.preset: %v", err)
		}
	}
	for i, n := range d.Tenants {
		if n < 1 || n > dataset.MaxTenants {
			p.add("dataset.tenants[%d]: %d: must be between 1 and %d", i, n, dataset.MaxTenants)
		}
	}
	if d.Users < 0 || d.Clients < 0 || d.OTPUsers < 0 || d.UMAResources < 0 || d.BrokerUsers < 0 || d.SAMLClients < 0 {
		p.add("dataset.users, dataset.clients, dataset.otp_users, dataset.uma_resources, dataset.broker_users and dataset.saml_clients must not be negative")
	}
	if err := (dataset.SessionSpec{Online: d.Sessions, Offline: d.OfflineSessions}).Validate(); err != nil {
		p.add("dataset: %v", strings.NewReplacer("--sessions", "sessions", "--offline-sessions", "offline_sessions").Replace(err.Error()))
	}
	if _, err := dataset.ParsePolicy(d.PasswordPolicy); err != nil {
		p.add("dataset.password_policy: %v", err)
	}
	if st, err := dataset.ParseStrategy(d.Strategy); err != nil {
		p.add("dataset.strategy: %v", err)
	} else if d.AdminAPISample < 0 {
		p.add("dataset.admin_api_sample: %d: must not be negative", d.AdminAPISample)
	} else if d.AdminAPISample > 0 && st != dataset.Clone {
		p.add("dataset.admin_api_sample: the %s strategy makes every tenant through the admin API already; the sample goes with strategy: clone", st)
	}
	// The matrix must not be empty.
	if len(d.Modes) == 0 || (len(d.Tenants) == 0 && d.Preset == "") {
		p.add("dataset: the matrix is empty (no modes or no tenant counts)")
	}
}

func (f *File) validateWorkloads(p *problems) {
	for i, ph := range f.Phases {
		if ph != "cold" && ph != "warm" {
			p.add("phases[%d]: %q: want cold or warm", i, ph)
		}
	}
	if slices.Contains(f.Phases, "warm") && f.Warmup.Duration < 0 {
		p.add("warmup: must not be negative")
	}
	if len(f.Workload) == 0 {
		p.add("workloads: the experiment runs no workload (add at least one)")
	}
	names := map[string]bool{}
	for i, w := range f.Workload {
		p.uniqueName("workloads", i, w.Name, names)
		cfg := w.Config
		if w.Capacity != nil {
			_, err := w.Capacity.Options(1)
			p.addAll(fmt.Sprintf("workloads[%d] (%s).capacity: ", i, w.Name), err)
			// What runs: the scenario at a constant arrival rate.
			cfg = (&scenario.CapacityStepper{Config: w.Config}).StepConfig(1, time.Second)
		}
		p.addAll(fmt.Sprintf("workloads[%d] (%s): ", i, w.Name), cfg.Validate())
		if len(w.Events) > 0 {
			f.validateEvents(i, w, p.add)
		}
	}
}

func (f *File) validateVariants(p *problems) {
	names := map[string]bool{}
	for i, v := range f.Variants {
		p.uniqueName("variants", i, v.Name, names)
		if v.KeycloakVersion != "" {
			if _, err := stack.ParseVersion(v.KeycloakVersion); err != nil {
				p.add("variants[%d].keycloak_version: %v", i, err)
			}
		}
		if v.PasswordPolicy != "" {
			if _, err := dataset.ParsePolicy(v.PasswordPolicy); err != nil {
				p.add("variants[%d].password_policy: %v", i, err)
			}
		}
		if v.Nodes < 0 || v.Nodes > stack.MaxNodes {
			p.add("variants[%d].nodes: %d: must be between 1 and %d", i, v.Nodes, stack.MaxNodes)
		}
		if _, err := stack.ParseLatency(v.Latency); err != nil {
			p.add("variants[%d].latency: %v", i, err)
		}
		if v.NodeCPUs < 0 {
			p.add("variants[%d].node_cpus: %g: must be > 0 (cores; 0: no limit)", i, v.NodeCPUs)
		}
		f.validateBackends(fmt.Sprintf("variants[%d].", i), v, p.add)
		f.validateTLS(i, v, p.addOnce)
		f.validateSessions(i, v, p.add)
		if h := f.shapeOf(v); h.Any() {
			c := f.content()
			c.Shape = h
			if err := c.Validate(); err != nil {
				p.addAll(fmt.Sprintf("variants[%d] (%s), the data shape: ", i, v.Name), err)
			}
		}
		if top := topologyOf(f.Stack, v); top.Sticky && top.LB == stack.LBNone {
			p.add("variants[%d]: lb_sticky needs a balancer (stack.lb: haproxy)", i)
		} else if !top.Latency.NodeNode.Zero() && top.Nodes < 2 {
			if v.Latency == "" && v.Nodes == 0 {
				p.add("stack: latency node-node needs 2 nodes or more (stack.nodes)")
			} else {
				p.add("variants[%d]: latency node-node needs 2 nodes or more (nodes)", i)
			}
		}
	}
}

// validateSessions checks variant i's sessions: counts in bounds, a
// database to write them into, online ones only where they are kept in
// the database.
func (f *File) validateSessions(i int, v Variant, add func(string, ...any)) {
	want := f.sessionsOf(v)
	for _, c := range []struct {
		name string
		n    *int
	}{{"sessions", v.Sessions}, {"offline_sessions", v.OfflineSessions}} {
		if c.n != nil && (*c.n < 0 || *c.n > dataset.MaxSessions) {
			add("variants[%d].%s: %d: must be between 0 and %d", i, c.name, *c.n, dataset.MaxSessions)
		}
	}
	if !want.Any() {
		return
	}
	if dbOf(f.Stack, v) == stack.DBMariaDB {
		add("variants[%d]: sessions are written into Keycloak's PostgreSQL tables, not MariaDB's (db: mariadb)", i)
	}
	if want.Online > 0 && !*cmp.Or(v.PersistentSessions, f.Stack.PersistentSessions, new(true)) {
		add("variants[%d]: %d online sessions cannot be written where they are kept in memory only (persistent_sessions: false); offline_sessions can", i, want.Online)
	}
}

// sessionsOf is what sessions variant v's points hold.
func (f *File) sessionsOf(v Variant) dataset.SessionSpec {
	s := dataset.SessionSpec{Online: f.Dataset.Sessions, Offline: f.Dataset.OfflineSessions}
	if v.Sessions != nil {
		s.Online = *v.Sessions
	}
	if v.OfflineSessions != nil {
		s.Offline = *v.OfflineSessions
	}
	return s
}

// hasSessions: some point of f holds seeded sessions.
func (f *File) hasSessions() bool {
	return slices.ContainsFunc(f.Variants, func(v Variant) bool { return f.sessionsOf(v).Any() })
}

func (f *File) validateWatchdog(p *problems) {
	w := f.Watchdog
	if w.MaxRSS != "" {
		if _, err := ParseBytes(w.MaxRSS); err != nil {
			p.add("watchdog.max_rss: %v", err)
		}
	}
	if w.MaxErrorRate != "" {
		if _, err := ParsePercent(w.MaxErrorRate); err != nil {
			p.add("watchdog.max_error_rate: %v", err)
		}
	}
	if w.PointTimeout.Duration < 0 {
		p.add("watchdog.point_timeout: must not be negative")
	}
}

func unjoin(err error) []error {
	if u, ok := err.(interface{ Unwrap() []error }); ok {
		return u.Unwrap()
	}
	return []error{err}
}

// ParseBytes reads "8GiB", "6000MiB", "512MB", "1g": a positive number
// and a unit, at most MaxBytes.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}, {"B", 1}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(t, u.suffix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || !(f > 0) || f*float64(u.mult) > MaxBytes {
				break
			}
			return int64(f * float64(u.mult)), nil
		}
	}
	return 0, fmt.Errorf("%q: want a size such as 8GiB or 6000MiB, at most 1 PiB", s)
}

// MaxBytes bounds ParseBytes (1 PiB).
const MaxBytes = 1 << 50

// ParsePercent reads "50%" as 0.5.
func ParsePercent(s string) (float64, error) {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !ok || err != nil || !(f >= 0 && f <= 100) {
		return 0, fmt.Errorf("%q: want a percentage such as 50%%", s)
	}
	return f / 100, nil
}

// validateBackends checks the database and directory of the stack
// (prefix "stack.") or of variant v (prefix "variants[i].").
func (f *File) validateBackends(prefix string, v Variant, add func(string, ...any)) {
	db, ldap, imp := f.Stack.DB, f.Stack.LDAP, f.Stack.LDAPImport
	if prefix != "stack." {
		db, ldap, imp = v.DB, v.LDAP, v.LDAPImport
	}
	if db != "" && !slices.Contains(stack.DBKinds, db) {
		add("%sdb: %q: want %s", prefix, db, strings.Join(stack.DBKinds, " or "))
	}
	if ldap != "" && ldap != ldapOff && ldap != stack.LDAPSlapd {
		add("%sldap: %q: want off or slapd", prefix, ldap)
	}
	if imp != "" && imp != "on" && imp != "off" {
		add("%sldap_import: %q: want on or off", prefix, imp)
	}
	if prefix == "stack." {
		if p := f.Stack.LDAPCachePolicy; p != "" && !slices.Contains(stack.CachePolicies, p) {
			add("stack.ldap_cache_policy: %q: want one of %s", p, strings.Join(stack.CachePolicies, ", "))
		}
		if ldap == "" || ldap == ldapOff {
			if imp != "" || f.Stack.LDAPCachePolicy != "" {
				add("stack: ldap_import and ldap_cache_policy need ldap: slapd")
			}
		}
		return
	}
	if l := ldapOf(f.Stack, v); l.Enabled() && slices.Contains(f.Dataset.Modes, string(dataset.ModeOrgs)) {
		add("%sldap: users in LDAP work in realms mode only; dataset.modes has orgs", prefix)
	} else if !l.Enabled() && imp != "" {
		add("%sldap_import: needs ldap: slapd (here or in stack)", prefix)
	}
}

// ldapOff turns a stack's directory off in a variant.
const ldapOff = "off"

// ldapOf is a variant's directory: the stack's, with the variant's
// overrides.
func ldapOf(sp StackSpec, v Variant) stack.LDAPOptions {
	server, imp := sp.LDAP, sp.LDAPImport
	if v.LDAP != "" {
		server = v.LDAP
	}
	if v.LDAPImport != "" {
		imp = v.LDAPImport
	}
	if server == ldapOff {
		return stack.LDAPOptions{}
	}
	return stack.LDAPOptions{Server: server, Import: imp == "on", CachePolicy: sp.LDAPCachePolicy}
}

// dbOf is a variant's database kind ("" for PostgreSQL).
func dbOf(sp StackSpec, v Variant) string {
	db := sp.DB
	if v.DB != "" {
		db = v.DB
	}
	if db == stack.DBPostgres {
		return ""
	}
	return db
}

// tlsOf is a variant's TLS as the stack takes it: the stack's, with the
// variant's overrides; a variant that turns TLS off drops the stack's
// key (see topologyOf for lb_tls).
func tlsOf(sp StackSpec, v Variant) (plain bool, key string) {
	on := sp.TLS == nil || *sp.TLS
	if v.TLS != nil {
		on = *v.TLS
	}
	if !on {
		return true, v.TLSKey // Validate refuses a variant's own key without TLS
	}
	return false, cmp.Or(v.TLSKey, sp.TLSKey)
}

// validateTLS checks the TLS settings of the stack and of variant i
// (addOnce: the stack's problems come once, whichever variant finds
// them). It mirrors stack.KeycloakOptions.Validate, Topology.Validate and
// stack.ValidateTLS, naming the file's keys instead of the flags.
func (f *File) validateTLS(i int, v Variant, addOnce func(string, ...any)) {
	sp := f.Stack
	vp := fmt.Sprintf("variants[%d]", i)
	for _, c := range []struct{ path, key, lb string }{{"stack", sp.TLSKey, sp.LBTLS}, {vp, v.TLSKey, v.LBTLS}} {
		if c.key != "" && !slices.Contains(stack.TLSKeys, c.key) {
			addOnce("%s.tls_key: %q: want %s", c.path, c.key, strings.Join(stack.TLSKeys, " or "))
		}
		if c.lb != "" && !slices.Contains(stack.LBTLSModes, c.lb) {
			addOnce("%s.lb_tls: %q: want %s", c.path, c.lb, strings.Join(stack.LBTLSModes, ", "))
		}
	}
	if sp.TLS != nil && !*sp.TLS {
		if sp.TLSKey != "" {
			addOnce("stack.tls_key: needs TLS (stack.tls is false)")
		}
		if sp.LBTLS != "" {
			addOnce("stack.lb_tls: needs TLS (stack.tls is false)")
		}
	}
	plain, _ := tlsOf(sp, v)
	if plain {
		if v.TLSKey != "" {
			addOnce("%s.tls_key: needs TLS (tls is false here or in stack)", vp)
		}
		if v.LBTLS != "" {
			addOnce("%s.lb_tls: needs TLS (tls is false here or in stack)", vp)
		}
		return
	}
	// whose setting it is: the variant's when it sets a part of it
	who := func(own bool) string {
		if own {
			return vp
		}
		return "stack"
	}
	top := topologyOf(sp, v)
	if top.LBTLS != "" && top.LB == stack.LBNone {
		switch {
		case v.LBTLS != "":
			addOnce("%s.lb_tls: needs a balancer (2 nodes or more, or stack.lb: haproxy)", vp)
		case v.Nodes != 0:
			addOnce("%s: stack.lb_tls needs a balancer, and this variant's %d node has none (move lb_tls to the variants with several nodes)", vp, top.Nodes)
		default:
			addOnce("stack.lb_tls: needs a balancer (stack.nodes 2 or more, or stack.lb: haproxy)")
		}
	}
	if top.Sticky && top.LB != stack.LBNone && cmp.Or(top.LBTLS, stack.LBTLSPassthrough) == stack.LBTLSPassthrough {
		own := v.LBSticky != nil || v.LBTLS != "" || v.TLS != nil || v.Nodes != 0
		addOnce("%s: lb_sticky reads a cookie, which a balancer in TLS passthrough cannot see: set lb_tls: terminate or reencrypt, or tls: false", who(own))
	}
}

// topologyOf is a variant's topology: the stack's, with the variant's
// overrides.
func topologyOf(sp StackSpec, v Variant) stack.Topology {
	t := stack.Topology{Nodes: sp.Nodes, LB: sp.LB, Sticky: sp.LBSticky, NodeCPUs: sp.NodeCPUs, HAProxy: sp.HAProxy, LBTLS: sp.LBTLS}
	if plain, _ := tlsOf(sp, v); plain {
		t.LBTLS = v.LBTLS // the stack's needs TLS; Validate refuses the variant's
	} else if v.LBTLS != "" {
		t.LBTLS = v.LBTLS
	}
	if v.Nodes != 0 {
		t.Nodes = v.Nodes
	}
	if v.NodeCPUs != 0 {
		t.NodeCPUs = v.NodeCPUs
	}
	if v.LBSticky != nil {
		t.Sticky = *v.LBSticky
	}
	t.Latency, _ = stack.ParseLatency(sp.Latency) // Validate reports errors
	if v.Latency != "" {
		t.Latency, _ = stack.ParseLatency(v.Latency)
	}
	if t.Nodes == 0 {
		t.Nodes = 1
	}
	if t.LB == "" {
		t.LB = stack.LBNone
		if t.Nodes > 1 {
			t.LB = stack.LBHAProxy
		}
	}
	return t
}

// validateEvents checks workload i's events against every variant's
// topology and the shortest of its runs (the cold phase has no warm-up).
func (f *File) validateEvents(i int, w Workload, add func(string, ...any)) {
	if w.Capacity != nil {
		add("workloads[%d] (%s).events: events apply to load workloads, not to capacity searches", i, w.Name)
		return
	}
	if w.RecoverySLO.Duration < 0 {
		add("workloads[%d] (%s).recovery_slo: must not be negative", i, w.Name)
	}
	fs, err := w.Faults(1)
	if err != nil {
		for _, e := range unjoin(err) {
			add("workloads[%d] (%s).events: %v", i, w.Name, e)
		}
		return
	}
	cfg := w.Config
	if slices.Contains(f.Phases, "cold") || len(f.Phases) == 0 {
		cfg.Warmup = 0
	}
	variants := f.Variants
	if len(variants) == 0 {
		variants = []Variant{{}}
	}
	seen := map[string]bool{}
	for _, v := range variants {
		top := topologyOf(f.Stack, v)
		if err := stack.CheckFaults(slices.Clone(fs), top, cfg.Total()); err != nil {
			for _, e := range unjoin(err) {
				msg := fmt.Sprintf("workloads[%d] (%s).events: %v", i, w.Name, e)
				if len(f.Variants) > 0 {
					msg = fmt.Sprintf("workloads[%d] (%s).events (variant %s): %v", i, w.Name, v.Name, e)
				}
				if !seen[msg] {
					seen[msg] = true
					add("%s", msg)
				}
			}
		}
	}
}

// StackFlags are the stack flags a command running a shipped experiment
// takes (quickstart): the topology (--lb-tls among it), TLS and the
// database.
type StackFlags struct {
	Top        stack.Topology
	DB         string
	TLS        bool
	TLSKey     string
	Persistent bool
}

// RegisterFlags adds the topology flags, --tls, --tls-key, --db and
// --persistent-sessions.
func (s *StackFlags) RegisterFlags(fs *flag.FlagSet) {
	s.Top.RegisterFlags(fs)
	fs.StringVar(&s.DB, "db", "", "database Keycloak runs on: postgres (default) or mariadb (a private MariaDB from the installed mariadb-server package)")
	fs.BoolVar(&s.TLS, "tls", true, "serve HTTPS with a CA and certificate made for the stack; --tls=false serves plain HTTP")
	fs.StringVar(&s.TLSKey, "tls-key", "", "key type of the stack's certificate: "+strings.Join(stack.TLSKeys, " or ")+" (default "+stack.TLSKeyRSA2048+")")
	fs.BoolVar(&s.Persistent, "persistent-sessions", true, stack.PersistentSessionsUsage)
}

// Apply checks the flags (usage errors) and sets them in f's stack.
func (s *StackFlags) Apply(f *File) error {
	if err := s.Top.CheckFlags(); err != nil {
		return err
	}
	if s.DB != "" && !slices.Contains(stack.DBKinds, s.DB) {
		return cliutil.Usagef("--db %q: want %s", s.DB, strings.Join(stack.DBKinds, " or "))
	}
	ko := stack.KeycloakOptions{Version: f.Stack.KeycloakVersion, PlainHTTP: !s.TLS, TLSKey: s.TLSKey}
	if err := errors.Join(ko.Validate(), stack.ValidateTLS(ko, s.Top)); err != nil {
		return cliutil.Usage(err)
	}
	f.Stack.Nodes, f.Stack.LB, f.Stack.LBSticky, f.Stack.NodeCPUs, f.Stack.HAProxy = s.Top.Nodes, s.Top.LB, s.Top.Sticky, s.Top.NodeCPUs, s.Top.HAProxy
	f.Stack.LBTLS, f.Stack.TLSKey = s.Top.LBTLS, s.TLSKey
	tls := s.TLS
	f.Stack.TLS = &tls
	f.Stack.DB = s.DB
	if !s.Persistent {
		f.Stack.PersistentSessions = new(false)
	}
	return nil
}

// DBName names the database of f's stack for people: PostgreSQL or
// MariaDB.
func DBName(f *File) string {
	if f.Stack.DB == stack.DBMariaDB {
		return "MariaDB"
	}
	return "PostgreSQL"
}
