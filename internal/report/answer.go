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

// Answer is a report's first screen: what was compared and what came out,
// in a few sentences and one table. It presents the judgements the
// verdict makes (verdict.go: the same figures, the same spread of the
// repeats); the verdict's every sentence stays one click below it.
type Answer struct {
	Sentences []Sentence
	Table     *AnswerTable
}

// AnswerTable is the first screen's one table.
type AnswerTable struct {
	Columns []Column
	Rows    [][]Cell
	Caption string
}

// Column is a column of the answer's table. The columns of one Group (a
// metric, one column per configuration) share a header cell above their
// own.
type Column struct {
	Group, Title string
	Text         bool // a column of words, not figures
}

// Cell is one cell of the answer's table: a figure (Fig is its FigKey and
// Value its exact value, as in the verdict's sentences) or text.
type Cell struct {
	Text   string
	Fig    string
	Value  float64
	Spread string // after a figure: ± half the range of the repeats
	Class  string // "best": the better figure, beyond the noise; "noise": within it
}

// HTML is the cell's content: a figure in a <span class="fig"
// data-fig="…" data-value="…">, as the verdict's.
func (c Cell) HTML() template.HTML {
	s := new(sentence)
	if c.Fig != "" {
		s.fig(c.Fig, c.Value, func(float64) string { return c.Text }, "")
	} else {
		s.t("%s", c.Text)
	}
	if c.Spread != "" {
		s.html.WriteString(`<span class="spread">` + template.HTMLEscapeString(c.Spread) + `</span>`)
	}
	return template.HTML(s.html.String())
}

// Plain is the cell as text.
func (c Cell) Plain() string { return c.Text + c.Spread }

func (t *AnswerTable) grouped() bool {
	return slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Group != "" })
}

// HeadHTML is the table's header: a row of groups over a row of their
// columns, the ungrouped columns spanning both.
func (t *AnswerTable) HeadHTML() template.HTML {
	esc := template.HTMLEscapeString
	grouped := t.grouped()
	var b strings.Builder
	b.WriteString("<tr>")
	for i := 0; i < len(t.Columns); {
		c := t.Columns[i]
		if c.Group == "" {
			attrs := ""
			if grouped {
				attrs += ` rowspan="2"`
			}
			if c.Text {
				attrs += ` class="text"`
			}
			b.WriteString("<th" + attrs + ">" + esc(c.Title) + "</th>")
			i++
			continue
		}
		n := 1
		for i+n < len(t.Columns) && t.Columns[i+n].Group == c.Group {
			n++
		}
		fmt.Fprintf(&b, `<th colspan="%d">%s</th>`, n, esc(c.Group))
		i += n
	}
	b.WriteString("</tr>")
	if grouped {
		b.WriteString("<tr>")
		for _, c := range t.Columns {
			if c.Group != "" {
				b.WriteString("<th>" + esc(c.Title) + "</th>")
			}
		}
		b.WriteString("</tr>")
	}
	return template.HTML(b.String())
}

// Header is the table's header in one row (markdown's).
func (t *AnswerTable) Header() []string {
	h := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		h[i] = strings.TrimSpace(c.Group + " " + c.Title)
	}
	return h
}

func (t *AnswerTable) textColumns() []bool {
	out := make([]bool, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Text
	}
	return out
}

// PlainRows is the table's rows as text.
func (t *AnswerTable) PlainRows() [][]string {
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = make([]string, len(r))
		for j, c := range r {
			rows[i][j] = c.Plain()
		}
	}
	return rows
}

// VerdictDetail is the verdict below the first screen: its sentences
// that the answer does not already say.
func (m *Model) VerdictDetail() []Sentence {
	var out []Sentence
	for _, v := range m.Verdict {
		if !slices.ContainsFunc(m.Answer.Sentences, func(a Sentence) bool { return a.Text == v.Text }) {
			out = append(out, v)
		}
	}
	return out
}

func (b *builder) answer(s *sentence) {
	b.m.Answer.Sentences = append(b.m.Answer.Sentences, s.done())
}

// answerMetric is how the first screen's table names a verdict metric.
var answerMetric = map[string]struct{ column, short string }{
	"throughput": {"throughput /s", "throughput"},
	"p95":        {"p95 ms", "p95"},
	"cpu":        {"server CPU-ms/op", "CPU/op"},
}

