package dataset

import (
	"bytes"
	"strings"
	"testing"
)

func strp(s string) *string { return &s }

func TestCopyText(t *testing.T) {
	var b bytes.Buffer
	copyText(&b, nil)
	b.WriteByte('|')
	copyText(&b, strp("a\tb\nc\\d\re"))
	if got, want := b.String(), `\N|a\tb\nc\\d\re`; got != want {
		t.Errorf("copyText = %q, want %q", got, want)
	}
}

func TestUUIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		u := newUUID()
		if !isUUID(u) || u[14] != '4' || !strings.ContainsRune("89ab", rune(u[19])) {
			t.Fatalf("newUUID() = %q: not a version 4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("newUUID() repeated %q", u)
		}
		seen[u] = true
	}
	for _, s := range []string{"", "kcb-t00001", "0a999504-0ac7-44c9-b3f1-79b38808a4e", "0a999504x0ac7-44c9-b3f1-79b38808a4e3", "0a999504-0ac7-44c9-b3f1-79b38808a4eg"} {
		if isUUID(s) {
			t.Errorf("isUUID(%q) = true", s)
		}
	}
	if old := "Cs2cWMfxOEBbOrRoqVigVSixQQNtp5ZO1AqqnNFgAAA"; len(randomLike(old)) != len(old) || randomLike(old) == old {
		t.Errorf("randomLike(%q) = %q", old, randomLike(old))
	}
}

// table is a synthetic table of Keycloak's schema with its copy rules.
func table(t *testing.T, name string, cols ...string) *dbTable {
	t.Helper()
	tb := &dbTable{name: name, cols: cols, text: make([]bool, len(cols))}
	for i := range tb.text {
		tb.text[i] = true
	}
	if err := applyRules("public", []*dbTable{tb}); err != nil {
		t.Fatal(err)
	}
	return tb
}

