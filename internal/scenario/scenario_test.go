package scenario

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
)

func TestZipfDistribution(t *testing.T) {
	cases := []struct {
		n int
		s float64
	}{{10, 1}, {10, 0.5}, {100, 1.2}, {3, 2}}
	for _, c := range cases {
		z := newZipf(c.n, c.s)
		// The probabilities are 1/k^s normalised.
		var h float64
		for k := 1; k <= c.n; k++ {
			h += math.Pow(float64(k), -c.s)
		}
		for k := range c.n {
			if want := math.Pow(float64(k+1), -c.s) / h; math.Abs(z.prob(k)-want) > 1e-12 {
				t.Fatalf("n=%d s=%g: prob(%d) = %g, want %g", c.n, c.s, k, z.prob(k), want)
			}
		}
		// Draws follow them: each rank's share within 4 standard errors.
		const draws = 200_000
		r := rand.New(rand.NewPCG(1, 2))
		counts := make([]int, c.n)
		for range draws {
			counts[z.pick(r.Float64())]++
		}
		for k, got := range counts {
			p := z.prob(k)
			se := math.Sqrt(p * (1 - p) / draws)
			if share := float64(got) / draws; math.Abs(share-p) > 4*se+1e-9 {
				t.Errorf("n=%d s=%g rank %d: share %.5f, want %.5f ± %.5f", c.n, c.s, k, share, p, 4*se)
			}
		}
	}
}

func TestZipfPickEdges(t *testing.T) {
	z := newZipf(4, 1)
	if got := z.pick(0); got != 0 {
		t.Errorf("pick(0) = %d", got)
	}
	if got := z.pick(math.Nextafter(1, 0)); got != 3 {
		t.Errorf("pick(1-ε) = %d", got)
	}
	// u exactly on a boundary belongs to the next rank.
	if got := z.pick(z.cdf[0]); got != 1 {
		t.Errorf("pick(cdf[0]) = %d", got)
	}
}

func TestPickWeighted(t *testing.T) {
	cum := []int{1, 9, 17} // 1 : 8 : 8
	want := []int{0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}
	for x, w := range want {
		if got := pickWeighted(cum, x); got != w {
			t.Errorf("pickWeighted(%d) = %d, want %d", x, got, w)
		}
	}
}

