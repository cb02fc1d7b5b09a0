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

	"github.com/kcbench/kcbench/internal/observe"
)

// Keycloak's metric families the live mode reads from /metrics.
const (
	// MetricUserEvents counts user events by realm, event and error (and
	// client_id, idp when tagged). Exposed with --metrics-enabled=true and
	// the build option --event-metrics-user-enabled=true.
	MetricUserEvents = "keycloak_user_events_total"
	// MetricHashValidations counts password hash validations by realm,
	// algorithm, hashing_strength and outcome. Exposed with
	// --metrics-enabled=true.
	MetricHashValidations = "keycloak_credentials_password_hashing_validations_total"
)

// User events the sizing reads (label event of MetricUserEvents): a login
// (password grant or browser login), a client-credentials grant, a refresh
// and a logout.
const (
	EventLogin        = "login"
	EventClientLogin  = "client_login"
	EventRefreshToken = "refresh_token"
	EventLogout       = "logout"
)

// Keycloak options that turn on the metrics the live mode reads.
const (
	OptMetricsEnabled       = "--metrics-enabled=true"
	OptEventMetricsEnabled  = "--event-metrics-user-enabled=true"
	OptEventMetricsEvents   = "--event-metrics-user-events"
	OptEventMetricsTags     = "--event-metrics-user-tags"
	OptHashingCounterTags   = "--spi-credential--keycloak-password--validations-counter-tags"
	OptEventMetricsFeature  = "--features=user-event-metrics"
	eventMetricsEnableHint  = "start Keycloak with " + OptMetricsEnabled + " and the build option " + OptEventMetricsEnabled + " (releases where they are a preview, such as 26.1, also need " + OptEventMetricsFeature + ")"
	eventMetricsEventsHint  = OptEventMetricsEvents + " (default: all events) must list login, client_login, refresh_token and logout"
	hashingMetricEnableHint = "exposed by Keycloak 26.1 and later with " + OptMetricsEnabled + "; its labels are set by " + OptHashingCounterTags +
		" (default realm,algorithm,hashing_strength,outcome; older releases spell it --spi-credential-keycloak-password-validations-counter-tags)"
)

// Snapshot is one scrape of a Keycloak's /metrics, reduced to the counter
// families the live mode reads: family name → series. A family absent
// from the scrape has no key.
type Snapshot map[string][]observe.Counter

// SnapshotOf keeps the families of a /metrics read (observe.ScrapeText)
// that the live mode reads: MetricUserEvents and MetricHashValidations.
func SnapshotOf(f observe.Families) Snapshot {
	s := Snapshot{}
	for _, name := range []string{MetricUserEvents, MetricHashValidations} {
		if cs, ok := f.Counters(name); ok {
			s[name] = cs
		}
	}
	return s
}

// InstanceLabel is the label Merge adds to tell the pods' series apart.
const InstanceLabel = "instance"

// Merge adds o's series to s, each labelled instance=instance, so that one
// Snapshot holds the series of several Keycloak pods and their rates add
// up.
func (s Snapshot) Merge(instance string, o Snapshot) {
	for fam, cs := range o {
		if _, ok := s[fam]; !ok {
			s[fam] = []observe.Counter{}
		}
		for _, c := range cs {
			l := make(map[string]string, len(c.Labels)+1)
			for k, v := range c.Labels {
				l[k] = v
			}
			l[InstanceLabel] = instance
			s[fam] = append(s[fam], observe.Counter{Labels: l, Value: c.Value})
		}
	}
}

// EventRate is one user event's rate between two snapshots.
type EventRate struct {
	Event string `json:"event"`
	// Count and PerSec are the successful events (label error="").
	Count  float64 `json:"count"`
	PerSec float64 `json:"per_sec"`
	// ErrorCount and ErrorsPerSec are the failed ones (error≠""), which the
	// sizing does not count.
	ErrorCount   float64 `json:"error_count,omitempty"`
	ErrorsPerSec float64 `json:"errors_per_sec,omitempty"`
	// Series is false when no series of this event exists in the later
	// snapshot: none happened since Keycloak started, or the event is not
	// recorded.
	Series bool `json:"series"`
}

// HashingRate is the rate of password hash validations of one algorithm
// and hashing strength.
type HashingRate struct {
	Algorithm string  `json:"algorithm"`
	Strength  string  `json:"hashing_strength"`
	Count     float64 `json:"count"`
	PerSec    float64 `json:"per_sec"`
	// Outcomes splits Count by the outcome label (valid, invalid, error).
	Outcomes map[string]float64 `json:"outcomes,omitempty"`
}

