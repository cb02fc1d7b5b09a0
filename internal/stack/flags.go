package stack

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/directory"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
)

// Where selects a local stack on the command line: its folders and name.
type Where struct {
	StateDir, CacheDir, Name string
}

// RegisterFlags adds --state-dir, --cache-dir and --stack.
func (w *Where) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&w.StateDir, "state-dir", "", "folder for stacks (default $XDG_STATE_HOME/kcbench; /var/lib/kcbench as root)")
	fs.StringVar(&w.CacheDir, "cache-dir", "", "folder for distributions and builds (default $XDG_CACHE_HOME/kcbench; /var/cache/kcbench as root)")
	fs.StringVar(&w.Name, "stack", DefaultStackName, "name of the local stack")
}

// Dirs are the folders the flags name, else the defaults from the
// environment.
func (w *Where) Dirs(getenv func(string) string) (Dirs, error) {
	d, err := DefaultDirs(getenv)
	if err != nil {
		return d, err
	}
	if w.StateDir != "" {
		d.State, _ = filepath.Abs(w.StateDir)
	}
	if w.CacheDir != "" {
		d.Cache, _ = filepath.Abs(w.CacheDir)
	}
	return d, nil
}

// Attach finds the running local stack; it logs through logf.
func (w *Where) Attach(getenv func(string) string, logf func(string, ...any)) (*Stack, error) {
	d, err := w.Dirs(getenv)
	if err != nil {
		return nil, err
	}
	s, err := Attach(d, w.Name)
	if err != nil {
		if errors.Is(err, ErrNotUp) {
			return nil, fmt.Errorf("%w: start one with kcbench up", err)
		}
		return nil, err
	}
	s.SetLogf(logf)
	return s, nil
}

