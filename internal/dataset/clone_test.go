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

// A synthetic template: a realm (owned), a client of it with a secret, a
// role mapping onto a foreign role, a user without email, key components.
func TestInstantiate(t *testing.T) {
	realm := &dbTable{name: "realm", cols: []string{"id", "name", "master_admin_client"}, text: []bool{true, true, true}, pk: 0}
	client := &dbTable{name: "client", cols: []string{"id", "realm_id", "client_id", "secret", "enabled"}, text: []bool{true, true, true, true, false}, pk: 0}
	roles := &dbTable{name: "composite_role", cols: []string{"composite", "child_role"}, text: []bool{true, true}, pk: -1}
	users := &dbTable{name: "user_entity", cols: []string{"id", "realm_id", "username", "email_constraint"}, text: []bool{true, true, true, true}, pk: 0}
	comp := &dbTable{name: "component", cols: []string{"id", "realm_id", "provider_id"}, text: []bool{true, true, true}, pk: 0}
	cfg := &dbTable{name: "component_config", cols: []string{"id", "component_id", "name", "value"}, text: []bool{true, true, true, true}, pk: 0}
	const (
		realmID  = "13bb7e4c-c7e9-4cb4-8ff0-dee4e8235ff5"
		clientID = "fe44371e-f600-4b52-a63f-56f4920ce3d0"
		foreign  = "5fa7b7ea-f311-4147-9a4f-6be81a37b08a"
		userID   = "0a999504-0ac7-44c9-b3f1-79b38808a4e3"
		emailC   = "032e8fe2-1d03-442b-aa84-5991409a4398"
		rsaID    = "11111111-1111-4111-8111-111111111111"
		hmacID   = "22222222-2222-4222-8222-222222222222"
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
		tables: []*dbTable{realm, client, roles, users, comp, cfg},
		rows: map[*dbTable][][]*string{
			realm:  {row(realmID, "kcb-t00001", clientID)},
			client: {row(clientID, realmID, "backend", "oldsecret", "true")},
			roles:  {row(foreign, clientID)},
			users:  {row(userID, realmID, "user-1@t00001.example.com", emailC)},
			comp:   {row(rsaID, realmID, "rsa-generated"), row(hmacID, realmID, "hmac-generated")},
			cfg: {
				row("c1111111-1111-4111-8111-111111111111", rsaID, "privateKey", "OLDKEY"),
				row("c2222222-2222-4222-8222-222222222222", rsaID, "certificate", "OLDCERT"),
				row("c3333333-3333-4333-8333-333333333333", rsaID, "priority", "100"),
				row("c4444444-4444-4444-8444-444444444444", hmacID, "secret", "Cs2cWMfxOEBbOrRoqVigVSixQQNtp5ZO1AqqnNFgAAA"),
				row("c5555555-5555-4555-8555-555555555555", hmacID, "kid", "716d93a2-bb09-46b6-9f59-4df51d36ace0"),
			},
		},
		ids:    map[string]bool{},
		tenant: "t00001",
	}
	for _, tb := range tp.tables {
		for _, r := range tp.rows[tb] {
			if tb.pk >= 0 {
				tp.ids[*r[tb.pk]] = true
			}
		}
	}
	keys, err := tp.keySecrets()
	if err != nil || len(keys) != 4 {
		t.Fatalf("keySecrets = %v, %v; want the 4 secret entries", keys, err)
	}
	in, err := tp.instantiate(copyOf{tenant: "t00042", realm: "kcb-t00042", exact: map[string]string{"oldsecret": "newsecret"}}, keys)
	if err != nil {
		t.Fatal(err)
	}
	r := in[realm][0]
	newRealm, newClient := *r[0], *r[2]
	if newRealm == realmID || !isUUID(newRealm) || *r[1] != "kcb-t00042" || newClient == clientID || !isUUID(newClient) {
		t.Errorf("realm row %q %q %q", *r[0], *r[1], *r[2])
	}
	c := in[client][0]
	if *c[0] != newClient || *c[1] != newRealm || *c[2] != "backend" || *c[3] != "newsecret" || *c[4] != "true" {
		t.Errorf("client row %v", []string{*c[0], *c[1], *c[2], *c[3], *c[4]})
	}
	if cr := in[roles][0]; *cr[0] != foreign || *cr[1] != newClient {
		t.Errorf("composite row: the foreign parent must stay, the owned child move: %q %q", *cr[0], *cr[1])
	}
	if u := in[users][0]; *u[2] != "user-1@t00042.example.com" || *u[3] == emailC || !isUUID(*u[3]) {
		t.Errorf("user row %q %q", *u[2], *u[3])
	}
	got := map[string]string{}
	for _, x := range in[cfg] {
		got[*x[2]] = *x[3]
	}
	if got["privateKey"] == "OLDKEY" || got["certificate"] == "OLDCERT" || got["priority"] != "100" ||
		got["secret"] == "Cs2cWMfxOEBbOrRoqVigVSixQQNtp5ZO1AqqnNFgAAA" || got["kid"] == "716d93a2-bb09-46b6-9f59-4df51d36ace0" || !isUUID(got["kid"]) {
		t.Errorf("key config not renewed: %v", got)
	}
	// The template is untouched, and a second copy gets other ids.
	if *tp.rows[realm][0][1] != "kcb-t00001" {
		t.Error("instantiate changed the template")
	}
	in2, _ := tp.instantiate(copyOf{tenant: "t00043", realm: "kcb-t00043"}, keys)
	if *in2[realm][0][0] == newRealm {
		t.Error("two copies share a realm id")
	}
}
