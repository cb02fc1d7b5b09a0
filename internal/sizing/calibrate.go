package sizing

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// Op is one of the three operations the guide prices per vCPU.
type Op string

const (
	OpLogin             Op = "login"
	OpClientCredentials Op = "client-credentials"
	OpRefresh           Op = "refresh"
)

// Ops lists the priced operations in the guide's order.
func Ops() []Op { return []Op{OpLogin, OpClientCredentials, OpRefresh} }

// String names the operation for people.
func (o Op) String() string {
	switch o {
	case OpLogin:
		return "login"
	case OpClientCredentials:
		return "client-credential grant"
	case OpRefresh:
		return "refresh-token request"
	}
	return string(o)
}

// costFlag is kcbench size's flag that gives the operation's CPU-ms.
func (o Op) costFlag() string { return costFlags()[slices.Index(Ops(), o)] }

// OpForScenario maps a kcbench scenario to the operation whose cost one of
// its iterations measures: a password grant or a browser login (form and
// code exchange) is a login, a client-credentials grant a client-credential
// grant, a refresh-token grant a refresh. Other scenarios price nothing.
func OpForScenario(scenario string) (Op, bool) {
	switch scenario {
	case results.ScenarioLoginForm, results.ScenarioPasswordGrant:
		return OpLogin, true
	case results.ScenarioClientCredentials:
		return OpClientCredentials, true
	case results.ScenarioRefresh:
		return OpRefresh, true
	}
	return "", false
}

// scenarioRank orders the scenarios that measure the same operation: the
// browser login is preferred to the password grant because it is the flow
// the guide's login figure was measured with (form, credentials, code
// exchange).
func scenarioRank(s string) int {
	if s == results.ScenarioLoginForm {
		return 0
	}
	return 1
}

// Phases a measurement comes from: results.PhaseWarm, results.PhaseCold, or
// the capacity search's best step. The warm phase (after a warm-up, caches
// filled) is preferred for calibration; the cold one follows a restart.
const (
	// PhaseCapacity is a capacity search's best step.
	PhaseCapacity = "capacity"
)

func phaseRank(p string) int {
	switch p {
	case results.PhaseWarm:
		return 0
	case results.PhaseCold:
		return 2
	}
	return 1 // phases off
}

// ModeRealms is the tenant mode of one realm per tenant, the shape of the
// guide's own setup; its points are preferred for calibration.
const ModeRealms = "realms"

// Measurement sources.
const (
	// SourceWorkload is a workload of an experiment point (summary.json).
	SourceWorkload = "workload"
	// SourceCapacity is a capacity search (capacity.json): the cost at
	// its best step, the highest rate that met every SLO.
	SourceCapacity = "capacity"
)

// Measurement is one server CPU-ms-per-operation figure kcbench measured:
// one workload of one point of an experiment, as the caller read it from
// the results.
type Measurement struct {
	Point    string `json:"point"`
	Variant  string `json:"variant"`
	Policy   string `json:"password_policy,omitempty"`
	Keycloak string `json:"keycloak_version,omitempty"`
	Mode     string `json:"mode,omitempty"`
	Tenants  int    `json:"tenants,omitempty"`
	Repeat   int    `json:"repeat,omitempty"`
	Workload string `json:"workload"`
	Scenario string `json:"scenario"`
	Phase    string `json:"phase,omitempty"`
	// CPUMsPerOp is server CPU time per successful iteration; 0 when the
	// point could not observe the server's CPU.
	CPUMsPerOp float64 `json:"cpu_ms_per_op"`
	// OK counts the successful iterations it is averaged over.
	OK     int64  `json:"ok"`
	Source string `json:"source,omitempty"` // SourceWorkload (default) or SourceCapacity
	// DB is the database's cost per iteration, when measured.
	DB *results.DBCost `json:"database,omitempty"`
	// TLS ("on", "off"; "": not recorded) and ConnPolicy are the
	// conditions the clients connected under.
	TLS        string `json:"tls,omitempty"`
	ConnPolicy string `json:"conn_policy,omitempty"`
	Resumption string `json:"tls_resumption,omitempty"`
	LBTLS      string `json:"lb_tls,omitempty"`
}

