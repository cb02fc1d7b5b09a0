package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The databases a stack's Keycloak can run on (KeycloakOptions.DB).
const (
	DBPostgres = "postgres"
	DBMariaDB  = "mariadb"
)

// DBKinds lists the values of --db.
var DBKinds = []string{DBPostgres, DBMariaDB}

// ErrNoMariaDB means the MariaDB server is not installed.
var ErrNoMariaDB = errors.New("mariadbd not found")

// mariadbInstall is how to get mariadbd.
const mariadbInstall = "install it (Debian/Ubuntu: apt-get install mariadb-server, then systemctl disable --now mariadb: kcbench runs its own), pass --mariadbd PATH, or use an existing database (--db-url jdbc:mariadb://HOST:PORT/DB)"

// mariadbFiles are the server and the script that makes a data folder.
type mariadbFiles struct {
	Bin       string `json:"bin"`
	InstallDB string `json:"install_db"`
	Version   string `json:"version"`
}

// findMariaDB resolves mariadbd (path when given) and mariadb-install-db
// (beside it, or on PATH / in /usr/bin).
func findMariaDB(path string) (mariadbFiles, error) {
	var f mariadbFiles
	exe := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
	}
	switch {
	case path != "":
		if !exe(path) {
			return f, fmt.Errorf("%w: --mariadbd %s is not an executable file: %s", ErrNoMariaDB, path, mariadbInstall)
		}
		f.Bin, _ = filepath.Abs(path)
	default:
		if p, err := exec.LookPath("mariadbd"); err == nil {
			f.Bin = p
			break
		}
		for _, p := range []string{"/usr/sbin/mariadbd", "/usr/local/sbin/mariadbd", "/usr/libexec/mariadbd", "/usr/local/mysql/bin/mariadbd"} {
			if exe(p) {
				f.Bin = p
				break
			}
		}
	}
	if f.Bin == "" {
		return f, fmt.Errorf("%w on PATH or in /usr/sbin: %s", ErrNoMariaDB, mariadbInstall)
	}
	dirs := []string{filepath.Dir(f.Bin), filepath.Join(filepath.Dir(filepath.Dir(f.Bin)), "bin"), "/usr/bin", "/usr/local/bin"}
	for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
		for _, d := range dirs {
			if exe(filepath.Join(d, name)) {
				f.InstallDB = filepath.Join(d, name)
				break
			}
		}
		if f.InstallDB != "" {
			break
		}
	}
	if f.InstallDB == "" {
		return f, fmt.Errorf("%w: no mariadb-install-db beside %s: %s", ErrNoMariaDB, f.Bin, mariadbInstall)
	}
	f.Version = mariadbVersion(f.Bin)
	return f, nil
}

// mariadbVersion asks mariadbd --version ("mariadbd  Ver 10.11.14-MariaDB-0+deb12u2 for …")
// and keeps the version number.
func mariadbVersion(bin string) string {
	out, err := exec.Command(bin, "--no-defaults", "--version").Output()
	if err != nil {
		return "unknown"
	}
	return parseMariaDBVersion(string(out))
}

func parseMariaDBVersion(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		if w == "Ver" && i+1 < len(f) {
			v, _, _ := strings.Cut(f[i+1], "-")
			return v
		}
	}
	return "unknown"
}

// chooseMariaDBUser is the account mariadbd runs as when kcbench runs as
// root (mariadbd refuses root): mysql (Debian's package makes it), else
// nobody.
func chooseMariaDBUser() (*pgUser, error) { return serverUser("MariaDB", "mysql", "nobody") }

// mariaServer is the private MariaDB of a stack.
type mariaServer struct {
	mariadbFiles
	Dir     string  `json:"dir"` // holds data/, tmp/, the pid file
	Port    int     `json:"port"`
	Socket  string  `json:"socket"`
	User    *pgUser `json:"user,omitempty"`
	Proc    Proc    `json:"proc"`
	LogPath string  `json:"log"`
	// Args are mariadbd's settings (all on the command line: no option
	// file is read).
	Args []string `json:"args"`

	exited chan struct{}
}

// data is the server's data folder.
func (s *mariaServer) data() string { return filepath.Join(s.Dir, "data") }

// maxSocketPath is the longest unix socket path Linux takes (108 bytes
// with the terminating NUL).
const maxSocketPath = 107

// mariadbArgs are the server's settings: loopback only, its own socket,
// no option files, Keycloak's character set, and (unless durable) no
// flush per commit, as the private PostgreSQL runs without fsync.
func mariadbArgs(s *mariaServer, o PGOptions) []string {
	maxConn := o.MaxConnections
	if maxConn == 0 {
		maxConn = 200
	}
	args := []string{
		"--no-defaults",
		"--datadir=" + s.data(),
		"--tmpdir=" + filepath.Join(s.Dir, "tmp"),
		"--pid-file=" + filepath.Join(s.Dir, "mariadbd.pid"),
		"--socket=" + s.Socket,
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(s.Port),
		"--skip-name-resolve",
		"--max-connections=" + strconv.Itoa(maxConn),
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_unicode_ci",
		// PostgreSQL's default isolation, which Keycloak is tested with
		"--transaction-isolation=READ-COMMITTED",
		"--innodb-buffer-pool-size=256M",
	}
	if !o.Durable {
		args = append(args, "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0", "--sync-binlog=0")
	}
	return args
}

