package directory

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"net"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

func TestWriteLDIF(t *testing.T) {
	root, err := Root(Suffix)
	if err != nil {
		t.Fatal(err)
	}
	ou := OU("t00001", Suffix)
	p := Person{UID: "user-00001", FirstName: "User", LastName: "Ünïcode", Email: "user-00001@t00001.example.com", Password: "{SSHA}abc="}.Entry(ou.DN)
	var b bytes.Buffer
	if err := WriteLDIF(&b, []Entry{root, ou, p}); err != nil {
		t.Fatal(err)
	}
	want := `dn: dc=kcbench,dc=local
objectClass: top
objectClass: dcObject
objectClass: organization
dc: kcbench
o: kcbench

dn: ou=t00001,dc=kcbench,dc=local
objectClass: top
objectClass: organizationalUnit
ou: t00001

dn: uid=user-00001,ou=t00001,dc=kcbench,dc=local
objectClass: top
objectClass: person
objectClass: organizationalPerson
objectClass: inetOrgPerson
uid: user-00001
cn: User
sn:: ` + base64.StdEncoding.EncodeToString([]byte("Ünïcode")) + `
mail: user-00001@t00001.example.com
userPassword: {SSHA}abc=
`
	if b.String() != want {
		t.Errorf("LDIF:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestSafeString(t *testing.T) {
	for v, want := range map[string]bool{
		"": true, "plain": true, "{ARGON2}$argon2id$v=19$m=7168": true,
		" lead": false, "trail ": false, ":colon": false, "<lt": false, "a\nb": false, "é": false,
	} {
		if got := safeString(v); got != want {
			t.Errorf("safeString(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestEscapeDN(t *testing.T) {
	for in, want := range map[string]string{
		"user-00001": "user-00001",
		"a,b":        `a\,b`,
		"#x":         `\#x`,
		" x ":        `\ x\ `,
		`a+b=c"<>;\`: `a\+b\=c\"\<\>\;\\`,
	} {
		if got := EscapeDN(in); got != want {
			t.Errorf("EscapeDN(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRoot(t *testing.T) {
	if _, err := Root("ou=x,dc=y"); err == nil {
		t.Error("a suffix starting with ou= is accepted")
	}
	e, err := Root("dc=example,dc=org")
	if err != nil || e.Get("dc") != "example" || e.Get("o") != "example" {
		t.Errorf("Root = %+v, %v", e, err)
	}
}

func TestHash(t *testing.T) {
	salt := []byte("0123456789abcdef")
	a, err := Hash(Argon2, KeycloakArgon2, "pw", salt)
	if err != nil {
		t.Fatal(err)
	}
	k := argon2.IDKey([]byte("pw"), salt, 5, 7168, 1, 32)
	want := "{ARGON2}$argon2id$v=19$m=7168,t=5,p=1$MDEyMzQ1Njc4OWFiY2RlZg$" + base64.RawStdEncoding.EncodeToString(k)
	if a != want {
		t.Errorf("argon2 = %s, want %s", a, want)
	}
	s, err := Hash(SSHA, Argon2Params{}, "pw", salt[:4])
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "{SSHA}"))
	sum := sha1.Sum(append([]byte("pw"), salt[:4]...))
	if !strings.HasPrefix(s, "{SSHA}") || !bytes.Equal(raw, append(sum[:], salt[:4]...)) {
		t.Errorf("ssha = %s", s)
	}
	if c, _ := Hash(Cleartext, Argon2Params{}, "pw", nil); c != "pw" {
		t.Errorf("cleartext = %q", c)
	}
	if _, err := Hash("md4", Argon2Params{}, "pw", nil); err == nil {
		t.Error("an unknown scheme is accepted")
	}
}

func TestParentsPrefix(t *testing.T) {
	root, _ := Root(Suffix)
	ou1, ou2 := OU("a", Suffix), OU("b", Suffix)
	u1 := Person{UID: "x"}.Entry(ou1.DN)
	u2 := Person{UID: "y"}.Entry(ou2.DN)
	for _, c := range []struct {
		es   []Entry
		want int
	}{
		{[]Entry{u1, u2}, 0},
		{[]Entry{ou1, u1}, 1},
		{[]Entry{ou1, ou2, u1, u2}, 2},
		{[]Entry{root, ou1, u1}, 2},
	} {
		if got := parentsPrefix(c.es); got != c.want {
			t.Errorf("parentsPrefix(%v) = %d, want %d", c.es, got, c.want)
		}
	}
}

func TestValidateURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"ldap://127.0.0.1:389": true, "ldaps://dir.example.com": true,
		"http://x": false, "ldap://": false, "ldap://u:p@h": false, "": false,
	} {
		if err := ValidateURL(raw); (err == nil) != ok {
			t.Errorf("ValidateURL(%q) = %v", raw, err)
		}
	}
}

func TestCheckUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	err = Conn{URL: "ldap://" + addr, BindDN: "cn=x", Password: "y"}.Check(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("err = %v, want ErrUnreachable naming %s", err, addr)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("the error spans lines: %q", err)
	}
}
