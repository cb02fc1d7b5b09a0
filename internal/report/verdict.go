package report

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// Sentence is one sentence of the verdict, as HTML (each figure in a
// <span class="fig" data-fig="…" data-value="…">, so that a test can
// check it against the result files) and as plain text.
type Sentence struct {
	HTML template.HTML
	Text string
}

// sentence builds a Sentence from text and figures.
type sentence struct {
	html, text strings.Builder
}

func (s *sentence) t(format string, args ...any) *sentence {
	v := fmt.Sprintf(format, args...)
	s.html.WriteString(template.HTMLEscapeString(v))
	s.text.WriteString(v)
	return s
}

// fig writes a figure: shown formatted, with its key and exact value in
// data attributes.
func (s *sentence) fig(key string, v float64, f func(float64) string, unit string) *sentence {
	shown := f(v) + unit
	fmt.Fprintf(&s.html, `<span class="fig" data-fig="%s" data-value="%s">%s</span>`,
		template.HTMLEscapeString(key), strconv.FormatFloat(v, 'g', -1, 64), template.HTMLEscapeString(shown))
	s.text.WriteString(shown)
	return s
}

func (s *sentence) done() Sentence {
	return Sentence{HTML: template.HTML(s.html.String()), Text: s.text.String()}
}

func (b *builder) say(s *sentence) { b.m.Verdict = append(b.m.Verdict, s.done()) }

// FigKey names a figure of the verdict: configuration label, workload (as
// "phase name") and metric (throughput, p95, cpu).
func FigKey(config, workload, metric string) string {
	return config + "|" + workload + "|" + metric
}

// verdictMetric is one figure the verdict compares between configurations.
type verdictMetric struct {
	name         string // in FigKey
	label        string
	unit         string
	higherBetter bool
	stat         func(*wlAgg) Stat
	format       func(float64) string
}

var verdictMetrics = []verdictMetric{
	{"throughput", "throughput", "/s", true, func(w *wlAgg) Stat { return w.throughput }, fmtFixed(1)},
	{"p95", "p95", " ms", false, func(w *wlAgg) Stat { return w.p95 }, results.FormatMs},
	{"cpu", "server CPU", " ms/op", false, func(w *wlAgg) Stat { return w.cpuMs }, fmtFixed(2)},
}

// dbMemoryMetrics weigh what a configuration spares the database against
// what it costs Keycloak in memory (the cache study's question).
var dbMemoryMetrics = []verdictMetric{
	{"db-cpu", "database CPU", " ms/op", false, func(w *wlAgg) Stat { return w.dbCPUMs }, fmtFixed(3)},
	{"db-blocks-read", "blocks read", "/op", false, func(w *wlAgg) Stat { return w.dbBlksRead }, fmtFixed(2)},
	{"heap", "Keycloak heap", " MiB", false, func(w *wlAgg) Stat { return w.heapMiB }, fmtFixed(0)},
	{"rss", "max RSS", " MiB", false, func(w *wlAgg) Stat { return w.rssMiB }, fmtFixed(0)},
	{"gc-pause", "mean GC pause", " ms", false, func(w *wlAgg) Stat { return w.gcPauseMs }, fmtFixed(2)},
}

// experimentVerdict writes the first screen of a sweep or variants
// report: the configurations compared workload by workload, cold against
// warm, and how the figures grow with the tenant count.
func (b *builder) experimentVerdict() {
	e := b.e
	var failed []string
	for _, c := range e.configs {
		if len(c.done) < len(c.points) {
			failed = append(failed, c.label)
		}
	}
	var done []*config
	for _, c := range e.configs {
		if len(c.done) > 0 {
			done = append(done, c)
		}
	}
	if len(done) == 0 {
		b.say(new(sentence).t("No point finished, so there is nothing to compare; the notes below say why each one stopped."))
		return
	}
	if !e.hasWorkloads() {
		return
	}
	cmp := done
	at := ""
	if e.sweep {
		cmp, at = b.sweepCompareSet(done)
	}
	phase := preferredPhase(cmp)
	if len(cmp) < 2 {
		c := done[len(done)-1]
		b.say(new(sentence).t("Only one configuration (%s) finished, so there is nothing to compare it with; its figures:", c.label))
		for _, w := range c.workloads() {
			if w.key.phase != phase {
				continue
			}
			b.sayWorkload(c, w)
		}
	} else {
		b.compareConfigs(cmp, phase, at)
		if e.hasDB() && e.hasMemory() {
			b.dbMemory(cmp, phase, at)
		}
	}
	b.cacheAdvice(cmp, phase, at)
	if e.sweep {
		b.coldWarm(cmp)
		b.growth(done)
	}
	if len(failed) > 0 {
		b.say(new(sentence).t("Not finished: %s (left out of the figures; the notes say why).", strings.Join(failed, ", ")))
	}
}

