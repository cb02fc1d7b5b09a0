package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
)

// where selects a local stack: its folders and name.
type where struct {
	stateDir, cacheDir, name string
}

func (w *where) register(fs *flag.FlagSet) {
	fs.StringVar(&w.stateDir, "state-dir", "", "folder for stacks (default $XDG_STATE_HOME/kcbench; /var/lib/kcbench as root)")
	fs.StringVar(&w.cacheDir, "cache-dir", "", "folder for distributions and builds (default $XDG_CACHE_HOME/kcbench; /var/cache/kcbench as root)")
	fs.StringVar(&w.name, "stack", stack.DefaultStackName, "name of the local stack")
}

func (w *where) dirs(e *env) (stack.Dirs, error) {
	d, err := stack.DefaultDirs(e.getenv)
	if err != nil {
		return d, err
	}
	if w.stateDir != "" {
		d.State, _ = filepath.Abs(w.stateDir)
	}
	if w.cacheDir != "" {
		d.Cache, _ = filepath.Abs(w.cacheDir)
	}
	return d, nil
}

// attach finds the running local stack.
func (w *where) attach(e *env) (*stack.Stack, error) {
	d, err := w.dirs(e)
	if err != nil {
		return nil, err
	}
	s, err := stack.Attach(d, w.name)
	if err != nil {
		if errors.Is(err, stack.ErrNotUp) {
			return nil, fmt.Errorf("%w: start one with kcbench up", err)
		}
		return nil, err
	}
	s.SetLogf(e.logf)
	return s, nil
}

// stackFlags are the options of a stack to start.
type stackFlags struct {
	where
	kc           stack.KeycloakOptions
	top          stack.Topology
	cacheSizes   mapFlag
	buildOpts    listFlag
	kcOpts       listFlag
	pg           stack.PGOptions
	dbURL        string
	dbUser       string
	dbPasswordF  string
	readyTimeout time.Duration
	fs           *flag.FlagSet // to name the flags in errors
}

func (f *stackFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	f.where.register(fs)
	f.cacheSizes = mapFlag{}
	fs.StringVar(&f.kc.Version, "kc-version", stack.DefaultKeycloakVersion, "Keycloak version (any 26.x served by Maven Central)")
	fs.StringVar(&f.kc.JavaHome, "java-home", "", "JDK to run Keycloak with (default: JAVA_HOME if supported, else a system JDK)")
	fs.StringVar(&f.kc.Heap, "heap", "", "JVM heap, sets -Xms and -Xmx (e.g. 1g; default Keycloak's own)")
	fs.IntVar(&f.kc.HTTPThreads, "http-threads", 0, "--http-pool-max-threads (0: Keycloak's default)")
	fs.IntVar(&f.kc.DBPoolSize, "db-pool-size", 0, "--db-pool-max-size (0: Keycloak's default)")
	fs.Var(f.cacheSizes, "cache-size", "embedded cache size NAME=N, repeatable (realms, users, sessions, …)")
	fs.Var(&f.buildOpts, "build-opt", "extra kc.sh build option, repeatable (e.g. --features=token-exchange)")
	fs.Var(&f.kcOpts, "kc-opt", "extra kc.sh start option, repeatable (e.g. --log-level=debug)")
	fs.IntVar(&f.kc.HTTPPort, "http-port", 0, "Keycloak HTTP port on 127.0.0.1 (0: a free port)")
	fs.IntVar(&f.kc.ManagementPort, "management-port", 0, "management port (health, metrics) on 127.0.0.1 (0: a free port)")
	registerTopology(fs, &f.top)
	fs.DurationVar(&f.readyTimeout, "ready-timeout", stack.DefaultReadyTimeout, "how long to wait for /health/ready")
	fs.StringVar(&f.pg.Version, "pg-version", stack.DefaultPGVersion, "PostgreSQL binaries from Maven (io.zonky.test.postgres), or \"system\" for the installed server")
	fs.StringVar(&f.pg.BinDir, "pg-bin", "", "folder with initdb and postgres (overrides --pg-version)")
	fs.BoolVar(&f.pg.Durable, "pg-durable", false, "keep fsync/synchronous_commit/full_page_writes on")
	fs.StringVar(&f.dbURL, "db-url", "", "use this external PostgreSQL instead (jdbc:postgresql://HOST:PORT/DB)")
	fs.StringVar(&f.dbUser, "db-user", "", "user for --db-url")
	fs.StringVar(&f.dbPasswordF, "db-password-file", "", "file holding the password for --db-url")
}

func (f *stackFlags) config(e *env, detached bool) (stack.Config, error) {
	d, err := f.dirs(e)
	if err != nil {
		return stack.Config{}, err
	}
	if err := checkTopologyFlags(f.top); err != nil {
		return stack.Config{}, err
	}
	if detached && !f.top.Latency.Zero() {
		return stack.Config{}, usagef("--latency: the latency proxies live in kcbench's process: use up --foreground (or quickstart, capacity, experiment)")
	}
	f.kc.CacheSizes = f.cacheSizes
	f.kc.BuildOptions = f.buildOpts
	f.kc.ExtraOptions = f.kcOpts
	f.kc.ReadyTimeout = f.readyTimeout
	cfg := stack.Config{Name: f.name, Dirs: d, Keycloak: f.kc, Topology: f.top, PG: f.pg, Detached: detached, Logf: e.logf}
	if f.dbURL != "" {
		if f.dbPasswordF == "" {
			return cfg, usagef("--db-url needs --db-user and --db-password-file")
		}
		pw, err := fileutil.ReadSecret(f.dbPasswordF)
		if err != nil {
			return cfg, usagef("--db-password-file: %v", err)
		}
		cfg.DB = &stack.ExternalDB{URL: f.dbURL, User: f.dbUser, Password: pw}
	}
	if err := cfg.Validate(); err != nil {
		if f.fs != nil {
			err = flagNames(f.fs, err)
		}
		return cfg, cliutil.Usage(err)
	}
	return cfg, nil
}