// Missing is a metric (or part of one) the live mode could not read, and
// what turns it on.
type Missing struct {
	Metric string `json:"metric"`
	What   string `json:"what"`
	Enable string `json:"enable"`
}

// Live is the load observed on a running Keycloak between two snapshots of
// its /metrics, and that load times a peak factor, ready to size.
type Live struct {
	Source          string        `json:"source,omitempty"` // e.g. the /metrics URLs
	Interval        time.Duration `json:"-"`
	IntervalSeconds float64       `json:"interval_s"`
	Peak            float64       `json:"peak"`
	Events          []EventRate   `json:"events"`
	Hashing         []HashingRate `json:"hashing,omitempty"`
	Missing         []Missing     `json:"missing,omitempty"`
	// Observed rates per second (successful events), and the load to size:
	// Observed × Peak.
	Observed Load     `json:"observed"`
	Sized    Load     `json:"sized"`
	Notes    []string `json:"notes,omitempty"`
}

// Load is a rate per second of each sized operation.
type Load struct {
	LoginsPerSec            float64 `json:"logins_per_sec"`
	ClientCredentialsPerSec float64 `json:"client_credentials_per_sec"`
	RefreshesPerSec         float64 `json:"refreshes_per_sec"`
	LogoutsPerSec           float64 `json:"logouts_per_sec"`
}

// Apply sets in's load to the sized rates.
func (l Live) Apply(in *Input) {
	in.LoginsPerSec = l.Sized.LoginsPerSec
	in.ClientCredentialsPerSec = l.Sized.ClientCredentialsPerSec
	in.RefreshesPerSec = l.Sized.RefreshesPerSec
	in.LogoutsPerSec = l.Sized.LogoutsPerSec
}

// Errors of LiveRates.
var (
	// ErrNoEventMetrics: the later snapshot has no MetricUserEvents; the
	// error's text says which options turn it on.
	ErrNoEventMetrics = errors.New("no user event metrics")
	// ErrCounterReset: a counter went down, so Keycloak restarted between
	// the snapshots.
	ErrCounterReset = errors.New("a counter went down between the scrapes (Keycloak restarted?)")
)

// LiveRates computes the rates of logins, client-credential grants,
// refreshes and logouts (successful user events only) and of password hash
// validations between two snapshots taken elapsed apart, and the load to
// size: those rates × peak. A series absent from the earlier snapshot
// counts from 0 (Keycloak creates a counter at its first event); one that
// went down or is absent from the later snapshot means Keycloak restarted
// (ErrCounterReset). Without
// user event metrics it returns the partial Live and an error wrapping
// ErrNoEventMetrics that names the options to set.
func LiveRates(before, after Snapshot, elapsed time.Duration, peak float64) (Live, error) {
	l := Live{Interval: elapsed, IntervalSeconds: elapsed.Seconds(), Peak: peak}
	if elapsed <= 0 {
		return l, fmt.Errorf("interval must be > 0, got %s", elapsed)
	}
	if !(peak > 0) || math.IsInf(peak, 0) {
		return l, fmt.Errorf("peak factor must be a finite number > 0, got %s", num(peak))
	}
	secs := elapsed.Seconds()
	// Counters never disappear while Keycloak runs: a lost series means a restart.
	for _, fam := range []string{MetricHashValidations, MetricUserEvents} {
		now := index(after[fam])
		for _, c := range before[fam] {
			if _, ok := now[labelString(c.Labels)]; !ok {
				return l, fmt.Errorf("%s%s: %w: the series is gone", fam, labelString(c.Labels), ErrCounterReset)
			}
		}
	}
	if hs, ok := after[MetricHashValidations]; ok {
		var err error
		if l.Hashing, err = hashingRates(before[MetricHashValidations], hs, secs); err != nil {
			return l, err
		}
	} else {
		l.Missing = append(l.Missing, Missing{Metric: MetricHashValidations,
			What: "password hash validations by algorithm and strength (informative; the sizing does not need them)", Enable: hashingMetricEnableHint})
	}
	events, ok := after[MetricUserEvents]
	if !ok {
		l.Missing = append(l.Missing, Missing{Metric: MetricUserEvents,
			What: "logins, client-credential grants, refreshes and logouts", Enable: eventMetricsEnableHint})
		return l, fmt.Errorf("%w: %s is not exposed; %s, then rerun", ErrNoEventMetrics, MetricUserEvents, eventMetricsEnableHint)
	}
	byEvent, err := eventRates(before[MetricUserEvents], events, secs)
	if err != nil {
		return l, err
	}
	for _, e := range sizedEvents {
		r := byEvent[e]
		l.Events = append(l.Events, *r)
		if !r.Series {
			l.Missing = append(l.Missing, Missing{Metric: MetricUserEvents + `{event="` + e + `"}`,
				What:   "no series: no " + e + " event since Keycloak started, or the event is not recorded (its rate is taken as 0)",
				Enable: eventMetricsEventsHint})
		}
	}
	l.Observed = Load{
		LoginsPerSec:            byEvent[EventLogin].PerSec,
		ClientCredentialsPerSec: byEvent[EventClientLogin].PerSec,
		RefreshesPerSec:         byEvent[EventRefreshToken].PerSec,
		LogoutsPerSec:           byEvent[EventLogout].PerSec,
	}
	l.Sized = Load{
		LoginsPerSec:            l.Observed.LoginsPerSec * peak,
		ClientCredentialsPerSec: l.Observed.ClientCredentialsPerSec * peak,
		RefreshesPerSec:         l.Observed.RefreshesPerSec * peak,
		LogoutsPerSec:           l.Observed.LogoutsPerSec * peak,
	}
	l.Notes = l.crossChecks(byEvent[EventLogin])
	return l, nil
}

