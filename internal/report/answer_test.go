package report

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

func answerText(m *Model) string {
	var ss []string
	for _, s := range m.Answer.Sentences {
		ss = append(ss, s.Text)
	}
	return strings.Join(ss, "\n")
}

// The quickstart's first screen: what was compared, who did better and
// by how much, whether that is beyond the noise, what failed; one table
// of the warm workloads whose figures are summary.json's; the verdict in
// full below it.
func TestAnswerQuickstart(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	writeQuickstartFixture(t, dir, 5)
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	text := answerText(m)
	for _, want := range []string{
		"orgs and realms compared at N=5 on 5 workloads (login, token, refresh, jwks, admin), warm phase, one run each; cold against warm in the full verdict below.",
		"orgs did better than realms in 4 of 5 workloads (login, token, refresh, admin), by up to +15% throughput, −13% p95 and −13% CPU/op; no difference in jwks.",
		"Each configuration ran once, so the spread of repeats is unknown",
		"Both points finished",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, text)
		}
	}
	if n := len(m.Answer.Sentences); n > 5 {
		t.Errorf("the answer has %d sentences, want a few", n)
	}
	tb := m.Answer.Table
	if tb == nil {
		t.Fatal("no table on the first screen")
	}
	if got, want := tb.Header(), []string{"warm workload", "throughput /s orgs", "throughput /s realms", "p95 ms orgs", "p95 ms realms",
		"server CPU-ms/op orgs", "server CPU-ms/op realms", "better"}; !slices.Equal(got, want) {
		t.Errorf("columns %q, want %q", got, want)
	}
	var wls []string
	for _, r := range tb.Rows {
		wls = append(wls, r[0].Text)
	}
	if !slices.Equal(wls, []string{"login", "token", "refresh", "jwks", "admin"}) {
		t.Errorf("rows %q, want the five warm workloads", wls)
	}
	if got := tb.Rows[0][len(tb.Rows[0])-1].Text; got != "orgs: +15% throughput, −13% p95, −13% CPU/op" {
		t.Errorf("login's winner %q", got)
	}
	if got := tb.Rows[3][len(tb.Rows[3])-1]; got.Text != "no difference" || got.Class != "noise text" {
		t.Errorf("jwks's winner %+v, want no difference", got)
	}
	// every figure of the table is summary.json's, keyed as the verdict's
	pts, err := results.ReadExperiment(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs := 0
	for _, r := range tb.Rows {
		for _, c := range r {
			if c.Fig == "" {
				continue
			}
			figs++
			want, ok := expectedFigure(t, pts, c.Fig)
			if !ok || math.Abs(c.Value-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("table figure %s = %g, summary.json says %g (%v)", c.Fig, c.Value, want, ok)
			}
		}
	}
	if figs != 5*6 {
		t.Errorf("%d figures in the table, want 30", figs)
	}
	// the verdict in full stays below, less what the answer says
	d := m.VerdictDetail()
	if len(d) != len(m.Verdict)-1 || !strings.HasPrefix(d[len(d)-1].Text, "Cold (right after a restart) against warm in realms N=5") {
		t.Errorf("the verdict in full: %d of %d sentences", len(d), len(m.Verdict))
	}

	// report.md: the sentences, then the table, then the verdict in full
	var md bytes.Buffer
	if err := m.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	i1 := strings.Index(s, "orgs and realms compared at N=5")
	i2 := strings.Index(s, "| warm workload | throughput /s orgs |")
	i3 := strings.Index(s, "| login | 118.8 | 103.4 | 35.4 | 40.6 | 4.04 | 4.64 | orgs: +15% throughput, −13% p95, −13% CPU/op |")
	i4 := strings.Index(s, "### The verdict in full")
	i5 := strings.Index(s, "- warm login: throughput orgs 118.8/s, realms 103.4/s")
	if i1 < 0 || i2 < i1 || i3 < i2 || i4 < i3 || i5 < i4 {
		t.Errorf("report.md does not open with the answer and its table (%d %d %d %d %d):\n%s", i1, i2, i3, i4, i5, s)
	}
}

// With repeats, a difference within their spread is marked within noise,
// per metric and per workload.
func TestAnswerNoise(t *testing.T) {
	t.Parallel()
	m := build(t, "hashing")
	text := answerText(m)
	for _, want := range []string{
		"default and pbkdf2-1 compared on 2 workloads (login, grants), 2 runs each.",
		"pbkdf2-1 did better than default in 1 of 2 workloads (login), by up to −95% p95 and −92% CPU/op; within noise in grants.",
		"2 of 6 differences lie beyond it, 4 within it (marked within noise).",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, text)
		}
	}
	rows := m.Answer.Table.Rows
	last := func(r []Cell) Cell { return r[len(r)-1] }
	if got := last(rows[0]).Text; got != "pbkdf2-1: −95% p95, −92% CPU/op; throughput within noise" {
		t.Errorf("login: %q", got)
	}
	if got := last(rows[1]); got.Text != "within noise" || !strings.Contains(got.Class, "noise") {
		t.Errorf("grants: %+v", got)
	}
	// the better figure is marked only beyond the spread
	var best []string
	for _, r := range rows {
		for _, c := range r {
			if c.Class == "best" {
				best = append(best, c.Fig)
			}
		}
	}
	if !slices.Equal(best, []string{"pbkdf2-1|login|p95", "pbkdf2-1|login|cpu"}) {
		t.Errorf("best figures %q", best)
	}
}

