package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/kcbench/kcbench/internal/directory"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
)

// LDAPOptions put the dataset's users into an LDAP directory that
// Keycloak reads through its LDAP user-storage provider.
type LDAPOptions struct {
	// Server is "slapd" for a private OpenLDAP started with the stack,
	// "" for none (or for External).
	Server string `json:"server,omitempty"`
	// External is a directory kcbench does not run.
	External *ExternalLDAP `json:"external,omitempty"`
	// Import is the provider's importEnabled: users are copied into
	// Keycloak's database on first use (passwords are still checked by
	// an LDAP bind).
	Import bool `json:"import"`
	// CachePolicy is the provider's cachePolicy: DEFAULT, NO_CACHE,
	// EVICT_DAILY, EVICT_WEEKLY or MAX_LIFESPAN.
	CachePolicy string `json:"cache_policy,omitempty"`
	// Slapd is the slapd binary (default: slapd on PATH or in /usr/sbin).
	Slapd string `json:"slapd,omitempty"`
}

// LDAPSlapd is the one private directory server kcbench runs.
const LDAPSlapd = "slapd"

// CachePolicies are what Keycloak's LDAP provider accepts.
var CachePolicies = []string{"DEFAULT", "NO_CACHE", "EVICT_DAILY", "EVICT_WEEKLY", "MAX_LIFESPAN"}

// ExternalLDAP is an existing directory: its URL, bind DN and password,
// and the base DN the dataset's users go below.
type ExternalLDAP struct {
	URL      string `json:"url"`
	BindDN   string `json:"bind_dn"`
	Password string `json:"-"`
	BaseDN   string `json:"base_dn"`
}

// Enabled reports whether the users live in a directory.
func (o LDAPOptions) Enabled() bool { return o.Server != "" || o.External != nil }

// Validate checks the options without side effects.
func (o LDAPOptions) Validate() error {
	var errs []error
	if o.Server != "" && o.Server != LDAPSlapd {
		errs = append(errs, fmt.Errorf("ldap %q: the private directory kcbench runs is slapd", o.Server))
	}
	if o.Server != "" && o.External != nil {
		errs = append(errs, errors.New("ldap: either a private slapd (--ldap slapd) or an existing directory (--ldap-url), not both"))
	}
	if e := o.External; e != nil {
		if err := directory.ValidateURL(e.URL); err != nil {
			errs = append(errs, err)
		}
		if e.BindDN == "" {
			errs = append(errs, errors.New("ldap url: --ldap-bind-dn is required"))
		}
		if e.BaseDN == "" {
			errs = append(errs, errors.New("ldap url: --ldap-base-dn is required"))
		}
	}
	if o.CachePolicy != "" && !containsString(CachePolicies, o.CachePolicy) {
		errs = append(errs, fmt.Errorf("ldap cache policy %q: want one of %s", o.CachePolicy, strings.Join(CachePolicies, ", ")))
	}
	return errors.Join(errs...)
}

