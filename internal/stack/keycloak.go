package stack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/kcbench/kcbench/internal/kc"
)

// KeycloakOptions configure the Keycloak server of a stack.
type KeycloakOptions struct {
	Version string `json:"version"`
	// JavaHome pins the JDK; empty means discover one.
	JavaHome string `json:"java_home,omitempty"`
	// Heap sets -Xms and -Xmx (e.g. "1g"); empty keeps Keycloak's default.
	Heap string `json:"heap,omitempty"`
	// HTTPThreads is --http-pool-max-threads (0 = Keycloak's default).
	HTTPThreads int `json:"http_threads,omitempty"`
	// DBPoolSize is --db-pool-max-size (0 = Keycloak's default, 100).
	DBPoolSize int `json:"db_pool_size,omitempty"`
	// CacheSizes maps an embedded cache (realms, users, authorization,
	// keys, crl, sessions, client-sessions, offline-sessions,
	// offline-client-sessions) to its --cache-embedded-<name>-max-count.
	CacheSizes map[string]int `json:"cache_sizes,omitempty"`
	// BuildOptions are extra `kc.sh build` options (build-time, e.g.
	// --features=...); each distinct set gets its own cached build.
	BuildOptions []string `json:"build_options,omitempty"`
	// ExtraOptions are extra `kc.sh start` options, passed through as is.
	ExtraOptions []string `json:"extra_options,omitempty"`
	// JavaOpts are extra JVM options (e.g. -XX:+UseParallelGC), passed
	// to kc.sh in JAVA_OPTS_APPEND; each one word.
	JavaOpts []string `json:"java_opts,omitempty"`
	// HTTPPort and ManagementPort; 0 picks a free port.
	HTTPPort       int `json:"http_port,omitempty"`
	ManagementPort int `json:"management_port,omitempty"`
	// ReadyTimeout bounds each wait for /health/ready (default 5 min).
	ReadyTimeout time.Duration `json:"ready_timeout,omitempty"`
	// DB is the database Keycloak is built for and runs on: DBPostgres
	// ("", the default) or DBMariaDB. A build-time option: each kind has
	// its own build.
	DB string `json:"db,omitempty"`
	// PlainHTTP serves plain HTTP (--tls=false); by default the stack
	// serves HTTPS with a certificate made for it.
	PlainHTTP bool `json:"plain_http,omitempty"`
	// TLSKey is the certificate's key type (TLSKeys; "": RSA-2048).
	TLSKey string `json:"tls_key,omitempty"`
	// VolatileSessions keeps online user sessions in memory only
	// (--persistent-sessions=false): Keycloak's feature
	// persistent-user-sessions, on by default on every 26.x line,
	// disabled at build time (FeatureVolatileSessions).
	VolatileSessions bool `json:"volatile_sessions,omitempty"`
}

// PersistentSessionsUsage is the help of --persistent-sessions, wherever
// a command takes it.
const PersistentSessionsUsage = "keep online user sessions in the database, Keycloak 26's default; false: in memory only (--features-disabled=persistent-user-sessions, a build of its own)"

// FeatureVolatileSessions is the build option of
// KeycloakOptions.VolatileSessions.
const FeatureVolatileSessions = "--features-disabled=persistent-user-sessions"

// buildOptions are the extra `kc.sh build` options: BuildOptions, and
// the feature switch of VolatileSessions (added to a --features-disabled
// of BuildOptions, if one is there: Keycloak takes one list).
func (o KeycloakOptions) buildOptions() []string {
	if !o.VolatileSessions {
		return o.BuildOptions
	}
	out := slicesClone(o.BuildOptions)
	const flag = "--features-disabled="
	for i, opt := range out {
		if strings.HasPrefix(opt, flag) {
			out[i] = opt + "," + strings.TrimPrefix(FeatureVolatileSessions, flag)
			return out
		}
	}
	return append(out, FeatureVolatileSessions)
}