// initMariaDB makes the data folder (mariadb-install-db, as the server's
// user) and writes the statements that create Keycloak's database and
// user, which the first start runs (--init-file).
func initMariaDB(ctx context.Context, s *mariaServer, password string) (initFile string, err error) {
	if err := s.User.checkReachable(s.Dir); err != nil {
		return "", err
	}
	for _, d := range []string{s.Dir, s.data(), filepath.Join(s.Dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return "", err
		}
		if err := s.User.chown(d); err != nil {
			return "", err
		}
	}
	basedir := filepath.Dir(filepath.Dir(s.Bin))
	cmd := exec.CommandContext(ctx, s.InstallDB, "--no-defaults", "--basedir="+basedir, "--datadir="+s.data(),
		"--auth-root-authentication-method=socket", "--skip-test-db", "--skip-name-resolve")
	cmd.Dir = s.Dir
	cmd.Env = []string{"LANG=C", "LC_ALL=C", "PATH=" + filepath.Dir(s.Bin) + ":/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = s.User.attr(&syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL})
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("mariadb-install-db: %s: %s", exitDescription(err), lastLines(string(out), 10))
	}
	initFile = filepath.Join(s.Dir, "init.sql")
	var b strings.Builder
	b.WriteString("CREATE DATABASE IF NOT EXISTS keycloak CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\n")
	for _, host := range []string{"127.0.0.1", "localhost"} {
		fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS 'keycloak'@'%s' IDENTIFIED BY %s;\n", host, sqlString(password))
		fmt.Fprintf(&b, "GRANT ALL PRIVILEGES ON keycloak.* TO 'keycloak'@'%s';\n", host)
	}
	if err := os.WriteFile(initFile, []byte(b.String()), 0o600); err != nil {
		return "", err
	}
	return initFile, s.User.chown(initFile)
}

// sqlString quotes s as a MariaDB string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

// startMariaDB runs mariadbd in the foreground as a direct child, in its
// own process group (with a parent-death signal unless detached), and
// waits until it greets a client on its port. initFile ("" after the
// first start) is run before the server takes connections, then removed.
func startMariaDB(ctx context.Context, s *mariaServer, initFile string, detached bool) error {
	args := s.Args
	if initFile != "" {
		args = append(append([]string{}, args...), "--init-file="+initFile)
		defer os.Remove(initFile)
	}
	// SIGTERM is mariadbd's normal shutdown.
	c, err := serverCmd{Name: "mariadbd", Bin: s.Bin, Args: args, Dir: s.Dir, Log: s.LogPath, User: s.User, Stop: syscall.SIGTERM}.start(detached)
	if err != nil {
		return err
	}
	s.Proc, s.exited = c.proc, c.exited
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
	return c.waitReady(ctx, 90*time.Second, "not ready", func() error {
		return mariadbGreets(addr)
	}, func() { s.stop() })
}

// mariadbGreets connects to addr and reads the server's first packet:
// a handshake (protocol 10) once the server takes connections, or an
// error packet, which also means it is up.
func mariadbGreets(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	var hdr [5]byte // 3 bytes length, 1 sequence, first payload byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		return fmt.Errorf("no greeting: %w", err)
	}
	switch hdr[4] {
	case 10, 0xff:
		return nil
	}
	return fmt.Errorf("not a MariaDB greeting (first byte %#x)", hdr[4])
}

// stop asks mariadbd to shut down (SIGTERM), then kills.
func (s *mariaServer) stop() error { return s.Proc.Kill(syscall.SIGTERM, 60*time.Second) }

// startMariaDBServer makes and starts the stack's private MariaDB; its
// state goes to s.st.MariaDB before anything runs, so Down stops it.
func (s *Stack) startMariaDBServer(ctx context.Context, cfg Config, files mariadbFiles, u *pgUser) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	dir := filepath.Join(s.st.Dir, "mariadb")
	m := &mariaServer{mariadbFiles: files, Dir: dir, Port: port, User: u, LogPath: filepath.Join(s.st.Dir, "mariadb.log"),
		Socket: filepath.Join(dir, "mariadbd.sock")}
	if len(m.Socket) > maxSocketPath {
		// A deep state folder: the socket goes where a path fits (no
		// client uses it; mariadbd always makes one).
		m.Socket = filepath.Join(os.TempDir(), fmt.Sprintf("kcbench-mariadb-%d.sock", port))
	}
	m.Args = mariadbArgs(m, cfg.PG)
	s.st.MariaDB = m
	if err := s.save(); err != nil {
		return err
	}
	pw, err := s.secret("db-password")
	if err != nil {
		return err
	}
	cfg.Logf("initializing MariaDB %s on 127.0.0.1:%d", files.Version, port)
	initFile, err := initMariaDB(ctx, m, pw)
	if err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	if err := startMariaDB(ctx, m, initFile, cfg.Detached); err != nil {
		return fmt.Errorf("mariadb: %w", err)
	}
	s.st.DB = dbConn{URL: fmt.Sprintf("jdbc:mariadb://127.0.0.1:%d/keycloak", port), User: "keycloak"}
	return s.save()
}
