package scenario

import (
	"bytes"
	"maps"
	"testing"

	"gopkg.in/yaml.v3"
)

// FuzzParseMix: accepted weights are each within 0..MaxMixWeight (so their
// sum cannot overflow) and write back to the same weights.
func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"jwks=1,discovery=2", " jwks = 3 ", "jwks=9223372036854775807,discovery=1", "jwks=3x", "jwks=-1", "=1", "jwks", "a=1,a=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMix(s)
		if err != nil {
			return
		}
		for k, w := range m {
			if w < 0 || w > MaxMixWeight || k == "" {
				t.Fatalf("%q: %s=%d accepted", s, k, w)
			}
		}
		again, err := ParseMix(MixString(m))
		if err != nil || !maps.Equal(again, m) {
			t.Fatalf("%q → %q → %v, %v", s, MixString(m), again, err)
		}
		checkMix(m) // must not panic
	})
}

// FuzzStages: accepted stage lists have finite targets and write back to
// the same stages.
func FuzzStages(f *testing.F) {
	for _, s := range []string{"10s:50,30s:50", "1m:0.5", "1h2m3s:1e3", "10s:NaN", "10s", ":5", "-1s:-5", "10s:1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var st Stages
		if err := st.Set(s); err != nil {
			return
		}
		var again Stages
		if err := again.Set(st.String()); err != nil {
			t.Fatalf("%q → %q: %v", s, st.String(), err)
		}
		if len(again) != len(st) {
			t.Fatalf("%q → %q: %v != %v", s, st.String(), again, st)
		}
		for i := range st {
			if again[i] != st[i] {
				t.Fatalf("%q → %q: %v != %v", s, st.String(), again, st)
			}
		}
	})
}

// FuzzConfigYAML: a run file (kcbench load --file, an experiment's
// workload) that decodes and validates builds an executor that validates
// too, within the bounds of VUs and duration.
func FuzzConfigYAML(f *testing.F) {
	for _, s := range []string{
		"scenario: jwks\nvus: 5\nduration: 10s\n",
		"scenario: mix\nmix: {jwks: 1, discovery: 2}\n",
		"scenario: jwks\nexecutor: ramping-arrival-rate\nstages: 10s:5,20s:10\n",
		"scenario: jwks\nexecutor: ramping-vus\nstages:\n  - {duration: 10s, target: 5}\n  - 5s:0\n",
		"scenario: jwks\nexecutor: constant-arrival-rate\nrate: 1e308\n",
		"scenario: password-grant\nthresholds: [p95<5ms, 'errors<1%']\nrealm: r\n",
		"vus: 100000000\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Config
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if dec.Decode(&c) != nil {
			return
		}
		c.ApplyDefaults()
		if c.Validate() != nil {
			return
		}
		if err := c.NewExecutor().Validate(); err != nil {
			t.Fatalf("%q: valid config, invalid executor: %v", b, err)
		}
		if n := c.MaxVUsAtOnce(); n < 1 || n > MaxVUs {
			t.Fatalf("%q: %d VUs at once", b, n)
		}
		if d := c.Total(); d <= 0 || d > MaxDuration {
			t.Fatalf("%q: total %v", b, d)
		}
		c.Describe()
	})
}
