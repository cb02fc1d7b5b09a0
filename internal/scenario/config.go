package scenario

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// Config is one workload run: a scenario, an executor and their settings,
// as `kcbench load` flags and YAML files (and experiment files'
// workloads) give them. YAML keys are the flag names with underscores.
// Zero values mean the defaults (ApplyDefaults).
type Config struct {
	Scenario string `yaml:"scenario"`
	Executor string `yaml:"executor"`
	// VUs is the number of VUs (closed model) or the VUs allocated up
	// front (open model).
	VUs        int     `yaml:"vus"`
	MaxVUs     int     `yaml:"max_vus"`
	StartVUs   int     `yaml:"start_vus"`
	Rate       float64 `yaml:"rate"`
	StartRate  float64 `yaml:"start_rate"`
	Iterations int     `yaml:"iterations"`
	// Duration is the measured time, after the warm-up (per-vu-iterations:
	// the longest it may take). The ramping executors take Stages instead.
	Duration time.Duration `yaml:"duration"`
	// Warmup comes before Duration, or is the first part of the Stages.
	Warmup time.Duration `yaml:"warmup"`
	// GracefulStop is how long iterations running at the end may finish
	// (0: load.DefaultGracefulStop).
	GracefulStop time.Duration `yaml:"graceful_stop"`
	Stages       Stages        `yaml:"stages"`
	// Thresholds are pass/fail criteria (results.ParseThreshold).
	Thresholds []string `yaml:"thresholds"`
	// Timeout bounds each HTTP request (0: load.DefaultHTTPTimeout).
	Timeout time.Duration `yaml:"timeout"`
	// ConnPolicy is how the VUs use connections (results.ConnPolicies;
	// "": DefaultConnPolicy of the scenario).
	ConnPolicy string `yaml:"conn_policy"`
	// TLSResumption lets a new connection resume an earlier TLS session
	// (TLS 1.3 PSK) instead of a full handshake.
	TLSResumption bool `yaml:"tls_resumption"`
	// CPUBaseline, when set, measures the server's idle CPU for this long
	// before the run, so that CPU per operation can be given net of it
	// (what matters at low rates, where idle work is a large share).
	CPUBaseline time.Duration `yaml:"cpu_baseline"`

	TenantSkew float64 `yaml:"tenant_skew"`
	// SpreadClients spreads the grants over each tenant's confidential
	// clients (Pool.SpreadClients) instead of its first.
	SpreadClients       bool           `yaml:"spread_clients"`
	Seed                uint64         `yaml:"random_seed"`
	Mix                 map[string]int `yaml:"mix"`
	SessionsPerVU       int            `yaml:"sessions_per_vu"`
	RefreshesPerSession int            `yaml:"refreshes_per_session"`
	// AdminWritePct is the percentage of admin-write's iterations that
	// write (0: 100).
	AdminWritePct float64 `yaml:"admin_write_pct"`
	// BrokerFirstPct is the percentage of broker-login's iterations that
	// are a first visit.
	BrokerFirstPct  float64       `yaml:"broker_first_pct"`
	JourneyThink    time.Duration `yaml:"journey_think"`
	JourneyUserinfo time.Duration `yaml:"journey_userinfo_every"`
	JourneyLifetime time.Duration `yaml:"journey_token_lifetime"`

	// Realm, and the client and user below, replace a dataset manifest.
	Realm        string `yaml:"realm"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	RedirectURI  string `yaml:"redirect_uri"`
}

// Upper bounds of a Config: beyond any run one machine can drive, low
// enough that nothing the run allocates up front (VUs, connection pools,
// schedules) can exhaust memory.
const (
	MaxVUs           = 100_000
	MaxRate          = 1_000_000 // iterations per second
	MaxIterations    = 1_000_000_000
	MaxSessionsPerVU = 100_000
	MaxStages        = 1_000
	// MaxDuration bounds the run's durations (a week-long soak fits).
	MaxDuration = 7 * 24 * time.Hour
	// MaxWait bounds the timeouts, pauses and think times.
	MaxWait = time.Hour
)

// Config defaults.
const (
	DefaultExecutor = load.NameConstantVUs
	DefaultVUs      = 10
	DefaultDuration = 30 * time.Second
)

// Executors lists the executor names a Config takes.
func Executors() []string {
	return []string{load.NameConstantVUs, load.NameRampingVUs, load.NamePerVUIterations,
		load.NameConstantArrivalRate, load.NameRampingArrivalRate}
}

// Policy is the connection policy in force: ConnPolicy, or the
// scenario's default.
func (c *Config) Policy() string {
	if c.ConnPolicy != "" {
		return c.ConnPolicy
	}
	return DefaultConnPolicy(c.Scenario)
}

// ApplyDefaults fills the zero fields that have a default.
func (c *Config) ApplyDefaults() {
	if c.Executor == "" {
		c.Executor = DefaultExecutor
	}
	if c.VUs == 0 && c.Executor != load.NameRampingVUs {
		c.VUs = DefaultVUs
		if c.MaxVUs > 0 && c.MaxVUs < c.VUs {
			c.VUs = c.MaxVUs
		}
	}
	if c.Duration == 0 && !c.ramping() {
		c.Duration = DefaultDuration
	}
	if c.GracefulStop == 0 {
		c.GracefulStop = load.DefaultGracefulStop
	}
	if c.Timeout == 0 {
		c.Timeout = load.DefaultHTTPTimeout
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
}

func (c *Config) ramping() bool {
	return c.Executor == load.NameRampingVUs || c.Executor == load.NameRampingArrivalRate
}

// Validate reports every problem with c (defaults applied) at once, each
// naming its key. It changes nothing.
func (c *Config) Validate() error {
	p := &problems{}
	known := registry()
	switch _, ok := known[c.Scenario]; {
	case c.Scenario == "":
		p.add("scenario: required (see kcbench scenarios)")
	case !ok:
		p.add("scenario: %q: unknown (see kcbench scenarios)", c.Scenario)
	}
	if !slices.Contains(Executors(), c.Executor) {
		p.add("executor: %q: want one of %s", c.Executor, strings.Join(Executors(), ", "))
	}
	c.validateDurations(p)
	for _, o := range executorOnly {
		if o.set(c) && !slices.Contains(o.executors, c.Executor) {
			p.add("%s: %s", o.key, o.says)
		}
	}
	c.validateExecutor(p)
	c.validateWorkload(p)
	return errors.Join(p.errs...)
}

// problems gathers a Config's problems.
type problems struct{ errs []error }

func (p *problems) add(format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

// executorOnly are the settings that only some executors take.
var executorOnly = []struct {
	key       string
	set       func(*Config) bool
	executors []string
	says      string
}{
	{"rate", func(c *Config) bool { return c.Rate != 0 }, []string{load.NameConstantArrivalRate},
		"applies to constant-arrival-rate only"},
	{"start_rate", func(c *Config) bool { return c.StartRate != 0 }, []string{load.NameRampingArrivalRate},
		"applies to ramping-arrival-rate only"},
	{"start_vus", func(c *Config) bool { return c.StartVUs != 0 }, []string{load.NameRampingVUs},
		"applies to ramping-vus only"},
	{"iterations", func(c *Config) bool { return c.Iterations != 0 }, []string{load.NamePerVUIterations},
		"applies to per-vu-iterations only"},
	{"max_vus", func(c *Config) bool { return c.MaxVUs != 0 }, []string{load.NameConstantArrivalRate, load.NameRampingArrivalRate},
		"applies to the arrival-rate executors only"},
	{"stages", func(c *Config) bool { return len(c.Stages) > 0 }, []string{load.NameRampingVUs, load.NameRampingArrivalRate},
		"apply to ramping-vus and ramping-arrival-rate only"},
}

// validateDurations checks every duration but the stages'.
func (c *Config) validateDurations(p *problems) {
	durations := []struct {
		key string
		d   time.Duration
		max time.Duration
	}{
		{"warmup", c.Warmup, MaxDuration}, {"graceful_stop", c.GracefulStop, MaxWait}, {"timeout", c.Timeout, MaxWait},
		{"cpu_baseline", c.CPUBaseline, MaxWait}, {"journey_think", c.JourneyThink, MaxWait},
		{"journey_userinfo_every", c.JourneyUserinfo, MaxWait}, {"journey_token_lifetime", c.JourneyLifetime, MaxDuration},
	}
	for _, d := range durations {
		if d.d < 0 || d.d > d.max {
			p.add("%s: %v: must be between 0s and %v", d.key, d.d, d.max)
		}
	}
}

// validateExecutor checks the settings of the executor chosen (its
// executorConfig's own, and the stages of a ramping one).
func (c *Config) validateExecutor(p *problems) {
	c.executorConfig().validate(p)
	if c.ramping() {
		c.validateStages(p)
	}
	if c.Executor == load.NameRampingVUs && (c.VUs < 0 || c.VUs > MaxVUs) {
		p.add("vus: %d: must be between 0 and %d", c.VUs, MaxVUs) // ramping-vus takes none; a wild one is refused
	}
}

// validateStages checks a ramping executor's stages.
func (c *Config) validateStages(p *problems) {
	if len(c.Stages) == 0 {
		p.add("stages: %s needs at least one stage", c.Executor)
	}
	if len(c.Stages) > MaxStages {
		p.add("stages: %d stages: at most %d", len(c.Stages), MaxStages)
	}
	maxTarget := float64(MaxVUs)
	if c.executorConfig().open() {
		maxTarget = MaxRate
	}
	var total time.Duration
	for i, s := range c.Stages {
		if s.Duration < 0 || s.Target < 0 || s.Duration > MaxDuration || !(s.Target <= maxTarget) {
			p.add("stages: stage %d (%v:%g): duration must be between 0s and %v, target between 0 and %g", i+1, s.Duration, s.Target, MaxDuration, maxTarget)
		}
		total += min(max(s.Duration, 0), MaxDuration)
	}
	if total > MaxDuration {
		p.add("stages: %v in all: at most %v", total, MaxDuration)
	}
	if len(c.Stages) > 0 && c.Warmup >= total {
		p.add("warmup: %v: must be shorter than the stages (%v), whose first part it is", c.Warmup, total)
	}
}

// validateWorkload checks what the scenario does: thresholds, connection
// policy, tenant skew, mix, sessions and hand-given credentials.
func (c *Config) validateWorkload(p *problems) {
	for _, t := range c.Thresholds {
		if _, err := results.ParseThreshold(t); err != nil {
			p.add("thresholds: %v", err)
		}
	}
	if err := CheckConnPolicy(c.ConnPolicy); err != nil {
		p.add("conn_policy: %v", err)
	}
	if err := checkSkew(c.TenantSkew); err != nil {
		p.add("tenant_skew: %v", err)
	}
	if len(c.Mix) > 0 && c.Scenario != results.ScenarioMix {
		p.add("mix: applies to the mix scenario only")
	}
	if c.Scenario == results.ScenarioMix && len(c.Mix) > 0 {
		if err := checkMix(c.Mix); err != nil {
			p.add("mix: %v", err)
		}
	}
	if c.AdminWritePct != 0 && c.Scenario != results.ScenarioAdminWrite && c.Scenario != results.ScenarioMix {
		p.add("admin_write_pct: applies to the admin-write scenario only")
	}
	if !(c.AdminWritePct >= 0 && c.AdminWritePct <= 100) {
		p.add("admin_write_pct: %v: must be a percentage from 0 (0: 100) to 100", c.AdminWritePct)
	}
	if c.BrokerFirstPct != 0 && c.Scenario != results.ScenarioBrokerLogin && c.Scenario != results.ScenarioMix {
		p.add("broker_first_pct: applies to the broker-login scenario only")
	}
	if !(c.BrokerFirstPct >= 0 && c.BrokerFirstPct <= 100) {
		p.add("broker_first_pct: %v: must be a percentage from 0 to 100", c.BrokerFirstPct)
	}
	if c.SessionsPerVU < 0 || c.SessionsPerVU > MaxSessionsPerVU {
		p.add("sessions_per_vu: %d: must be between 0 and %d", c.SessionsPerVU, MaxSessionsPerVU)
	}
	if c.RefreshesPerSession < 0 || c.RefreshesPerSession > MaxIterations {
		p.add("refreshes_per_session: %d: must be between 0 and %d", c.RefreshesPerSession, MaxIterations)
	}
	if c.Realm == "" && (c.ClientID != "" || c.Username != "" || c.ClientSecret != "" || c.Password != "") {
		p.add("client_id, client_secret, username, password: need realm")
	}
}

// NewExecutor builds the engine's executor. The warm-up comes before Duration
// for the constant executors and per-vu-iterations, and is the first part
// of the stages for the ramping ones.
func (c *Config) NewExecutor() load.Executor {
	return c.executorConfig().executor(c.Warmup, c.GracefulStop)
}

// MaxVUsAtOnce is the most VUs the run may have (at least 1), for sizing
// connection pools.
func (c *Config) MaxVUsAtOnce() int { return max(c.executorConfig().maxVUs(), 1) }

// Total is how long the run lasts, warm-up included and graceful stop
// excluded (per-vu-iterations: at most).
func (c *Config) Total() time.Duration { return c.executorConfig().length(c.Warmup) }

// Scaled returns c with every duration of the schedule (duration, warm-up,
// stages) multiplied by scale, for quick looks; scale ≤ 0 or 1 changes
// nothing.
func (c Config) Scaled(scale float64) Config {
	if scale <= 0 || scale == 1 {
		return c
	}
	f := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	c.Duration, c.Warmup = f(c.Duration), f(c.Warmup)
	c.Stages = slices.Clone(c.Stages)
	for i := range c.Stages {
		c.Stages[i].Duration = f(c.Stages[i].Duration)
	}
	return c
}

// Describe says in one line what runs, e.g. "password-grant, constant-vus
// 10 VUs for 30s after 5s warm-up".
func (c *Config) Describe() string {
	d := c.executorConfig().describe()
	if c.Warmup > 0 {
		d += fmt.Sprintf(" after %v warm-up", c.Warmup)
	}
	if c.Scenario == results.ScenarioMix {
		w := c.Mix
		if len(w) == 0 {
			w = DefaultMix()
		}
		return fmt.Sprintf("mix (%s), %s %s", MixString(w), c.Executor, d)
	}
	return fmt.Sprintf("%s, %s %s", c.Scenario, c.Executor, d)
}

// env is the scenario Env a Config asks for, without client and pool.
func (c *Config) env() Env {
	return Env{Seed: c.Seed, Mix: c.Mix, SessionsPerVU: c.SessionsPerVU, RefreshesPerSession: c.RefreshesPerSession, AdminWritePct: c.AdminWritePct,
		BrokerFirstPct: c.BrokerFirstPct,
		Journey:        JourneyOptions{Think: c.JourneyThink, UserinfoEvery: c.JourneyUserinfo, TokenLifetime: c.JourneyLifetime}}
}

// Stage is one ramping stage: move to Target (VUs, or iterations per
// second) over Duration.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Stages read "10s:50,30s:50" from a flag (flag.Value) or YAML (that
// string, or a list of "10s:50" strings or {duration, target} maps).
type Stages []Stage

// String implements flag.Value.
func (s *Stages) String() string {
	if s == nil {
		return ""
	}
	var parts []string
	for _, st := range *s {
		parts = append(parts, st.Duration.String()+":"+strconv.FormatFloat(st.Target, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Set implements flag.Value.
func (s *Stages) Set(v string) error {
	var out Stages
	for part := range strings.SplitSeq(v, ",") {
		st, err := parseStage(part)
		if err != nil {
			return err
		}
		out = append(out, st)
	}
	*s = out
	return nil
}

func parseStage(s string) (Stage, error) {
	d, t, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Stage{}, fmt.Errorf("stage %q: want DURATION:TARGET, e.g. 30s:50", s)
	}
	dur, err := time.ParseDuration(d)
	if err != nil {
		return Stage{}, fmt.Errorf("stage %q: %v", s, err)
	}
	tgt, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(tgt) || math.IsInf(tgt, 0) {
		return Stage{}, fmt.Errorf("stage %q: target %q is not a number", s, t)
	}
	return Stage{dur, tgt}, nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (s *Stages) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		return s.Set(n.Value)
	case yaml.SequenceNode:
		var out Stages
		for _, e := range n.Content {
			switch e.Kind {
			case yaml.ScalarNode:
				st, err := parseStage(e.Value)
				if err != nil {
					return fmt.Errorf("line %d: %w", e.Line, err)
				}
				out = append(out, st)
			case yaml.MappingNode:
				st, err := stageFromMap(e)
				if err != nil {
					return err
				}
				out = append(out, st)
			default:
				return fmt.Errorf("line %d: a stage is DURATION:TARGET or {duration, target}", e.Line)
			}
		}
		*s = out
		return nil
	}
	return fmt.Errorf("line %d: stages are a list or a DUR:TARGET,… string", n.Line)
}

func stageFromMap(e *yaml.Node) (Stage, error) {
	var st Stage
	var dur string
	for i := 0; i+1 < len(e.Content); i += 2 {
		k, v := e.Content[i], e.Content[i+1]
		switch k.Value {
		case "duration":
			dur = v.Value
		case "target":
			f, err := strconv.ParseFloat(v.Value, 64)
			if err != nil {
				return st, fmt.Errorf("line %d: target %q is not a number", v.Line, v.Value)
			}
			st.Target = f
		default:
			return st, fmt.Errorf("line %d: field %s not found in a stage (want duration, target)", k.Line, k.Value)
		}
	}
	d, err := time.ParseDuration(dur)
	if err != nil {
		return st, fmt.Errorf("line %d: stage duration: %v", e.Line, err)
	}
	st.Duration = d
	return st, nil
}
