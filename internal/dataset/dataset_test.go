package dataset

import (
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParsePolicy(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "",
		"default":             "",
		"argon2":              "hashAlgorithm(argon2)",
		"pbkdf2-sha512:27500": "hashAlgorithm(pbkdf2-sha512) and hashIterations(27500)",
		"pbkdf2-sha256:1":     "hashAlgorithm(pbkdf2-sha256) and hashIterations(1)",
	} {
		p, err := ParsePolicy(in)
		if err != nil || p.Keycloak() != want {
			t.Errorf("ParsePolicy(%q) = %+v (%q), %v; want %q", in, p, p.Keycloak(), err, want)
		}
		if q, err := ParsePolicy(p.String()); err != nil || q != p {
			t.Errorf("%q does not round-trip: %+v", in, q)
		}
	}
	for _, bad := range []string{"md5", "pbkdf2-sha512:", "pbkdf2-sha512:0", "pbkdf2-sha512:x", "argon2:-1"} {
		if _, err := ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q): want error", bad)
		}
	}
}

func TestPrehashedCredential(t *testing.T) {
	salt := []byte("0123456789abcdef")
	p := Policy{Algorithm: "pbkdf2-sha512", Iterations: 3}
	c := p.Credential("secret", salt)
	if c.Value != "" || c.SecretData == "" {
		t.Fatalf("not pre-hashed: %+v", c)
	}
	var sd struct{ Value, Salt string }
	if err := json.Unmarshal([]byte(c.SecretData), &sd); err != nil {
		t.Fatal(err)
	}
	want, _ := pbkdf2.Key(sha512.New, "secret", salt, 3, 64)
	if sd.Value != base64.StdEncoding.EncodeToString(want) || sd.Salt != base64.StdEncoding.EncodeToString(salt) {
		t.Errorf("secret data %+v", sd)
	}
	var cd struct {
		HashIterations int
		Algorithm      string
	}
	json.Unmarshal([]byte(c.CredentialData), &cd)
	if cd.HashIterations != 3 || cd.Algorithm != "pbkdf2-sha512" {
		t.Errorf("credential data %s", c.CredentialData)
	}
	// Argon2 with explicit iterations cannot be pre-hashed: plain value.
	if c := (Policy{Algorithm: "argon2", Iterations: 2}).Credential("x", salt); c.Value != "x" {
		t.Errorf("argon2:2 should fall back to a plain value: %+v", c)
	}
	if c := (Policy{}).Credential("x", salt); !strings.Contains(c.CredentialData, `"memory":["7168"]`) {
		t.Errorf("default policy: %s", c.CredentialData)
	}
}

func TestNamingAndExpected(t *testing.T) {
	r := Spec{Mode: ModeRealms, Tenants: 3, Content: DefaultContent, Prefix: "kcb", Seed: 1}
	o := r
	o.Mode = ModeOrgs
	if r.RealmOf(2) != "kcb-t00002" || o.RealmOf(2) != "kcb-orgs" {
		t.Errorf("realms: %s %s", r.RealmOf(2), o.RealmOf(2))
	}
	if r.Username(2, 7) != "user-00007" || o.Username(2, 7) != "t00002-user-00007" {
		t.Errorf("users: %s %s", r.Username(2, 7), o.Username(2, 7))
	}
	if tenantOf(o.BackendClient(42, 1)) != 42 || tenantOf("web") != 0 {
		t.Error("tenantOf")
	}
	if r.ClientSecret(1, "backend") == r.ClientSecret(2, "backend") {
		t.Error("secrets must differ per realm")
	}
	if r.Fingerprint() != (Spec{Mode: ModeRealms, Tenants: 99, Content: DefaultContent, Prefix: "kcb", Seed: 1}).Fingerprint() {
		t.Error("the fingerprint must not depend on the tenant count")
	}
	e := o.Expected()
	if e.Realms != 1 || e.Organizations != 3 || e.Users != 30 || e.OrgMemberships != 30 || e.ClientRoles != 12 {
		t.Errorf("expected %+v", e)
	}
	// A tenant's realm holds every user in one group with one role and
	// default-roles (for offline_access).
	b := newBuilder(r)
	rr := b.tenantRealm(1)
	if len(rr.Users) != 10 || len(rr.Clients) != 2 || rr.Attributes[AttrComplete] != "true" {
		t.Fatalf("realm %+v", rr)
	}
	u := rr.Users[0]
	if u.Email == "" || u.FirstName == "" || u.LastName == "" || len(u.Groups) != 1 || u.RealmRoles[1] != "default-roles-kcb-t00001" {
		t.Errorf("user %+v", u)
	}
}

