package stack

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/directory"
)

// reachableTempDir is a temp folder the unprivileged account a server
// runs as (when tests run as root) can enter.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	for p := d; p != os.TempDir() && p != "/" && p != "."; p = filepath.Dir(p) {
		os.Chmod(p, 0o755)
	}
	return d
}

func TestFindSlapdMissing(t *testing.T) {
	_, err := findSlapd(filepath.Join(t.TempDir(), "no-slapd"))
	if !errors.Is(err, ErrNoSlapd) {
		t.Fatalf("err = %v, want ErrNoSlapd", err)
	}
	if !strings.Contains(err.Error(), "apt-get install slapd") {
		t.Errorf("the error does not say how to install slapd: %v", err)
	}
}

func TestLDAPOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		o    LDAPOptions
		want string // "" for valid
	}{
		{"none", LDAPOptions{}, ""},
		{"slapd", LDAPOptions{Server: "slapd", CachePolicy: "NO_CACHE"}, ""},
		{"other server", LDAPOptions{Server: "389ds"}, "slapd"},
		{"cache policy", LDAPOptions{Server: "slapd", CachePolicy: "SOMETIMES"}, "cache policy"},
		{"both", LDAPOptions{Server: "slapd", External: &ExternalLDAP{URL: "ldap://h:389", BindDN: "cn=a", BaseDN: "dc=x"}}, "not both"},
		{"external", LDAPOptions{External: &ExternalLDAP{URL: "ldap://h:389", BindDN: "cn=a", BaseDN: "dc=x"}}, ""},
		{"http url", LDAPOptions{External: &ExternalLDAP{URL: "http://h", BindDN: "cn=a", BaseDN: "dc=x"}}, "ldap://"},
		{"no bind dn", LDAPOptions{External: &ExternalLDAP{URL: "ldap://h", BaseDN: "dc=x"}}, "--ldap-bind-dn"},
		{"no base dn", LDAPOptions{External: &ExternalLDAP{URL: "ldap://h", BindDN: "cn=a"}}, "--ldap-base-dn"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.o.Validate()
			if c.want == "" && err != nil {
				t.Fatalf("valid options refused: %v", err)
			}
			if c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

// TestSlapdStartStop runs the private slapd: the manager binds, the suffix
// exists, a user added with an {ARGON2} password binds with it and not with
// another, and stop leaves no process.
func TestSlapdStartStop(t *testing.T) {
	files, err := findSlapd("")
	if errors.Is(err, ErrNoSlapd) || testing.Short() {
		t.Skip("slapd not installed (apt-get install slapd)")
	}
	if err != nil {
		t.Fatal(err)
	}
	u, err := chooseLDAPUser()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(reachableTempDir(t), "ldap")
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &ldapServer{slapdFiles: files, Conf: filepath.Join(dir, "slapd.conf"), Data: filepath.Join(dir, "data"),
		Port: port, Suffix: directory.Suffix, User: u, LogPath: filepath.Join(filepath.Dir(dir), "slapd.log")}
	const pw = "manager-secret"
	if err := initLDAP(s, pw); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.Conf); strings.Contains(string(b), pw) {
		t.Error("slapd.conf holds the manager password in clear")
	}
	if st, _ := os.Stat(s.Conf); st.Mode().Perm() != 0o600 {
		t.Errorf("slapd.conf mode %v, want 0600", st.Mode().Perm())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := startLDAP(ctx, s, pw, false); err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	mgr := directory.Conn{URL: s.URL(), BindDN: "cn=admin," + s.Suffix, Password: pw}
	hash, err := directory.Hash(directory.Argon2, directory.KeycloakArgon2, "user-pw", []byte("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	ou := directory.OU("t00001", s.Suffix)
	p := directory.Person{UID: "user-00001", FirstName: "User", LastName: "t00001-00001", Email: "u@t.example.com", Password: hash}.Entry(ou.DN)
	res, err := mgr.Add(ctx, []directory.Entry{ou, p}, 2)
	if err != nil || res.Added != 2 {
		t.Fatalf("add: %+v, %v", res, err)
	}
	if res, err := mgr.Add(ctx, []directory.Entry{ou, p}, 2); err != nil || res.Existing != 2 {
		t.Fatalf("add again: %+v, %v; want 2 existing", res, err)
	}
	if err := bindAs(ctx, mgr, p.DN, "user-pw"); err != nil {
		t.Errorf("bind as the user with its password: %v", err)
	}
	if err := bindAs(ctx, mgr, p.DN, "wrong"); !errors.Is(err, directory.ErrBind) {
		t.Errorf("bind with a wrong password: %v, want ErrBind", err)
	}
	wrong := mgr
	wrong.Password = "nope"
	if err := wrong.Check(ctx); !errors.Is(err, directory.ErrBind) || !strings.Contains(err.Error(), "invalid credentials") {
		t.Errorf("manager with a wrong password: %v", err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if left := s.Proc.Members(); len(left) > 0 {
		t.Fatalf("slapd processes left after stop: %v", left)
	}
	if err := mgr.Check(ctx); !errors.Is(err, directory.ErrUnreachable) {
		t.Errorf("after stop: %v, want ErrUnreachable", err)
	}
}

// bindAs binds as dn with password: what Keycloak's LDAP provider does to
// check a login.
func bindAs(ctx context.Context, c directory.Conn, dn, password string) error {
	c.BindDN, c.Password = dn, password
	return c.Check(ctx)
}