func (m Measurement) usable() bool { return m.CPUMsPerOp > 0 && finite(m.CPUMsPerOp) && m.OK > 0 }

// cell is where a figure was measured: phase, mode, tenants, scenario and
// workload; repeats of one cell are averaged.
type cell struct {
	phase, mode, scenario, workload string
	tenants                         int
}

func (m Measurement) cell() cell {
	return cell{phase: m.Phase, mode: m.Mode, scenario: m.Scenario, workload: m.Workload, tenants: m.Tenants}
}

// cellCompare orders cells by preference: warm phase first, then realms mode,
// then fewest tenants (closest to the guide's one-realm setup), then the
// browser login before the password grant, then by name.
func cellCompare(a, b cell) int {
	if c := cmp.Compare(phaseRank(a.phase), phaseRank(b.phase)); c != 0 {
		return c
	}
	if ar, br := a.mode != ModeRealms, b.mode != ModeRealms; ar != br {
		if !ar {
			return -1
		}
		return 1
	}
	return cmp.Or(
		cmp.Compare(a.tenants, b.tenants),
		cmp.Compare(scenarioRank(a.scenario), scenarioRank(b.scenario)),
		cmp.Compare(a.mode, b.mode),
		cmp.Compare(a.scenario, b.scenario),
		cmp.Compare(a.workload, b.workload),
	)
}

// Figure is the measured cost of one operation: the mean over the repeats
// of one cell (phase, mode, tenant count, workload).
type Figure struct {
	Op Op `json:"op"`
	// CPUMs is the mean CPU-ms per operation over Points; 0 when the
	// operation was not measured (the guide's rate is used instead).
	CPUMs float64 `json:"cpu_ms"`
	// Min and Max are the extremes over the repeats.
	Min      float64  `json:"min_cpu_ms,omitempty"`
	Max      float64  `json:"max_cpu_ms,omitempty"`
	Phase    string   `json:"phase,omitempty"`
	Mode     string   `json:"mode,omitempty"`
	Tenants  int      `json:"tenants,omitempty"`
	Workload string   `json:"workload,omitempty"`
	Scenario string   `json:"scenario,omitempty"`
	Source   string   `json:"source,omitempty"`
	Points   []string `json:"points,omitempty"`
	// OK is the successful iterations over all repeats.
	OK int64 `json:"ok,omitempty"`
	// Policy, TLS and ConnPolicy are the conditions it was measured under
	// (the first repeat's): the password policy, TLS on or off, the
	// connection policy ("": not recorded).
	Policy     string `json:"password_policy,omitempty"`
	TLS        string `json:"tls,omitempty"`
	ConnPolicy string `json:"conn_policy,omitempty"`
	// Resumption ("on", "off", "") and LBTLS (the balancer's TLS mode,
	// "" without one) complete them.
	Resumption string `json:"tls_resumption,omitempty"`
	LBTLS      string `json:"lb_tls,omitempty"`
}

// guideConnPolicy is the connection policy of the guide's test for op:
// a new connection per client-credential grant ("each client runs only a
// single request"), kept-alive connections otherwise.
func guideConnPolicy(op Op) string {
	if op == OpClientCredentials {
		return results.ConnPerIteration
	}
	return results.ConnReuse
}

// Conditions says what f was measured under and, flagged with ≠, where
// that differs from the guide's test (TLS at the pod, a new connection
// per client-credential grant, the default argon2 hashing); diffs lists
// the differences ("" when measured as the guide measures).
func (f Figure) Conditions() (desc string, diffs []string) {
	var parts []string
	add := func(ok bool, s, diff string) {
		if !ok {
			s += " ≠"
			diffs = append(diffs, diff)
		}
		parts = append(parts, s)
	}
	switch f.TLS {
	case "on":
		parts = append(parts, "TLS")
		if f.Resumption == "on" {
			add(false, "sessions resumed", "TLS sessions resumed, not full handshakes")
		}
		if f.LBTLS == "terminate" {
			add(false, "TLS ended at the balancer", "TLS ended at the balancer (its CPU is not Keycloak's), not at the pod")
		}
	case "off":
		add(false, "plain HTTP", "plain HTTP, not TLS")
	default:
		add(false, "TLS not recorded", "TLS not recorded")
	}
	if f.ConnPolicy != "" {
		want := guideConnPolicy(f.Op)
		add(f.ConnPolicy == want, f.ConnPolicy+" connections", fmt.Sprintf("%s connections, the guide's %s", f.ConnPolicy, want))
	}
	if f.Op == OpLogin && f.Policy != "" {
		def := f.Policy == "default"
		desc := f.Policy + " hashing"
		if def {
			desc = "argon2 (default) hashing"
		}
		add(def, desc, "hashed with "+f.Policy+", not the default argon2")
	}
	return strings.Join(parts, ", "), diffs
}