func TestSpecValidate(t *testing.T) {
	bad := Spec{Mode: "silos", Tenants: 0, Content: Content{Clients: 1}, Prefix: "a b"}
	err := bad.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"silos", "tenants = 0", "clients per tenant", "prefix"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if _, err := LookupPreset("huge"); err == nil || !strings.Contains(err.Error(), "small") {
		t.Errorf("preset: %v", err)
	}
}

func TestManifestRoundTrip(t *testing.T) {
	s := Spec{Mode: ModeOrgs, Tenants: 4, Content: DefaultContent, Policy: Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, Prefix: "kcb", Seed: 3}
	p := filepath.Join(t.TempDir(), "m.json")
	m := NewManifest(s, "http://127.0.0.1:1")
	if err := m.Write(p); err != nil {
		t.Fatal(err)
	}
	got, err := ReadManifest(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec != s || got.Password != s.Password() || len(got.Realms) != 1 {
		t.Fatalf("round trip: %+v", got)
	}
	tn := got.Tenant(2)
	if tn.Org != "t00002" || tn.Backend != "t00002-backend" || tn.BackendSecret != s.ClientSecret(2, "t00002-backend") {
		t.Errorf("tenant %+v", tn)
	}
	if _, err := ReadManifest(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("missing manifest: want error")
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"default", "argon2", "pbkdf2-sha512:27500", "x:y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err != nil {
			return
		}
		if q, err := ParsePolicy(p.String()); err != nil || q != p {
			t.Fatalf("%q → %+v does not round-trip", s, p)
		}
	})
}

func TestParseRealmErrors(t *testing.T) {
	cases := map[string]string{
		`[1,2]`:                                 "top level is a list",
		`{"users":[]}`:                          `no "realm" field`,
		`{"realm":3}`:                           `field "realm": a number`,
		`{"realm":"a/b"}`:                       "not a usable realm name",
		`{"realm":"r","users":{}}`:              `field "users": a object`,
		`{"realm":"r","users":[{"email":"x"}]}`: "users[0].username",
		`{"realm":"r","users":[{"username":"a"},{"username":"a"}]}`: "appears twice",
		`{"realm":"r","clients":[{"name":"x"}]}`:                    "clients[0].clientId",
		"{\n\"realm\": \"r\",\n oops}":                              "line 3",
		`{"realm":"r"} {"realm":"s"}`:                               "more than one",
	}
	for in, want := range cases {
		_, err := ParseRealm([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRealm(%q) = %v, want an error with %q", in, err, want)
		}
	}
	rf, err := ParseRealm([]byte(`{"realm":"r","users":[{"username":"a"}],"clients":[{"clientId":"c","secret":"**********"},{"clientId":"p","publicClient":true}]}`))
	if err != nil || rf.Realm != "r" || len(rf.Users) != 1 || len(rf.Clients) != 2 || rf.Clients[0].Secret != "" || !rf.Clients[1].Public {
		t.Fatalf("%+v %v", rf, err)
	}
}

func TestExportReadsBack(t *testing.T) {
	dir := t.TempDir()
	s := Spec{Mode: ModeRealms, Tenants: 2, Content: DefaultContent, Prefix: "kcb", Seed: 1, Policy: Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}}
	if _, err := Export(s, dir, nil); err != nil {
		t.Fatal(err)
	}
	files, err := ReadRealmDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Realm != "kcb-t00001" || len(files[1].Users) != 10 {
		t.Fatalf("%d files", len(files))
	}
	r := prepareRealm(files[0], filesSpec(files, 1))
	u := r["users"].([]any)[0].(map[string]any)
	if creds := u["credentials"].([]any); len(creds) != 1 || creds[0].(map[string]any)["value"] == "" {
		t.Errorf("credentials not replaced: %v", creds)
	}
}