// AttachToRestart finds a stack whose servers a command restarts. A
// foreground stack (owned by another kcbench, its servers tied to that
// process's life) is refused: servers started from here would die with
// this command. what names the command in the error.
func (w *Where) AttachToRestart(getenv func(string) string, logf func(string, ...any), what string) (*Stack, error) {
	s, err := w.Attach(getenv, logf)
	if err != nil {
		return nil, err
	}
	if err := s.CheckRestartable(what); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckRestartable refuses a foreground stack (owned by another kcbench,
// its servers tied to that process's life): servers restarted from this
// process would die with it. what names the command in the error.
func (s *Stack) CheckRestartable(what string) error {
	if st := s.State(); !st.Detached {
		return fmt.Errorf("stack %q runs in the foreground of another kcbench (up --foreground or quickstart); %s restarts its servers, which would then stop with this command: use a detached stack (kcbench up)", st.Name, what)
	}
	return nil
}

// ResolveTarget returns the external target if flagged, else the local
// stack's.
func ResolveTarget(t *kc.TargetFlags, w *Where, getenv func(string) string, logf func(string, ...any)) (kc.Target, *Stack, error) {
	if tg, ext, err := t.External(); err != nil || ext {
		return tg, nil, err
	}
	s, err := w.Attach(getenv, logf)
	if err != nil {
		return kc.Target{}, nil, err
	}
	return s.Target(), s, nil
}

// DatasetTarget is where a command that works on a dataset (seed, dataset
// verify and delete, load) goes: the Target, the dataset manifest's path,
// and for the local stack its server CPU reader and database URL.
type DatasetTarget struct {
	Target   kc.Target
	Manifest string
	CPU      func() (time.Duration, error) // nil but on the local stack
	// MachineCPU reads the machine's busy and total CPU (nil but on the
	// local stack).
	MachineCPU func() (busy, total time.Duration, err error)
	DB         kc.Secret // "" but on the local stack
	// DBDir is the folder of the local stack's PostgreSQL data ("" else).
	DBDir string
	// SessionsInMemory: the local stack keeps online sessions in memory
	// only (--persistent-sessions=false).
	SessionsInMemory bool
}

// ResolveDatasetTarget resolves the target as ResolveTarget does, and the
// manifest: the one given, else the local stack's; an external target
// needs one given.
func ResolveDatasetTarget(t *kc.TargetFlags, w *Where, getenv func(string) string, logf func(string, ...any), manifest string) (DatasetTarget, error) {
	tg, s, err := ResolveTarget(t, w, getenv, logf)
	d := DatasetTarget{Target: tg, Manifest: manifest}
	if err != nil {
		return d, err
	}
	if s != nil {
		d.DB, _ = s.DSN()
		if s.st.PG != nil {
			d.DBDir = s.st.PG.Data
		}
		d.SessionsInMemory = s.st.Options.VolatileSessions
		if d.Manifest == "" {
			d.Manifest = s.DatasetManifest()
		}
		if tg.Local() {
			d.CPU = func() (time.Duration, error) { return TargetCPU(tg) }
			d.MachineCPU = MachineBusyTotal
		}
	}
	if d.Manifest == "" {
		return d, cliutil.Usagef("an external --target needs --manifest FILE (where the dataset manifest is kept)")
	}
	return d, nil
}

// MachineBusyTotal reads the machine's busy and total CPU time.
func MachineBusyTotal() (busy, total time.Duration, err error) {
	m, err := ReadMachineCPU()
	return m.Busy, m.Total, err
}

// Flags are the options of a stack to start.
type Flags struct {
	Where
	kc           KeycloakOptions
	top          Topology
	cacheSizes   cliutil.Map
	buildOpts    cliutil.List
	kcOpts       cliutil.List
	javaOpts     cliutil.List
	pg           PGOptions
	dbURL        string
	dbUser       string
	dbPasswordF  string
	mariadbd     string
	ldap         LDAPOptions
	ldapURL      string
	ldapBindDN   string
	ldapBaseDN   string
	ldapPassF    string
	ldapImport   string
	readyTimeout time.Duration
	tls          bool
	persistent   bool
	fs           *flag.FlagSet // to name the flags in errors
}

// RegisterFlags adds the flags of a stack to start.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	f.fs = fs
	f.Where.RegisterFlags(fs)
	f.cacheSizes = cliutil.Map{}
	fs.StringVar(&f.kc.Version, "kc-version", DefaultKeycloakVersion, "Keycloak version (any 26.x served by Maven Central)")
	fs.StringVar(&f.kc.JavaHome, "java-home", "", "JDK to run Keycloak with (default: JAVA_HOME if supported, else a system JDK)")
	fs.StringVar(&f.kc.Heap, "heap", "", "JVM heap, sets -Xms and -Xmx (e.g. 1g; default Keycloak's own)")
	fs.IntVar(&f.kc.HTTPThreads, "http-threads", 0, "--http-pool-max-threads (0: Keycloak's default)")
	fs.IntVar(&f.kc.DBPoolSize, "db-pool-size", 0, "--db-pool-max-size (0: Keycloak's default)")
	fs.Var(f.cacheSizes, "cache-size", "embedded cache size NAME=N, repeatable (realms, users, sessions, …)")
	fs.BoolVar(&f.persistent, "persistent-sessions", true, PersistentSessionsUsage)
	fs.Var(&f.buildOpts, "build-opt", "extra kc.sh build option, repeatable (e.g. --features=token-exchange)")
	fs.Var(&f.kcOpts, "kc-opt", "extra kc.sh start option, repeatable (e.g. --log-level=debug)")
	fs.Var(&f.javaOpts, "java-opt", "extra JVM option for Keycloak, repeatable (e.g. -XX:+UseParallelGC, -XX:-TieredCompilation); in JAVA_OPTS_APPEND, recorded as java_opts in the results")
	fs.IntVar(&f.kc.HTTPPort, "http-port", 0, "Keycloak HTTP port on 127.0.0.1 (0: a free port)")
	fs.IntVar(&f.kc.ManagementPort, "management-port", 0, "management port (health, metrics) on 127.0.0.1 (0: a free port)")
	fs.BoolVar(&f.tls, "tls", true, "serve HTTPS with a CA and certificate made for the stack (kcbench status prints the CA file); --tls=false serves plain HTTP")
	fs.StringVar(&f.kc.TLSKey, "tls-key", "", "key type of the stack's certificate: "+strings.Join(TLSKeys, " or ")+" (default "+TLSKeyRSA2048+")")
	f.top.RegisterFlags(fs)
	fs.DurationVar(&f.readyTimeout, "ready-timeout", DefaultReadyTimeout, "how long to wait for /health/ready")
	fs.StringVar(&f.pg.Version, "pg-version", DefaultPGVersion, "PostgreSQL binaries from Maven (io.zonky.test.postgres), or \"system\" for the installed server")
	fs.StringVar(&f.pg.BinDir, "pg-bin", "", "folder with initdb and postgres (overrides --pg-version)")
	cliutil.Renamed(fs, "pg-durable", "db-durable")
	fs.BoolVar(&f.pg.FreshSchema, "fresh-schema", false, "let Keycloak create its schema at first boot (Liquibase, ~13 s more) instead of copying the cached empty one: to time a first install")
	fs.BoolVar(&f.pg.Durable, "db-durable", false, "keep fsync/synchronous_commit/full_page_writes on (MariaDB: innodb_flush_log_at_trx_commit=1, doublewrite on)")
	fs.StringVar(&f.kc.DB, "db", "", "database Keycloak runs on: postgres (default) or mariadb (a private MariaDB from the installed mariadb-server package; snapshots and the clone seeding strategy are PostgreSQL-only)")
	fs.StringVar(&f.mariadbd, "mariadbd", "", "mariadbd binary for --db mariadb (default: mariadbd on PATH or in /usr/sbin)")
	fs.StringVar(&f.dbURL, "db-url", "", "use this external database instead (jdbc:postgresql://HOST:PORT/DB, or jdbc:mariadb://HOST:PORT/DB, which implies --db mariadb)")
	fs.StringVar(&f.dbUser, "db-user", "", "user for --db-url")
	fs.StringVar(&f.dbPasswordF, "db-password-file", "", "file holding the password for --db-url")
	f.ldap.RegisterFlags(fs)
	fs.StringVar(&f.ldapURL, "ldap-url", "", "keep the dataset's users in this existing directory (ldap://HOST:PORT), read by Keycloak's LDAP provider; needs --ldap-bind-dn, --ldap-password-file, --ldap-base-dn")
	fs.StringVar(&f.ldapBindDN, "ldap-bind-dn", "", "DN Keycloak and the seeder bind as, for --ldap-url")
	fs.StringVar(&f.ldapPassF, "ldap-password-file", "", "file holding the bind password, for --ldap-url")
	fs.StringVar(&f.ldapBaseDN, "ldap-base-dn", "", "DN below which the seeder makes one OU per tenant, for --ldap-url")
	fs.StringVar(&f.ldapImport, "ldap-import", "off", "on: Keycloak imports LDAP users into its database on first use (importEnabled); off: reads them from the directory each time")
}

// RegisterFlags adds --ldap, --ldap-cache-policy and --slapd.
func (o *LDAPOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Server, "ldap", "", "keep the dataset's users in LDAP: slapd runs a private OpenLDAP with the stack (Debian package slapd)")
	fs.StringVar(&o.CachePolicy, "ldap-cache-policy", "", "the LDAP provider's cache policy: "+strings.Join(CachePolicies, ", ")+" (default Keycloak's, DEFAULT)")
	fs.StringVar(&o.Slapd, "slapd", "", "slapd binary (default: slapd on PATH or in /usr/sbin)")
}