// call is the verdict on one metric of one workload: the configuration
// with the best figure against the next best, judged as the verdict
// judges two configurations (verdict: the spread of their repeats).
type call struct {
	best, next int     // indexes of the configurations
	v          string  // VerdictBetter, VerdictNoise or VerdictSame, maybe with unknownSpread
	pct        float64 // best against next, % of next
	hasPct     bool
}

func (c call) beyond() bool { return strings.HasPrefix(c.v, VerdictBetter) }

// judge finds the best figure of vm among ws (nil: not run) and judges it
// against the next best; false when fewer than two have the figure.
func judge(ws []*wlAgg, vm verdictMetric) (call, bool) {
	var idx []int
	for i, w := range ws {
		if w != nil && vm.stat(w).Known() {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return call{}, false
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := vm.stat(ws[i]).Mean, vm.stat(ws[j]).Mean
		if vm.higherBetter {
			return cmpFloat(b, a)
		}
		return cmpFloat(a, b)
	})
	best, next := vm.stat(ws[idx[0]]), vm.stat(ws[idx[1]])
	c := call{best: idx[0], next: idx[1]}
	c.v = verdict(next.Mean, best.Mean, max(spreadOf(best), spreadOf(next)), hasSpread(best) || hasSpread(next), vm.higherBetter)
	if next.Mean != 0 {
		c.pct, c.hasPct = 100*(best.Mean-next.Mean)/math.Abs(next.Mean), true
	}
	return c, true
}

// gain says by how much the best figure beat the next: "+15% throughput",
// "−13% p95", "14× throughput".
func gain(c call, vm verdictMetric) string {
	name := answerMetric[vm.name].short
	switch {
	case !c.hasPct:
		return "better " + name
	case c.pct >= 100:
		r := 1 + c.pct/100
		prec := 1
		if r >= 10 {
			prec = 0
		}
		return strconv.FormatFloat(r, 'f', prec, 64) + "× " + name
	case math.Abs(c.pct) < 1:
		p := strconv.FormatFloat(math.Abs(c.pct), 'f', 1, 64) + "%"
		if c.pct < 0 {
			return "−" + p + " " + name
		}
		return "+" + p + " " + name
	}
	return signedPct(c.pct) + " " + name
}

// rowCall is the verdict on one workload: per configuration, the metrics
// it did better on beyond the noise.
type rowCall struct {
	calls  []call
	metric []verdictMetric
	winner int // the configuration better on the most metrics; -1: none, or a tie
}

func (r rowCall) wins(i int) []int {
	var ms []int
	for k, c := range r.calls {
		if c.beyond() && c.best == i {
			ms = append(ms, k)
		}
	}
	return ms
}

// judgeRow judges each of ms between the configurations of one workload
// (ws, nil where one did not run it); the winner is the configuration
// better beyond the noise on the most metrics, none on a tie.
func judgeRow(ws []*wlAgg, ms []verdictMetric) rowCall {
	rc := rowCall{winner: -1}
	for _, vm := range ms {
		if c, ok := judge(ws, vm); ok {
			rc.calls = append(rc.calls, c)
			rc.metric = append(rc.metric, vm)
		}
	}
	top, tie := 0, false
	for i := range ws {
		switch n := len(rc.wins(i)); {
		case n > top:
			top, tie, rc.winner = n, false, i
		case n == top && n > 0:
			tie = true
		}
	}
	if tie {
		rc.winner = -1
	}
	return rc
}

// text is the winner column: "orgs: +15% throughput, −13% p95",
// "within noise", "no difference".
func (r rowCall) text(names []string) (string, string) {
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(r.wins(b)) - len(r.wins(a)) })
	var parts, noise []string
	for _, i := range order {
		var gs []string
		for _, k := range r.wins(i) {
			gs = append(gs, gain(r.calls[k], r.metric[k]))
		}
		if len(gs) > 0 {
			parts = append(parts, names[i]+": "+strings.Join(gs, ", "))
		}
	}
	for k, c := range r.calls {
		if c.v == VerdictNoise {
			noise = append(noise, answerMetric[r.metric[k].name].short)
		}
	}
	switch {
	case len(parts) == 0 && len(noise) > 0:
		return "within noise", "noise"
	case len(parts) == 0:
		return "no difference", "noise"
	case len(noise) > 0:
		parts = append(parts, strings.Join(noise, ", ")+" within noise")
	}
	return strings.Join(parts, "; "), ""
}

