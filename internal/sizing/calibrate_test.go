package sizing

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
)

func TestOpForScenario(t *testing.T) {
	t.Parallel()
	cases := map[string]Op{
		"login-form": OpLogin, "password-grant": OpLogin, "client-credentials": OpClientCredentials, "refresh": OpRefresh,
		"jwks": "", "admin-api": "", "mix": "", "logout": "", "": "",
	}
	for sc, want := range cases {
		got, ok := OpForScenario(sc)
		if got != want || ok != (want != "") {
			t.Errorf("OpForScenario(%q) = %q, %v; want %q", sc, got, ok, want)
		}
	}
}

// m is a measurement of the default variant, warm, realms, 5 tenants, repeat 1.
func m(scenario string, ms float64, edit ...func(*Measurement)) Measurement {
	x := Measurement{Point: "p", Variant: "default", Policy: "pbkdf2-sha256:1", Keycloak: "26.7.3", Mode: "realms",
		Tenants: 5, Repeat: 1, Workload: scenario, Scenario: scenario, Phase: results.PhaseWarm, CPUMsPerOp: ms, OK: 100}
	for _, e := range edit {
		e(&x)
	}
	return x
}

func phase(p string) func(*Measurement)   { return func(m *Measurement) { m.Phase = p } }
func mode(s string) func(*Measurement)    { return func(m *Measurement) { m.Mode = s } }
func tenants(n int) func(*Measurement)    { return func(m *Measurement) { m.Tenants = n } }
func variant(v string) func(*Measurement) { return func(m *Measurement) { m.Variant = v } }
func point(p string, r int) func(*Measurement) {
	return func(m *Measurement) { m.Point, m.Repeat = p, r }
}

