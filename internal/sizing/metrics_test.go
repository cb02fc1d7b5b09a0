package sizing

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/observe"
)

// ev is a keycloak_user_events_total series.
func ev(event, errLabel, realm string, v float64) observe.Counter {
	return observe.Counter{Labels: map[string]string{"event": event, "error": errLabel, "realm": realm}, Value: v}
}

// hv is a keycloak_credentials_password_hashing_validations_total series.
func hv(alg, strength, outcome string, v float64) observe.Counter {
	return observe.Counter{Labels: map[string]string{"algorithm": alg, "hashing_strength": strength, "outcome": outcome, "realm": "r"}, Value: v}
}

func TestLiveRates(t *testing.T) {
	t.Parallel()
	before := Snapshot{
		MetricUserEvents: {
			ev("login", "", "a", 100), ev("login", "invalid_user_credentials", "a", 10),
			ev("client_login", "", "a", 1000), ev("refresh_token", "", "a", 500), ev("code_to_token", "", "a", 50),
		},
		MetricHashValidations: {hv("argon2", "Argon2id-19-7168-5-1", "valid", 100), hv("pbkdf2-sha256", "1", "valid", 4)},
	}
	after := Snapshot{
		MetricUserEvents: {
			ev("login", "", "a", 130), ev("login", "", "b", 30), // b: a new realm, counted from 0
			ev("login", "invalid_user_credentials", "a", 16),
			ev("client_login", "", "a", 2200), ev("refresh_token", "", "a", 1100), ev("code_to_token", "", "a", 90),
			ev("logout", "", "b", 6),
		},
		MetricHashValidations: {hv("argon2", "Argon2id-19-7168-5-1", "valid", 160), hv("argon2", "Argon2id-19-7168-5-1", "invalid", 6),
			hv("pbkdf2-sha512", "210000", "valid", 3),
			hv("pbkdf2-sha256", "1", "valid", 4)}, // before the window only: not in the load
	}
	l, err := LiveRates(before, after, 30*time.Second, 2)
	if err != nil {
		t.Fatal(err)
	}
	wantObs := Load{LoginsPerSec: 2, ClientCredentialsPerSec: 40, RefreshesPerSec: 20, LogoutsPerSec: 0.2}
	if !nearLoad(l.Observed, wantObs) {
		t.Errorf("observed %+v, want %+v", l.Observed, wantObs)
	}
	wantSized := Load{LoginsPerSec: 4, ClientCredentialsPerSec: 80, RefreshesPerSec: 40, LogoutsPerSec: 0.4}
	if !nearLoad(l.Sized, wantSized) {
		t.Errorf("sized %+v, want %+v", l.Sized, wantSized)
	}
	if e := l.Events[0]; e.Event != EventLogin || e.Count != 60 || e.ErrorCount != 6 || !near(e.ErrorsPerSec, 0.2) {
		t.Errorf("login %+v", e)
	}
	if len(l.Hashing) != 2 {
		t.Fatalf("hashing %+v", l.Hashing)
	}
	if h := l.Hashing[0]; h.Algorithm != "argon2" || h.Count != 66 || h.Outcomes["valid"] != 60 || h.Outcomes["invalid"] != 6 {
		t.Errorf("argon2 %+v", h)
	}
	if h := l.Hashing[1]; h.Algorithm != "pbkdf2-sha512" || h.Strength != "210000" || !near(h.PerSec, 0.1) {
		t.Errorf("pbkdf2 %+v", h)
	}
	if len(l.Missing) != 0 {
		t.Errorf("missing %+v", l.Missing)
	}
	in := DefaultInput()
	l.Apply(&in)
	if in.LoginsPerSec != l.Sized.LoginsPerSec || in.LogoutsPerSec != l.Sized.LogoutsPerSec {
		t.Errorf("Apply: %+v", in)
	}
}

func nearLoad(a, b Load) bool {
	return near(a.LoginsPerSec, b.LoginsPerSec) && near(a.ClientCredentialsPerSec, b.ClientCredentialsPerSec) &&
		near(a.RefreshesPerSec, b.RefreshesPerSec) && near(a.LogoutsPerSec, b.LogoutsPerSec)
}

func TestLiveRatesProblems(t *testing.T) {
	t.Parallel()
	ok := Snapshot{MetricUserEvents: {ev("login", "", "a", 5)}}
	cases := []struct {
		name          string
		before, after Snapshot
		elapsed       time.Duration
		peak          float64
		is            error
		want          string
	}{
		{"zero interval", ok, ok, 0, 1, nil, "interval must be > 0"},
		{"zero peak", ok, ok, time.Second, 0, nil, "peak factor must be a finite number > 0"},
		{"negative peak", ok, ok, time.Second, -1, nil, "peak factor"},
		{"no event metrics", Snapshot{}, Snapshot{MetricHashValidations: {}}, time.Second, 1, ErrNoEventMetrics, "--event-metrics-user-enabled=true"},
		{"restart", Snapshot{MetricUserEvents: {ev("login", "", "a", 50)}}, ok, time.Second, 1, ErrCounterReset, `event="login"`},
		{"series gone", Snapshot{MetricUserEvents: {ev("login", "", "a", 5), ev("logout", "", "a", 1)}}, ok, time.Second, 1, ErrCounterReset, "gone"},
		{"hashing restart", Snapshot{MetricUserEvents: {}, MetricHashValidations: {hv("argon2", "x", "valid", 9)}},
			Snapshot{MetricUserEvents: {}, MetricHashValidations: {hv("argon2", "x", "valid", 1)}}, time.Second, 1, ErrCounterReset, "algorithm"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := LiveRates(c.before, c.after, c.elapsed, c.peak)
			if err == nil {
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want %v", err, c.is)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestLiveRatesMissing(t *testing.T) {
	t.Parallel()
	// Event metrics on, but only client_login recorded; no hashing metric.
	s := Snapshot{MetricUserEvents: {ev("client_login", "", "a", 10)}}
	l, err := LiveRates(Snapshot{}, s, 10*time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range l.Missing {
		names = append(names, m.Metric)
	}
	want := []string{MetricHashValidations, MetricUserEvents + `{event="login"}`, MetricUserEvents + `{event="refresh_token"}`,
		MetricUserEvents + `{event="logout"}`}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("missing %q, want %q", names, want)
	}
	if l.Observed.ClientCredentialsPerSec != 1 || l.Observed.LoginsPerSec != 0 {
		t.Errorf("observed %+v", l.Observed)
	}
	for _, m := range l.Missing[1:] {
		if !strings.Contains(m.Enable, OptEventMetricsEvents) {
			t.Errorf("%s: enable %q", m.Metric, m.Enable)
		}
	}
}

func TestLiveGolden(t *testing.T) {
	t.Parallel()
	before := Snapshot{MetricUserEvents: {ev("login", "", "a", 100), ev("client_login", "", "a", 1000)},
		MetricHashValidations: {hv("pbkdf2-sha256", "1", "valid", 100)}}
	after := Snapshot{MetricUserEvents: {ev("login", "", "a", 190), ev("login", "invalid_user_credentials", "a", 3),
		ev("client_login", "", "a", 1900), ev("refresh_token", "", "a", 600)},
		MetricHashValidations: {hv("pbkdf2-sha256", "1", "valid", 190), hv("pbkdf2-sha256", "1", "invalid", 3)}}
	l, err := LiveRates(before, after, 30*time.Second, 3)
	if err != nil {
		t.Fatal(err)
	}
	l.Source = "http://kc-0:9000/metrics"
	var b bytes.Buffer
	if err := l.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "live.txt"), b.Bytes())
}