// registerTopology adds the flags of a stack's topology: nodes, balancer,
// per-node CPU.
func registerTopology(fs *flag.FlagSet, t *stack.Topology) {
	fs.IntVar(&t.Nodes, "nodes", 1, fmt.Sprintf("Keycloak nodes (1–%d); several form one Infinispan cluster (jdbc-ping through the database), each on its own 127.0.0.x", stack.MaxNodes))
	fs.StringVar(&t.LB, "lb", "", "load balancer in front of the nodes: haproxy or none (default: haproxy for several nodes, none for one)")
	fs.BoolVar(&t.Sticky, "lb-sticky", false, "the balancer keeps a client on the node of its AUTH_SESSION_ID")
	fs.StringVar(&t.HAProxy, "haproxy", "", "haproxy binary (default: haproxy on PATH)")
	fs.Func("latency", "round trip `LINK=D[~JITTER]` added by an in-process proxy, e.g. node-db=2ms or node-db=5ms~1ms (the nodes' JDBC URL points at it; measured at start; needs a stack kcbench holds: up --foreground, quickstart, capacity, experiment)", func(v string) error {
		l, err := stack.ParseLatency(v)
		t.Latency = l
		return err
	})
	fs.Float64Var(&t.NodeCPUs, "node-cpus", 0, "CPU quota of each Keycloak node in cores, e.g. 1 or 0.5 (cgroup v2 cpu.max, v1 cpu.cfs_quota_us, else taskset pinning; 0: no limit)")
}

// checkTopologyFlags rejects what the stack would take as "default" but a
// user typed on purpose (--nodes 0).
func checkTopologyFlags(t stack.Topology) error {
	if t.Nodes < 1 || t.Nodes > stack.MaxNodes {
		return usagef("--nodes %d: want 1 to %d", t.Nodes, stack.MaxNodes)
	}
	if err := t.Validate(); err != nil {
		return cliutil.Usage(err)
	}
	return nil
}

// targetFlags make an external Keycloak a Target.
type targetFlags struct {
	url, mgmtURL, user, passwordFile, clientID, clientSecretFile string
}

func (t *targetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.url, "target", "", "an external Keycloak's base URL (instead of the local stack)")
	fs.StringVar(&t.mgmtURL, "management-url", "", "the external Keycloak's management URL (health, metrics)")
	fs.StringVar(&t.user, "admin-user", "admin", "admin user of the external Keycloak (master realm)")
	fs.StringVar(&t.passwordFile, "admin-password-file", "", "file holding the admin password")
	fs.StringVar(&t.clientID, "admin-client-id", "", "admin service-account client id (instead of user and password)")
	fs.StringVar(&t.clientSecretFile, "admin-client-secret-file", "", "file holding that client's secret")
}

func (t *targetFlags) set() bool { return t.url != "" }

func (t *targetFlags) target() (kc.Target, error) {
	tg := kc.Target{BaseURL: t.url, ManagementURL: t.mgmtURL}
	switch {
	case t.clientID != "":
		if t.clientSecretFile == "" {
			return tg, usagef("--admin-client-id needs --admin-client-secret-file")
		}
		s, err := fileutil.ReadSecret(t.clientSecretFile)
		if err != nil {
			return tg, usagef("--admin-client-secret-file: %v", err)
		}
		tg.Admin = kc.Credentials{ClientID: t.clientID, ClientSecret: kc.Secret(s)}
	default:
		if t.passwordFile == "" {
			return tg, usagef("--target needs --admin-password-file (or --admin-client-id and --admin-client-secret-file)")
		}
		s, err := fileutil.ReadSecret(t.passwordFile)
		if err != nil {
			return tg, usagef("--admin-password-file: %v", err)
		}
		tg.Admin = kc.Credentials{Username: t.user, Password: kc.Secret(s)}
	}
	if err := tg.Validate(); err != nil {
		return tg, cliutil.Usage(err)
	}
	return tg, nil
}

// resolveTarget returns the external target if flagged, else the local
// stack's.
func resolveTarget(e *env, t *targetFlags, w *where) (kc.Target, *stack.Stack, error) {
	if t.set() {
		tg, err := t.target()
		return tg, nil, err
	}
	s, err := w.attach(e)
	if err != nil {
		return kc.Target{}, nil, err
	}
	return s.Target(), s, nil
}

// withoutCancel gives cleanup its own bounded context after an interrupt.
func cleanupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
}

type httpClient = http.Client

func newHTTPClient(timeout time.Duration) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // loopback and known targets: never through a proxy
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Timeout: timeout, Transport: tr}
}