// Measured reports whether the figure comes from a measurement.
func (f Figure) Measured() bool { return f.CPUMs > 0 }

// From says where the figure came from, for people.
func (f Figure) From() string {
	if !f.Measured() {
		return "not measured: the guide's rate is used"
	}
	var parts []string
	if f.Phase != "" {
		parts = append(parts, f.Phase)
	}
	parts = append(parts, fmt.Sprintf("%s %q", f.Scenario, f.Workload))
	if f.Mode != "" {
		parts = append(parts, f.Mode+" mode")
	}
	if f.Tenants > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", f.Tenants, plural(f.Tenants, "tenant", "tenants")))
	}
	s := strings.Join(parts, ", ")
	if f.Source == SourceCapacity {
		s = "capacity search: " + s
	}
	if n := len(f.Points); n == 1 {
		s += "; point " + f.Points[0]
	} else {
		s += fmt.Sprintf("; mean of %d repeats (%s–%s ms): %s", n, num(f.Min), num(f.Max), strings.Join(f.Points, ", "))
	}
	return s
}

// wideSpread is the ratio of a figure's costliest repeat to its cheapest
// past which sizing says so: repeats on one warm JVM stay within about
// 1.15 (CPU per client-credential grant in three searches, 1.67–1.75 ms;
// per refresh 1.95–2.30), while argon2 logins on separate boots of the
// same Keycloak cost 30.5–65.2 ms (this project's 2-core machine).
const wideSpread = 1.25

// spreadNote says when the repeats of a figure differ widely, and how to
// size for the costliest ("" when they do not).
func spreadNote(f Figure) string {
	if len(f.Points) < 2 || !(f.Min > 0) || f.Max < wideSpread*f.Min {
		return ""
	}
	return fmt.Sprintf("The %d repeats of the %s differ %.1f× (%s–%s CPU-ms; separate JVM boots can): sizing uses their mean, %s; "+
		"to size for the costliest, give --%s %s (with the other two CPU-ms flags).",
		len(f.Points), f.Op, f.Max/f.Min, num(f.Min), num(f.Max), num(f.CPUMs), f.Op.costFlag(), num(f.Max))
}

// Calibration is the measured cost of the guide's three operations for one
// variant of an experiment (one Keycloak version and password policy).
type Calibration struct {
	Variant  string `json:"variant"`
	Policy   string `json:"password_policy,omitempty"`
	Keycloak string `json:"keycloak_version,omitempty"`
	// Figures holds one Figure per Op, in Ops() order.
	Figures []Figure `json:"figures"`
	// Others are the measured figures of other cells of the same phase
	// (other modes, tenant counts or workloads), shown for their spread
	// but not used.
	Others []Figure `json:"others,omitempty"`
	// Cold are the cold-phase figures (after a restart, caches empty) of
	// the cells used, when the figures used are warm ones.
	Cold []Figure `json:"cold,omitempty"`
	// Database holds the database's measured cost per operation, in the
	// cells of the figures used, where it was measured.
	Database []DBFigure `json:"database,omitempty"`
	Notes    []string   `json:"notes,omitempty"`
}

// Figure returns the figure for op.
func (c Calibration) Figure(op Op) Figure {
	for _, f := range c.Figures {
		if f.Op == op {
			return f
		}
	}
	return Figure{Op: op}
}

// Source names the calibration as the source of its Rates.
func (c Calibration) Source() string {
	var parts []string
	if c.Variant != "" {
		parts = append(parts, "variant "+c.Variant)
	}
	if c.Keycloak != "" {
		parts = append(parts, "Keycloak "+c.Keycloak)
	}
	if c.Policy != "" {
		parts = append(parts, "password policy "+c.Policy)
	}
	if len(parts) == 0 {
		return "measured by kcbench"
	}
	return "measured by kcbench: " + strings.Join(parts, ", ")
}