func TestParseMix(t *testing.T) {
	m, err := ParseMix("login-form=1, refresh=8,client-credentials=8")
	if err != nil {
		t.Fatal(err)
	}
	if MixString(m) != "client-credentials=8,login-form=1,refresh=8" {
		t.Fatalf("%v", m)
	}
	if MixString(DefaultMix()) != MixString(m) {
		t.Fatalf("default mix %v", DefaultMix())
	}
	for _, bad := range []string{"", "refresh", "refresh=x", "=3"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// testEnv is an Env on a pool of a made-up dataset; nothing is called.
func testEnv(t *testing.T, mode dataset.Mode) Env {
	t.Helper()
	spec := dataset.Spec{Mode: mode, Tenants: 3, Content: dataset.DefaultContent, Prefix: "kcb", Seed: 1}
	p, err := NewManifestPool(dataset.NewManifest(spec, "http://kc"), 0)
	if err != nil {
		t.Fatal(err)
	}
	return Env{Client: kc.New("http://127.0.0.1:1", nil), Pool: p}
}

// testEnvOTP is a realms-mode Env whose tenants have 2 OTP users each.
func testEnvOTP(t *testing.T) Env {
	t.Helper()
	content := dataset.DefaultContent
	content.OTPUsers = 2
	content.UMAResources = 3
	content.BrokerUsers = 4
	content.SAMLClients = 2
	spec := dataset.Spec{Mode: dataset.ModeRealms, Tenants: 3, Content: content, Prefix: "kcb", Seed: 1}
	p, err := NewManifestPool(dataset.NewManifest(spec, "http://kc"), 0)
	if err != nil {
		t.Fatal(err)
	}
	return Env{Client: kc.New("http://127.0.0.1:1", nil), Pool: p}
}

func TestMixWeights(t *testing.T) {
	env := testEnv(t, dataset.ModeRealms)
	sc, err := ByName(results.ScenarioMix, env)
	if err != nil {
		t.Fatal(err)
	}
	m := sc.(*mix)
	if MixString(m.Weights()) != "client-credentials=8,login-form=1,refresh=8" {
		t.Fatalf("default weights %v", m.Weights())
	}
	env.Mix = map[string]int{results.ScenarioJWKS: 3, results.ScenarioDiscovery: 1, results.ScenarioRefresh: 0}
	sc, err = ByName(results.ScenarioMix, env)
	if err != nil {
		t.Fatal(err)
	}
	m = sc.(*mix)
	if len(m.parts) != 2 || m.cum[len(m.cum)-1] != 4 {
		t.Fatalf("parts %+v cum %v", m.parts, m.cum)
	}
	// Draws follow the weights.
	u, err := m.NewUser(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	mu := u.(*mixUser)
	counts := map[string]int{}
	for range 40_000 {
		counts[m.parts[pickWeighted(m.cum, mu.rng.IntN(4))].name]++
	}
	if share := float64(counts[results.ScenarioJWKS]) / 40_000; math.Abs(share-0.75) > 0.01 {
		t.Errorf("jwks share %.3f, want 0.75", share)
	}

	for name, bad := range map[string]map[string]int{
		"unknown":  {"nope": 1},
		"negative": {results.ScenarioJWKS: -1},
		"zero":     {results.ScenarioJWKS: 0},
		"nested":   {results.ScenarioMix: 1},
		"admin":    {results.ScenarioAdminAPI: 1}, // no admin client in env
	} {
		env.Mix = bad
		if _, err := ByName(results.ScenarioMix, env); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestByName(t *testing.T) {
	env := testEnv(t, dataset.ModeOrgs)
	for _, i := range List() {
		if i.Description == "" {
			t.Errorf("%s has no description", i.Name)
		}
		if adminScenario(i.Name) {
			continue
		}
		e := env
		if flag, ok := map[string]string{results.ScenarioOTPLogin: "seed --otp-users N", results.ScenarioUMA: "seed --uma-resources N",
			results.ScenarioBrokerLogin: "seed --broker-users N", results.ScenarioSAMLLogin: "seed --saml-clients N"}[i.Name]; ok {
			if _, err := ByName(i.Name, env); err == nil || !strings.Contains(err.Error(), flag) {
				t.Errorf("%s on a dataset without what it needs: %v", i.Name, err)
			}
			e = testEnvOTP(t)
		}
		sc, err := ByName(i.Name, e)
		if err != nil {
			t.Errorf("%s: %v", i.Name, err)
			continue
		}
		if sc.Name() != i.Name {
			t.Errorf("%s is called %s", i.Name, sc.Name())
		}
	}
	if len(List()) != 23 {
		t.Errorf("%d scenarios", len(List()))
	}
	if _, err := ByName("nope", env); !errors.Is(err, ErrUnknown) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := ByName(results.ScenarioAdminSearch, env); err == nil || !strings.Contains(err.Error(), "admin-search needs admin credentials") {
		t.Errorf("admin-search without admin: %v", err)
	}
	if _, err := ByName(results.ScenarioAdminAPI, env); err == nil || !strings.Contains(err.Error(), "admin") {
		t.Errorf("admin-api without admin: %v", err)
	}
	if _, err := ByName(results.ScenarioJWKS, Env{Client: env.Client}); err == nil {
		t.Error("no pool: no error")
	}
}

func TestSinglePool(t *testing.T) {
	p, err := NewSinglePool(Single{Realm: "r"})
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Client: kc.New("http://127.0.0.1:1", nil), Pool: p}
	if _, err := ByName(results.ScenarioJWKS, env); err != nil {
		t.Errorf("jwks needs only a realm: %v", err)
	}
	if _, err := ByName(results.ScenarioClientCredentials, env); err == nil || !strings.Contains(err.Error(), "client id") {
		t.Errorf("client-credentials without a client: %v", err)
	}
	p, _ = NewSinglePool(Single{Realm: "r", ClientID: "c"})
	env.Pool = p
	if _, err := ByName(results.ScenarioClientCredentials, env); err != nil {
		t.Errorf("client-credentials: %v", err)
	}
	if _, err := ByName(results.ScenarioPasswordGrant, env); err == nil || !strings.Contains(err.Error(), "username") {
		t.Errorf("password-grant without a user: %v", err)
	}
	if _, err := NewSinglePool(Single{}); err == nil {
		t.Error("no realm: no error")
	}
	tn, user := p.pick(rand.New(rand.NewPCG(1, 1)))
	if tn.Realm != "r" || web(tn) != backend(tn) || user != "" || p.RedirectURI() != dataset.RedirectURI {
		t.Errorf("tenant %+v user %q", tn, user)
	}
}

func TestManifestPool(t *testing.T) {
	spec := dataset.Spec{Mode: dataset.ModeOrgs, Tenants: 5, Content: dataset.DefaultContent, Prefix: "kcb", Seed: 1}
	m := dataset.NewManifest(spec, "http://kc")
	if _, err := NewManifestPool(m, -1); err == nil {
		t.Error("negative skew accepted")
	}
	p, err := NewManifestPool(m, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Orgs() || p.Tenants() != 5 || p.Password() != m.Password {
		t.Fatalf("%+v", p)
	}
	r := rand.New(rand.NewPCG(7, 7))
	counts := map[int]int{}
	for range 10_000 {
		tn, user := p.pick(r)
		counts[tn.Index]++
		if !strings.HasPrefix(user, tn.ID+"-user-") || tn.Realm != "kcb-orgs" || tn.Org != tn.ID {
			t.Fatalf("tenant %+v user %s", tn, user)
		}
	}
	if counts[1] < counts[2] || counts[2] < counts[5] {
		t.Errorf("skewed draws not decreasing: %v", counts)
	}
}

func TestHasScope(t *testing.T) {
	if !hasScope("openid offline_access profile", "offline_access") || hasScope("openid profile", "offline_access") || hasScope("", "x") {
		t.Fatal("hasScope")
	}
}

// Operation names can be named in thresholds and file names.
func TestOpNamesAreThresholdSafe(t *testing.T) {
	for _, op := range []string{results.OpPasswordGrant, results.OpLoginSubmit, results.OpAdminListMembers, results.OpSessionLogin} {
		if _, err := results.ParseThreshold(op + ":p95<1s"); err != nil || strings.ContainsAny(op, " :,") {
			t.Errorf("%s: %v", op, err)
		}
	}
}

// SpreadClients draws each grant's client from all of the tenant's
// confidential clients, with the secrets the dataset gave them; without it
// every grant uses the first. A dataset with one backend, or none kcbench
// generated, refuses it.
func TestSpreadClients(t *testing.T) {
	for _, mode := range []dataset.Mode{dataset.ModeRealms, dataset.ModeOrgs} {
		spec := dataset.Spec{Mode: mode, Tenants: 2, Content: dataset.DefaultContent, Prefix: "kcb", Seed: 1}
		spec.Content.Clients = 5 // web + 4 backends
		m := dataset.NewManifest(spec, "http://kc")
		p, err := NewManifestPool(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		first := m.Tenant(2)
		if c := p.client(r, &first); c.ID != first.Backend || c.Secret != first.BackendSecret || p.Clients() != 1 {
			t.Errorf("%s: without spread: %s, want %s", mode, c.ID, first.Backend)
		}
		if err := p.SpreadClients(); err != nil || p.Clients() != 4 {
			t.Fatalf("%s: %v, %d clients", mode, err, p.Clients())
		}
		seen := map[string]bool{}
		for range 400 {
			tn := p.pickTenant(r)
			c := p.client(r, tn)
			if c.Secret != spec.ClientSecret(tn.Index, c.ID) {
				t.Fatalf("%s: %s has secret %q, want the dataset's", mode, c.ID, c.Secret)
			}
			seen[tn.Realm+"/"+c.ID] = true
		}
		for i := 1; i <= 2; i++ {
			for k := 1; k <= 4; k++ {
				if id := spec.RealmOf(i) + "/" + spec.BackendClient(i, k); !seen[id] {
					t.Errorf("%s: %s never used (used %v)", mode, id, seen)
				}
			}
		}
		if len(seen) != 8 {
			t.Errorf("%s: %d clients used, want the 8 backends: %v", mode, len(seen), seen)
		}
	}
	p := testEnv(t, dataset.ModeRealms).Pool // DefaultContent: one backend
	if err := p.SpreadClients(); err == nil {
		t.Error("a dataset of one confidential client per tenant spreads")
	}
	single, _ := NewSinglePool(Single{Realm: "r", ClientID: "c"})
	if err := single.SpreadClients(); err == nil {
		t.Error("a hand-given client spreads")
	}
}

// prob is the probability of rank k.
func (z *zipf) prob(k int) float64 {
	if k == 0 {
		return z.cdf[0]
	}
	return z.cdf[k] - z.cdf[k-1]
}