// A synthetic template: a realm (owned), a client of it with a secret, a
// role mapping onto a foreign role, a user without email, key components.
func TestInstantiate(t *testing.T) {
	realm := table(t, "realm", "id", "name", "master_admin_client", "display_name")
	client := table(t, "client", "id", "realm_id", "client_id", "secret", "enabled", "base_url", "created_timestamp")
	roles := table(t, "composite_role", "composite", "child_role")
	users := table(t, "user_entity", "id", "realm_id", "username", "email_constraint", "first_name")
	creds := table(t, "credential", "id", "user_id", "type", "secret_data", "credential_data")
	comp := table(t, "component", "id", "realm_id", "provider_id", "provider_type")
	cfg := table(t, "component_config", "id", "component_id", "name", "value")
	const (
		realmID  = "13bb7e4c-c7e9-4cb4-8ff0-dee4e8235ff5"
		clientID = "fe44371e-f600-4b52-a63f-56f4920ce3d0"
		brokerID = "aa44371e-f600-4b52-a63f-56f4920ce3d0"
		foreign  = "5fa7b7ea-f311-4147-9a4f-6be81a37b08a"
		userID   = "0a999504-0ac7-44c9-b3f1-79b38808a4e3"
		emailC   = "032e8fe2-1d03-442b-aa84-5991409a4398"
		credID   = "0b999504-0ac7-44c9-b3f1-79b38808a4e3"
		rsaID    = "11111111-1111-4111-8111-111111111111"
		hmacID   = "22222222-2222-4222-8222-222222222222"
		userProf = "33333333-3333-4333-8333-333333333333"
	)
	row := func(vs ...string) []*string {
		out := make([]*string, len(vs))
		for i, v := range vs {
			if v != "NULL" {
				out[i] = strp(v)
			}
		}
		return out
	}
	tp := &template{
		tables: []*dbTable{realm, client, roles, users, creds, comp, cfg},
		rows: map[*dbTable][][]*string{
			realm: {row(realmID, "kcb-t00001", clientID, "kcbench tenant t00001")},
			client: {row(clientID, realmID, "backend", "oldsecret", "true", "/realms/kcb-t00001/account/", "1700000000000"),
				row(brokerID, realmID, "broker", "Q2VZdb1GfbE8Zu2ft9Vbc0iZ9I1mQ3Ha", "true", "NULL", "1700000000000")},
			roles: {row(foreign, clientID)},
			users: {row(userID, realmID, "user-00001", emailC, "Admin of kcb-t00001")},
			creds: {row(credID, userID, "password", `{"value":"old"}`, `{"algorithm":"argon2"}`)},
			comp: {row(rsaID, realmID, "rsa-generated", keyProviderType), row(hmacID, realmID, "hmac-generated", keyProviderType),
				row(userProf, realmID, "declarative-user-profile", "org.keycloak.userprofile.UserProfileProvider")},
			cfg: {
				row("c1111111-1111-4111-8111-111111111111", rsaID, "privateKey", "OLDKEY"),
				row("c2222222-2222-4222-8222-222222222222", rsaID, "certificate", "OLDCERT"),
				row("c3333333-3333-4333-8333-333333333333", rsaID, "priority", "100"),
				row("c4444444-4444-4444-8444-444444444444", hmacID, "secret", "Cs2cWMfxOEBbOrRoqVigVSixQQNtp5ZO1AqqnNFgAAA"),
				row("c5555555-5555-4555-8555-555555555555", hmacID, "kid", "716d93a2-bb09-46b6-9f59-4df51d36ace0"),
				row("c6666666-6666-4666-8666-666666666666", userProf, "kc.user.profile.config", `{"attributes":[]}`),
			},
		},
		ids:    map[string]bool{},
		tenant: "t00001",
	}
	for _, tb := range tp.tables {
		for _, r := range tp.rows[tb] {
			for i, v := range r {
				if tb.rules[i] == ruleID && v != nil {
					tp.ids[*v] = true
				}
			}
		}
	}
	keys, err := tp.keyEntries()
	if err != nil || len(keys) != 5 {
		t.Fatalf("keyEntries = %v, %v; want the 5 entries of the 2 key providers", keys, err)
	}
	// The first name "Admin of kcb-t00001" merely contains the template's realm
	// name: not one of the names mapped exactly, so the copy stops.
	exact := map[string]string{"kcb-t00001": "kcb-t00042", "oldsecret": "newsecret", "kcbench tenant t00001": "kcbench tenant t00042",
		"/realms/kcb-t00001/account/": "/realms/kcb-t00042/account/"}
	c := copyOf{tenant: "t00042", realm: "kcb-t00042", exact: exact, now: "1800000000000"}
	if _, err := tp.instantiate(c, keys); err == nil || !strings.Contains(err.Error(), "user_entity.first_name") {
		t.Fatalf("a value naming the template that no rule maps: err = %v, want one naming user_entity.first_name", err)
	}
	*tp.rows[users][0][4] = "User"
	c.hashes = map[string]string{userID: `{"value":"new"}`}
	in, err := tp.instantiate(c, keys)
	if err != nil {
		t.Fatal(err)
	}
	r := in[realm][0]
	newRealm, newClient := *r[0], *r[2]
	if newRealm == realmID || !isUUID(newRealm) || *r[1] != "kcb-t00042" || newClient == clientID || !isUUID(newClient) || *r[3] != "kcbench tenant t00042" {
		t.Errorf("realm row %q %q %q %q", *r[0], *r[1], *r[2], *r[3])
	}
	cl := in[client][0]
	if *cl[0] != newClient || *cl[1] != newRealm || *cl[2] != "backend" || *cl[3] != "newsecret" || *cl[4] != "true" ||
		*cl[5] != "/realms/kcb-t00042/account/" || *cl[6] != "1800000000000" {
		t.Errorf("client row %v", []string{*cl[0], *cl[1], *cl[2], *cl[3], *cl[4], *cl[5], *cl[6]})
	}
	if b := in[client][1]; *b[3] == "Q2VZdb1GfbE8Zu2ft9Vbc0iZ9I1mQ3Ha" || len(*b[3]) != 32 || b[5] != nil {
		t.Errorf("Keycloak's own client secret not renewed: %q", *b[3])
	}
	if cr := in[roles][0]; *cr[0] != foreign || *cr[1] != newClient {
		t.Errorf("composite row: the foreign parent must stay, the owned child move: %q %q", *cr[0], *cr[1])
	}
	if u := in[users][0]; *u[2] != "user-00001" || *u[3] == emailC || !isUUID(*u[3]) || *u[0] == userID {
		t.Errorf("user row %q %q %q", *u[0], *u[2], *u[3])
	}
	if cd := in[creds][0]; *cd[1] != *in[users][0][0] || *cd[3] != `{"value":"new"}` || *cd[4] != `{"algorithm":"argon2"}` {
		t.Errorf("credential row %q %q %q", *cd[1], *cd[3], *cd[4])
	}
	got := map[string]string{}
	for _, x := range in[cfg] {
		got[*x[2]] = *x[3]
	}
	if got["privateKey"] == "OLDKEY" || got["certificate"] == "OLDCERT" || got["priority"] != "100" ||
		got["secret"] == "Cs2cWMfxOEBbOrRoqVigVSixQQNtp5ZO1AqqnNFgAAA" || got["kid"] == "716d93a2-bb09-46b6-9f59-4df51d36ace0" || !isUUID(got["kid"]) ||
		got["kc.user.profile.config"] != `{"attributes":[]}` {
		t.Errorf("key config not renewed: %v", got)
	}
	// The template is untouched, and a second copy gets other ids.
	if *tp.rows[realm][0][1] != "kcb-t00001" {
		t.Error("instantiate changed the template")
	}
	in2, _ := tp.instantiate(copyOf{tenant: "t00043", realm: "kcb-t00043", exact: map[string]string{"kcb-t00001": "kcb-t00043",
		"kcbench tenant t00001": "x", "/realms/kcb-t00001/account/": "y"}}, keys)
	if *in2[realm][0][0] == newRealm {
		t.Error("two copies share a realm id")
	}
}

