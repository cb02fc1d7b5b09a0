package stack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
)

// Errors of the stack lifecycle.
var (
	ErrAlreadyUp = errors.New("stack already up")
	ErrNotUp     = errors.New("no stack is up")
)

// Config describes a stack to start.
type Config struct {
	// Name tells stacks apart (default "default"); its folder is
	// Dirs.State/stacks/<Name>.
	Name     string
	Dirs     Dirs
	Keycloak KeycloakOptions
	PG       PGOptions
	// DB, when set, replaces the private PostgreSQL.
	DB *ExternalDB
	// Detached stacks outlive the kcbench process (kcbench up); foreground
	// ones die with it.
	Detached bool
	// Logf receives progress lines; nil discards them.
	Logf func(format string, args ...any)
}

// DefaultStackName is the stack commands use when none is named.
const DefaultStackName = "default"

// Admin identities created on first boot.
const (
	AdminUser     = "admin"
	AdminClientID = "kcbench-admin"
)

// State is the stack file (stack.json): everything needed to find, restart
// and stop a stack from another kcbench process. It holds no secrets; those
// are in 0600 files beside it.
type State struct {
	Schema    int             `json:"schema"`
	Name      string          `json:"name"`
	Dir       string          `json:"dir"`
	CreatedAt time.Time       `json:"created_at"`
	Detached  bool            `json:"detached"`
	Options   KeycloakOptions `json:"options"`
	Java      JDK             `json:"java"`
	BuildHome string          `json:"build_home"`
	Home      string          `json:"home"`
	BuildOpts []string        `json:"build_options"`
	HTTPPort  int             `json:"http_port"`
	MgmtPort  int             `json:"management_port"`
	DB        dbConn          `json:"db"`
	PG        *pgServer       `json:"postgres,omitempty"`
	Node      *node           `json:"keycloak,omitempty"`
	LastBoot  *BootResult     `json:"last_boot,omitempty"`
}

const stateSchema = 1

// Stack is a running (or starting) local stack.
type Stack struct {
	st   State
	logf func(string, ...any)
}

// BootResult is one Keycloak start measured from process start to ready.
type BootResult struct {
	// Duration is from kc.sh's start to the first 200 of /health/ready.
	Duration time.Duration `json:"duration_ns"`
	// RSS is the JVM's resident set size at ready.
	RSS int64 `json:"rss_bytes"`
	// TreeRSS includes kc.sh and any other child.
	TreeRSS int64 `json:"tree_rss_bytes"`
	// CPU is the JVM's user+system CPU time spent booting.
	CPU     time.Duration `json:"cpu_ns"`
	FirstDB bool          `json:"first_boot"` // schema created in this boot
	At      time.Time     `json:"at"`
}

func stackDir(d Dirs, name string) string { return filepath.Join(d.State, "stacks", name) }