// experimentAnswer writes the first screen of a sweep or variants report:
// what was compared, which configuration did better in each workload and
// by how much (a table of the preferred phase's throughput, p95 and
// server CPU per operation), whether that lies beyond the spread of the
// repeats, and what failed.
func (b *builder) experimentAnswer() {
	e := b.e
	var done []*config
	for _, c := range e.configs {
		if len(c.done) > 0 {
			done = append(done, c)
		}
	}
	switch {
	case len(done) == 0:
		b.answer(new(sentence).t("No point finished, so there is nothing to compare; the notes below say why each one stopped."))
	case e.hasWorkloads():
		cs, at := done, ""
		if e.sweep {
			cs, at = b.sweepCompareSet(done)
		}
		if len(cs) < 2 {
			b.answerOne(done[len(done)-1], preferredPhase(cs))
		} else {
			b.answerCompare(cs, preferredPhase(cs), at)
		}
	}
	switch {
	case len(b.pointRuns) == 0:
	case b.m.Answer.Table == nil:
		// capacity searches only: they are the answer
		b.capacityAnswer(b.pointRuns, nil, true)
	default:
		b.answer(capacityBrief(b.pointRuns))
	}
	b.answerFailures()
}

// capacityBrief is the capacity searches of an experiment's points in a
// sentence: each one's rate at SLO and the rate that failed first.
func capacityBrief(runs []*capacityRun) *sentence {
	s := new(sentence).t("Capacity at SLO (%s): ", strings.TrimPrefix(capacitySLOText(runs), "SLOs "))
	for i, r := range runs {
		if i == 3 {
			s.t("; and %d more in the capacity table below", len(runs)-3)
			break
		}
		if i > 0 {
			s.t("; ")
		}
		res := r.res
		s.t("%s ", r.label)
		switch {
		case !res.Found:
			s.t("none")
		case res.Capped:
			s.t("at least ").fig(FigKey(r.label, res.Scenario, "max_rate"), res.MaxRate, fmtG, "/s")
		default:
			s.fig(FigKey(r.label, res.Scenario, "max_rate"), res.MaxRate, fmtG, "/s")
		}
		if st := firstFailed(res); st != nil {
			s.t(", first failed at ").fig(FigKey(r.label, res.Scenario, "first_failed_rate"), st.Rate, fmtG, "/s").t(" on %s", strings.TrimPrefix(st.Verdict(), "fail: "))
		}
	}
	return s.t(".")
}

// answerRows is the workloads of phase that any of cs ran, each with its
// aggregate per configuration (nil where it did not run).
func (b *builder) answerRows(cs []*config, phase string) ([]wlKey, [][]*wlAgg) {
	var keys []wlKey
	var rows [][]*wlAgg
	for _, k := range b.e.workloadOrder() {
		if k.phase != phase {
			continue
		}
		r := make([]*wlAgg, len(cs))
		n := 0
		for i, c := range cs {
			for _, w := range c.workloads() {
				if w.key == k {
					r[i] = w
					n++
				}
			}
		}
		if n > 0 {
			keys = append(keys, k)
			rows = append(rows, r)
		}
	}
	return keys, rows
}

// answerMetrics is the verdict's metrics that any of rows has.
func answerMetrics(rows [][]*wlAgg) []verdictMetric {
	var out []verdictMetric
	for _, vm := range verdictMetrics {
		if slices.ContainsFunc(rows, func(r []*wlAgg) bool {
			return slices.ContainsFunc(r, func(w *wlAgg) bool { return w != nil && vm.stat(w).Known() })
		}) {
			out = append(out, vm)
		}
	}
	return out
}

func workloadColumn(phase string) Column {
	if phase == "" {
		return Column{Title: "workload"}
	}
	return Column{Title: phase + " workload"}
}