// Config is the stack the flags describe; its problems are usage errors
// named by flag.
func (f *Flags) Config(getenv func(string) string, logf func(string, ...any), detached bool) (Config, error) {
	d, err := f.Dirs(getenv)
	if err != nil {
		return Config{}, err
	}
	if err := f.top.CheckFlags(); err != nil {
		return Config{}, err
	}
	if detached && !f.top.Latency.Zero() {
		return Config{}, cliutil.Usagef("--latency: the latency proxies live in kcbench's process: use up --foreground (or quickstart, capacity, experiment)")
	}
	f.kc.CacheSizes = f.cacheSizes
	f.kc.BuildOptions = f.buildOpts
	f.kc.ExtraOptions = f.kcOpts
	f.kc.JavaOpts = f.javaOpts
	f.kc.ReadyTimeout = f.readyTimeout
	f.kc.PlainHTTP = !f.tls
	f.kc.VolatileSessions = !f.persistent
	if f.dbURL != "" && f.kc.DB == "" {
		f.kc.DB = DBKindOfURL(f.dbURL)
	}
	if f.mariadbd != "" && f.kc.DB != DBMariaDB {
		return Config{}, cliutil.Usagef("--mariadbd goes with --db mariadb")
	}
	cfg := Config{Name: f.Name, Dirs: d, Keycloak: f.kc, Topology: f.top, PG: f.pg, MariaDBd: f.mariadbd, Detached: detached, Logf: logf}
	if f.dbURL != "" {
		if f.dbPasswordF == "" {
			return cfg, cliutil.Usagef("--db-url needs --db-user and --db-password-file")
		}
		pw, err := fileutil.ReadSecret(f.dbPasswordF)
		if err != nil {
			return cfg, cliutil.Usagef("--db-password-file: %v", err)
		}
		cfg.DB = &ExternalDB{URL: f.dbURL, User: f.dbUser, Password: pw}
	}
	if err := f.ldapConfig(&cfg); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		if f.fs != nil {
			err = cliutil.FlagNames(f.fs, err)
		}
		return cfg, cliutil.Usage(err)
	}
	return cfg, nil
}

