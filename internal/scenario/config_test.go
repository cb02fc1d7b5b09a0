package scenario

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

func TestConfigDefaultsAndExecutor(t *testing.T) {
	c := Config{Scenario: results.ScenarioJWKS}
	c.ApplyDefaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Executor != DefaultExecutor || c.VUs != DefaultVUs || c.Duration != DefaultDuration ||
		c.GracefulStop != load.DefaultGracefulStop || c.Seed != DefaultSeed || c.Timeout != load.DefaultHTTPTimeout {
		t.Fatalf("%+v", c)
	}
	c.Warmup = 5 * time.Second
	if ex, ok := c.NewExecutor().(load.ConstantVUs); !ok || ex.Duration != 35*time.Second || ex.VUs != DefaultVUs {
		t.Fatalf("%#v", c.NewExecutor())
	}
	if c.Total() != 35*time.Second || c.Describe() != "jwks, constant-vus 10 VUs for 30s after 5s warm-up" {
		t.Fatalf("%v %q", c.Total(), c.Describe())
	}
	r := Config{Scenario: results.ScenarioMix, Executor: load.NameRampingArrivalRate, Stages: Stages{{10 * time.Second, 5}, {20 * time.Second, 5}}, MaxVUs: 4}
	r.ApplyDefaults()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	ex := r.NewExecutor().(load.RampingArrivalRate)
	if len(ex.Stages) != 2 || ex.PreAllocatedVUs != 4 || ex.MaxVUs != 4 || r.Total() != 30*time.Second {
		t.Fatalf("%+v %v", ex, r.Total())
	}
	if !strings.HasPrefix(r.Describe(), "mix (client-credentials=8,login-form=1,refresh=8), ramping-arrival-rate stages 10s:5,20s:5") {
		t.Fatalf("%q", r.Describe())
	}
	s := r.Scaled(0.1)
	if s.Stages[0].Duration != time.Second || r.Stages[0].Duration != 10*time.Second {
		t.Fatalf("scaled %v, original %v", s.Stages, r.Stages)
	}
	if r.Scaled(0).Stages[1].Duration != 20*time.Second {
		t.Fatal("scale 0 changed the config")
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		c    Config
		want []string
	}{
		{"everything wrong", Config{Scenario: "nope", Executor: "fast", Warmup: -1, Thresholds: []string{"p95"}, TenantSkew: 11},
			[]string{`scenario: "nope"`, `executor: "fast"`, "warmup: -1ns", "thresholds:", "tenant_skew:"}},
		{"ramping without stages", Config{Scenario: results.ScenarioJWKS, Executor: load.NameRampingVUs}, []string{"stages: ramping-vus needs"}},
		{"bad mix", Config{Scenario: results.ScenarioMix, Mix: map[string]int{"nope": 1, results.ScenarioJWKS: -1}}, []string{`unknown scenario "nope"`, "weight of jwks = -1"}},
		{"mix of zero", Config{Scenario: results.ScenarioMix, Mix: map[string]int{results.ScenarioJWKS: 0}}, []string{"add up to zero"}},
		{"per-vu without iterations", Config{Scenario: results.ScenarioJWKS, Executor: load.NamePerVUIterations}, []string{"iterations: 0"}},
		{"user without realm", Config{Scenario: results.ScenarioJWKS, Username: "u"}, []string{"need realm"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.c.ApplyDefaults()
			err := c.c.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestStagesYAML(t *testing.T) {
	var c struct {
		A Stages `yaml:"a"`
		B Stages `yaml:"b"`
	}
	if err := yaml.Unmarshal([]byte("a: 10s:5,20s:7.5\nb: [\"1s:1\", {duration: 2s, target: 3}]\n"), &c); err != nil {
		t.Fatal(err)
	}
	if c.A.String() != "10s:5,20s:7.5" || c.B.String() != "1s:1,2s:3" {
		t.Fatalf("%v %v", c.A.String(), c.B.String())
	}
	for _, bad := range []string{"a: 10s", "a: [{duration: 1s, vus: 2}]", "a: [[1]]", "a: {x: 1}", "a: x:1"} {
		if err := yaml.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	var s Stages
	if err := s.Set("1m:10, 30s:0"); err != nil || s.String() != "1m0s:10,30s:0" {
		t.Fatalf("%v %v", s.String(), err)
	}
}

func TestRunNeedsUsers(t *testing.T) {
	_, err := Run(t.Context(), RunInput{Config: Config{Scenario: results.ScenarioJWKS}})
	if !errors.Is(err, ErrNoUsers) {
		t.Fatalf("%v", err)
	}
	if _, err := Run(t.Context(), RunInput{Config: Config{Scenario: "nope"}}); err == nil {
		t.Fatal("unknown scenario: no error")
	}
}