// figCell is a figure of the answer's table, keyed as the verdict's.
func figCell(c *config, k wlKey, w *wlAgg, vm verdictMetric) Cell {
	if w == nil || !vm.stat(w).Known() {
		return Cell{Text: "-"}
	}
	st := vm.stat(w)
	cell := Cell{Text: vm.format(st.Mean), Fig: FigKey(c.label, k.String(), vm.name), Value: st.Mean}
	if sp, ok := st.Spread(); ok && sp > 0 {
		cell.Spread = " ±" + vm.format(sp/2)
	}
	return cell
}

// answerOne: one configuration, nothing to compare; its figures.
func (b *builder) answerOne(c *config, phase string) {
	keys, rows := b.answerRows([]*config{c}, phase)
	if len(keys) == 0 {
		return
	}
	switch {
	case len(b.e.configs) > 1:
		b.answer(new(sentence).t("Only one configuration (%s) finished, so there is nothing to compare it with; the table holds its figures.", c.label))
		b.answer(b.scope(new(sentence).t("Measured"), []*config{c}, keys, phase))
	case c.label == "all": // one point without parameters: a load run's
		b.answer(b.scope(new(sentence).t("Measured"), []*config{c}, keys, phase))
	default:
		b.answer(b.scope(new(sentence).t("One configuration (%s), nothing to compare it with: measured", c.label), []*config{c}, keys, phase))
	}
	ms := answerMetrics(rows)
	t := &AnswerTable{Columns: []Column{workloadColumn(phase)}}
	for _, vm := range ms {
		t.Columns = append(t.Columns, Column{Title: answerMetric[vm.name].column})
	}
	for ri, k := range keys {
		row := []Cell{{Text: k.name}}
		for _, vm := range ms {
			row = append(row, figCell(c, k, rows[ri][0], vm))
		}
		t.Rows = append(t.Rows, row)
	}
	if runs := len(c.done); runs > 1 {
		t.Caption = fmt.Sprintf("Mean of %d repeats; ± half their range.", runs)
	}
	b.m.Answer.Table = t
}

// answerCompare: the configurations compared, workload by workload.
func (b *builder) answerCompare(cs []*config, phase, at string) {
	names := configNames(cs, at)
	keys, rows := b.answerRows(cs, phase)
	ms := answerMetrics(rows)

	// the table, and the verdict on each workload
	t := &AnswerTable{Columns: []Column{workloadColumn(phase)}}
	for _, vm := range ms {
		for _, n := range names {
			t.Columns = append(t.Columns, Column{Group: answerMetric[vm.name].column, Title: n})
		}
	}
	t.Columns = append(t.Columns, Column{Title: "better", Text: true})
	var rcs []rowCall
	beyond, within, unknown := 0, 0, 0
	for ri, k := range keys {
		rc := judgeRow(rows[ri], ms)
		best := map[string]int{} // metric → the configuration better beyond the noise
		for m, c := range rc.calls {
			switch {
			case strings.HasSuffix(c.v, unknownSpread) || c.v == VerdictSame:
				unknown++
			case c.beyond():
				beyond++
			default:
				within++
			}
			if c.beyond() {
				best[rc.metric[m].name] = c.best
			}
		}
		rcs = append(rcs, rc)
		row := []Cell{{Text: k.name}}
		for _, vm := range ms {
			for i, c := range cs {
				cell := figCell(c, k, rows[ri][i], vm)
				if j, ok := best[vm.name]; ok && j == i {
					cell.Class = "best"
				}
				row = append(row, cell)
			}
		}
		text, class := rc.text(names)
		row = append(row, Cell{Text: text, Class: strings.TrimSpace(class + " text")})
		t.Rows = append(t.Rows, row)
	}
	judged, spreadUnknown := beyond+within+unknown > 0, beyond+within == 0

	// what was compared
	s := new(sentence).t("%s compared", joinAnd(names))
	if at != "" {
		s.t(" at %s", at)
	}
	b.answer(b.scope(s, cs, keys, phase))

	// who did better, and by how much
	b.answer(winnersSentence(names, keys, rcs))

	// beyond the noise?
	switch {
	case !judged: // no workload that two of them ran
	case spreadUnknown:
		b.answer(new(sentence).t("Each configuration ran once, so the spread of repeats is unknown: treat differences of a few percent as noise (run with repeats to tell)."))
		t.Caption = "One run per configuration: the spread of repeats is unknown. In bold, the better figure."
	default:
		s := new(sentence).t("A difference counts only beyond the spread of the repeats: %d of %d differences lie beyond it, %d within it (marked within noise)",
			beyond, beyond+within+unknown, within)
		if unknown > 0 {
			s.t(", %d between configurations without repeats (spread unknown)", unknown)
		}
		b.answer(s.t("."))
		t.Caption = "Mean of the repeats, ± half their range; in bold, the better figure where it lies beyond the spread."
	}
	b.m.Answer.Table = t
}