// TLSKeyType is the key type of the stack's certificate ("" with plain
// HTTP).
func (o KeycloakOptions) TLSKeyType() string {
	if o.PlainHTTP {
		return ""
	}
	return cmp.Or(o.TLSKey, TLSKeyRSA2048)
}

// dbKind is o.DB, "" read as PostgreSQL.
func (o KeycloakOptions) dbKind() string {
	if o.DB == "" {
		return DBPostgres
	}
	return o.DB
}

// DBSchema is the database schema Keycloak is told to use with
// --db-schema among ExtraOptions ("" for the default).
func (o KeycloakOptions) DBSchema() string {
	schema := ""
	for k, opt := range o.ExtraOptions {
		if v, ok := strings.CutPrefix(opt, "--db-schema="); ok {
			schema = v
		} else if opt == "--db-schema" && k+1 < len(o.ExtraOptions) {
			schema = o.ExtraOptions[k+1]
		}
	}
	return schema
}

// DefaultReadyTimeout bounds a boot.
const DefaultReadyTimeout = 5 * time.Minute

// cacheNames are the embedded caches whose size is settable.
var cacheNames = []string{"realms", "users", "authorization", "keys", "crl", "sessions", "client-sessions", "offline-sessions", "offline-client-sessions"}

// Validate checks the options without touching anything.
// Bounds of the Keycloak options.
const (
	maxPool         = 10_000
	maxCacheSize    = 1_000_000_000
	maxReadyTimeout = 2 * time.Hour
)

func (o KeycloakOptions) Validate() error {
	var errs []error
	if _, err := ParseVersion(o.Version); err != nil {
		errs = append(errs, err)
	}
	if o.Heap != "" && !validHeap(o.Heap) {
		errs = append(errs, fmt.Errorf("heap %q: want a JVM size such as 512m or 2g", o.Heap))
	}
	if o.HTTPThreads < 0 || o.HTTPThreads > maxPool {
		errs = append(errs, fmt.Errorf("http threads: %d: must be between 0 and %d", o.HTTPThreads, maxPool))
	}
	if o.DBPoolSize < 0 || o.DBPoolSize > maxPool {
		errs = append(errs, fmt.Errorf("db pool size: %d: must be between 0 and %d", o.DBPoolSize, maxPool))
	}
	for name, n := range o.CacheSizes {
		if !contains(cacheNames, name) {
			errs = append(errs, fmt.Errorf("cache %q: unknown (known: %s)", name, strings.Join(cacheNames, ", ")))
		}
		if n <= 0 || n > maxCacheSize {
			errs = append(errs, fmt.Errorf("cache %q: size %d: must be between 1 and %d", name, n, maxCacheSize))
		}
	}
	if o.ReadyTimeout < 0 || o.ReadyTimeout > maxReadyTimeout {
		errs = append(errs, fmt.Errorf("ready timeout: %v: must be between 0s (the default) and %v", o.ReadyTimeout, maxReadyTimeout))
	}
	if o.TLSKey != "" && !contains(TLSKeys, o.TLSKey) {
		errs = append(errs, fmt.Errorf("tls key %q: want %s", o.TLSKey, strings.Join(TLSKeys, " or ")))
	}
	if o.PlainHTTP && o.TLSKey != "" {
		errs = append(errs, errors.New("--tls-key needs TLS: drop it or --tls=false"))
	}
	if o.DB != "" && !contains(DBKinds, o.DB) {
		errs = append(errs, fmt.Errorf("db %q: want %s", o.DB, strings.Join(DBKinds, " or ")))
	}
	for _, opt := range o.BuildOptions {
		if strings.HasPrefix(opt, "--db=") || opt == "--db" {
			errs = append(errs, fmt.Errorf("build option %q: the database kind is kcbench's own (--db postgres|mariadb)", opt))
		}
	}
	for _, p := range []int{o.HTTPPort, o.ManagementPort} {
		if p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("port %d out of range", p))
		}
	}
	for _, opt := range append(slicesClone(o.BuildOptions), o.ExtraOptions...) {
		if !strings.HasPrefix(opt, "--") {
			errs = append(errs, fmt.Errorf("keycloak option %q: must start with --", opt))
		}
	}
	for _, opt := range o.JavaOpts {
		switch {
		case len(opt) < 2 || opt[0] != '-' || strings.ContainsFunc(opt, unicode.IsSpace):
			errs = append(errs, fmt.Errorf("java option %q: one word starting with - (e.g. -XX:+UseParallelGC); kc.sh splits JAVA_OPTS_APPEND at spaces", opt))
		case strings.HasPrefix(opt, "-Xmx") || strings.HasPrefix(opt, "-Xms"):
			errs = append(errs, fmt.Errorf("java option %q: the heap is --heap's (it sets both -Xms and -Xmx)", opt))
		}
	}
	return errors.Join(errs...)
}