// sweepCompareSet picks the configurations to compare across lines: at
// the largest tenant count every line finished.
func (b *builder) sweepCompareSet(done []*config) ([]*config, string) {
	series := b.e.seriesNames()
	byN := map[int][]*config{}
	for _, c := range done {
		byN[c.tenants] = append(byN[c.tenants], c)
	}
	best := -1
	for n, cs := range byN {
		if len(cs) == len(series) && n > best {
			best = n
		}
	}
	if best < 0 {
		// no tenant count that every line finished: the largest of any
		for n := range byN {
			best = max(best, n)
		}
	}
	return byN[best], fmt.Sprintf("N=%d", best)
}

// preferredPhase is warm when any configuration ran it, else no phase,
// else cold.
func preferredPhase(cs []*config) string {
	for _, ph := range []string{results.PhaseWarm, "", results.PhaseCold} {
		for _, c := range cs {
			for _, w := range c.workloads() {
				if w.key.phase == ph {
					return ph
				}
			}
		}
	}
	return ""
}

func (b *builder) sayWorkload(c *config, w *wlAgg) {
	s := new(sentence).t("%s: ", w.key.String())
	first := true
	for _, vm := range verdictMetrics {
		st := vm.stat(w)
		if !st.Known() {
			continue
		}
		if !first {
			s.t(", ")
		}
		first = false
		s.t("%s ", vm.label).fig(FigKey(c.label, w.key.String(), vm.name), st.Mean, vm.format, vm.unit)
	}
	b.say(s.t("."))
}

// compareConfigs writes one sentence per workload: every configuration
// against the first, on throughput, p95 and server CPU per operation,
// saying whether the difference lies beyond the spread of the repeats.
// configNames names the configurations compared: at one tenant count
// of a sweep, by their lines.
func configNames(cs []*config, at string) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.label
		if at != "" {
			names[i] = c.series
		}
	}
	return names
}

func (b *builder) compareConfigs(cs []*config, phase, at string) {
	names := configNames(cs, at)
	where := ""
	if at != "" {
		where = " at " + at
	}
	ph := ""
	if phase != "" {
		ph = " (" + phase + ")"
	}
	b.say(new(sentence).t("%s compared with %s%s%s, workload by workload; a difference is called real only when it lies beyond the spread of the repeats.",
		strings.Join(names[1:], ", "), names[0], where, ph))
	if !b.compareRows(cs, names, phase, verdictMetrics) {
		b.say(new(sentence).t("Each configuration ran once, so the spread of repeats is unknown: treat differences of a few percent as noise (run with repeats to tell)."))
	}
}

// dbMemory answers whether a configuration spares the database and what
// it costs in memory: per workload, the database's CPU and blocks read
// per operation beside Keycloak's heap, RSS and mean GC pause.
func (b *builder) dbMemory(cs []*config, phase, at string) {
	names := configNames(cs, at)
	b.say(new(sentence).t("Does %s spare the database, and what does it cost in memory? Per workload, PostgreSQL's CPU and blocks read per operation beside Keycloak's heap, RSS and mean GC pause:",
		strings.Join(names[1:], ", ")))
	b.compareRows(cs, names, phase, dbMemoryMetrics)
}