// Rates converts the figures into per-vCPU rates (1000 ÷ CPU-ms). An
// operation that was not measured keeps the guide's rate.
func (c Calibration) Rates() Rates {
	r := GuideRates()
	r.Source = c.Source()
	if f := c.Figure(OpLogin); f.Measured() {
		r.LoginsPerVCPU = perVCPU(f.CPUMs)
	}
	if f := c.Figure(OpClientCredentials); f.Measured() {
		r.ClientCredentialsPerVCPU = perVCPU(f.CPUMs)
	}
	if f := c.Figure(OpRefresh); f.Measured() {
		r.RefreshesPerVCPU = perVCPU(f.CPUMs)
	}
	return r
}

// Complete reports whether all three operations were measured.
func (c Calibration) Complete() bool {
	for _, f := range c.Figures {
		if !f.Measured() {
			return false
		}
	}
	return len(c.Figures) == len(Ops())
}

// ErrNoMeasurements is returned by Calibrate when no measurement prices a
// login, a client-credential grant or a refresh.
var ErrNoMeasurements = errors.New("no usable measurement: no workload of scenario login-form, password-grant, " +
	"client-credentials or refresh with server CPU per operation")

// Calibrate groups measurements by variant (and password policy and
// Keycloak version) and picks, per operation, the figure kcbench sizes
// with: the warm phase if there is one, realms mode before organizations,
// the fewest tenants, the browser login before the password grant; the
// mean over that cell's repeats. Measurements without server CPU, or of
// scenarios that price nothing, are skipped. The calibrations come sorted
// by variant. It is pure: the caller reads the results.
func Calibrate(ms []Measurement) ([]Calibration, error) {
	type key struct{ variant, policy, keycloak string }
	groups := map[key][]Measurement{}
	skipped := map[key][]string{}
	var keys []key
	for _, m := range ms {
		k := key{m.Variant, m.Policy, m.Keycloak}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
			groups[k] = nil
		}
		if _, ok := OpForScenario(m.Scenario); !ok {
			continue
		}
		if !m.usable() {
			skipped[k] = append(skipped[k], fmt.Sprintf("%s %s %q", m.Point, m.Phase, m.Workload))
			continue
		}
		groups[k] = append(groups[k], m)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.variant, b.variant), cmp.Compare(a.policy, b.policy), cmp.Compare(a.keycloak, b.keycloak))
	})
	var out []Calibration
	for _, k := range keys {
		c := Calibration{Variant: k.variant, Policy: k.policy, Keycloak: k.keycloak}
		for _, op := range Ops() {
			figs := figures(op, groups[k])
			if len(figs) == 0 {
				c.Figures = append(c.Figures, Figure{Op: op})
				c.Notes = append(c.Notes, fmt.Sprintf("No %s was measured; the guide's %s per vCPU is used for it.",
					op, num(guideRate(op))))
				continue
			}
			best := figs[0]
			c.Figures = append(c.Figures, best)
			if n := spreadNote(best); n != "" {
				c.Notes = append(c.Notes, n)
			}
			if d, ok := dbFigure(op, best, groups[k]); ok {
				c.Database = append(c.Database, d)
			}
			for _, f := range figs[1:] {
				switch {
				case f.Phase == best.Phase:
					c.Others = append(c.Others, f)
				case f.Phase == results.PhaseCold && best.Phase == results.PhaseWarm && f.Mode == best.Mode && f.Tenants == best.Tenants &&
					f.Workload == best.Workload:
					c.Cold = append(c.Cold, f)
				}
			}
		}
		if s := skipped[k]; len(s) > 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("Without server CPU per operation, not used: %s.", strings.Join(s, "; ")))
		}
		measured := 0
		for _, f := range c.Figures {
			if f.Measured() {
				measured++
			}
		}
		if measured > 0 {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, ErrNoMeasurements
	}
	return out, nil
}