// javaOptsAppend is JAVA_OPTS_APPEND for kc.sh: the JVM options, then
// extra (e.g. a cluster node's JGroups properties); "" when none.
func (o KeycloakOptions) javaOptsAppend(extra string) string {
	parts := slicesClone(o.JavaOpts)
	if extra != "" {
		parts = append(parts, extra)
	}
	return strings.Join(parts, " ")
}

func validHeap(s string) bool {
	if len(s) < 2 {
		return false
	}
	unit := strings.ToLower(s[len(s)-1:])
	if unit != "m" && unit != "g" && unit != "k" {
		return false
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	return err == nil && n > 0
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// KeycloakError is a Keycloak that refused to build or start. Message is
// Keycloak's own explanation when it printed one.
type KeycloakError struct {
	Op      string // "kc.sh build", "kc.sh start", "readiness"
	Reason  string // exit code, signal, or timeout
	Message string
	LogTail string
	LogPath string
}

func (e *KeycloakError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s failed (%s)", e.Op, e.Reason)
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.LogTail != "" {
		where := "log"
		if e.LogPath != "" {
			where = e.LogPath
		}
		fmt.Fprintf(&b, "\nlast lines of %s:\n%s", where, indent(e.LogTail))
	}
	return b.String()
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// keycloakMessage extracts Keycloak's error explanation from its output:
// the "ERROR: ..." lines kc.sh prints for rejected options, else its plain
// (non-log) complaints such as "Unknown option: '--x'", else the last ERROR
// log line.
func keycloakMessage(out string) string {
	var errLines, plain []string
	lastLogErr := ""
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
		case strings.HasPrefix(t, "ERROR: "):
			errLines = append(errLines, strings.TrimPrefix(t, "ERROR: "))
		case logLineRe.MatchString(t):
			if strings.Contains(t, " ERROR [") {
				lastLogErr = t
			}
		case isBoilerplate(t):
		default:
			plain = append(plain, t)
		}
	}
	pick := func(xs []string) string {
		if len(xs) > 4 {
			xs = xs[:4]
		}
		return strings.Join(xs, "; ")
	}
	switch {
	case len(errLines) > 0:
		return pick(errLines)
	case len(plain) > 0:
		return pick(plain)
	}
	return lastLogErr
}

// logLineRe matches Keycloak's log lines ("2026-11-23 07:27:26,455 INFO ...").
var logLineRe = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}`)

// isBoilerplate tells kc.sh's informational lines from complaints.
func isBoilerplate(line string) bool {
	for _, p := range []string{"====", "Try 'kc.sh", "Updating the configuration", "Possible solutions", "Using JAVA_", "JAVA_OPTS", "Changes detected", "Next time you run", "For more details", "Server configuration updated", "Appending additional Java", "WARNING: ", "at ", "\tat "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// keycloakEnv is the environment of kc.sh: a clean one (the caller's KC_*
// and JAVA_OPTS* must not leak into a benchmark), plus extra.
func keycloakEnv(java JDK, extra map[string]string) []string {
	env := []string{
		"PATH=" + filepath.Join(java.Home, "bin") + ":/usr/local/bin:/usr/bin:/bin",
		"JAVA_HOME=" + java.Home,
		"LANG=C.UTF-8",
	}
	if h, err := os.UserHomeDir(); err == nil {
		env = append(env, "HOME="+h)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// startArgs are the non-secret `kc.sh start` arguments of node n. A node
// with a JGroups port joins a cluster (--cache=ispn, Keycloak's default
// jdbc-ping discovery through the database, bound to the node's own
// address); one without keeps --cache=local.
//
// A node with TLS serves HTTPS only, on its HTTP port, with the stack's
// certificate; Keycloak's management interface inherits it (health and
// metrics over https too). A node behind a balancer that ends TLS (Edge)
// takes the client's scheme and host from X-Forwarded-* headers, so that
// its tokens name the https URL the client used. Every node trusts the
// stack's CA.
func (o KeycloakOptions) startArgs(db dbConn, n NodeState, certs *tlsFiles) []string {
	args := []string{
		"start", "--optimized",
		"--db-url=" + db.URL,
		"--db-username=" + db.User,
	}
	if n.TLS && certs != nil {
		args = append(args, "--http-enabled=false",
			"--http-host="+n.Host,
			"--https-port="+strconv.Itoa(n.HTTPPort),
			"--https-certificate-file="+certs.Cert,
			"--https-certificate-key-file="+certs.KeyFile)
	} else {
		args = append(args, "--http-enabled=true",
			"--http-host="+n.Host,
			"--http-port="+strconv.Itoa(n.HTTPPort))
	}
	if certs != nil && certs.CA != "" {
		// Keycloak trusts the stack's CA: its calls to itself (an
		// identity provider that is another realm of the stack, over
		// the https URL clients use) verify the stack's certificate.
		args = append(args, "--truststore-paths="+certs.CA)
	}
	args = append(args, "--http-management-port="+strconv.Itoa(n.MgmtPort), "--hostname-strict=false")
	if n.Edge {
		args = append(args, "--proxy-headers=xforwarded")
	}
	if n.JGroupsPort > 0 {
		args = append(args, "--cache=ispn")
		if networkOptions(o.Version) {
			args = append(args, "--cache-embedded-network-bind-address="+n.Host,
				"--cache-embedded-network-bind-port="+strconv.Itoa(n.JGroupsPort))
		}
	} else {
		args = append(args, "--cache=local")
	}
	args = append(args, "--log-level=info,org.keycloak.events:error")
	if o.HTTPThreads > 0 {
		args = append(args, "--http-pool-max-threads="+strconv.Itoa(o.HTTPThreads))
	}
	if o.DBPoolSize > 0 {
		args = append(args, "--db-pool-max-size="+strconv.Itoa(o.DBPoolSize))
	}
	names := make([]string, 0, len(o.CacheSizes))
	for n := range o.CacheSizes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		args = append(args, fmt.Sprintf("--cache-embedded-%s-max-count=%d", n, o.CacheSizes[n]))
	}
	return append(args, o.ExtraOptions...)
}

// networkOptions says whether Keycloak version has the
// --cache-embedded-network-* options: 26.4.0 has them, 26.3.5 refuses
// them ("Unknown option"); before, the JGroups stack reads the same
// settings from system properties (jgroupsProperties).
func networkOptions(version string) bool {
	v, err := ParseVersion(version)
	return err != nil || v.Minor >= 4
}

// jgroupsProperties are the JVM options that bind node n's JGroups to its
// address and port, and advertise external (when not empty) to its
// peers, on a Keycloak without the --cache-embedded-network-* options;
// "" when it has them or n is not clustered.
func (o KeycloakOptions) jgroupsProperties(n NodeState, external string) string {
	if n.JGroupsPort == 0 || networkOptions(o.Version) {
		return ""
	}
	p := "-Djgroups.bind.address=" + n.Host + " -Djgroups.bind.port=" + strconv.Itoa(n.JGroupsPort)
	if external != "" {
		p += " -Djgroups.external_addr=" + external
	}
	return p
}

// node is one running Keycloak (kc.sh and its JVM).
type node struct {
	Script    Proc      `json:"script"`
	JVM       Proc      `json:"jvm"`
	StartedAt time.Time `json:"started_at"`
	ReadyAt   time.Time `json:"ready_at,omitzero"`
	// ViewAt is when the node's log first showed the full cluster view.
	ViewAt time.Time `json:"view_at,omitzero"`

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	err    error         // cmd.Wait's result, valid after exited
}

// launchKeycloak starts kc.sh in its own process group, its output appended
// to logPath. Foreground nodes die with kcbench (parent-death SIGTERM,
// which kc.sh forwards to the JVM); detached ones get their own session.
func launchKeycloak(home string, java JDK, args []string, env map[string]string, logPath string, detached bool, limit *CPULimit) (*node, int64, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, 0, err
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "==== kcbench: kc.sh %s (%s)\n", strings.Join(args, " "), time.Now().Format(time.RFC3339))
	off, _ := logFile.Seek(0, io.SeekEnd)
	name, wargs := limit.wrap(filepath.Join(home, "bin", "kc.sh"), args)
	cmd := exec.Command(name, wargs...)
	cmd.Dir = home
	cmd.Env = keycloakEnv(java, env)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = procAttr(detached, syscall.SIGTERM)
	n := &node{cmd: cmd, exited: make(chan struct{})}
	n.StartedAt = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start kc.sh: %w", err)
	}
	go func() { n.err = cmd.Wait(); close(n.exited) }()
	p, err := identify(cmd.Process.Pid)
	if err != nil {
		// It exited at once; the wait reports why.
		p = Proc{PID: cmd.Process.Pid, PGID: cmd.Process.Pid}
	}
	n.Script = p
	return n, off, nil
}

// procAttr gives a child its own process group; foreground children also get
// a parent-death signal.
func procAttr(detached bool, deathSig syscall.Signal) *syscall.SysProcAttr {
	if detached {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
}

// findJVM waits for kc.sh's java child, or for kc.sh to become java (up
// to 26.2 the script ends in exec).
func (n *node) findJVM(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if comm(n.Script.PID) == "java" {
			n.JVM = n.Script
			return nil
		}
		for _, c := range children(n.Script.PID) {
			if comm(c) == "java" {
				p, err := identify(c)
				if err == nil {
					n.JVM = p
					return nil
				}
			}
		}
		select {
		case <-n.exited:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("kc.sh started no java process within 30 s")
		}
	}
}

var errExited = errors.New("kc.sh exited")

// readyPoll is how often /health/ready is asked; it bounds the error of a
// boot time measurement. Every DOWN answer writes one INFO line in
// Keycloak's log, which for the few seconds between the ports opening and
// readiness is a price worth paying.
const readyPoll = 100 * time.Millisecond

// readyPollTimeout bounds one poll of /health/ready.
const readyPollTimeout = 2 * time.Second

// waitReady polls /health/ready until 200, the process exits, ctx ends or
// timeout passes.
func (n *node) waitReady(ctx context.Context, hc *http.Client, mgmtURL string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		ok, _ := kc.Ready(ctx, hc, mgmtURL)
		if ok {
			n.ReadyAt = time.Now()
			return nil
		}
		select {
		case <-n.exited:
			return errExited
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("not ready after %s", timeout)
		case <-tick.C:
		}
	}
}

// stop ends the node: SIGTERM to kc.sh's group (kc.sh forwards it to the
// JVM), SIGKILL after grace.
func (n node) stop(grace time.Duration) error {
	err := n.Script.Kill(syscall.SIGTERM, grace)
	if err == nil && n.JVM.PID > 0 && n.JVM.Alive() {
		err = n.JVM.Kill(syscall.SIGKILL, 0)
	}
	if n.cmd != nil {
		select {
		case <-n.exited:
		case <-time.After(5 * time.Second):
		}
	}
	return err
}

// readFrom returns a file's content from offset off.
func readFrom(path string, off int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 4<<20))
	return string(b)
}