// compareRows writes one sentence per workload of phase that two or more
// of cs ran: each of metrics for every configuration against the first.
// It reports whether the spread of repeats was known for any figure.
func (b *builder) compareRows(cs []*config, names []string, phase string, metrics []verdictMetric) bool {
	base := cs[0]
	spreadKnown := false
	type row struct {
		key    wlKey
		byConf []*wlAgg
	}
	var rows []row
	for _, k := range b.e.workloadOrder() {
		if k.phase != phase {
			continue
		}
		r := row{key: k, byConf: make([]*wlAgg, len(cs))}
		n := 0
		for i, c := range cs {
			for _, w := range c.workloads() {
				if w.key == k {
					r.byConf[i] = w
					n++
				}
			}
		}
		if n >= 2 && r.byConf[0] != nil {
			rows = append(rows, r)
		}
	}
	// cheaper/dearer count for the headline of CPU
	cheaper, dearer := map[int]int{}, map[int]int{}
	for _, r := range rows {
		s := new(sentence).t("%s: ", r.key.String())
		said := 0
		for _, vm := range metrics {
			a := vm.stat(r.byConf[0])
			if !a.Known() {
				continue
			}
			if said > 0 {
				s.t("; ")
			}
			said++
			s.t("%s %s ", vm.label, names[0]).fig(FigKey(base.label, r.key.String(), vm.name), a.Mean, vm.format, vm.unit)
			for i := 1; i < len(cs); i++ {
				w := r.byConf[i]
				if w == nil {
					continue
				}
				o := vm.stat(w)
				if !o.Known() {
					continue
				}
				s.t(", %s ", names[i]).fig(FigKey(cs[i].label, r.key.String(), vm.name), o.Mean, vm.format, vm.unit)
				v := verdict(a.Mean, o.Mean, max(spreadOf(a), spreadOf(o)), hasSpread(a) || hasSpread(o), vm.higherBetter)
				if hasSpread(a) || hasSpread(o) {
					spreadKnown = true
				}
				if a.Mean != 0 {
					s.t(" (%s", signedPct(100*(o.Mean-a.Mean)/math.Abs(a.Mean)))
					switch {
					case v == VerdictNoise:
						s.t(", within the spread")
					case strings.HasPrefix(v, VerdictBetter) && hasSpread(a):
						s.t(", better beyond the spread")
					case strings.HasPrefix(v, VerdictWorse) && hasSpread(a):
						s.t(", worse beyond the spread")
					}
					s.t(")")
				}
				if vm.name == "cpu" {
					switch {
					case o.Mean < a.Mean:
						cheaper[i]++
					case o.Mean > a.Mean:
						dearer[i]++
					}
				}
			}
		}
		if said > 0 {
			b.say(s.t("."))
		}
	}
	for i := 1; i < len(cs); i++ {
		if cheaper[i]+dearer[i] == 0 {
			continue
		}
		b.say(new(sentence).t("Server CPU per operation: %s cost less than %s in %d of %d workloads and more in %d.",
			names[i], names[0], cheaper[i], len(rows), dearer[i]))
	}
	return spreadKnown
}

func hasSpread(s Stat) bool { _, ok := s.Spread(); return ok }

func spreadOf(s Stat) float64 { v, _ := s.Spread(); return v }

func signedPct(p float64) string {
	if p >= 0 {
		return fmt.Sprintf("+%.0f%%", p)
	}
	return fmt.Sprintf("−%.0f%%", -p)
}

