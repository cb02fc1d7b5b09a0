package stack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/directory"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
)

// Errors of the stack lifecycle.
var (
	ErrAlreadyUp = errors.New("stack already up")
	ErrNotUp     = errors.New("no stack is up")
	// ErrNotPostgres marks what only a PostgreSQL database has.
	ErrNotPostgres = errors.New("not available on MariaDB (PostgreSQL only)")
)

// Config describes a stack to start.
type Config struct {
	// Name tells stacks apart (default "default"); its folder is
	// Dirs.State/stacks/<Name>.
	Name     string
	Dirs     Dirs
	Keycloak KeycloakOptions
	// Topology is the number of nodes, the balancer and CPU limits.
	Topology Topology
	PG       PGOptions
	// DB, when set, replaces the private database (Keycloak.DB says
	// which kind it is).
	DB *ExternalDB
	// MariaDBd is the mariadbd binary of a private MariaDB (default:
	// mariadbd on PATH or in /usr/sbin).
	MariaDBd string
	// LDAP puts the dataset's users into a directory (a private slapd or
	// an existing one) instead of Keycloak's database.
	LDAP LDAPOptions
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
	BuildOpts []string        `json:"build_options"`
	Topology  Topology        `json:"topology"`
	// Nodes are the Keycloak nodes, node 1 first.
	Nodes []NodeState `json:"nodes"`
	// LB is the HAProxy in front of the nodes (nil with --lb none).
	LB *balancer `json:"balancer,omitempty"`
	// TLS is the stack's CA and server certificate (nil: plain HTTP).
	TLS *tlsFiles `json:"tls,omitempty"`
	DB  dbConn    `json:"db"`
	PG  *pgServer `json:"postgres,omitempty"`
	// SchemaCached: the private database began as a copy of Keycloak's
	// cached empty schema (schemaTemplate), not an empty cluster.
	SchemaCached bool `json:"schema_cached,omitempty"`
	// MariaDB is the private MariaDB of --db mariadb (PG is then nil).
	MariaDB *mariaServer `json:"mariadb,omitempty"`
	// LDAP is the directory of --ldap (nil without); Slapd the private
	// server when kcbench runs it.
	LDAP  *LDAPOptions `json:"ldap,omitempty"`
	Slapd *ldapServer  `json:"slapd,omitempty"`
	// LastBoot is the last start of all nodes (a cluster's: until every
	// node is ready and sees every other).
	LastBoot *BootResult `json:"last_boot,omitempty"`
	// MeasuredLatency is the round trip each latency proxy added when it
	// was placed (Topology.Latency is what was asked).
	MeasuredLatency struct {
		NodeDB   time.Duration `json:"node_db_ns,omitempty"`
		NodeNode time.Duration `json:"node_node_ns,omitempty"`
	} `json:"measured_latency,omitzero"`
}

// stateSchema 2 has Nodes; 1 had one node's fields at the top (read by
// Attach for stacks started by an older kcbench).
const stateSchema = 2

// stateV1 holds the single-node fields of schema 1.
type stateV1 struct {
	Home     string `json:"home"`
	HTTPPort int    `json:"http_port"`
	MgmtPort int    `json:"management_port"`
	Node     *node  `json:"keycloak,omitempty"`
}

// Stack is a running (or starting) local stack.
type Stack struct {
	st   State
	logf func(string, ...any)
	mu   sync.Mutex // serializes save() of nodes starting in parallel

	links *latencyLinks // latency proxies, in this process

	watchMu  sync.Mutex
	watchers []*Watcher // Watch's, told about nodes fault events stop and start
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
	FirstDB bool          `json:"first_boot"` // the database's first boot: the master realm made in it
	// SchemaCached: in a first boot, the schema was there already (a copy
	// of the cached empty one); otherwise the boot created it.
	SchemaCached bool      `json:"schema_cached,omitempty"`
	At           time.Time `json:"at"`
	// Nodes has each node's own boot when several started together; the
	// fields above are then the whole cluster's: Duration from the first
	// start until every node was ready and saw all the others, RSS and
	// CPU summed over the nodes.
	Nodes []NodeBoot `json:"nodes,omitempty"`
}