// ldapConfig fills cfg.LDAP from the --ldap flags.
func (f *Flags) ldapConfig(cfg *Config) error {
	cfg.LDAP = f.ldap
	switch f.ldapImport {
	case "on":
		cfg.LDAP.Import = true
	case "off", "":
	default:
		return cliutil.Usagef("--ldap-import %q: want on or off", f.ldapImport)
	}
	if f.ldapURL == "" {
		if f.ldapBindDN != "" || f.ldapPassF != "" || f.ldapBaseDN != "" {
			return cliutil.Usagef("--ldap-bind-dn, --ldap-password-file and --ldap-base-dn go with --ldap-url")
		}
		if !cfg.LDAP.Enabled() && (f.ldapImport == "on" || cfg.LDAP.CachePolicy != "") {
			return cliutil.Usagef("--ldap-import and --ldap-cache-policy need --ldap slapd or --ldap-url")
		}
		return nil
	}
	if f.ldapPassF == "" {
		return cliutil.Usagef("--ldap-url needs --ldap-bind-dn, --ldap-password-file and --ldap-base-dn")
	}
	pw, err := fileutil.ReadSecret(f.ldapPassF)
	if err != nil {
		return cliutil.Usagef("--ldap-password-file: %v", err)
	}
	cfg.LDAP.External = &ExternalLDAP{URL: f.ldapURL, BindDN: f.ldapBindDN, Password: pw, BaseDN: f.ldapBaseDN}
	return nil
}

// RegisterFlags adds the flags of a stack's topology: nodes, balancer,
// per-node CPU, latency.
func (t *Topology) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&t.Nodes, "nodes", 1, fmt.Sprintf("Keycloak nodes (1–%d); several form one Infinispan cluster (jdbc-ping through the database), each on its own 127.0.0.x", MaxNodes))
	fs.StringVar(&t.LB, "lb", "", "load balancer in front of the nodes: haproxy or none (default: haproxy for several nodes, none for one)")
	fs.BoolVar(&t.Sticky, "lb-sticky", false, "the balancer keeps a client on the node of its AUTH_SESSION_ID (with TLS: needs --lb-tls terminate or reencrypt)")
	fs.StringVar(&t.LBTLS, "lb-tls", "", "how the balancer handles TLS: passthrough (TLS ends at the node, the sizing guide's setting), terminate (ends at the balancer, plain HTTP to the nodes) or reencrypt (default passthrough)")
	fs.StringVar(&t.HAProxy, "haproxy", "", "haproxy binary (default: haproxy on PATH)")
	fs.Func("latency", "round trip `LINK=D[~JITTER]` added by an in-process proxy, e.g. node-db=2ms, node-db=5ms~1ms or node-node=5ms,node-db=2ms (node-db: the nodes' JDBC URL points at a proxy; node-node: a proxy in front of each node's JGroups ports, which the node advertises; measured at start; needs a stack kcbench holds: up --foreground, quickstart, capacity, experiment)", func(v string) error {
		l, err := ParseLatency(v)
		t.Latency = l
		return err
	})
	fs.Float64Var(&t.NodeCPUs, "node-cpus", 0, "CPU quota of each Keycloak node in cores, e.g. 1 or 0.5 (cgroup v2 cpu.max, v1 cpu.cfs_quota_us, else taskset pinning; 0: no limit)")
}

// CheckFlags rejects, as a usage error, what Validate would take as
// "default" but a user typed on purpose (--nodes 0).
func (t Topology) CheckFlags() error {
	if t.Nodes < 1 || t.Nodes > MaxNodes {
		return cliutil.Usagef("--nodes %d: want 1 to %d", t.Nodes, MaxNodes)
	}
	if err := t.Validate(); err != nil {
		return cliutil.Usage(err)
	}
	return nil
}