// scope ends the sentence saying what was measured: " on 3 workloads
// (…), warm phase, one run each; cold against warm in the full verdict
// below."
func (b *builder) scope(s *sentence, cs []*config, keys []wlKey, phase string) *sentence {
	wls := make([]string, len(keys))
	for i, k := range keys {
		wls[i] = k.name
	}
	s.t(" on %s (%s)", plural(len(keys), "workload"), strings.Join(wls, ", "))
	if phase != "" {
		s.t(", %s phase", phase)
	}
	lo, hi := len(cs[0].done), len(cs[0].done)
	for _, c := range cs {
		lo, hi = min(lo, len(c.done)), max(hi, len(c.done))
	}
	each := ""
	if len(cs) > 1 {
		each = " each"
	}
	switch {
	case hi == 1:
		s.t(", one run%s", each)
	case lo == hi:
		s.t(", %d runs%s", lo, each)
	default:
		s.t(", %d to %d runs%s", lo, hi, each)
	}
	var below []string
	if phase == results.PhaseWarm && b.e.hasPhase(cs, results.PhaseCold) {
		below = append(below, "cold against warm")
	}
	if b.e.sweep && len(sortedTenants(b.e.configs)) > 1 {
		below = append(below, "growth with N")
	}
	if len(below) > 0 {
		s.t("; %s in the full verdict below", joinAnd(below))
	}
	return s.t(".")
}

// hasPhase reports whether any of cs ran a workload in phase.
func (e *experiment) hasPhase(cs []*config, phase string) bool {
	for _, c := range cs {
		for _, w := range c.workloads() {
			if w.key.phase == phase {
				return true
			}
		}
	}
	return false
}

// winnersSentence says which configuration did better in how many
// workloads, by up to how much.
func winnersSentence(names []string, keys []wlKey, rcs []rowCall) *sentence {
	byWinner := map[int][]int{}
	var order []int
	var mixed, noise, same []string
	for ri, rc := range rcs {
		switch text, _ := rc.text(names); {
		case rc.winner >= 0:
			if _, ok := byWinner[rc.winner]; !ok {
				order = append(order, rc.winner)
			}
			byWinner[rc.winner] = append(byWinner[rc.winner], ri)
		case text == "within noise":
			noise = append(noise, keys[ri].name)
		case text == "no difference":
			same = append(same, keys[ri].name)
		default:
			mixed = append(mixed, keys[ri].name)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(byWinner[b]) - len(byWinner[a]) })
	s := new(sentence)
	var parts []string
	for n, i := range order {
		var wls []string
		for _, ri := range byWinner[i] {
			wls = append(wls, keys[ri].name)
		}
		than := ""
		if len(names) == 2 {
			than = " than " + names[1-i]
		}
		of := fmt.Sprintf("%d of %d workloads", len(wls), len(keys))
		switch {
		case len(wls) == 2 && len(keys) == 2:
			of = "both workloads"
		case len(wls) == len(keys) && len(wls) > 1:
			of = fmt.Sprintf("all %d workloads", len(wls))
		}
		p := fmt.Sprintf("%s did better%s in %s (%s)", names[i], than, of, strings.Join(wls, ", "))
		if n > 0 {
			p = fmt.Sprintf("%s%s in %d (%s)", names[i], than, len(wls), strings.Join(wls, ", "))
		}
		// by up to: the largest gain per metric in the workloads it won
		var ups []string
		for _, vm := range verdictMetrics {
			var top *call
			for _, ri := range byWinner[i] {
				for k, c := range rcs[ri].calls {
					if rcs[ri].metric[k].name == vm.name && c.beyond() && c.best == i && c.hasPct && (top == nil || math.Abs(c.pct) > math.Abs(top.pct)) {
						top = &rcs[ri].calls[k]
					}
				}
			}
			if top != nil {
				ups = append(ups, gain(*top, vm))
			}
		}
		if len(ups) > 0 {
			p += ", by up to " + joinAnd(ups)
		}
		parts = append(parts, p)
	}
	if len(mixed) > 0 {
		parts = append(parts, "each did better on some figure in "+strings.Join(mixed, ", "))
	}
	if len(noise) > 0 {
		parts = append(parts, "within noise in "+strings.Join(noise, ", "))
	}
	if len(same) > 0 {
		parts = append(parts, "no difference in "+strings.Join(same, ", "))
	}
	if len(order) == 0 {
		parts = append([]string{"No configuration did better beyond the noise"}, parts...)
	}
	return s.t("%s.", strings.Join(parts, "; "))
}