func containsString(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// ErrNoSlapd means the OpenLDAP server is not installed.
var ErrNoSlapd = errors.New("slapd not found")

// slapdInstall is how to get slapd.
const slapdInstall = "install it (Debian/Ubuntu: apt-get install slapd), pass --slapd PATH, or use an existing directory (--ldap-url)"

// slapdFiles are the binaries, modules and schemas a private slapd needs.
type slapdFiles struct {
	Bin, Slapadd, ModuleDir, SchemaDir string
}

// findSlapd resolves slapd (path when given), slapadd beside it, the
// module folder holding back_mdb and argon2 (when they are modules) and
// the schema folder.
func findSlapd(path string) (slapdFiles, error) {
	var f slapdFiles
	if path != "" {
		st, err := os.Stat(path)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return f, fmt.Errorf("%w: --slapd %s is not an executable file: %s", ErrNoSlapd, path, slapdInstall)
		}
		f.Bin, _ = filepath.Abs(path)
	} else if p, err := exec.LookPath("slapd"); err == nil {
		f.Bin = p
	} else {
		for _, p := range []string{"/usr/sbin/slapd", "/usr/local/sbin/slapd", "/usr/local/libexec/slapd", "/usr/libexec/slapd"} {
			if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
				f.Bin = p
				break
			}
		}
	}
	if f.Bin == "" {
		return f, fmt.Errorf("%w on PATH or in /usr/sbin: %s", ErrNoSlapd, slapdInstall)
	}
	for _, d := range []string{filepath.Dir(f.Bin), "/usr/sbin", "/usr/local/sbin"} {
		if st, err := os.Stat(filepath.Join(d, "slapadd")); err == nil && !st.IsDir() {
			f.Slapadd = filepath.Join(d, "slapadd")
			break
		}
	}
	for _, d := range []string{"/usr/lib/ldap", "/usr/lib64/openldap", "/usr/lib/openldap", "/usr/local/libexec/openldap"} {
		if _, err := os.Stat(filepath.Join(d, "back_mdb.so")); err == nil {
			f.ModuleDir = d
			break
		}
	}
	for _, d := range []string{"/etc/ldap/schema", "/etc/openldap/schema", "/usr/local/etc/openldap/schema"} {
		if _, err := os.Stat(filepath.Join(d, "inetorgperson.schema")); err == nil {
			f.SchemaDir = d
			break
		}
	}
	if f.SchemaDir == "" {
		return f, fmt.Errorf("%w: %s has no schema folder (inetorgperson.schema in /etc/ldap/schema): %s", ErrNoSlapd, f.Bin, slapdInstall)
	}
	return f, nil
}

// ldapServer is the private slapd of a stack.
type ldapServer struct {
	slapdFiles
	Conf    string  `json:"config"`
	Data    string  `json:"data"`
	Port    int     `json:"port"`
	Suffix  string  `json:"suffix"`
	User    *pgUser `json:"user,omitempty"`
	Proc    Proc    `json:"proc"`
	LogPath string  `json:"log"`

	exited chan struct{}
}

// URL is the server's ldap:// address.
func (s *ldapServer) URL() string { return "ldap://127.0.0.1:" + strconv.Itoa(s.Port) }

// chooseLDAPUser is the account slapd runs as when kcbench runs as root:
// openldap (Debian's slapd package makes it), else nobody.
func chooseLDAPUser() (*pgUser, error) { return serverUser("slapd", "openldap", "ldap", "nobody") }

// slapdConfig is the generated slapd.conf: one MDB database for Suffix,
// the manager as rootdn (its password as {SSHA}), passwords readable by
// nobody but checkable by a bind, everything else readable by bound users.
var slapdConfig = template.Must(template.New("slapd").Parse(`# generated by kcbench
include {{.SchemaDir}}/core.schema
include {{.SchemaDir}}/cosine.schema
include {{.SchemaDir}}/inetorgperson.schema
pidfile {{.Dir}}/slapd.pid
argsfile {{.Dir}}/slapd.args
{{- if .ModuleDir}}
modulepath {{.ModuleDir}}
moduleload back_mdb
{{- if .Argon2}}
moduleload argon2
{{- end}}
{{- end}}
# searches of a big dataset
sizelimit unlimited
threads 8

database mdb
suffix "{{.Suffix}}"
rootdn "{{.RootDN}}"
rootpw {{.RootPW}}
directory {{.Data}}
maxsize 8589934592
# a benchmark directory is disposable, as its PostgreSQL is
dbnosync
index objectClass eq
index uid eq
index mail eq
index cn,sn eq,sub
access to attrs=userPassword
    by anonymous auth
    by * none
access to *
    by users read
    by * none
`))