// figures averages op's measurements per cell, best cell first.
func figures(op Op, ms []Measurement) []Figure {
	byCell := map[cell][]Measurement{}
	var cells []cell
	for _, m := range ms {
		if o, _ := OpForScenario(m.Scenario); o != op {
			continue
		}
		c := m.cell()
		if _, ok := byCell[c]; !ok {
			cells = append(cells, c)
		}
		byCell[c] = append(byCell[c], m)
	}
	slices.SortFunc(cells, cellCompare)
	out := make([]Figure, 0, len(cells))
	for _, c := range cells {
		reps := byCell[c]
		slices.SortFunc(reps, func(a, b Measurement) int {
			return cmp.Or(cmp.Compare(a.Repeat, b.Repeat), cmp.Compare(a.Point, b.Point))
		})
		f := Figure{Op: op, Phase: c.phase, Mode: c.mode, Tenants: c.tenants, Workload: c.workload, Scenario: c.scenario,
			Min: reps[0].CPUMsPerOp, Max: reps[0].CPUMsPerOp, Source: reps[0].Source,
			Policy: reps[0].Policy, TLS: reps[0].TLS, ConnPolicy: reps[0].ConnPolicy, Resumption: reps[0].Resumption, LBTLS: reps[0].LBTLS}
		sum := 0.0
		for _, m := range reps {
			sum += m.CPUMsPerOp
			f.Min, f.Max = min(f.Min, m.CPUMsPerOp), max(f.Max, m.CPUMsPerOp)
			f.Points = append(f.Points, m.Point)
			f.OK += m.OK
		}
		f.CPUMs = sum / float64(len(reps))
		out = append(out, f)
	}
	return out
}

func guideRate(op Op) float64 {
	switch op {
	case OpLogin:
		return GuideLoginsPerVCPU
	case OpClientCredentials:
		return GuideClientCredentialsPerVCPU
	case OpRefresh:
		return GuideRefreshesPerVCPU
	}
	return 0
}

// WriteText writes where each figure came from: per operation the CPU-ms,
// the rate per vCPU it gives, the guide's, and the point and workload, then
// the figures of other cells and the notes.
func (c Calibration) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Cost per operation, %s\n", c.Source())
	cells := [][]string{{"", "CPU-ms", "per vCPU", "guide", "from"}}
	for _, f := range c.Figures {
		ms, rate := "–", "–"
		if f.Measured() {
			ms, rate = num(f.CPUMs), num(perVCPU(f.CPUMs))
		}
		cells = append(cells, []string{f.Op.String(), ms, rate, num(guideRate(f.Op)), f.From()})
	}
	writeTable(bw, cells, []bool{false, true, true, true, false})
	for _, f := range c.Figures {
		if !f.Measured() {
			continue
		}
		desc, diffs := f.Conditions()
		fmt.Fprintf(bw, "  %s measured under: %s\n", f.Op, desc)
		if len(diffs) > 0 {
			fmt.Fprintf(bw, "    differs from the guide's test (%s): not the cost the guide measured\n", strings.Join(diffs, "; "))
		}
	}
	if len(c.Others) > 0 {
		fmt.Fprintf(bw, "  also measured, not used:\n")
		for _, f := range c.Others {
			fmt.Fprintf(bw, "    %s: %s ms (%s)\n", f.Op, num(f.CPUMs), f.From())
		}
	}
	if len(c.Cold) > 0 {
		parts := make([]string, len(c.Cold))
		for i, f := range c.Cold {
			parts[i] = fmt.Sprintf("%s %s ms", f.Op, num(f.CPUMs))
		}
		fmt.Fprintf(bw, "  cold phase of the same points (after a restart, caches empty), not used: %s\n", strings.Join(parts, ", "))
	}
	for _, n := range c.Notes {
		fmt.Fprintf(bw, "  - %s\n", n)
	}
	return bw.Flush()
}

// writeTable writes rows as aligned columns, indented by two spaces;
// right[i] right-aligns column i. The last column is not padded.
func writeTable(w io.Writer, rows [][]string, right []bool) {
	var width []int
	for _, r := range rows {
		for i, s := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len([]rune(s)))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, s := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			switch {
			case i < len(right) && right[i]:
				b.WriteString(padLeft(s, width[i]))
			case i == len(r)-1:
				b.WriteString(s)
			default:
				b.WriteString(pad(s, width[i]))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