// answerFailures says what failed: the points that failed or were
// aborted, with their reasons.
func (b *builder) answerFailures() {
	var bad []string
	for _, p := range b.e.points {
		st := p.Summary.Status
		if st == results.StatusDone || st == "" {
			continue
		}
		id := p.Manifest.Point
		if id == "" {
			id = p.Dir
		}
		s := id + " " + st // failed
		if st == results.StatusAborted {
			s = id + " was aborted"
		}
		if p.Summary.Reason != "" {
			s += " (" + p.Summary.Reason + ")"
		}
		bad = append(bad, s)
	}
	n := len(b.e.points)
	switch {
	case len(bad) == 0 && n == 1:
		b.answer(new(sentence).t("The point finished: it neither failed nor was aborted."))
	case len(bad) == 0 && n == 2:
		b.answer(new(sentence).t("Both points finished: neither failed nor was aborted."))
	case len(bad) == 0:
		b.answer(new(sentence).t("All %d points finished: none failed or was aborted.", n))
	default:
		failed, more := len(bad), ""
		if len(bad) > 3 {
			more = fmt.Sprintf(", and %d more", len(bad)-3)
			bad = bad[:3]
		}
		if failed == 1 {
			b.answer(new(sentence).t("What failed: point %s; it is left out of the figures.", bad[0]))
			break
		}
		b.answer(new(sentence).t("What failed: %d of %d points, left out of the figures: %s%s.",
			failed, n, strings.Join(bad, "; "), more))
	}
}

// joinAnd joins "a", "b" and "c" as "a, b and c".
func joinAnd(ss []string) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return ss[0]
	}
	return strings.Join(ss[:len(ss)-1], ", ") + " and " + ss[len(ss)-1]
}