// writeConfig renders slapd.conf (0600: it holds the manager's hash).
func (s *ldapServer) writeConfig(password string) error {
	salt := make([]byte, 8)
	rand.Read(salt)
	pw, err := directory.Hash(directory.SSHA, directory.Argon2Params{}, password, salt)
	if err != nil {
		return err
	}
	argon2 := s.ModuleDir != "" && fileExists(filepath.Join(s.ModuleDir, "argon2.so"))
	var b bytes.Buffer
	if err := slapdConfig.Execute(&b, map[string]any{
		"SchemaDir": s.SchemaDir, "ModuleDir": s.ModuleDir, "Argon2": argon2, "Dir": filepath.Dir(s.Conf),
		"Suffix": s.Suffix, "RootDN": "cn=admin," + s.Suffix, "RootPW": pw, "Data": s.Data,
	}); err != nil {
		return err
	}
	if err := os.WriteFile(s.Conf, b.Bytes(), 0o600); err != nil {
		return err
	}
	return s.User.chown(s.Conf)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// initLDAP lays out the folder (config, empty database) of a new server.
func initLDAP(s *ldapServer, password string) error {
	dir := filepath.Dir(s.Conf)
	if err := s.User.checkReachable(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Data, 0o700); err != nil {
		return err
	}
	if err := s.User.chown(dir, s.Data); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return s.writeConfig(password)
}

// startLDAP runs slapd in the foreground (-d 0) as a direct child, in its
// own process group, and waits until the manager can bind; then it makes
// the suffix's entry when there is none.
func startLDAP(ctx context.Context, s *ldapServer, password string, detached bool) error {
	c, err := serverCmd{Name: "slapd", Bin: s.Bin, Args: []string{"-d", "0", "-h", s.URL() + "/", "-f", s.Conf},
		Dir: filepath.Dir(s.Conf), Log: s.LogPath, User: s.User, Stop: syscall.SIGTERM}.start(detached)
	if err != nil {
		return err
	}
	s.Proc, s.exited = c.proc, c.exited
	conn := directory.Conn{URL: s.URL(), BindDN: "cn=admin," + s.Suffix, Password: password}
	if err := c.waitReady(ctx, 30*time.Second, "not ready", func() error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return conn.Check(cctx)
	}, func() { s.stop() }); err != nil {
		return err
	}
	root, err := directory.Root(s.Suffix)
	if err != nil {
		return err
	}
	if _, err := conn.Add(ctx, []directory.Entry{root}, 1); err != nil {
		return fmt.Errorf("slapd: %w", err)
	}
	return nil
}

// stop asks slapd to shut down (SIGTERM), then kills.
func (s *ldapServer) stop() error { return s.Proc.Kill(syscall.SIGTERM, 30*time.Second) }

// slapadd loads an LDIF file into the stopped server's database (quick
// mode: no checks, one transaction per entry batch).
func (s *ldapServer) slapadd(ctx context.Context, ldif string) error {
	if s.Slapadd == "" {
		return fmt.Errorf("%w: no slapadd beside %s", ErrNoSlapd, s.Bin)
	}
	if err := s.User.chown(ldif); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, s.Slapadd, "-q", "-f", s.Conf, "-l", ldif)
	cmd.Dir = filepath.Dir(s.Conf)
	cmd.Env = []string{"LANG=C", "LC_ALL=C", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = s.User.attr(&syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL})
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("slapadd: %s: %s", exitDescription(err), lastLines(string(out), 8))
	}
	return nil
}

// Directory is the stack's LDAP directory as later stages see it (nil
// without --ldap).
func (s *Stack) Directory() *kc.Directory {
	o := s.st.LDAP
	if o == nil || !o.Enabled() {
		return nil
	}
	d := &kc.Directory{Import: o.Import, CachePolicy: o.CachePolicy}
	if pw, err := s.secret("ldap-password"); err == nil {
		d.Password = kc.Secret(pw)
	}
	if e := o.External; e != nil {
		d.URL, d.BindDN, d.BaseDN = e.URL, e.BindDN, e.BaseDN
		return d
	}
	if l := s.st.Slapd; l != nil {
		d.URL, d.BindDN, d.BaseDN = l.URL(), "cn=admin,"+l.Suffix, l.Suffix
		if l.Proc.Alive() {
			d.PID = l.Proc.PID
		}
	}
	return d
}