// A sweep compares its lines at the largest N they all finished and says
// what failed.
func TestAnswerSweepFailed(t *testing.T) {
	t.Parallel()
	text := answerText(build(t, "sweep"))
	for _, want := range []string{
		"orgs and realms compared at N=100 on 3 workloads",
		"cold against warm and growth with N in the full verdict below.",
		"orgs did better than realms in all 3 workloads (admin-api, token, jwks), by up to 14× throughput and −93% p95.",
		"What failed: point realms-n250 was aborted (watchdog: Keycloak RSS 4.2 GiB above the 4 GiB limit); it is left out of the figures.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, text)
		}
	}
}

func TestGain(t *testing.T) {
	thr, p95 := verdictMetrics[0], verdictMetrics[1]
	for _, tc := range []struct {
		c    call
		vm   verdictMetric
		want string
	}{
		{call{pct: 14.9, hasPct: true}, thr, "+15% throughput"},
		{call{pct: 1340, hasPct: true}, thr, "14× throughput"},
		{call{pct: 150, hasPct: true}, thr, "2.5× throughput"},
		{call{pct: -12.8, hasPct: true}, p95, "−13% p95"},
		{call{pct: 0.42, hasPct: true}, thr, "+0.4% throughput"},
		{call{}, thr, "better throughput"},
	} {
		if got := gain(tc.c, tc.vm); got != tc.want {
			t.Errorf("gain(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// A capacity matrix opens with the rate at SLO per version, by how much
// the best beat the rest, and what failed first; one search says it in a
// sentence.
func TestAnswerCapacity(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	writeCapacityResult(t, filepath.Join(dir, "26.4.7"), "26.4.7", 70)
	writeCapacityResult(t, filepath.Join(dir, "26.7.3"), "26.7.3", 97)
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	text := answerText(m)
	for _, want := range []string{
		"Searched: the highest rate of client-credentials that meets every SLO (p99<500ms,errors<0.1%), 2 searches (Keycloak 26.4.7, Keycloak 26.7.3).",
		"Keycloak 26.7.3 held every SLO up to the highest rate, 100/s, 35% more than Keycloak 26.4.7 (74/s).",
		"One search each: the spread of repeats is unknown",
		"What failed first: Keycloak 26.4.7 at 76/s on SLO p99<500ms (actual 600ms); Keycloak 26.7.3 at 102/s on SLO p99<500ms (actual 500ms).",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, text)
		}
	}
	tb := m.Answer.Table
	if tb == nil || len(tb.Rows) != 2 {
		t.Fatalf("table %+v, want a row per version", tb)
	}
	if r := tb.Rows[1]; r[0].Text != "Keycloak 26.7.3" || r[1].Fig != "Keycloak 26.7.3|client-credentials|max_rate" || r[1].Value != 100 || r[3].Value != 102 {
		t.Errorf("row %+v", r)
	}

	one := t.TempDir()
	writeCapacityResult(t, one, "26.7.3", 97)
	m, err = Build(context.Background(), one)
	if err != nil {
		t.Fatal(err)
	}
	text = answerText(m)
	if want := "client-credentials: 100/s met every SLO (p99<500ms,errors<0.1%) at 3.00 server CPU-ms/op; at 102/s it failed first on: SLO p99<500ms (actual 500ms)."; !strings.Contains(text, want) || m.Answer.Table != nil || len(m.VerdictDetail()) != 0 {
		t.Errorf("one search: answer %q, table %v, detail %v", text, m.Answer.Table, m.VerdictDetail())
	}
}

// A comparison opens with its counts and a table of the largest moves,
// whose figures are the comparison's.
func TestAnswerCompare(t *testing.T) {
	t.Parallel()
	cmp, err := Compare(context.Background(), filepath.Join(fixturesDir, "hashing"), filepath.Join(fixturesDir, "hashing-rerun"))
	if err != nil {
		t.Fatal(err)
	}
	m := cmp.Model(context.Background())
	if text := answerText(m); !strings.Contains(text, "28 figures compared; 1 better and 1 worse beyond the spread of the repeats, 26 within it (noise), 0 unchanged.") {
		t.Errorf("answer %q", text)
	}
	tb := m.Answer.Table
	if tb == nil || len(tb.Rows) != 2 {
		t.Fatalf("table %+v, want the two moves", tb)
	}
	if got := tb.PlainRows()[0]; !slices.Equal(got, []string{"default", "login", "CPU-ms/op", "40.00", "60.00", "+50%", "worse"}) {
		t.Errorf("first move %q", got)
	}
	if c := tb.Rows[0][4]; c.Fig != "default|login|CPU-ms/op|B" || c.Value != 60 {
		t.Errorf("B cell %+v", c)
	}
}

// A workload where each configuration did better on some figure has no
// winner; the column says who did better on what.
func TestAnswerMixed(t *testing.T) {
	one := func(v float64) Stat { return Stat{Mean: v, Min: v, Max: v, N: 1} }
	two := func(lo, hi float64) Stat { return Stat{Mean: (lo + hi) / 2, Min: lo, Max: hi, N: 2} }
	names := []string{"a", "b", "c"}
	keys := []wlKey{{"login", "warm"}, {"token", "warm"}, {"jwks", "warm"}}
	rcs := []rowCall{
		// a is faster, b cheaper: a tie
		judgeRow([]*wlAgg{{throughput: one(110), p95: one(10), cpuMs: one(5)}, {throughput: one(100), p95: one(10), cpuMs: one(4)}, nil}, verdictMetrics),
		// c best on throughput and p95, beyond the spread of the next best (b)
		judgeRow([]*wlAgg{{throughput: two(90, 92), p95: two(20, 21)}, {throughput: two(99, 101), p95: two(15, 16)}, {throughput: two(120, 122), p95: two(10, 11)}}, verdictMetrics),
		// within the spread
		judgeRow([]*wlAgg{{throughput: two(90, 110)}, {throughput: two(95, 105)}, nil}, verdictMetrics),
	}
	for i, want := range []struct {
		winner int
		text   string
	}{
		{-1, "a: +10% throughput; b: −20% CPU/op"},
		{2, "c: +21% throughput, −32% p95"},
		{-1, "within noise"},
	} {
		text, _ := rcs[i].text(names)
		if rcs[i].winner != want.winner || text != want.text {
			t.Errorf("%s: winner %d %q, want %d %q", keys[i].name, rcs[i].winner, text, want.winner, want.text)
		}
	}
	got := winnersSentence(names, keys, rcs).done().Text
	if want := "c did better in 1 of 3 workloads (token), by up to +21% throughput and −32% p95; each did better on some figure in login; within noise in jwks."; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// An experiment's points that ran capacity searches: a sentence beside the
// workloads' table, or the table when they ran nothing else.
func TestAnswerPointCapacity(t *testing.T) {
	skipBuildUnderRace(t)
	t.Parallel()
	addSearch := func(t *testing.T, pdir string, limit float64) {
		writeCapacityResult(t, filepath.Join(pdir, "capacity-cc"), "26.4.7", limit)
		path := filepath.Join(pdir, results.SummaryFile)
		var sum results.Summary
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		sum.Capacity = []results.Capacity{{Name: "cc", Scenario: "client-credentials", Dir: "capacity-cc", Found: true}}
		writeJSONFile(t, path, sum)
	}
	dir := t.TempDir()
	writeQuickstartFixture(t, dir, 5)
	addSearch(t, filepath.Join(dir, "orgs-n005"), 70)
	addSearch(t, filepath.Join(dir, "realms-n005"), 97)
	m, err := Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	text := answerText(m)
	if want := "Capacity at SLO (p99<500ms,errors<0.1%): orgs-n005 · cc 74/s, first failed at 76/s on SLO p99<500ms (actual 600ms); realms-n005 · cc 100/s, first failed at 102/s on SLO p99<500ms (actual 500ms)."; !strings.Contains(text, want) {
		t.Errorf("the answer lacks %q:\n%s", want, text)
	}
	if !strings.HasPrefix(m.Answer.Sentences[len(m.Answer.Sentences)-1].Text, "Both points finished") || len(m.Answer.Table.Rows) != 5 {
		t.Errorf("the searches' sentence is not before what failed, or the workloads' table is gone:\n%s", text)
	}

	// searches only
	only := t.TempDir()
	for _, p := range quickstartPoints(5) {
		p.wls, p.noTL, p.observe = nil, true, false
		writePoint(t, only, "capacity", p)
	}
	addSearch(t, filepath.Join(only, "orgs-n005"), 70)
	addSearch(t, filepath.Join(only, "realms-n005"), 97)
	m, err = Build(context.Background(), only)
	if err != nil {
		t.Fatal(err)
	}
	text = answerText(m)
	if want := "realms-n005 · cc held every SLO up to the highest rate, 100/s, 35% more than orgs-n005 · cc (74/s)."; !strings.Contains(text, want) || m.Answer.Table == nil || len(m.Answer.Table.Rows) != 2 {
		t.Errorf("searches only: want %q and a table of them:\n%s", want, text)
	}
}