// plural is "1 workload", "3 workloads".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// capacityAnswer writes the first screen of capacity searches: what was
// searched, the highest rate meeting every SLO per search (repeat,
// configuration or version), and what failed first; a table of them
// when table is set. rep is the repeats of one search, or nil.
func (b *builder) capacityAnswer(runs []*capacityRun, rep *results.CapacityRepeats, table bool) {
	if len(runs) == 0 {
		return
	}
	var scen, labels []string
	for _, r := range runs {
		if !slices.Contains(scen, r.res.Scenario) {
			scen = append(scen, r.res.Scenario)
		}
		labels = append(labels, r.label)
	}
	s := new(sentence).t("Searched: the highest rate of %s that meets every SLO", joinAnd(scen))
	if len(runs) > 1 || rep != nil {
		s.t(" (%s)", strings.TrimPrefix(capacitySLOText(runs), "SLOs ")) // one search's sentence says them
	}
	switch {
	case rep != nil:
		s.t(", %d repeats of one search", len(runs))
	case len(runs) > 1:
		s.t(", %d searches (%s)", len(runs), strings.Join(labels, ", "))
	default:
		s.t(", %s", capacityVersionOf(runs[0].res))
	}
	b.answer(s.t("."))

	switch {
	case rep != nil:
		// the repeats' spread, as kcbench capacity --repeats says it
		var buf strings.Builder
		if err := rep.WriteText(&buf); err == nil {
			line, _, _ := strings.Cut(strings.TrimSpace(buf.String()), "\n")
			b.answer(new(sentence).t("%s%s.", strings.ToUpper(line[:1]), line[1:]))
		}
	case len(runs) == 1:
		b.answer(capacitySentence(runs[0]))
	default:
		b.answer(capacityWinner(runs))
		b.answer(new(sentence).t("One search each: the spread of repeats is unknown, so a difference of a few percent may be noise."))
	}
	if len(runs) > 1 {
		var fs []string
		for _, r := range runs {
			if st := firstFailed(r.res); st != nil {
				fs = append(fs, fmt.Sprintf("%s at %s/s on %s", r.label, fmtG(st.Rate), strings.TrimPrefix(st.Verdict(), "fail: ")))
			}
		}
		switch {
		case len(fs) == 0:
			b.answer(new(sentence).t("No judged step failed: every search stopped at its maximum rate."))
		case len(fs) <= 3:
			b.answer(new(sentence).t("What failed first: %s.", strings.Join(fs, "; ")))
		default:
			b.answer(new(sentence).t("What failed first, search by search: the table's last columns."))
		}
	}
	if !table || len(runs) == 1 {
		return // one search: its sentence says it all
	}
	t := &AnswerTable{Columns: []Column{{Title: "search"}, {Title: "rate at SLO /s"}, {Title: "server CPU-ms/op"}, {Title: "first failed at /s"}, {Title: "failed first on", Text: true}}}
	for _, r := range runs {
		res := r.res
		row := []Cell{{Text: r.label}}
		switch {
		case !res.Found:
			row = append(row, Cell{Text: "none"})
		case res.Capped:
			row = append(row, Cell{Text: "≥ " + fmtG(res.MaxRate), Fig: FigKey(r.label, res.Scenario, "max_rate"), Value: res.MaxRate})
		default:
			row = append(row, Cell{Text: fmtG(res.MaxRate), Fig: FigKey(r.label, res.Scenario, "max_rate"), Value: res.MaxRate})
		}
		if res.Found && res.CPUMsPerOp > 0 {
			row = append(row, Cell{Text: fmtFixed(2)(res.CPUMsPerOp), Fig: FigKey(r.label, res.Scenario, "cpu"), Value: res.CPUMsPerOp})
		} else {
			row = append(row, Cell{Text: "-"})
		}
		if st := firstFailed(res); st != nil {
			row = append(row, Cell{Text: fmtG(st.Rate), Fig: FigKey(r.label, res.Scenario, "first_failed_rate"), Value: st.Rate},
				Cell{Text: strings.TrimPrefix(st.Verdict(), "fail: "), Class: "text"})
		} else {
			row = append(row, Cell{Text: "-"}, Cell{Text: "nothing failed", Class: "text"})
		}
		t.Rows = append(t.Rows, row)
	}
	t.Caption = "Rate at SLO: the highest asked rate at which every SLO held, with the server's CPU per operation at that rate. First failed: the lowest judged step that failed, and why."
	b.m.Answer.Table = t
}

// capacityWinner says which search held every SLO up to the highest rate,
// and by how much more than the lowest.
func capacityWinner(runs []*capacityRun) *sentence {
	var found []*capacityRun
	var none []string
	for _, r := range runs {
		if r.res.Found {
			found = append(found, r)
		} else {
			none = append(none, r.label)
		}
	}
	s := new(sentence)
	if len(found) == 0 {
		return s.t("No search found a rate that met every SLO.")
	}
	slices.SortStableFunc(found, func(a, c *capacityRun) int { return cmpFloat(c.res.MaxRate, a.res.MaxRate) })
	hi, lo := found[0], found[len(found)-1]
	rate := func(r *capacityRun) {
		if r.res.Capped {
			s.t("at least ")
		}
		s.fig(FigKey(r.label, r.res.Scenario, "max_rate"), r.res.MaxRate, fmtG, "/s")
	}
	s.t("%s held every SLO up to the highest rate, ", hi.label)
	rate(hi)
	if len(found) > 1 && lo.res.MaxRate > 0 {
		s.t(", %.0f%% more than ", 100*(hi.res.MaxRate-lo.res.MaxRate)/lo.res.MaxRate)
		if len(found) > 2 {
			s.t("the lowest, ")
		}
		s.t("%s (", lo.label)
		rate(lo)
		s.t(")")
	}
	if len(none) > 0 {
		s.t("; no rate met them in %s", strings.Join(none, ", "))
	}
	return s.t(".")
}