// startDirectory records the directory of cfg.LDAP and, for --ldap slapd,
// makes and starts the private server (its manager password in the 0600
// file ldap-password).
func (s *Stack) startDirectory(ctx context.Context, cfg Config, files slapdFiles, u *pgUser) error {
	o := cfg.LDAP
	s.st.LDAP = &o
	if e := o.External; e != nil {
		if err := fileutil.WriteSecret(filepath.Join(s.st.Dir, "ldap-password"), e.Password); err != nil {
			return err
		}
		return s.save()
	}
	password := newSecret()
	if err := fileutil.WriteSecret(filepath.Join(s.st.Dir, "ldap-password"), password); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	dir := filepath.Join(s.st.Dir, "ldap")
	s.st.Slapd = &ldapServer{slapdFiles: files, Conf: filepath.Join(dir, "slapd.conf"), Data: filepath.Join(dir, "data"),
		Port: port, Suffix: directory.Suffix, User: u, LogPath: filepath.Join(s.st.Dir, "slapd.log")}
	if err := initLDAP(s.st.Slapd, password); err != nil {
		return fmt.Errorf("slapd: %w", err)
	}
	if err := s.save(); err != nil {
		return err
	}
	cfg.Logf("starting slapd on %s (suffix %s)", s.st.Slapd.URL(), s.st.Slapd.Suffix)
	if err := startLDAP(ctx, s.st.Slapd, password, cfg.Detached); err != nil {
		return fmt.Errorf("slapd: %w", err)
	}
	return s.save()
}

// CanBulkLoadLDAP reports whether BulkLoadLDAP may be used from this
// process: the stack runs a private slapd, and it is detached (a
// foreground stack's slapd, restarted from here, would die with this
// process).
func (s *Stack) CanBulkLoadLDAP() bool { return s.st.Slapd != nil && s.st.Detached }

// BulkLoadLDAP writes entries into the private slapd the fast way: the
// entries it lacks go into an LDIF file that slapadd loads while slapd is
// stopped (several times the rate of LDAP adds), then slapd starts again
// on the same port.
func (s *Stack) BulkLoadLDAP(ctx context.Context, entries []directory.Entry) (directory.AddResult, error) {
	l := s.st.Slapd
	if l == nil {
		return directory.AddResult{}, errors.New("the stack runs no slapd")
	}
	pw, err := s.secret("ldap-password")
	if err != nil {
		return directory.AddResult{}, err
	}
	conn := directory.Conn{URL: l.URL(), BindDN: "cn=admin," + l.Suffix, Password: pw}
	have, err := conn.ExistingDNs(ctx, l.Suffix)
	if err != nil {
		return directory.AddResult{}, err
	}
	todo := directory.Missing(entries, have)
	res := directory.AddResult{Added: len(todo), Existing: len(entries) - len(todo)}
	if len(todo) == 0 {
		return res, nil
	}
	ldif := filepath.Join(filepath.Dir(l.Conf), "load.ldif")
	f, err := os.OpenFile(ldif, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return directory.AddResult{}, err
	}
	defer os.Remove(ldif)
	if err := directory.WriteLDIF(f, todo); err != nil {
		f.Close()
		return directory.AddResult{}, err
	}
	if err := f.Close(); err != nil {
		return directory.AddResult{}, err
	}
	if err := l.stop(); err != nil {
		return directory.AddResult{}, fmt.Errorf("stop slapd: %w", err)
	}
	loadErr := l.slapadd(ctx, ldif)
	// slapd comes back whatever slapadd did.
	if err := startLDAP(context.WithoutCancel(ctx), l, pw, s.st.Detached); err != nil {
		return directory.AddResult{}, errors.Join(loadErr, fmt.Errorf("restart slapd: %w", err))
	}
	if err := s.save(); err != nil {
		return directory.AddResult{}, err
	}
	if loadErr != nil {
		return directory.AddResult{}, loadErr
	}
	return res, nil
}