// Every key provider's secrets are renewed; one kcbench does not know
// stops the clone.
func TestKeyEntries(t *testing.T) {
	for _, c := range []struct {
		provider, entry string
		want            keyAction
		err             string
	}{
		{"rsa-generated", "privateKey", keyRSAPriv, ""},
		{"rsa-enc-generated", "certificate", keyRSACert, ""},
		{"aes-generated", "secret", keySecret, ""},
		{"hmac-generated", "kid", keyKID, ""},
		{"hmac-generated", "algorithm", keyKeep, ""},
		{"ecdsa-generated", "ecdsaPrivateKey", 0, `key provider "ecdsa-generated"`},
		{"rsa-generated", "passphrase", 0, `config entry "passphrase"`},
	} {
		a, err := keyEntry(c.provider, c.entry)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("keyEntry(%s, %s): err = %v, want %q", c.provider, c.entry, err, c.err)
			}
			continue
		}
		if err != nil || a != c.want {
			t.Errorf("keyEntry(%s, %s) = %v, %v; want %v", c.provider, c.entry, a, err, c.want)
		}
	}
}

// A table or column the allow-list does not know stops the clone, named.
func TestApplyRulesRefusesUnknown(t *testing.T) {
	ok := []*dbTable{{name: "realm", cols: []string{"id", "name"}}, {name: "event_entity", cols: []string{"whatever"}}}
	if err := applyRules("public", ok); err != nil {
		t.Fatalf("known tables: %v", err)
	}
	if ok[0].kind != tableCopy || ok[0].rules[0] != ruleID || ok[1].kind != tableSkip {
		t.Errorf("rules %+v %+v", ok[0], ok[1])
	}
	bad := []*dbTable{{name: "realm", cols: []string{"id", "name", "tenant_secret"}}, {name: "realm_secrets", cols: []string{"id"}}}
	err := applyRules("kc", bad)
	if err == nil || !strings.Contains(err.Error(), "column realm.tenant_secret") || !strings.Contains(err.Error(), "table realm_secrets") || !strings.Contains(err.Error(), `"kc"`) {
		t.Fatalf("err = %v, want one naming the column, the table and the schema", err)
	}
}

// Every table with copy rules parses, and no column has two rules.
func TestCopyRulesParse(t *testing.T) {
	rules := copyRules()
	if rules["user_entity"].cols["email_constraint"] != ruleFresh || rules["credential"].cols["secret_data"] != ruleHash ||
		rules["offline_user_session"].kind != tableSkip || rules["federated_user"].kind != tableNone ||
		rules["identity_provider"].cols["internal_id"] != ruleID {
		t.Errorf("rules: %+v", rules["user_entity"])
	}
}

func TestRandomLike(t *testing.T) {
	for _, old := range []string{"Q2VZdb1GfbE8Zu2ft9Vbc0iZ9I1mQ3Ha", "Cs2cWMfxOEBbOrRoqVigVSixQQNtp5ZO1AqqnNFgAAA", "716d93a2-bb09-46b6-9f59-4df51d36ace0"} {
		n := randomLike(old)
		if n == old || len(n) != len(old) {
			t.Errorf("randomLike(%q) = %q", old, n)
		}
	}
	if n := randomLike("716d93a2-bb09-46b6-9f59-4df51d36ace0"); !isUUID(n) {
		t.Errorf("randomLike(uuid) = %q", n)
	}
	if n := randomLike("Q2VZdb1GfbE8Zu2ft9Vbc0iZ9I1mQ3Ha"); strings.ContainsAny(n, "-_") {
		t.Errorf("randomLike(alphanumeric) = %q", n)
	}
}