func (c *Config) defaults() {
	if c.Name == "" {
		c.Name = DefaultStackName
	}
	if c.Keycloak.Version == "" {
		c.Keycloak.Version = DefaultKeycloakVersion
	}
	if c.Keycloak.ReadyTimeout == 0 {
		c.Keycloak.ReadyTimeout = DefaultReadyTimeout
	}
	if c.PG.Version == "" {
		c.PG.Version = DefaultPGVersion
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
}

// Validate checks a config without side effects.
func (c Config) Validate() error {
	var errs []error
	if c.Name != "" && (strings.ContainsAny(c.Name, `/\ `) || strings.HasPrefix(c.Name, ".")) {
		errs = append(errs, fmt.Errorf("stack name %q: letters, digits, - and _ only", c.Name))
	}
	if err := c.Keycloak.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.DB != nil {
		if _, err := JDBCURL(c.DB.URL); err != nil {
			errs = append(errs, err)
		}
		if c.DB.User == "" {
			errs = append(errs, errors.New("external db: --db-user is required"))
		}
	}
	if c.Dirs.Cache == "" || c.Dirs.State == "" {
		errs = append(errs, errors.New("cache and state folders must be set"))
	}
	return errors.Join(errs...)
}

// Start brings up PostgreSQL (unless external) and Keycloak, and waits until
// Keycloak is ready. On any error everything it started is stopped and its
// folder removed: there is never a half-made stack.
func Start(ctx context.Context, cfg Config) (s *Stack, err error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir := stackDir(cfg.Dirs, cfg.Name)
	if old, err := Attach(cfg.Dirs, cfg.Name); err == nil {
		if old.Running() {
			return nil, fmt.Errorf("%w: stack %q (Keycloak at %s); run kcbench down first", ErrAlreadyUp, cfg.Name, old.Target().BaseURL)
		}
		cfg.Logf("stack %q: its processes are gone (crashed?); cleaning up before starting anew", cfg.Name)
		if err := old.Down(ctx); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, ErrNotUp) {
		return nil, err
	} else if _, statErr := os.Stat(dir); statErr == nil {
		// A folder without a readable state file: a start that died
		// before writing it. Nothing of it can be running.
		os.RemoveAll(dir)
	}

	// Checks that need no side effects come first.
	if cfg.Keycloak.HTTPPort != 0 {
		if err := checkPortFree(cfg.Keycloak.HTTPPort); err != nil {
			return nil, fmt.Errorf("--http-port: %w", err)
		}
	}
	if cfg.Keycloak.ManagementPort != 0 {
		if err := checkPortFree(cfg.Keycloak.ManagementPort); err != nil {
			return nil, fmt.Errorf("--management-port: %w", err)
		}
	}
	java, err := FindJDK(cfg.Keycloak.Version, cfg.Keycloak.JavaHome, os.Getenv("JAVA_HOME"))
	if err != nil {
		return nil, err
	}
	var pgU *pgUser
	if cfg.DB == nil {
		if pgU, err = choosePGUser(); err != nil {
			return nil, err
		}
	}
	dist, err := FetchDistribution(ctx, cfg.Dirs.Cache, cfg.Keycloak.Version, cfg.Logf)
	if err != nil {
		return nil, err
	}
	build, err := EnsureBuild(ctx, dist, java, cfg.Keycloak.BuildOptions, cfg.Logf)
	if err != nil {
		return nil, err
	}
	var pgBin, pgVer string
	if cfg.DB == nil {
		if pgBin, pgVer, err = pgBinaries(ctx, cfg.Dirs.Cache, cfg.PG, cfg.Logf); err != nil {
			return nil, err
		}
	}

	// From here on, side effects: undo them all on failure.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	s = &Stack{logf: cfg.Logf, st: State{
		Schema: stateSchema, Name: cfg.Name, Dir: dir, CreatedAt: time.Now().UTC(),
		Detached: cfg.Detached, Options: cfg.Keycloak, Java: java,
		BuildHome: build.Home, BuildOpts: build.Options,
		Home: filepath.Join(dir, "keycloak"),
	}}
	defer func() {
		if err != nil {
			s.logf("start failed; stopping what was started")
			if derr := s.Down(context.WithoutCancel(ctx)); derr != nil {
				err = errors.Join(err, fmt.Errorf("cleanup: %w", derr))
			}
		}
	}()
	if err := s.save(); err != nil {
		return s, err
	}
	for _, sec := range []string{"admin-password", "admin-client-secret", "db-password"} {
		if err := fileutil.WriteSecret(filepath.Join(dir, sec), newSecret()); err != nil {
			return s, err
		}
	}
	if cfg.DB != nil {
		url, _ := JDBCURL(cfg.DB.URL)
		s.st.DB = dbConn{URL: url, User: cfg.DB.User}
		if err := fileutil.WriteSecret(filepath.Join(dir, "db-password"), cfg.DB.Password); err != nil {
			return s, err
		}
	} else {
		port, err := FreePort()
		if err != nil {
			return s, err
		}
		s.st.PG = &pgServer{Bin: pgBin, Version: pgVer, Data: filepath.Join(dir, "postgres", "data"), Port: port, User: pgU, LogPath: filepath.Join(dir, "postgres.log")}
		if err := os.MkdirAll(filepath.Dir(s.st.PG.Data), 0o755); err != nil {
			return s, err
		}
		pw, err := s.secret("db-password")
		if err != nil {
			return s, err
		}
		cfg.Logf("initializing PostgreSQL %s on 127.0.0.1:%d", pgVer, port)
		if err := initPG(ctx, s.st.PG, pw, cfg.PG, cfg.Keycloak.DBSchema()); err != nil {
			return s, fmt.Errorf("postgres: %w", err)
		}
		if err := startPG(ctx, s.st.PG, cfg.Detached); err != nil {
			return s, fmt.Errorf("postgres: %w", err)
		}
		if err := s.save(); err != nil {
			return s, err
		}
		s.st.DB = dbConn{URL: fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/keycloak", port), User: "keycloak"}
	}
	if err := copyTree(build.Home, s.st.Home, true); err != nil {
		return s, fmt.Errorf("keycloak home: %w", err)
	}
	s.st.HTTPPort, s.st.MgmtPort = cfg.Keycloak.HTTPPort, cfg.Keycloak.ManagementPort
	if s.st.HTTPPort == 0 {
		if s.st.HTTPPort, err = FreePort(); err != nil {
			return s, err
		}
	}
	for s.st.MgmtPort == 0 || s.st.MgmtPort == s.st.HTTPPort {
		if s.st.MgmtPort, err = FreePort(); err != nil {
			return s, err
		}
	}
	cfg.Logf("starting Keycloak %s (Java %s) on http://127.0.0.1:%d", cfg.Keycloak.Version, java.Version, s.st.HTTPPort)
	br, err := s.startKeycloak(ctx, true)
	if err != nil {
		return s, err
	}
	cfg.Logf("Keycloak ready in %s, RSS %d MiB", br.Duration.Round(10*time.Millisecond), br.RSS>>20)
	return s, nil
}