// sizedEvents are the user events the sizing counts.
var sizedEvents = []string{EventLogin, EventClientLogin, EventRefreshToken, EventLogout}

// hashingRates are the password hash validations per second between two
// scrapes of MetricHashValidations, by algorithm and strength.
func hashingRates(before, after []observe.Counter, secs float64) ([]HashingRate, error) {
	type hk struct{ alg, strength string }
	prev := index(before)
	agg := map[hk]*HashingRate{}
	for _, c := range merge(after) {
		d, err := delta(prev, c)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", MetricHashValidations, labelString(c.Labels), err)
		}
		k := hk{c.Labels["algorithm"], c.Labels["hashing_strength"]}
		h := agg[k]
		if h == nil {
			h = &HashingRate{Algorithm: k.alg, Strength: k.strength, Outcomes: map[string]float64{}}
			agg[k] = h
		}
		h.Count += d
		if o, ok := c.Labels["outcome"]; ok {
			h.Outcomes[o] += d
		}
	}
	var out []HashingRate
	for _, h := range agg {
		if h.Count == 0 {
			continue // hashed before the window only (an admin's login, say)
		}
		h.PerSec = h.Count / secs
		if len(h.Outcomes) == 0 {
			h.Outcomes = nil
		}
		out = append(out, *h)
	}
	slices.SortFunc(out, func(a, b HashingRate) int {
		return cmp.Or(cmp.Compare(a.Algorithm, b.Algorithm), cmp.Compare(a.Strength, b.Strength))
	})
	return out, nil
}

// eventRates are the sized events' rates between two scrapes of
// MetricUserEvents, successes and errors apart.
func eventRates(before, after []observe.Counter, secs float64) (map[string]*EventRate, error) {
	prev := index(before)
	byEvent := map[string]*EventRate{}
	for _, e := range sizedEvents {
		byEvent[e] = &EventRate{Event: e}
	}
	for _, c := range merge(after) {
		r := byEvent[c.Labels["event"]]
		if r == nil {
			continue
		}
		d, err := delta(prev, c)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", MetricUserEvents, labelString(c.Labels), err)
		}
		r.Series = true
		if c.Labels["error"] == "" {
			r.Count += d
		} else {
			r.ErrorCount += d
		}
	}
	for _, r := range byEvent {
		r.PerSec, r.ErrorsPerSec = r.Count/secs, r.ErrorCount/secs
	}
	return byEvent, nil
}

// crossChecks are the notes on what the rates say together: hash
// validations far from logins, a hashing other than argon2, a peak factor
// of 1, no load at all.
func (l Live) crossChecks(logins *EventRate) []string {
	var notes []string
	if len(l.Hashing) > 0 {
		hashed := 0.0
		for _, h := range l.Hashing {
			hashed += h.PerSec
		}
		tried := logins.PerSec + logins.ErrorsPerSec
		if hashed > 0 && tried > 0 && (hashed > 1.5*tried || hashed < tried/1.5) {
			notes = append(notes, fmt.Sprintf("%s hash validations/s against %s logins/s (failed ones included): "+
				"logins without a password (identity providers, SSO cookies) or validations outside logins (password changes, "+
				"admin API) make them differ.", num(hashed), num(tried)))
		}
		for _, h := range l.Hashing {
			if h.PerSec > 0 && !strings.HasPrefix(h.Algorithm, "argon2") {
				notes = append(notes, "The guide's 15 logins/s per vCPU assume Keycloak's default argon2 hashing; "+
					"with "+h.Algorithm+" a login costs a different amount of CPU: size with --from results of a kcbench run "+
					"with the same password policy (experiments/hashing.yaml).")
				break
			}
		}
	}
	if l.Peak == 1 {
		notes = append(notes, "Sized for the load of this interval (peak factor 1); to size for a peak, "+
			"give --peak, e.g. 3 when the busiest hour is three times what was observed.")
	}
	o := l.Observed
	if o.LoginsPerSec+o.ClientCredentialsPerSec+o.RefreshesPerSec+o.LogoutsPerSec == 0 {
		notes = append(notes, "No successful login, client-credential grant, refresh or logout happened during the interval; "+
			"measure while the usual load runs, or over a longer --interval.")
	}
	return notes
}