func FuzzParseRealm(f *testing.F) {
	f.Add([]byte(`{"realm":"r","users":[{"username":"a"}],"clients":[{"clientId":"c"}]}`))
	f.Add([]byte(`{"realm":"r","groups":[{}],"organizations":[1]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rf, err := ParseRealm(b)
		if err != nil {
			return
		}
		if rf.Realm == "" {
			t.Fatal("accepted a realm without a name")
		}
		prepareRealm(rf, Spec{Seed: 1, Prefix: "x"}) // must not panic
	})
}

func TestSeedRunTo(t *testing.T) {
	m := &Manifest{Seeds: []SeedEvent{
		{From: 0, To: 500, Added: 500, Seconds: 400},
		{From: 500, To: 1000, Added: 500, Seconds: 1317},
		{From: 1000, To: 1000, Added: 0, Seconds: 0.2}, // a resume that found it complete
	}}
	if ev, ok := m.SeedRunTo(1000); !ok || ev.Seconds != 1317 {
		t.Errorf("to 1000: %+v %v, want the run that added 500 in 1317 s", ev, ok)
	}
	if _, ok := m.SeedRunTo(750); ok {
		t.Error("to 750: found a run, want none")
	}
}

func TestSeedUtilisation(t *testing.T) {
	r := SeedResult{Added: 100, Duration: 10 * time.Second, ServerCPU: 17 * time.Second}
	if got, want := r.Utilisation(2), "Keycloak busy 85% of the 2 cores over the seed"; got != want {
		t.Errorf("without the machine: %q, want %q", got, want)
	}
	// the machine 97% busy: the others took 12%, Keycloak used 85/88 of the rest
	r.MachineBusy, r.MachineTotal = 19400*time.Millisecond, 20*time.Second
	got := r.Utilisation(2)
	for _, want := range []string{"Keycloak busy 85% of the 2 cores", "the machine 97%", "Keycloak used 97% of the CPU the other processes (12%"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	var b strings.Builder
	r.Strategy = Fast
	r.WriteText(&b, ModeRealms, true, "/m.json")
	if !strings.Contains(b.String(), "0.17 s per tenant added; Keycloak busy 85%") {
		t.Errorf("text: %s", b.String())
	}
}

// A seed of fewer tenants than the manifest holds is refused before it
// touches the target (nil admin client): the rest would be orphaned.
func TestSeedRefusesToShrink(t *testing.T) {
	t.Parallel()
	s := Spec{Mode: ModeRealms, Tenants: 20, Content: DefaultContent, Prefix: "kcb", Seed: 1, Policy: Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}}
	path := filepath.Join(t.TempDir(), "dataset.json")
	if err := NewManifest(s, "https://127.0.0.1:1").Write(path); err != nil {
		t.Fatal(err)
	}
	s.Tenants = 10
	_, err := Seed(t.Context(), nil, s, SeedOptions{ManifestPath: path})
	if !errors.Is(err, ErrShrink) || !strings.Contains(err.Error(), "tenants 11–20") || !strings.Contains(err.Error(), "dataset delete") {
		t.Fatalf("seed 10 on a 20-tenant manifest: %v", err)
	}
	if m, err := ReadManifest(path); err != nil || m.Tenants() != 20 {
		t.Fatalf("the manifest after the refusal: %v, %v", m, err)
	}
}

// A fingerprint names a dataset's content in realms, snapshots and
// manifests made before: adding a content field must not change it for a
// spec that leaves the field at zero (ce6cd9b4b1df93c6 is the default
// dataset's, as a manifest of kcbench before OTP users recorded it).
func TestFingerprintStable(t *testing.T) {
	s := Spec{Mode: ModeRealms, Tenants: 1, Content: DefaultContent, Prefix: "kcb", Seed: 1}
	if got := s.Fingerprint(); got != "ce6cd9b4b1df93c6" {
		t.Errorf("default dataset's fingerprint %s, want ce6cd9b4b1df93c6", got)
	}
	s.Content.OTPUsers = 3
	otp := s.Fingerprint()
	if otp == "ce6cd9b4b1df93c6" {
		t.Error("OTP users do not change the fingerprint")
	}
	s.Content.UMAResources = 2
	if f := s.Fingerprint(); f == otp || f == "ce6cd9b4b1df93c6" {
		t.Error("UMA resources do not change the fingerprint")
	}
}

// A resource server per tenant: a confidential client with a service
// account, a resource and a scope permission per resource, one role
// policy on the realm's default roles, the role uma_protection and no
// other client roles; counted by Expected.
func TestUMAClient(t *testing.T) {
	for _, mode := range []Mode{ModeRealms, ModeOrgs} {
		c := DefaultContent
		c.UMAResources = 2
		s := Spec{Mode: mode, Tenants: 3, Content: c, Prefix: "kcb", Seed: 1}
		b := newBuilder(s)
		cs := b.clients(2)
		if len(cs) != 3 {
			t.Fatalf("%s: %d clients, want web, backend and the resource server", mode, len(cs))
		}
		api := cs[2]
		rs := api.AuthorizationSettings
		if api.ClientID != s.UMAClient(2) || !api.AuthorizationServicesEnabled || !api.ServiceAccountsEnabled || api.Secret == "" || rs == nil {
			t.Fatalf("%s: resource server %+v", mode, api)
		}
		if len(rs.Resources) != 2 || rs.Resources[1].Name != "doc-2" || len(rs.Policies) != 3 {
			t.Errorf("%s: settings %+v", mode, rs)
		}
		if want := `[{"id":"default-roles-` + s.RealmOf(2) + `","required":false}]`; rs.Policies[0].Config["roles"] != want {
			t.Errorf("%s: role policy %v, want roles %s", mode, rs.Policies[0].Config, want)
		}
		if rs.Policies[2].Config["resources"] != `["doc-2"]` || rs.Policies[2].Config["applyPolicies"] != `["users"]` {
			t.Errorf("%s: permission %+v", mode, rs.Policies[2])
		}
		roles := b.roles(2).Client[api.ClientID]
		if len(roles) != 1 || roles[0].Name != UMAProtection {
			t.Errorf("%s: the resource server's roles %+v, want %s alone", mode, roles, UMAProtection)
		}
		plain := s
		plain.Content.UMAResources = 0
		e, p := s.Expected(), plain.Expected()
		if e.Clients != p.Clients+3 || e.ClientRoles != p.ClientRoles+3 || e.UMAResources != 6 || p.UMAResources != 0 {
			t.Errorf("%s: expected %+v, without resource servers %+v", mode, e, p)
		}
	}
}

// Verify's progress counts clients for tenants of many clients, and a
// count past the expected total shows as a full bar, not beyond it.
func TestVerifyProgress(t *testing.T) {
	spec := Spec{Mode: ModeRealms, Tenants: 2, Content: DefaultContent, Prefix: "kcb"}
	for clients, want := range map[int]string{2: "tenants", bigClients - 1: "tenants", bigClients: "clients", 20_000: "clients"} {
		spec.Content.Clients = clients
		if got := VerifyUnit(NewManifest(spec, "http://kc")); got != want {
			t.Errorf("%d clients a tenant: progress in %s, want %s", clients, got, want)
		}
	}
	if got := VerifyUnit(&Manifest{Files: []FileRealm{{}}}); got != "realms" {
		t.Errorf("a file dataset: progress in %s, want realms", got)
	}
	var last [2]int
	tl := newTally(func(done, total int) { last = [2]int{done, total} }, 2)
	for range 3 {
		tl.tick()()
	}
	if last != [2]int{3, 3} {
		t.Errorf("3 of 2 counted: progress %v, want [3 3]", last)
	}
	if (&tally{}).tick() != nil {
		t.Error("a tally without progress ticks")
	}
}

// Orgs mode gives each tenant identity-provider users of its own: their
// total is bounded.
func TestOrgBrokerUsersBound(t *testing.T) {
	c := DefaultContent
	c.BrokerUsers = 10_000
	s := Spec{Mode: ModeOrgs, Tenants: 101, Content: c, Prefix: "kcb", Seed: 1}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "10000 a tenant × 101 tenants = 1010000") {
		t.Errorf("101 organizations of 10,000 provider users: %v", err)
	}
	s.Mode = ModeRealms // one realm of 10,000 shared by all
	if err := s.Validate(); err != nil {
		t.Errorf("realms mode: %v", err)
	}
}
