package experiment

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/experiments"
	"github.com/kcbench/kcbench/internal/stack"
)

// Every shipped experiment parses, validates (events included) and plans.
func TestShippedExperiments(t *testing.T) {
	ents, err := fs.ReadDir(experiments.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		b, err := fs.ReadFile(experiments.FS, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(b)
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if pts, err := Plan(f); err != nil || len(pts) == 0 {
			t.Errorf("%s: plan: %d points, %v", e.Name(), len(pts), err)
		}
		if e.Name() == "caching.yaml" {
			checkCaching(t, f)
		}
		if e.Name() == "resilience.yaml" {
			fs, err := f.Workload[0].Faults(0.5)
			if err != nil || len(fs) != 3 || fs[0].At.Seconds() != 30 {
				t.Errorf("resilience events at half scale: %+v, %v", fs, err)
			}
		}
	}
}

// variants.yaml: the database and the directory are factors of its
// variants, recorded in the points' params and shown in the plan.
func TestVariantsExperiment(t *testing.T) {
	f, err := LoadNamed("variants")
	if err != nil {
		t.Fatal(err)
	}
	pts, err := Plan(f)
	if err != nil || len(pts) != 3 {
		t.Fatalf("plan: %d points, %v", len(pts), err)
	}
	byVariant := map[string]Point{}
	for _, p := range pts {
		byVariant[p.Variant.Name] = p
	}
	pg, maria, ldap := byVariant["postgres"], byVariant["mariadb"], byVariant["ldap"]
	if pg.Stack.DB != "" || pg.LDAP.Enabled() || pg.Params()["db"] != "" || pg.Params()["ldap"] != "" {
		t.Errorf("baseline: db %q, ldap %+v, params %v", pg.Stack.DB, pg.LDAP, pg.Params())
	}
	if maria.Stack.DB != stack.DBMariaDB || maria.LDAP.Enabled() || maria.Params()["db"] != "mariadb" {
		t.Errorf("mariadb: db %q, ldap %+v, params %v", maria.Stack.DB, maria.LDAP, maria.Params())
	}
	if ldap.Stack.DB != "" || ldap.LDAP.Server != stack.LDAPSlapd || ldap.LDAP.Import || ldap.Params()["ldap"] != "slapd" || ldap.Params()["ldap_import"] != "off" {
		t.Errorf("ldap: db %q, ldap %+v, params %v", ldap.Stack.DB, ldap.LDAP, ldap.Params())
	}
	if noSnapshotReason(pg) != "" || noSnapshotReason(maria) == "" || noSnapshotReason(ldap) == "" {
		t.Error("snapshots: only the PostgreSQL baseline keeps its datasets as snapshots")
	}
	var b strings.Builder
	if err := WritePlan(&b, f, pts, 1, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mariadb", "postgres, users in slapd (import off)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, b.String())
		}
	}
}