// coldWarm says, per configuration compared, which workload's p95 differs
// most between cold (right after a restart) and warm.
func (b *builder) coldWarm(cs []*config) {
	for _, c := range cs {
		ws := c.workloads()
		bestRatio, bestName := 0.0, ""
		var cold, warm Stat
		for _, w := range ws {
			if w.key.phase != results.PhaseCold {
				continue
			}
			for _, o := range ws {
				if o.key.name != w.key.name || o.key.phase != results.PhaseWarm {
					continue
				}
				if !w.p95.Known() || !o.p95.Known() || o.p95.Mean <= 0 {
					continue
				}
				if r := w.p95.Mean / o.p95.Mean; math.Abs(math.Log(r)) > math.Abs(math.Log(max(bestRatio, 1e-9))) || bestName == "" {
					bestRatio, bestName, cold, warm = r, w.key.name, w.p95, o.p95
				}
			}
		}
		if bestName == "" {
			continue
		}
		if bestRatio > 0.9 && bestRatio < 1.1 {
			b.say(new(sentence).t("Cold (right after a restart) and warm p95 differ by less than 10%% in every workload of %s.", c.label))
			continue
		}
		s := new(sentence).t("Cold (right after a restart) against warm in %s: the largest gap is %s, p95 ", c.label, bestName).
			fig(FigKey(c.label, wlKey{bestName, results.PhaseCold}.String(), "p95"), cold.Mean, results.FormatMs, " ms").
			t(" cold against ").
			fig(FigKey(c.label, wlKey{bestName, results.PhaseWarm}.String(), "p95"), warm.Mean, results.FormatMs, " ms").
			t(" warm (%.1f×).", bestRatio)
		b.say(s)
	}
}

// growth says, per line of a sweep, which warm throughput changed most
// from the smallest to the largest tenant count.
func (b *builder) growth(done []*config) {
	for _, series := range b.e.seriesNames() {
		var line []*config
		for _, c := range done {
			if c.series == series {
				line = append(line, c)
			}
		}
		if len(line) < 2 {
			continue
		}
		lo, hi := line[0], line[len(line)-1]
		phase := preferredPhase(line)
		bestPct, bestKey := 0.0, wlKey{}
		var from, to Stat
		for _, w := range lo.workloads() {
			if w.key.phase != phase || !w.throughput.Known() || w.throughput.Mean <= 0 {
				continue
			}
			for _, o := range hi.workloads() {
				if o.key != w.key || !o.throughput.Known() {
					continue
				}
				if p := 100 * (o.throughput.Mean - w.throughput.Mean) / w.throughput.Mean; math.Abs(p) >= math.Abs(bestPct) {
					bestPct, bestKey, from, to = p, w.key, w.throughput, o.throughput
				}
			}
		}
		if bestKey.name == "" {
			continue
		}
		b.say(new(sentence).t("From N=%d to N=%d in %s, %s throughput changed most: ", lo.tenants, hi.tenants, series, bestKey.String()).
			fig(FigKey(lo.label, bestKey.String(), "throughput"), from.Mean, fmtFixed(1), "/s").t(" to ").
			fig(FigKey(hi.label, bestKey.String(), "throughput"), to.Mean, fmtFixed(1), "/s").t(" (%s).", signedPct(bestPct)))
	}
}

// capacityVerdict says, per search, the rate at SLO and what failed first.
func (b *builder) capacityVerdict(runs []*capacityRun) {
	for _, r := range runs {
		b.say(capacitySentence(r))
	}
}

// capacitySentence says a search's rate at SLO and what failed first.
func capacitySentence(r *capacityRun) *sentence {
	res := r.res
	s := new(sentence).t("%s: ", r.label)
	switch {
	case !res.Found:
		s.t("no asked rate met the SLOs (%s)", results.FormatSLOs(res.SLOs))
	default:
		if res.Capped {
			s.t("at least ")
		}
		s.fig(FigKey(r.label, res.Scenario, "max_rate"), res.MaxRate, fmtG, "/s").t(" met every SLO (%s)", results.FormatSLOs(res.SLOs))
		if res.CPUMsPerOp > 0 {
			s.t(" at ").fig(FigKey(r.label, res.Scenario, "cpu"), res.CPUMsPerOp, fmtFixed(2), " server CPU-ms/op")
		}
		if res.Capped {
			s.t("; the search stopped at its maximum rate without a failure")
		}
	}
	if st := firstFailed(res); st != nil {
		s.t("; at ").fig(FigKey(r.label, res.Scenario, "first_failed_rate"), st.Rate, fmtG, "/s").t(" it failed first on: %s", strings.TrimPrefix(st.Verdict(), "fail: "))
	}
	return s.t(".")
}