func TestCalibrate(t *testing.T) {
	t.Parallel()
	all3 := []Measurement{m("password-grant", 20), m("client-credentials", 5), m("refresh", 6)}
	cases := []struct {
		name string
		in   []Measurement
		// want CPU-ms per op of the first calibration (0: not measured)
		login, cc, refresh float64
		check              func(t *testing.T, cs []Calibration)
	}{
		{name: "one of each", in: all3, login: 20, cc: 5, refresh: 6},
		{name: "warm preferred to cold", in: append(slices.Clone(all3), m("password-grant", 150, phase(results.PhaseCold))),
			login: 20, cc: 5, refresh: 6, check: func(t *testing.T, cs []Calibration) {
				if len(cs[0].Cold) != 1 || cs[0].Cold[0].CPUMs != 150 || len(cs[0].Others) != 0 {
					t.Errorf("cold %+v, others %+v", cs[0].Cold, cs[0].Others)
				}
			}},
		{name: "cold when no warm", in: []Measurement{m("password-grant", 150, phase(results.PhaseCold)), m("password-grant", 40, phase(""))},
			login: 40, check: func(t *testing.T, cs []Calibration) {
				if f := cs[0].Figure(OpLogin); f.Phase != "" {
					t.Errorf("phases off preferred to cold; got phase %q", f.Phase)
				}
			}},
		{name: "realms before orgs, fewest tenants", in: []Measurement{
			m("refresh", 9, mode("orgs"), tenants(1)), m("refresh", 8, tenants(100)), m("refresh", 7, tenants(10)),
		}, refresh: 7, check: func(t *testing.T, cs []Calibration) {
			if len(cs[0].Others) != 2 || cs[0].Others[0].CPUMs != 8 || cs[0].Others[1].CPUMs != 9 {
				t.Errorf("others in preference order: %+v", cs[0].Others)
			}
		}},
		{name: "browser login before password grant", in: []Measurement{m("password-grant", 20), m("login-form", 30)}, login: 30},
		{name: "mean over repeats", in: []Measurement{
			m("client-credentials", 4, point("a-r1", 1)), m("client-credentials", 6, point("a-r2", 2)), m("client-credentials", 8, point("a-r3", 3)),
		}, cc: 6, check: func(t *testing.T, cs []Calibration) {
			f := cs[0].Figure(OpClientCredentials)
			if f.Min != 4 || f.Max != 8 || !slices.Equal(f.Points, []string{"a-r1", "a-r2", "a-r3"}) || f.OK != 300 {
				t.Errorf("figure %+v", f)
			}
			if !strings.Contains(f.From(), "mean of 3 repeats (4–8 ms)") {
				t.Errorf("From() = %q", f.From())
			}
			// 2× between repeats: said, with the flag that sizes for the costliest.
			if !slices.ContainsFunc(cs[0].Notes, func(n string) bool {
				return strings.Contains(n, "The 3 repeats of the client-credential grant differ 2.0× (4–8 CPU-ms") && strings.Contains(n, "--cc-cpu-ms 8 ")
			}) {
				t.Errorf("notes: %q", cs[0].Notes)
			}
		}},
		{name: "repeats close together", in: []Measurement{m("refresh", 5, point("a-r1", 1)), m("refresh", 5.5, point("a-r2", 2))}, refresh: 5.25,
			check: func(t *testing.T, cs []Calibration) {
				if slices.ContainsFunc(cs[0].Notes, func(n string) bool { return strings.Contains(n, "repeats of the") }) {
					t.Errorf("a 10 %% spread is noted: %q", cs[0].Notes)
				}
			}},
		{name: "unmeasured CPU skipped and noted", in: []Measurement{m("refresh", 0), m("refresh", 6, point("q", 1))}, refresh: 6,
			check: func(t *testing.T, cs []Calibration) {
				if !slices.ContainsFunc(cs[0].Notes, func(n string) bool { return strings.Contains(n, "Without server CPU") }) {
					t.Errorf("notes: %q", cs[0].Notes)
				}
			}},
		{name: "missing op keeps the guide's rate", in: []Measurement{m("password-grant", 50)}, login: 50,
			check: func(t *testing.T, cs []Calibration) {
				r := cs[0].Rates()
				if r.LoginsPerVCPU != 20 || r.ClientCredentialsPerVCPU != GuideClientCredentialsPerVCPU || r.RefreshesPerVCPU != GuideRefreshesPerVCPU {
					t.Errorf("rates %+v", r)
				}
				if cs[0].Complete() || len(cs[0].Notes) != 2 {
					t.Errorf("complete %v, notes %q", cs[0].Complete(), cs[0].Notes)
				}
			}},
		{name: "variants sorted, each calibrated", in: []Measurement{
			m("password-grant", 70, variant("pbkdf2-27500")), m("password-grant", 20, variant("default")), m("jwks", 1, variant("only-jwks")),
		}, login: 20, check: func(t *testing.T, cs []Calibration) {
			if len(cs) != 2 || cs[0].Variant != "default" || cs[1].Variant != "pbkdf2-27500" || cs[1].Figure(OpLogin).CPUMs != 70 {
				t.Errorf("calibrations %+v", cs)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cs, err := Calibrate(c.in)
			if err != nil {
				t.Fatal(err)
			}
			got := cs[0]
			for op, want := range map[Op]float64{OpLogin: c.login, OpClientCredentials: c.cc, OpRefresh: c.refresh} {
				if f := got.Figure(op); !near(f.CPUMs, want) {
					t.Errorf("%s: %v ms, want %v (%+v)", op, f.CPUMs, want, f)
				}
			}
			if c.check != nil {
				c.check(t, cs)
			}
		})
	}
}

func TestCalibrateNothingUsable(t *testing.T) {
	t.Parallel()
	for name, in := range map[string][]Measurement{
		"none":           nil,
		"only jwks":      {m("jwks", 1), m("admin-api", 30)},
		"no server CPU":  {m("password-grant", 0), m("refresh", 0)},
		"no successes":   {m("refresh", 5, func(m *Measurement) { m.OK = 0 })},
		"not finite CPU": {m("refresh", 1/zero())},
	} {
		if _, err := Calibrate(in); !errors.Is(err, ErrNoMeasurements) {
			t.Errorf("%s: err = %v, want ErrNoMeasurements", name, err)
		}
	}
}

func zero() float64 { return 0 }

// A calibration sizes like RatesFromCPUms with the same figures.
func TestCalibrationRatesMatchRatesFromCPUms(t *testing.T) {
	t.Parallel()
	cs, err := Calibrate([]Measurement{m("login-form", 77), m("client-credentials", 6.8), m("refresh", 7.2)})
	if err != nil {
		t.Fatal(err)
	}
	got, want := cs[0].Rates(), RatesFromCPUms(77, 6.8, 7.2, cs[0].Source())
	if got != want {
		t.Errorf("Rates() = %+v, want %+v", got, want)
	}
	if got.Source != "measured by kcbench: variant default, Keycloak 26.7.3, password policy pbkdf2-sha256:1" {
		t.Errorf("source %q", got.Source)
	}
}

func TestCalibrationGolden(t *testing.T) {
	t.Parallel()
	in := []Measurement{
		m("login-form", 70, point("default-realms-n00001-r1", 1), tenants(1)),
		m("login-form", 74, point("default-realms-n00001-r2", 2), tenants(1)),
		m("login-form", 250, point("default-realms-n00001-r1", 1), tenants(1), phase(results.PhaseCold)),
		m("password-grant", 66, point("default-realms-n00001-r1", 1), tenants(1)),
		m("client-credentials", 5.5, point("default-realms-n00001-r1", 1), tenants(1)),
		m("client-credentials", 6.1, point("default-orgs-n00001-r1", 1), tenants(1), mode("orgs")),
	}
	cs, err := Calibrate(in)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := cs[0].WriteText(&b); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "calibration.txt"), b.Bytes())
}

func TestTopologyName(t *testing.T) {
	for _, tc := range []struct {
		p    map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{"nodes": "1", "node_cpus": "0", "lb": "none"}, ""},
		{map[string]string{"nodes": "2", "node_cpus": "1"}, "2x1cpu"},
		{map[string]string{"nodes": "3", "node_cpus": "0"}, "3x"},
		{map[string]string{"nodes": "1", "node_cpus": "0.5"}, "1x0.5cpu"},
	} {
		if got := TopologyName(tc.p); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