// NodeBoot is one node's part of a cluster boot.
type NodeBoot struct {
	Node int `json:"node"`
	// Ready is from the node's start to its first /health/ready 200;
	// View from its start until its log showed the full cluster view.
	Ready time.Duration `json:"ready_ns"`
	View  time.Duration `json:"view_ns,omitempty"`
	RSS   int64         `json:"rss_bytes"`
	CPU   time.Duration `json:"cpu_ns"`
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
	c.Topology.defaults()
	if c.PG.MaxConnections == 0 && c.Topology.Nodes > 1 {
		// Keycloak's pool grows to 100 per node by default.
		c.PG.MaxConnections = 100*c.Topology.Nodes + 100
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
	if err := c.Topology.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := ValidateTLS(c.Keycloak, c.Topology); err != nil {
		errs = append(errs, err)
	}
	if c.DB != nil {
		if u, err := JDBCURL(c.DB.URL); err != nil {
			errs = append(errs, err)
		} else if k := dbKindOfURL(u); k != c.Keycloak.dbKind() {
			errs = append(errs, fmt.Errorf("db url %q is a %s URL, but Keycloak is built for %s (--db %s)", c.DB.URL, k, c.Keycloak.dbKind(), c.Keycloak.dbKind()))
		}
		if c.DB.User == "" {
			errs = append(errs, errors.New("external db: --db-user is required"))
		}
	}
	if err := c.LDAP.Validate(); err != nil {
		errs = append(errs, err)
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
	if err := clearStopped(ctx, cfg, dir); err != nil {
		return nil, err
	}
	p, err := prepare(ctx, cfg)
	if err != nil {
		return nil, err
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
		Detached: cfg.Detached, Options: cfg.Keycloak, Java: p.java,
		BuildHome: p.build.Home, BuildOpts: p.build.Options, Topology: cfg.Topology,
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
	if err := s.writeSecrets(cfg); err != nil {
		return s, err
	}
	if err := s.startBackends(ctx, cfg, p); err != nil {
		return s, err
	}
	if err := s.makeNodes(cfg, p.build); err != nil {
		return s, err
	}
	if err := s.limitCPUs(cfg); err != nil {
		return s, err
	}
	nodes := len(s.st.Nodes)
	if nodes == 1 {
		cfg.Logf("starting Keycloak %s (Java %s) on %s", cfg.Keycloak.Version, p.java.Version, s.st.Nodes[0].URL())
	} else {
		cfg.Logf("starting a cluster of %d Keycloak %s nodes (Java %s) on %s … %s", nodes, cfg.Keycloak.Version, p.java.Version, s.st.Nodes[0].URL(), s.st.Nodes[nodes-1].URL())
	}
	br, err := s.startNodes(ctx, true, nil)
	if err != nil {
		return s, err
	}
	if nodes == 1 {
		cfg.Logf("Keycloak ready in %s, RSS %d MiB", br.Duration.Round(10*time.Millisecond), br.RSS>>20)
	} else {
		cfg.Logf("cluster of %d nodes formed in %s, RSS %d MiB in all", nodes, br.Duration.Round(10*time.Millisecond), br.RSS>>20)
	}
	if p.haproxy != "" {
		if err := s.startBalancer(ctx, p.haproxy); err != nil {
			return s, fmt.Errorf("load balancer: %w", err)
		}
		cfg.Logf("HAProxy on %s, round-robin over %d nodes", s.st.LB.URL(), nodes)
	}
	return s, nil
}

// clearStopped refuses a stack of cfg's name that is up, and clears away
// one whose processes are gone (a crash) or whose start died before it
// wrote its state.
func clearStopped(ctx context.Context, cfg Config, dir string) error {
	old, err := Attach(cfg.Dirs, cfg.Name)
	switch {
	case err == nil:
		if old.Running() {
			return fmt.Errorf("%w: stack %q (Keycloak at %s); run kcbench down first", ErrAlreadyUp, cfg.Name, old.Target().BaseURL)
		}
		cfg.Logf("stack %q: its processes are gone (crashed?); cleaning up before starting anew", cfg.Name)
		return old.Down(ctx)
	case !errors.Is(err, ErrNotUp):
		return err
	}
	if _, statErr := os.Stat(dir); statErr == nil {
		// A folder without a readable state file: a start that died
		// before writing it. Nothing of it can be running.
		os.RemoveAll(dir)
	}
	return nil
}

// startPlan is what a start needs found before it changes anything: the
// programs, their users, the build.
type startPlan struct {
	haproxy      string // "" without a balancer
	java         JDK
	slapd        slapdFiles
	maria        mariadbFiles
	mariadb      bool
	ldapU        *pgUser
	pgU, mariaU  *pgUser
	build        Build
	pgBin, pgVer string
}

// prepare checks what needs no side effects (ports, programs, an external
// directory) and finds or makes what the start will use: a wrong URL or
// password fails here, not after minutes of building.
func prepare(ctx context.Context, cfg Config) (p startPlan, err error) {
	if err := cfg.Topology.Latency.validate(cfg.Detached, cfg.DB != nil); err != nil {
		return p, err
	}
	nodes := cfg.Topology.Nodes
	for i := 1; i <= nodes; i++ {
		host := nodeHost(i, nodes)
		if cfg.Keycloak.HTTPPort != 0 {
			if err := checkPortFreeOn(host, cfg.Keycloak.HTTPPort); err != nil {
				return p, fmt.Errorf("--http-port: %w", err)
			}
		}
		if cfg.Keycloak.ManagementPort != 0 {
			if err := checkPortFreeOn(host, cfg.Keycloak.ManagementPort); err != nil {
				return p, fmt.Errorf("--management-port: %w", err)
			}
		}
	}
	if cfg.Topology.LB == LBHAProxy {
		if p.haproxy, err = findHAProxy(cfg.Topology.HAProxy); err != nil {
			return p, err
		}
	}
	if p.java, err = FindJDK(cfg.Keycloak.Version, cfg.Keycloak.JavaHome, os.Getenv("JAVA_HOME")); err != nil {
		return p, err
	}
	if e := cfg.LDAP.External; e != nil {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err := directory.Conn{URL: e.URL, BindDN: e.BindDN, Password: e.Password}.Check(cctx)
		cancel()
		if err != nil {
			return p, fmt.Errorf("--ldap-url: %w", err)
		}
	}
	if cfg.LDAP.Server == LDAPSlapd {
		if p.slapd, err = findSlapd(cfg.LDAP.Slapd); err != nil {
			return p, err
		}
		if p.ldapU, err = chooseLDAPUser(); err != nil {
			return p, err
		}
	}
	p.mariadb = cfg.Keycloak.dbKind() == DBMariaDB
	switch {
	case cfg.DB != nil:
	case p.mariadb:
		if p.maria, err = findMariaDB(cfg.MariaDBd); err != nil {
			return p, err
		}
		if p.mariaU, err = chooseMariaDBUser(); err != nil {
			return p, err
		}
	default:
		if p.pgU, err = choosePGUser(); err != nil {
			return p, err
		}
	}
	dist, err := FetchDistribution(ctx, cfg.Dirs.Cache, cfg.Keycloak.Version, cfg.Logf)
	if err != nil {
		return p, err
	}
	if p.build, err = EnsureBuild(ctx, dist, p.java, cfg.Keycloak.dbKind(), cfg.Keycloak.buildOptions(), cfg.Logf); err != nil {
		return p, err
	}
	if cfg.DB == nil && !p.mariadb {
		if p.pgBin, p.pgVer, err = pgBinaries(ctx, cfg.Dirs.Cache, cfg.PG, cfg.Logf); err != nil {
			return p, err
		}
	}
	return p, nil
}

// writeSecrets writes the stack's secrets (0600) and, unless it serves
// plain HTTP, its CA and server certificate.
func (s *Stack) writeSecrets(cfg Config) (err error) {
	for _, sec := range []string{"admin-password", "admin-client-secret", "db-password"} {
		if err := fileutil.WriteSecret(filepath.Join(s.st.Dir, sec), newSecret()); err != nil {
			return err
		}
	}
	if !cfg.Keycloak.PlainHTTP {
		if s.st.TLS, err = makeTLSFiles(s.st.Dir, cfg.Keycloak.TLSKeyType()); err != nil {
			return err
		}
	}
	return nil
}

// startBackends starts what Keycloak needs before it boots: its database
// (or records the external one), the latency proxies, the directory.
func (s *Stack) startBackends(ctx context.Context, cfg Config, p startPlan) error {
	switch {
	case cfg.DB != nil:
		url, _ := JDBCURL(cfg.DB.URL)
		s.st.DB = dbConn{URL: url, User: cfg.DB.User}
		if err := fileutil.WriteSecret(filepath.Join(s.st.Dir, "db-password"), cfg.DB.Password); err != nil {
			return err
		}
	case p.mariadb:
		if err := s.startMariaDBServer(ctx, cfg, p.maria, p.mariaU); err != nil {
			return err
		}
	default:
		if err := s.startPostgres(ctx, cfg, p.build, pgServer{Bin: p.pgBin, Version: p.pgVer, User: p.pgU}); err != nil {
			return err
		}
	}
	if err := s.startLatency(); err != nil {
		return err
	}
	if cfg.LDAP.Enabled() {
		return s.startDirectory(ctx, cfg, p.slapd, p.ldapU)
	}
	return nil
}

// makeNodes gives each node its own copy of the build's Keycloak home.
func (s *Stack) makeNodes(cfg Config, build Build) error {
	nodes := cfg.Topology.Nodes
	for i := 1; i <= nodes; i++ {
		n, err := newNode(s.st.Dir, i, nodes, cfg.Keycloak, cfg.Topology)
		if err != nil {
			return err
		}
		if err := copyTree(build.Home, n.Home, true); err != nil {
			return fmt.Errorf("keycloak home: %w", err)
		}
		s.st.Nodes = append(s.st.Nodes, n)
	}
	return s.save()
}

// limitCPUs gives each node its CPU quota (--node-cpus): a cgroup, or
// pinned cores where a cgroup that looked writable refuses the quota (a
// container's read-only controller, say).
func (s *Stack) limitCPUs(cfg Config) error {
	cpus := cfg.Topology.NodeCPUs
	if cpus <= 0 {
		return nil
	}
	method := cpuLimitMethod()
	for i := 0; i < len(s.st.Nodes); i++ {
		l, err := newCPULimit(method, stackGroupName(s.st.Dir, cfg.Name), i+1, cpus)
		if err != nil && method != CPULimitAffinity {
			cfg.Logf("CPU limit through %s failed (%v); pinning cores with taskset instead", method, err)
			for j := 0; j < i; j++ {
				s.st.Nodes[j].CPU.release()
				s.st.Nodes[j].CPU = nil
			}
			method, i = CPULimitAffinity, -1
			continue
		}
		if err != nil {
			return err
		}
		s.st.Nodes[i].CPU = &l
		if err := s.save(); err != nil {
			return err
		}
	}
	cfg.Logf("CPU limit: %g cores per node through %s", cpus, method)
	return nil
}

// startPostgres makes and starts the stack's private PostgreSQL (server:
// its Bin, Version and User): a copy of the build's schema template, so
// that Keycloak's first boot finds its tables made, or an empty cluster
// with cfg.PG.FreshSchema or when the template cannot be made.
func (s *Stack) startPostgres(ctx context.Context, cfg Config, build Build, server pgServer) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	pg := server
	pg.Data, pg.Port, pg.LogPath = filepath.Join(s.st.Dir, "postgres", "data"), port, filepath.Join(s.st.Dir, "postgres.log")
	s.st.PG = &pg
	if err := os.MkdirAll(filepath.Dir(pg.Data), 0o755); err != nil {
		return err
	}
	pw, err := s.secret("db-password")
	if err != nil {
		return err
	}
	tpl := ""
	if !cfg.PG.FreshSchema {
		if tpl, err = schemaTemplate(ctx, build, server, cfg.Keycloak.DBSchema(), cfg.Logf); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			cfg.Logf("no cached schema (%v); Keycloak creates it at first boot", err)
			tpl = ""
		}
	}
	if tpl != "" {
		cfg.Logf("initializing PostgreSQL %s on 127.0.0.1:%d with Keycloak's cached empty schema", pg.Version, port)
		err = initPGFrom(ctx, &pg, tpl, pw, cfg.PG)
	} else {
		cfg.Logf("initializing PostgreSQL %s on 127.0.0.1:%d", pg.Version, port)
		err = initPG(ctx, &pg, pw, cfg.PG, cfg.Keycloak.DBSchema())
	}
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	s.st.SchemaCached = tpl != ""
	if err := startPG(ctx, &pg, cfg.Detached); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := s.save(); err != nil {
		return err
	}
	s.st.DB = dbConn{URL: fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/keycloak", port), User: "keycloak"}
	return nil
}

// newNode lays out node i of n: address, ports, folder and log.
func newNode(dir string, i, n int, o KeycloakOptions, t Topology) (NodeState, error) {
	ns := NodeState{Index: i, Host: nodeHost(i, n), HTTPPort: o.HTTPPort, MgmtPort: o.ManagementPort}
	t.defaults()
	ns.TLS, ns.Edge = nodeTLS(o, t)
	ns.Home, ns.Log = nodeFiles(dir, i)
	var err error
	if ns.HTTPPort == 0 {
		if ns.HTTPPort, err = freePortOn(ns.Host); err != nil {
			return ns, err
		}
	}
	for ns.MgmtPort == 0 || ns.MgmtPort == ns.HTTPPort {
		if ns.MgmtPort, err = freePortOn(ns.Host); err != nil {
			return ns, err
		}
	}
	if n > 1 {
		if ns.JGroupsPort, err = jgroupsPort(ns.Host); err != nil {
			return ns, err
		}
	}
	return ns, nil
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
	if k := s.st.Options.dbKind(); k != DBPostgres {
		return "", fmt.Errorf("%w: the stack's database is %s", ErrNotPostgres, k)
	}
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
	s.mu.Lock()
	defer s.mu.Unlock()
	return fileutil.WriteJSON(filepath.Join(s.st.Dir, "stack.json"), s.st, 0o644)
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
	switch st.Schema {
	case stateSchema:
	case 1:
		var v1 stateV1
		if err := json.Unmarshal(b, &v1); err != nil {
			return nil, fmt.Errorf("stack %q: corrupt state file: %w", name, err)
		}
		st.Topology = Topology{Nodes: 1, LB: LBNone}
		st.Nodes = []NodeState{{Index: 1, Host: "127.0.0.1", HTTPPort: v1.HTTPPort, MgmtPort: v1.MgmtPort,
			Home: v1.Home, Log: filepath.Join(st.Dir, "keycloak.log"), Proc: v1.Node, LastBoot: st.LastBoot}}
		st.Schema = stateSchema
	default:
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
	if s.st.LB != nil && s.st.LB.Proc.PID > 0 {
		ps = append(ps, s.st.LB.Proc)
		if p := s.st.LB.Prev; p.PID > 0 && p.Alive() { // a reload's old process, finishing
			ps = append(ps, p)
		}
	}
	for _, ns := range s.st.Nodes {
		if n := ns.Proc; n != nil {
			ps = append(ps, n.Script)
			if n.JVM.PID > 0 && n.JVM.PID != n.Script.PID {
				ps = append(ps, n.JVM)
			}
		}
	}
	if s.st.PG != nil && s.st.PG.Proc.PID > 0 {
		ps = append(ps, s.st.PG.Proc)
	}
	if s.st.MariaDB != nil && s.st.MariaDB.Proc.PID > 0 {
		ps = append(ps, s.st.MariaDB.Proc)
	}
	if s.st.Slapd != nil && s.st.Slapd.Proc.PID > 0 {
		ps = append(ps, s.st.Slapd.Proc)
	}
	return ps
}

// Pids lists the stack's live processes (Keycloak's and PostgreSQL's
// process groups).
func (s *Stack) Pids() []int {
	var pids []int
	if s.st.LB != nil {
		pids = append(pids, s.st.LB.Proc.Members()...)
	}
	for _, ns := range s.st.Nodes {
		if n := ns.Proc; n != nil {
			pids = append(pids, n.Script.Members()...)
			if n.JVM.Alive() && !containsInt(pids, n.JVM.PID) {
				pids = append(pids, n.JVM.PID)
			}
		}
	}
	if s.st.PG != nil {
		pids = append(pids, s.st.PG.Proc.Members()...)
	}
	if s.st.MariaDB != nil {
		pids = append(pids, s.st.MariaDB.Proc.Members()...)
	}
	if s.st.Slapd != nil {
		pids = append(pids, s.st.Slapd.Proc.Members()...)
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
	defer s.links.close()
	var errs []error
	if s.st.LB != nil {
		if err := s.st.LB.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop haproxy: %w", err))
		}
	}
	if err := s.stopKeycloak(); err != nil {
		errs = append(errs, err)
	} else {
		for _, ns := range s.st.Nodes {
			if err := ns.CPU.release(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if s.st.PG != nil {
		if err := s.st.PG.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop postgres: %w", err))
		}
	}
	if s.st.MariaDB != nil {
		if err := s.st.MariaDB.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop mariadb: %w", err))
		}
	}
	if s.st.Slapd != nil {
		if err := s.st.Slapd.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop slapd: %w", err))
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

// Target is the Keycloak of the stack as later stages see it: node 1
// (its management URL in every case; the balancer's URL when there is
// one), with the JVM pids of every node.
func (s *Stack) Target() kc.Target {
	t := kc.Target{
		BaseURL:       s.baseURL(),
		ManagementURL: s.managementURL(),
		Admin:         kc.Credentials{Username: AdminUser, ClientID: AdminClientID},
	}
	if pw, err := s.secret("admin-password"); err == nil {
		t.Admin.Password = kc.Secret(pw)
	}
	if cs, err := s.secret("admin-client-secret"); err == nil {
		t.Admin.ClientSecret = kc.Secret(cs)
	}
	var pids []int
	for _, ns := range s.st.Nodes {
		if ns.Proc != nil && ns.Proc.JVM.Alive() {
			pids = append(pids, ns.Proc.JVM.PID)
		}
	}
	if len(pids) > 0 {
		t.PID = pids[0]
	}
	if len(s.st.Nodes) > 1 {
		t.PIDs = pids
	}
	if dsn, err := s.DSN(); err == nil {
		t.DB = dsn
	}
	if s.st.PG != nil && s.st.PG.Proc.Alive() {
		t.DBPID = s.st.PG.Proc.PID
	}
	if m := s.st.MariaDB; m != nil && m.Proc.Alive() {
		t.DBPID = m.Proc.PID
	}
	if k := s.st.Options.dbKind(); k != DBPostgres {
		t.DBKind = k
	}
	t.LDAP = s.Directory()
	if s.st.TLS != nil {
		t.CAFile = s.st.TLS.CA
	}
	return t
}

// CAFile is the PEM file of the CA that signed the stack's certificate
// ("" when the stack serves plain HTTP): what curl (--cacert), k6
// (SSL_CERT_FILE) or a browser needs to trust it.
func (s *Stack) CAFile() string {
	if s.st.TLS == nil {
		return ""
	}
	return s.st.TLS.CA
}

// httpClient is a client with timeout that trusts the stack's CA, for
// its health and management calls.
func (s *Stack) httpClient(timeout time.Duration) *http.Client {
	return kc.TLSClient(s.CAFile(), false, timeout)
}

func (s *Stack) baseURL() string {
	if s.st.LB != nil {
		return s.st.LB.URL()
	}
	if len(s.st.Nodes) == 0 {
		return ""
	}
	return s.st.Nodes[0].URL()
}

func (s *Stack) managementURL() string {
	if len(s.st.Nodes) == 0 {
		return ""
	}
	return s.st.Nodes[0].MgmtURL()
}

// State returns a copy of the stack's recorded state.
func (s *Stack) State() State { return s.st }

// Uptime is how long the youngest running node has been ready (0 when
// none is known to be).
func (s *Stack) Uptime() time.Duration {
	var up time.Duration
	for _, n := range s.st.Nodes {
		if n.Proc == nil || n.Proc.ReadyAt.IsZero() {
			continue
		}
		if d := time.Since(n.Proc.ReadyAt); up == 0 || d < up {
			up = d
		}
	}
	return up
}

// LogPath is Keycloak's log file (node 1's).
func (s *Stack) LogPath() string { return filepath.Join(s.st.Dir, "keycloak.log") }

// NodeLogPath is node i's log file (1-based).
func (s *Stack) NodeLogPath(i int) (string, error) {
	if i < 1 || i > len(s.st.Nodes) {
		return "", fmt.Errorf("node %d: the stack has nodes 1 to %d", i, len(s.st.Nodes))
	}
	return s.st.Nodes[i-1].Log, nil
}

// PGLogPath is the private database's log file, PostgreSQL's or
// MariaDB's ("" with an external database).
func (s *Stack) PGLogPath() string {
	switch {
	case s.st.PG != nil:
		return s.st.PG.LogPath
	case s.st.MariaDB != nil:
		return s.st.MariaDB.LogPath
	}
	return ""
}