// PrintStatus prints the local stack's status to out, as text or JSON
// (kcbench status); the error says whether a server is down.
func (w *Where) PrintStatus(ctx context.Context, out io.Writer, asJSON bool, getenv func(string) string, logf func(string, ...any)) error {
	s, err := w.Attach(getenv, logf)
	if err != nil {
		return err
	}
	st := s.Status(ctx)
	if asJSON {
		return cliutil.WriteJSON(out, st)
	}
	if err := st.WriteText(out); err != nil {
		return err
	}
	return st.Down()
}

// RestartNodes restarts every Keycloak node of the stack, or node (1-based)
// only, and prints the boot to out (kcbench restart).
func (w *Where) RestartNodes(ctx context.Context, out io.Writer, node int, getenv func(string) string, logf func(string, ...any)) error {
	if node < 0 {
		return cliutil.Usagef("--node %d: want a node number from 1", node)
	}
	s, err := w.AttachToRestart(getenv, logf, "kcbench restart")
	if err != nil {
		return err
	}
	if n := len(s.State().Nodes); node > n {
		return cliutil.Usagef("--node %d: the stack has nodes 1 to %d", node, n)
	}
	var br BootResult
	if node > 0 {
		logf("restarting Keycloak node %d", node)
		br, err = s.RestartNode(ctx, node)
	} else {
		logf("restarting Keycloak")
		br, err = s.Restart(ctx)
	}
	if err != nil {
		return err
	}
	br.WriteText(out)
	return nil
}

// The logs kcbench logs --log shows.
const (
	LogKeycloak = "keycloak" // a Keycloak node's (--node)
	LogDB       = "db"       // the database's: PostgreSQL's or MariaDB's
	LogLB       = "lb"       // the load balancer's: HAProxy's
)

// LogFlags choose the log kcbench logs shows and how.
type LogFlags struct {
	Log         string // LogKeycloak, LogDB or LogLB
	Follow      bool
	Node, Lines int
}

// RegisterFlags adds kcbench logs' flags.
func (f *LogFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.Log, "log", LogKeycloak, "`NAME` of the log: keycloak (node --node's), db (the database's: PostgreSQL's or MariaDB's) or lb (HAProxy's)")
	cliutil.Renamed(fs, "pg", "log db")
	cliutil.Renamed(fs, "db", "log db")
	cliutil.Renamed(fs, "lb", "log lb")
	fs.IntVar(&f.Node, "node", 1, "Keycloak node whose log to show (1-based)")
	fs.IntVar(&f.Lines, "n", 100, "print the last N lines (0: all)")
	fs.BoolVar(&f.Follow, "f", false, "follow the log until Ctrl-C")
}

// ShowLog prints the log f chooses of the stack to out, following it
// with f.Follow until ctx ends (kcbench logs).
func (w *Where) ShowLog(ctx context.Context, out io.Writer, f LogFlags, getenv func(string) string, logf func(string, ...any)) error {
	if f.Log != LogKeycloak && f.Log != LogDB && f.Log != LogLB {
		return cliutil.Usagef("--log %q: want %s, %s or %s", f.Log, LogKeycloak, LogDB, LogLB)
	}
	s, err := w.Attach(getenv, logf)
	if err != nil {
		return err
	}
	path, err := s.ShownLogPath(f.Log, f.Node)
	if err != nil {
		return err
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	if err := fileutil.Tail(file, out, f.Lines); err != nil {
		return err
	}
	if !f.Follow {
		return nil
	}
	return fileutil.Follow(ctx, file, out)
}

// LDAPBulkLoader is the local stack's BulkLoadLDAP when a seed may use it
// (no external --target; a detached stack running a private slapd), else
// nil (the seeder then writes over LDAP).
func (w *Where) LDAPBulkLoader(t *kc.TargetFlags, getenv func(string) string) func(context.Context, []directory.Entry) (directory.AddResult, error) {
	if t.Set() {
		return nil
	}
	d, err := w.Dirs(getenv)
	if err != nil {
		return nil
	}
	s, err := Attach(d, w.Name)
	if err != nil || !s.CanBulkLoadLDAP() {
		return nil
	}
	return s.BulkLoadLDAP
}