// newSecret returns 24 random bytes, base64url: admin and db passwords.
func newSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (s *Stack) secret(name string) (string, error) {
	return fileutil.ReadSecret(filepath.Join(s.st.Dir, name))
}

// SecretPath is the 0600 file holding a stack secret: "admin-password",
// "admin-client-secret" or "db-password".
func (s *Stack) SecretPath(name string) string { return filepath.Join(s.st.Dir, name) }

// DSN is a postgres:// URL of the stack's database (its private
// PostgreSQL, or the --db-url one) with its user and password, and the
// search_path set to Keycloak's --db-schema when one is given: for the
// clone seeding strategy and PostgreSQL statistics.
func (s *Stack) DSN() (kc.Secret, error) {
	pw, err := s.secret("db-password")
	if err != nil {
		return "", err
	}
	u, err := url.Parse(strings.TrimPrefix(s.st.DB.URL, "jdbc:"))
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("database URL %q: not a postgresql://HOST:PORT/DB URL", s.st.DB.URL)
	}
	u.Scheme = "postgres"
	u.User = url.UserPassword(s.st.DB.User, pw)
	q := u.Query()
	if q.Get("sslmode") == "" {
		q.Set("sslmode", "prefer")
	}
	if schema := s.st.Options.DBSchema(); schema != "" {
		q.Set("search_path", schema) // where Keycloak's tables are
	}
	u.RawQuery = q.Encode()
	return kc.Secret(u.String()), nil
}

func (s *Stack) save() error {
	return fileutil.WriteJSON(filepath.Join(s.st.Dir, "stack.json"), s.st, 0o644)
}

// startKeycloak launches Keycloak and waits until ready.
func (s *Stack) startKeycloak(ctx context.Context, first bool) (BootResult, error) {
	env := map[string]string{}
	dbPw, err := s.secret("db-password")
	if err != nil {
		return BootResult{}, err
	}
	env["KC_DB_PASSWORD"] = dbPw
	if first {
		pw, err := s.secret("admin-password")
		if err != nil {
			return BootResult{}, err
		}
		cs, err := s.secret("admin-client-secret")
		if err != nil {
			return BootResult{}, err
		}
		env["KC_BOOTSTRAP_ADMIN_USERNAME"] = AdminUser
		env["KC_BOOTSTRAP_ADMIN_PASSWORD"] = pw
		env["KC_BOOTSTRAP_ADMIN_CLIENT_ID"] = AdminClientID
		env["KC_BOOTSTRAP_ADMIN_CLIENT_SECRET"] = cs
	}
	if h := s.st.Options.Heap; h != "" {
		env["JAVA_OPTS_KC_HEAP"] = "-Xms" + h + " -Xmx" + h
	}
	args := s.st.Options.startArgs(s.st.DB, s.st.HTTPPort, s.st.MgmtPort)
	logPath := s.LogPath()
	n, off, err := launchKeycloak(s.st.Home, s.st.Java, args, env, logPath, s.st.Detached)
	if err != nil {
		return BootResult{}, err
	}
	s.st.Node = n
	if err := s.save(); err != nil {
		n.stop(10 * time.Second)
		return BootResult{}, err
	}
	fail := func(reason error) (BootResult, error) {
		if errors.Is(reason, errExited) {
			<-n.exited
			out := readFrom(logPath, off)
			return BootResult{}, &KeycloakError{Op: "kc.sh start", Reason: exitDescription(n.err), Message: keycloakMessage(out), LogTail: lastLines(out, 20), LogPath: logPath}
		}
		n.stop(10 * time.Second)
		if ctx.Err() != nil {
			return BootResult{}, ctx.Err()
		}
		out := readFrom(logPath, off)
		return BootResult{}, &KeycloakError{Op: "kc.sh start", Reason: reason.Error(), Message: keycloakMessage(out), LogTail: lastLines(out, 20), LogPath: logPath}
	}
	if err := n.findJVM(ctx); err != nil {
		return fail(err)
	}
	if err := s.save(); err != nil {
		return fail(err)
	}
	if err := n.waitReady(ctx, s.managementURL(), s.st.Options.ReadyTimeout); err != nil {
		return fail(err)
	}
	br := BootResult{Duration: n.ReadyAt.Sub(n.StartedAt), FirstDB: first, At: n.ReadyAt.UTC()}
	br.RSS, _ = RSS(n.JVM.PID)
	br.TreeRSS = TreeRSS(n.Script.PID)
	br.CPU, _ = CPUTime(n.JVM.PID)
	s.st.LastBoot = &br
	return br, s.save()
}