// The database and directory factors: bad values and impossible
// combinations are refused with their paths.
func TestBackendFactorsValidate(t *testing.T) {
	base := "name: x\nworkloads: [{scenario: jwks}]\n"
	for _, c := range []struct{ yaml, want string }{
		{"stack: {db: mysql}\n", "stack.db: \"mysql\": want postgres or mariadb"},
		{"stack: {ldap: 389ds}\n", "stack.ldap: \"389ds\": want off or slapd"},
		{"variants: [{name: a, db: oracle}]\n", "variants[0].db"},
		{"variants: [{name: a, ldap: slapd, ldap_import: maybe}]\n", "variants[0].ldap_import"},
		{"dataset: {modes: [orgs]}\nvariants: [{name: a, ldap: slapd}]\n", "variants[0].ldap: users in LDAP work in realms mode only"},
		{"variants: [{name: a, ldap_import: \"on\"}]\n", "variants[0].ldap_import: needs ldap: slapd"},
		{"stack: {ldap_cache_policy: NO_CACHE}\n", "need ldap: slapd"},
	} {
		if _, err := Parse([]byte(base + c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
	f, err := Parse([]byte(base + "stack: {ldap: slapd, ldap_import: \"on\"}\nvariants: [{name: db}, {name: flat, ldap: \"off\"}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	pts, _ := Plan(f)
	if !pts[0].LDAP.Import || pts[1].LDAP.Enabled() {
		t.Errorf("ldap from the stack, off in a variant: %+v / %+v", pts[0].LDAP, pts[1].LDAP)
	}
}

// The cache study at the scale: one realm of 100,000 users, more
// than 2,500 clients used at once by one workload, the realms and users
// caches from 10,000 to 200,000 entries, the points' params naming them.
func checkCaching(t *testing.T, f *File) {
	t.Helper()
	pts, _ := Plan(f)
	if f.Dataset.Users != 100_000 || len(f.Dataset.Tenants) != 1 || f.Dataset.Tenants[0] != 1 || f.Dataset.Clients-1 <= 2500 {
		t.Errorf("caching: dataset %+v", f.Dataset)
	}
	var sizes []int
	for _, p := range pts {
		if p.Stack.CacheSizes["users"] != p.Stack.CacheSizes["realms"] || p.Params()["cache_users"] != fmt.Sprint(p.Stack.CacheSizes["users"]) {
			t.Errorf("caching %s: caches %v, params %v", p.ID, p.Stack.CacheSizes, p.Params())
		}
		sizes = append(sizes, p.Stack.CacheSizes["users"])
	}
	if !slices.Equal(sizes, []int{10_000, 20_000, 50_000, 100_000, 200_000}) {
		t.Errorf("caching: cache sizes %v", sizes)
	}
	var spread, scenarios []string
	for _, w := range f.Workload {
		scenarios = append(scenarios, w.Scenario)
		if w.SpreadClients {
			spread = append(spread, w.Name)
		}
	}
	if !slices.Equal(scenarios, []string{"password-grant", "refresh", "client-credentials"}) || !slices.Equal(spread, []string{"clients"}) {
		t.Errorf("caching: workloads %v, spreading clients %v", scenarios, spread)
	}
	if n := clientsInUse(pts[0].Spec, f.Workload[2].Config); n != 2600 {
		t.Errorf("caching: %d clients in use, want 2,600", n)
	}
	if d := Estimate(f, pts, 1); d < time.Hour || d > 6*time.Hour {
		t.Errorf("caching: estimated %v", d)
	}
}

// sizing-guide.yaml and vertical.yaml measure under the sizing guide's
// conditions: TLS at the node, argon2id, a durable database, one realm of
// 20,000 users (and 20,000 clients), capacity at p99 < 500 ms.
func TestSizingGuideExperiments(t *testing.T) {
	guide, err := LoadNamed("sizing-guide")
	if err != nil {
		t.Fatal(err)
	}
	ds := guide.Dataset
	if ds.Users != 20_000 || ds.Clients != 20_000 || ds.PasswordPolicy != "default" || !slices.Equal(ds.Tenants, []int{1}) || !guide.Stack.DBDurable {
		t.Errorf("sizing-guide: dataset %+v, durable %v", ds, guide.Stack.DBDurable)
	}
	var names []string
	for _, w := range guide.Workload {
		names = append(names, w.Name)
		if w.Capacity == nil || w.Capacity.SLO != "p99<500ms,errors<0.1%" {
			t.Errorf("sizing-guide %s: capacity %+v", w.Name, w.Capacity)
		}
	}
	if !slices.Equal(names, []string{"password-grant", "client-credentials", "refresh"}) || guide.Workload[1].Config.Policy() != "per-iteration" {
		t.Errorf("sizing-guide: workloads %v, client-credentials policy %s", names, guide.Workload[1].Config.Policy())
	}
	pts, _ := Plan(guide)
	var tops []string
	for _, p := range pts {
		ps := p.Params()
		tops = append(tops, ps["nodes"]+"/"+ps["tls"]+"/"+ps["tls_key"]+"/"+ps["lb_tls"])
	}
	if !slices.Equal(tops, []string{"1/on/rsa-2048/", "3/on/rsa-2048/passthrough"}) {
		t.Errorf("sizing-guide: nodes/tls/tls_key/lb_tls %v", tops)
	}

	vert, err := LoadNamed("vertical")
	if err != nil {
		t.Fatal(err)
	}
	w := vert.Workload
	if len(w) != 1 || w[0].Scenario != "mix" || w[0].Mix["login-form"] != 1 || w[0].Mix["refresh"] != 5 || len(w[0].Mix) != 2 || w[0].Capacity == nil {
		t.Errorf("vertical: workloads %+v", w)
	}
	pts, _ = Plan(vert)
	var cpus []string
	for _, p := range pts {
		cpus = append(cpus, p.Params()["nodes"]+"×"+p.Params()["node_cpus"]+"/"+p.Params()["tls"])
	}
	if !slices.Equal(cpus, []string{"1×0.5/on", "1×1/on", "1×1.5/on", "1×2/on"}) {
		t.Errorf("vertical: nodes×cpus/tls %v", cpus)
	}
}