// The names mapped exactly line up between tenants, and unique salts give
// every user its own salt.
func TestNamesAndSalts(t *testing.T) {
	for _, mode := range []Mode{ModeRealms, ModeOrgs} {
		s := Spec{Mode: mode, Tenants: 3, Content: DefaultContent, Policy: Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, Prefix: "kcb", Seed: 1}
		b := newBuilder(s)
		a, c := b.names(1), b.names(42)
		if len(a) != len(c) {
			t.Fatalf("%s: names of tenants 1 and 42: %d and %d", mode, len(a), len(c))
		}
		for k := range a {
			if strings.Contains(c[k], "t00001") {
				t.Errorf("%s: tenant 42's name %q names tenant 1", mode, c[k])
			}
		}
		if b.credential(1, 1).SecretData != b.credential(2, 3).SecretData {
			t.Errorf("%s: shared salts differ", mode)
		}
		s.UniqueSalts = true
		u := newBuilder(s)
		if u.credential(1, 1).SecretData == u.credential(2, 1).SecretData || u.credential(1, 1).SecretData == u.credential(1, 2).SecretData {
			t.Errorf("%s: unique salts shared", mode)
		}
		if u.credential(1, 1).SecretData != u.ownCredential(1, 1).SecretData {
			t.Errorf("%s: a user's salt is not derived from the seed", mode)
		}
		if s.Fingerprint() == (Spec{Mode: mode, Tenants: 3, Content: DefaultContent, Policy: s.Policy, Prefix: "kcb", Seed: 1}).Fingerprint() {
			t.Errorf("%s: unique salts do not change the fingerprint", mode)
		}
	}
}

// BenchmarkUserCredential is the cost of one user's own password hash
// (--unique-salts), per policy.
func BenchmarkUserCredential(b *testing.B) {
	for _, pol := range []string{"default", "pbkdf2-sha512:210000", "pbkdf2-sha512:27500", "pbkdf2-sha256:1"} {
		b.Run(pol, func(b *testing.B) {
			p, _ := ParsePolicy(pol)
			bl := newBuilder(Spec{Mode: ModeRealms, Tenants: 1, Content: DefaultContent, Policy: p, Prefix: "kcb", Seed: 1, UniqueSalts: true})
			for i := 0; b.Loop(); i++ {
				bl.ownCredential(1, i)
			}
		})
	}
}

// Rows are found through id and reference columns of any type: a uuid or
// jsonb column is compared as text.
func TestMatchSQL(t *testing.T) {
	tb := &dbTable{name: "user_entity", cols: []string{"id", "realm_id", "username", "service_account_client_link"}, text: []bool{false, true, true, true}}
	if err := applyRules("public", []*dbTable{tb}); err != nil {
		t.Fatal(err)
	}
	got := matchSQL(tb, func(i int) bool { return tb.rules[i] == ruleID || tb.rules[i] == ruleRef })
	want := `"id"::text = ANY($1) OR "realm_id" = ANY($1) OR "service_account_client_link" = ANY($1)`
	if got != want {
		t.Errorf("matchSQL = %s, want %s", got, want)
	}
}

func TestRemapIDs(t *testing.T) {
	a, b := "790e2adb-ed79-40c4-878e-26f62296955f", "8bef5649-8704-432c-82ea-89ca93fe7615"
	shared := "0dc3b58f-cfcf-4349-9023-f4c2bee01e6d"
	ids := map[string]string{a: b}
	for in, want := range map[string]string{
		`[{"id":"` + a + `","required":false}]`:      `[{"id":"` + b + `","required":false}]`,
		`[{"id":"` + shared + `","required":false}]`: `[{"id":"` + shared + `","required":false}]`,
		`["` + a + `","` + shared + `","` + a + `"]`: `["` + b + `","` + shared + `","` + b + `"]`,
		a:                 b,
		"no ids here":     "no ids here",
		a[:35]:            a[:35],
		"x" + a + a + "y": "x" + b + b + "y",
	} {
		if got := remapIDs(in, ids); got != want {
			t.Errorf("remapIDs(%q) = %q, want %q", in, got, want)
		}
	}
}