// Restart stops Keycloak (PostgreSQL stays up), starts it again and
// measures the boot.
func (s *Stack) Restart(ctx context.Context) (BootResult, error) {
	if err := s.stopKeycloak(); err != nil {
		return BootResult{}, err
	}
	return s.startKeycloak(ctx, false)
}

func (s *Stack) stopKeycloak() error {
	if s.st.Node == nil {
		return nil
	}
	if err := s.st.Node.stop(30 * time.Second); err != nil {
		return fmt.Errorf("stop keycloak: %w", err)
	}
	s.st.Node = nil
	return s.save()
}

// Attach reads the state of stack name. It returns ErrNotUp when there is
// none.
func Attach(d Dirs, name string) (*Stack, error) {
	if name == "" {
		name = DefaultStackName
	}
	b, err := os.ReadFile(filepath.Join(stackDir(d, name), "stack.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w (stack %q)", ErrNotUp, name)
	}
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("stack %q: corrupt state file: %w", name, err)
	}
	if st.Schema != stateSchema {
		return nil, fmt.Errorf("stack %q: state file schema %d, this kcbench reads %d", name, st.Schema, stateSchema)
	}
	return &Stack{st: st, logf: func(string, ...any) {}}, nil
}

// SetLogf sets where progress lines go.
func (s *Stack) SetLogf(f func(string, ...any)) {
	if f != nil {
		s.logf = f
	}
}

// Running reports whether any process of the stack is alive.
func (s *Stack) Running() bool { return len(s.Pids()) > 0 }

// Procs lists the identities of the stack's server processes as recorded
// (kc.sh, the JVM, the postmaster), alive or not.
func (s *Stack) Procs() []Proc {
	var ps []Proc
	if n := s.st.Node; n != nil {
		ps = append(ps, n.Script)
		if n.JVM.PID > 0 && n.JVM.PID != n.Script.PID {
			ps = append(ps, n.JVM)
		}
	}
	if s.st.PG != nil && s.st.PG.Proc.PID > 0 {
		ps = append(ps, s.st.PG.Proc)
	}
	return ps
}

// Pids lists the stack's live processes (Keycloak's and PostgreSQL's
// process groups).
func (s *Stack) Pids() []int {
	var pids []int
	if n := s.st.Node; n != nil {
		pids = append(pids, n.Script.Members()...)
		if n.JVM.Alive() && !containsInt(pids, n.JVM.PID) {
			pids = append(pids, n.JVM.PID)
		}
	}
	if s.st.PG != nil {
		pids = append(pids, s.st.PG.Proc.Members()...)
	}
	return pids
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Down stops every process of the stack, verifies none is left and removes
// its folder. Pids from the state file are trusted only if their start time
// matches.
func (s *Stack) Down(ctx context.Context) error {
	var errs []error
	if err := s.stopKeycloak(); err != nil {
		errs = append(errs, err)
	}
	if s.st.PG != nil {
		if err := s.st.PG.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop postgres: %w", err))
		}
	}
	if left := s.Pids(); len(left) > 0 {
		errs = append(errs, fmt.Errorf("processes still alive: %v", left))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return os.RemoveAll(s.st.Dir)
}

// Close is Down for foreground stacks.
func (s *Stack) Close(ctx context.Context) error { return s.Down(ctx) }

// Target is the Keycloak of the stack as later stages see it.
func (s *Stack) Target() kc.Target {
	t := kc.Target{
		BaseURL:       "http://127.0.0.1:" + strconv.Itoa(s.st.HTTPPort),
		ManagementURL: s.managementURL(),
		Admin:         kc.Credentials{Username: AdminUser, ClientID: AdminClientID},
	}
	if pw, err := s.secret("admin-password"); err == nil {
		t.Admin.Password = kc.Secret(pw)
	}
	if cs, err := s.secret("admin-client-secret"); err == nil {
		t.Admin.ClientSecret = kc.Secret(cs)
	}
	if s.st.Node != nil && s.st.Node.JVM.Alive() {
		t.PID = s.st.Node.JVM.PID
	}
	return t
}

func (s *Stack) managementURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(s.st.MgmtPort)
}

// State returns a copy of the stack's recorded state.
func (s *Stack) State() State { return s.st }

// LogPath is Keycloak's log file.
func (s *Stack) LogPath() string { return filepath.Join(s.st.Dir, "keycloak.log") }

// PGLogPath is PostgreSQL's log file ("" with an external database).
func (s *Stack) PGLogPath() string {
	if s.st.PG == nil {
		return ""
	}
	return s.st.PG.LogPath
}