// merge sums the series with the same label set.
func merge(cs []observe.Counter) []observe.Counter {
	out := make([]observe.Counter, 0, len(cs))
	at := map[string]int{}
	for _, c := range cs {
		k := labelString(c.Labels)
		if i, ok := at[k]; ok {
			out[i].Value += c.Value
			continue
		}
		at[k] = len(out)
		out = append(out, c)
	}
	return out
}

// index keys counters by their label set, summing duplicates.
func index(cs []observe.Counter) map[string]float64 {
	m := make(map[string]float64, len(cs))
	for _, c := range cs {
		m[labelString(c.Labels)] += c.Value
	}
	return m
}

func delta(prev map[string]float64, c observe.Counter) (float64, error) {
	d := c.Value - prev[labelString(c.Labels)]
	if d < 0 || math.IsNaN(d) {
		return 0, fmt.Errorf("%w: %s → %s", ErrCounterReset, num(prev[labelString(c.Labels)]), num(c.Value))
	}
	return d, nil
}

// labelString renders labels in Prometheus form, sorted: {a="1",b="2"}.
func labelString(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, l[k])
	}
	b.WriteByte('}')
	return b.String()
}

// WriteText writes the observed rates, the hashing, what was missing and
// the load to size.
func (l Live) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	src := ""
	if l.Source != "" {
		src = " at " + l.Source
	}
	fmt.Fprintf(bw, "Observed load%s over %s (%s, successful events only)\n", src, l.Interval.Round(time.Millisecond), MetricUserEvents)
	rows := [][]string{{"event", "count", "per s", "failed per s", "sized as"}}
	sizedAs := map[string]string{
		EventLogin: "logins", EventClientLogin: "client-credential grants",
		EventRefreshToken: "refresh-token requests", EventLogout: "logouts (database only)",
	}
	for _, e := range l.Events {
		count, rate, failed := num(e.Count), num(e.PerSec), num(e.ErrorsPerSec)
		if !e.Series {
			count, rate, failed = "–", "0", "–"
		}
		rows = append(rows, []string{e.Event, count, rate, failed, sizedAs[e.Event]})
	}
	writeTable(bw, rows, []bool{false, true, true, true, false})
	if len(l.Hashing) > 0 {
		fmt.Fprintf(bw, "\nPassword hash validations (%s)\n", MetricHashValidations)
		rows = [][]string{{"algorithm", "hashing strength", "count", "per s", "outcomes"}}
		for _, h := range l.Hashing {
			rows = append(rows, []string{h.Algorithm, h.Strength, num(h.Count), num(h.PerSec), outcomes(h.Outcomes)})
		}
		writeTable(bw, rows, []bool{false, false, true, true, false})
	}
	if len(l.Missing) > 0 {
		fmt.Fprintf(bw, "\nMissing metrics\n")
		for _, m := range l.Missing {
			fmt.Fprintf(bw, "  - %s: %s\n    to turn on: %s\n", m.Metric, m.What, m.Enable)
		}
	}
	if len(l.Events) > 0 {
		o, s := l.Observed, l.Sized
		fmt.Fprintf(bw, "\nLoad to size: observed × peak factor %s\n", num(l.Peak))
		rows = [][]string{
			{"", "observed /s", "sized /s"},
			{"logins", num(o.LoginsPerSec), num(s.LoginsPerSec)},
			{"client-credential grants", num(o.ClientCredentialsPerSec), num(s.ClientCredentialsPerSec)},
			{"refresh-token requests", num(o.RefreshesPerSec), num(s.RefreshesPerSec)},
			{"logouts", num(o.LogoutsPerSec), num(s.LogoutsPerSec)},
		}
		writeTable(bw, rows, []bool{false, true, true})
	}
	for _, n := range l.Notes {
		fmt.Fprintf(bw, "  - %s\n", n)
	}
	return bw.Flush()
}

func outcomes(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		if m[k] != 0 {
			parts = append(parts, k+" "+num(m[k]))
		}
	}
	return strings.Join(parts, ", ")
}
