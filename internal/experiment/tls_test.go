package experiment

import (
	"flag"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

const tlsBase = "name: x\nworkloads: [{scenario: jwks}]\n"

// The TLS keys of stack and variants: bad values and combinations the
// stack would refuse are errors naming the key; good ones parse.
func TestTLSKnobsValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, yaml, want string }{
		{"bad stack key", "stack: {tls_key: rsa-1024}\n", `stack.tls_key: "rsa-1024": want rsa-2048 or ecdsa-p256`},
		{"bad variant key", "variants: [{name: a, tls_key: ed25519}]\n", `variants[0].tls_key: "ed25519"`},
		{"bad lb_tls", "stack: {nodes: 2, lb_tls: offload}\n", `stack.lb_tls: "offload": want passthrough, terminate, reencrypt`},
		{"bad variant lb_tls", "stack: {nodes: 2}\nvariants: [{name: a, lb_tls: edge}]\n", `variants[0].lb_tls: "edge"`},
		{"stack lb_tls without balancer", "stack: {lb_tls: terminate}\n", "stack.lb_tls: needs a balancer"},
		{"variant lb_tls without balancer", "variants: [{name: a, lb_tls: terminate}]\n", "variants[0].lb_tls: needs a balancer"},
		{"stack lb_tls, variant of one node", "stack: {nodes: 3, lb_tls: terminate}\nvariants: [{name: three}, {name: one, nodes: 1}]\n",
			"variants[1]: stack.lb_tls needs a balancer, and this variant's 1 node has none"},
		{"stack lb_tls with tls false", "stack: {nodes: 2, tls: false, lb_tls: terminate}\n", "stack.lb_tls: needs TLS (stack.tls is false)"},
		{"stack tls_key with tls false", "stack: {tls: false, tls_key: ecdsa-p256}\n", "stack.tls_key: needs TLS"},
		{"variant lb_tls with tls false", "stack: {nodes: 2}\nvariants: [{name: a, tls: false, lb_tls: reencrypt}]\n", "variants[0].lb_tls: needs TLS"},
		{"variant key, stack plain", "stack: {tls: false}\nvariants: [{name: a, tls_key: ecdsa-p256}]\n", "variants[0].tls_key: needs TLS (tls is false here or in stack)"},
		{"sticky passthrough in stack", "stack: {nodes: 2, lb_sticky: true}\n", "stack: lb_sticky reads a cookie, which a balancer in TLS passthrough cannot see"},
		{"sticky explicit passthrough", "stack: {nodes: 2}\nvariants: [{name: a, lb_sticky: true, lb_tls: passthrough}]\n", "variants[0]: lb_sticky reads a cookie"},
		{"tls not a bool", "stack: {tls: maybe}\n", "line 3"},
		{"ok: sticky terminate", "stack: {nodes: 2, lb_sticky: true, lb_tls: terminate}\n", ""},
		{"ok: sticky plain", "stack: {nodes: 2, lb_sticky: true, tls: false}\n", ""},
		{"ok: plain variant drops the stack's", "stack: {nodes: 2, tls_key: ecdsa-p256, lb_tls: reencrypt}\nvariants: [{name: tls}, {name: plain, tls: false}]\n", ""},
		{"ok: tls variant of a plain stack", "stack: {tls: false}\nvariants: [{name: plain}, {name: tls, tls: true, tls_key: ecdsa-p256}]\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tlsBase + c.yaml))
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Parse: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Parse = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// A problem of the stack's is reported once, not once per variant.
func TestTLSStackErrorOnce(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(tlsBase + "stack: {tls_key: rsa-1024}\nvariants: [{name: a}, {name: b}, {name: c}]\n"))
	if err == nil || strings.Count(err.Error(), "stack.tls_key") != 1 {
		t.Errorf("Parse = %v, want stack.tls_key once", err)
	}
}

// Variants comparing plain and TLS, the key types and the balancer's
// modes make points of their own, each on a stack of its own, with params
// that tell them apart; they share one dataset.
func TestTLSVariantsPlan(t *testing.T) {
	t.Parallel()
	f, err := Parse([]byte(tlsBase + `stack: {nodes: 2}
variants:
  - {name: plain, tls: false}
  - {name: tls}
  - {name: ecdsa, tls_key: ecdsa-p256}
  - {name: terminate, lb_tls: terminate}
  - {name: one, nodes: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := Plan(f)
	if err != nil || len(pts) != 5 {
		t.Fatalf("plan: %d points, %v", len(pts), err)
	}
	want := map[string]map[string]string{
		"plain":     {"tls": "off", "tls_key": "", "lb_tls": ""},
		"tls":       {"tls": "on", "tls_key": "rsa-2048", "lb_tls": "passthrough"},
		"ecdsa":     {"tls": "on", "tls_key": "ecdsa-p256", "lb_tls": "passthrough"},
		"terminate": {"tls": "on", "tls_key": "rsa-2048", "lb_tls": "terminate"},
		"one":       {"tls": "on", "tls_key": "rsa-2048", "lb_tls": ""},
	}
	ids, stacks := map[string]bool{}, map[string]bool{}
	for _, p := range pts {
		got := p.Params()
		for k, v := range want[p.Variant.Name] {
			if got[k] != v {
				t.Errorf("%s: param %s = %q, want %q (params %v)", p.ID, k, got[k], v, got)
			}
		}
		ids[p.ID], stacks[p.stackKey()] = true, true
		if p.Variant.Name != "one" && p.datasetKey() != pts[0].datasetKey() {
			t.Errorf("%s: dataset %s, want the plain variant's %s (TLS is not in the database)", p.ID, p.datasetKey(), pts[0].datasetKey())
		}
	}
	if len(ids) != 5 || len(stacks) != 5 {
		t.Errorf("%d point ids and %d stacks, want 5 of each", len(ids), len(stacks))
	}
	var b strings.Builder
	if err := WritePlan(&b, f, pts, 1, nil); err != nil {
		t.Fatal(err)
	}
	// each point's line: its TLS column
	for variant, want := range map[string]string{"plain": " off ", "tls": " rsa-2048, lb passthrough ", "ecdsa": " ecdsa-p256, lb passthrough ",
		"terminate": " rsa-2048, lb terminate ", "one": " rsa-2048 "} {
		for line := range strings.Lines(b.String()) {
			if strings.HasPrefix(line, variant+"-") && (!strings.Contains(line, want) || variant == "one" && strings.Contains(line, " lb ")) {
				t.Errorf("plan: %s's line lacks %q:\n%s", variant, want, b.String())
			}
		}
	}
}

// What a file says reaches the stack's options as `kcbench up` takes
// them, and the stack accepts every point the file accepts (its own
// checks, mirrored by the file's, agree).
func TestTLSStackRoundTrip(t *testing.T) {
	t.Parallel()
	f, err := Parse([]byte(tlsBase + `stack: {nodes: 3, tls_key: ecdsa-p256, lb_tls: reencrypt, lb_sticky: true}
variants:
  - {name: reencrypt}
  - {name: terminate, lb_tls: terminate, tls_key: rsa-2048}
  - {name: plain, tls: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := Plan(f)
	if err != nil {
		t.Fatal(err)
	}
	type opts struct {
		plain    bool
		key, lbt string
	}
	want := map[string]opts{"reencrypt": {false, "ecdsa-p256", "reencrypt"}, "terminate": {false, "rsa-2048", "terminate"}, "plain": {true, "", ""}}
	for _, p := range pts {
		if got := (opts{p.Stack.PlainHTTP, p.Stack.TLSKeyType(), p.Topology.LBTLS}); got != want[p.Variant.Name] {
			t.Errorf("%s: stack options %+v, want %+v", p.ID, got, want[p.Variant.Name])
		}
		cfg := stack.Config{Dirs: stack.Dirs{Cache: "c", State: "s"}, Keycloak: p.Stack, Topology: p.Topology}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s: the stack refuses what the file accepted: %v", p.ID, err)
		}
	}
	// And the other way: what the stack refuses, the file refuses.
	for _, c := range []struct {
		yaml string
		ko   stack.KeycloakOptions
		top  stack.Topology
	}{
		{"stack: {nodes: 2, lb_sticky: true}\n", stack.KeycloakOptions{}, stack.Topology{Nodes: 2, LB: stack.LBHAProxy, Sticky: true}},
		{"stack: {nodes: 2, tls: false, lb_tls: terminate}\n", stack.KeycloakOptions{PlainHTTP: true}, stack.Topology{Nodes: 2, LB: stack.LBHAProxy, LBTLS: stack.LBTLSTerminate}},
		{"stack: {tls: false, tls_key: ecdsa-p256}\n", stack.KeycloakOptions{PlainHTTP: true, TLSKey: stack.TLSKeyECDSAP256}, stack.Topology{Nodes: 1, LB: stack.LBNone}},
		{"stack: {lb_tls: terminate}\n", stack.KeycloakOptions{}, stack.Topology{Nodes: 1, LB: stack.LBNone, LBTLS: stack.LBTLSTerminate}},
	} {
		c.ko.Version = stack.DefaultKeycloakVersion
		cfg := stack.Config{Dirs: stack.Dirs{Cache: "c", State: "s"}, Keycloak: c.ko, Topology: c.top}
		_, ferr := Parse([]byte(tlsBase + c.yaml))
		if serr := cfg.Validate(); serr == nil || ferr == nil {
			t.Errorf("%q: stack %v, file %v: want both to refuse it", c.yaml, serr, ferr)
		}
	}
}

// Workloads take the engine's connection policy and TLS resumption, a
// capacity search's steps keep them, and a bad policy names its workload.
func TestWorkloadConnPolicy(t *testing.T) {
	t.Parallel()
	f, err := Parse([]byte(`name: x
workloads:
  - {name: token, scenario: client-credentials, vus: 2, duration: 5s, conn_policy: reuse, tls_resumption: true}
  - {name: refresh, scenario: refresh, conn_policy: per-vu, capacity: {}}
  - {name: default, scenario: client-credentials, capacity: {}}
`))
	if err != nil {
		t.Fatal(err)
	}
	w := f.Workload
	if w[0].Config.Policy() != results.ConnReuse || !w[0].TLSResumption {
		t.Errorf("token: policy %s, resumption %v", w[0].Config.Policy(), w[0].TLSResumption)
	}
	if w[1].Config.Policy() != results.ConnPerVU || w[2].Config.Policy() != results.ConnPerIteration {
		t.Errorf("capacity workloads: policies %s, %s", w[1].Config.Policy(), w[2].Config.Policy())
	}
	_, err = Parse([]byte("name: x\nworkloads:\n  - {name: t, scenario: client-credentials, conn_policy: pooled}\n"))
	if err == nil || !strings.Contains(err.Error(), `workloads[0] (t): conn_policy: connection policy "pooled"`) {
		t.Errorf("bad conn_policy: %v", err)
	}
}

// quickstart's --tls, --tls-key and --lb-tls reach the file's stack, and
// combinations the stack refuses are usage errors naming the flags.
func TestStackFlagsTLS(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args     []string
		want     string // error; "" for none
		tls      bool
		volatile bool
	}{
		{nil, "", true, false},
		{[]string{"--persistent-sessions=false"}, "", true, true},
		{[]string{"--tls=false"}, "", false, false},
		{[]string{"--tls-key", "ecdsa-p256", "--nodes", "2", "--lb-tls", "terminate"}, "", true, false},
		{[]string{"--tls=false", "--tls-key", "ecdsa-p256"}, "--tls-key needs TLS", false, false},
		{[]string{"--nodes", "2", "--lb-sticky"}, "--lb-sticky reads a cookie", true, false},
		{[]string{"--tls-key", "dsa"}, `tls key "dsa"`, true, false},
	} {
		fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
		var sf StackFlags
		sf.RegisterFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		f, err := LoadNamed("quickstart")
		if err != nil {
			t.Fatal(err)
		}
		err = sf.Apply(f)
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: %v, want %q", c.args, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if err := f.Validate(); err != nil {
			t.Errorf("%v: the file no longer validates: %v", c.args, err)
		}
		pts, _ := Plan(f)
		if got := pts[0].Params()["tls"]; (got == "on") != c.tls || f.Stack.TLSKey != sf.TLSKey || f.Stack.LBTLS != sf.Top.LBTLS {
			t.Errorf("%v: tls param %q, stack %+v", c.args, got, f.Stack)
		}
		if got := pts[0].Params()[stack.ParamPersistentSessions]; (got == "off") != c.volatile || pts[0].Stack.VolatileSessions != c.volatile {
			t.Errorf("%v: persistent_sessions param %q, stack %+v", c.args, got, pts[0].Stack)
		}
	}
}

// stack.db_durable reaches the stack's database options, the plan, the
// stack's key and the dataset's (not a snapshot without fsync); without it
// the keys are what they were.
func TestDBDurable(t *testing.T) {
	t.Parallel()
	f, err := Parse([]byte(tlsBase + "stack: {db_durable: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := Parse([]byte(tlsBase))
	pts, _ := Plan(f)
	base, _ := Plan(plain)
	if !pts[0].DBDurable || base[0].DBDurable || pts[0].stackKey() == base[0].stackKey() {
		t.Errorf("durable %v, default %v: keys %s / %s", pts[0].DBDurable, base[0].DBDurable, pts[0].stackKey(), base[0].stackKey())
	}
	if pts[0].datasetKey() == base[0].datasetKey() {
		t.Error("a durable database restored a snapshot made without fsync (its postgresql.conf turns fsync off)")
	}
	if want := key([]any{base[0].Stack, base[0].PG, base[0].Topology, base[0].LDAP}); base[0].stackKey() != want {
		t.Errorf("default stack key %s, want %s as before", base[0].stackKey(), want)
	}
	var b strings.Builder
	if err := WritePlan(&b, f, pts, 1, nil); err != nil || !strings.Contains(b.String(), "postgres (durable)") {
		t.Errorf("plan (%v):\n%s", err, b.String())
	}
}