// firstFailed is the lowest judged step that failed (not a probe: a
// cold server's first probes fail at any rate).
func firstFailed(res *results.CapacityResult) *results.CapacityStep {
	var out *results.CapacityStep
	for i := range res.Steps {
		st := &res.Steps[i]
		if !st.Judged() || st.Pass {
			continue
		}
		if out == nil || st.Rate < out.Rate {
			out = st
		}
	}
	return out
}

// sortedTenants is the tenant counts of the configurations, ascending.
func sortedTenants(cs []*config) []int {
	var ns []int
	for _, c := range cs {
		if !slices.Contains(ns, c.tenants) {
			ns = append(ns, c.tenants)
		}
	}
	slices.Sort(ns)
	return ns
}

// The sizing guide's cache advice for many clients in use at once (past
// about 2,500, client data falls out of the default caches): the users
// cache holds at least 2 ×, the realms cache at least 4 × the clients in
// use. Keycloak's caches hold 10,000 entries unless set.
const (
	guideUsersCachePerClient  = 2
	guideRealmsCachePerClient = 4
	guideClientsThreshold     = 2500
	keycloakCacheDefault      = 10000
)

// cacheAdvice checks the guide's cache advice for every workload that
// recorded the clients it used, in configurations that set a cache size:
// which configurations meet it, and the database's cost per operation in
// each, so that the reader sees whether falling below it costs the
// database anything.
func (b *builder) cacheAdvice(cs []*config, phase, at string) {
	names := configNames(cs, at)
	sets := false
	for _, c := range cs {
		for k := range c.params {
			sets = sets || strings.HasPrefix(k, results.ParamCachePrefix)
		}
	}
	if !sets {
		return
	}
	size := func(c *config, name string) int {
		if n, err := strconv.Atoi(c.params[results.ParamCachePrefix+name]); err == nil {
			return n
		}
		return keycloakCacheDefault
	}
	for _, k := range b.e.workloadOrder() {
		if k.phase != phase {
			continue
		}
		// the advice binds past the guide's threshold, or where a
		// configuration falls short of it (never for a client or two)
		binds := false
		for _, c := range cs {
			for _, w := range c.workloads() {
				if n := w.clientsInUse; w.key == k && n > 0 && (n > guideClientsThreshold ||
					size(c, "users") < guideUsersCachePerClient*n || size(c, "realms") < guideRealmsCachePerClient*n) {
					binds = true
				}
			}
		}
		if !binds {
			continue
		}
		s := new(sentence)
		said := 0
		for ci, c := range cs {
			for _, w := range c.workloads() {
				if w.key != k || w.clientsInUse == 0 {
					continue
				}
				n := w.clientsInUse
				if said == 0 {
					s.t("The guide's cache advice for %s (%s confidential clients in use: users cache ≥ %s, realms cache ≥ %s): ",
						k.String(), thousands(n), thousands(guideUsersCachePerClient*n), thousands(guideRealmsCachePerClient*n))
				} else {
					s.t("; ")
				}
				said++
				users, realms := size(c, "users"), size(c, "realms")
				var short []string
				if users < guideUsersCachePerClient*n {
					short = append(short, "users "+thousands(users))
				}
				if realms < guideRealmsCachePerClient*n {
					short = append(short, "realms "+thousands(realms))
				}
				if len(short) == 0 {
					s.t("%s meets it", names[ci])
				} else {
					s.t("%s falls short (%s)", names[ci], strings.Join(short, ", "))
				}
				if w.dbCPUMs.Known() || w.dbBlksRead.Known() {
					s.t(", database")
					if st := w.dbCPUMs; st.Known() {
						s.t(" ").fig(FigKey(c.label, k.String(), "db-cpu"), st.Mean, fmtFixed(3), " ms/op")
					}
					if st := w.dbBlksRead; st.Known() {
						s.t(" ").fig(FigKey(c.label, k.String(), "db-blocks-read"), st.Mean, fmtFixed(2), " blocks read/op")
					}
				}
			}
		}
		if said > 0 {
			b.say(s.t("."))
		}
	}
}

// thousands writes n with thousands separators: 10,400.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
