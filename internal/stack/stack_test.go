package stack

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	line := []byte("1234 (java (weird) name) S 1200 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 42 0 987654 5000000 12345 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0")
	s, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if s.State != 'S' || s.PPID != 1200 || s.PGID != 1234 || s.UTime != 250 || s.STime != 50 || s.StartTime != 987654 || s.RSSPages != 12345 {
		t.Fatalf("parsed %+v", s)
	}
	for _, bad := range []string{"", "12 (x", "12 (x) S 1 2"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): want error", bad)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 5 5000000 12 1 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0"))
	f.Add([]byte("7 ()) ) R 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		parseStat(b) // must not panic
	})
}

func TestReadOwnStat(t *testing.T) {
	p, err := identify(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("own process not alive")
	}
	if p.StartTime == 0 {
		t.Fatal("no start time")
	}
	stale := p
	stale.StartTime++
	if stale.Alive() {
		t.Fatal("a pid with another start time must not count as alive")
	}
	if r, err := RSS(os.Getpid()); err != nil || r <= 0 {
		t.Fatalf("RSS = %d, %v", r, err)
	}
}

func TestDecodeAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000001000000:0016": "[::1]:22",
		"0000000000000000FFFF00000100007F:2328": "127.0.0.1:9000",
	} {
		got, err := decodeAddr(in)
		if err != nil || got != want {
			t.Errorf("decodeAddr(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	l := Listener{Addr: "0.0.0.0:80"}
	if l.IsLoopback() {
		t.Error("0.0.0.0 is not loopback")
	}
	if !(Listener{Addr: "127.0.0.1:80"}).IsLoopback() || !(Listener{Addr: "[::1]:80"}).IsLoopback() {
		t.Error("loopback not recognised")
	}
}

func TestListenersOfOwnSocket(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkPortFreeOn("127.0.0.1", port); err != nil {
		t.Fatal(err)
	}
	l, err := listenLoopback(port)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := checkPortFreeOn("127.0.0.1", port); !errors.Is(err, ErrPortInUse) {
		t.Fatalf("checkPortFreeOn on a used port = %v, want ErrPortInUse", err)
	}
	ls, err := Listeners([]int{os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range ls {
		if strings.HasSuffix(x.Addr, ":"+itoa(port)) && x.IsLoopback() {
			found = true
		}
	}
	if !found {
		t.Fatalf("own listener on %d not found in %v", port, ls)
	}
}

func TestParseVersion(t *testing.T) {
	for _, ok := range []string{"26.0.0", "26.7.3", "26.10.12"} {
		if _, err := ParseVersion(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "26", "26.1", "25.0.6", "27.0.0", "26.x.1", "latest", "26.0.0-SNAPSHOT"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("%q: want error", bad)
		}
	}
}

func TestJavaMajor(t *testing.T) {
	for in, want := range map[string]int{"17.0.15": 17, "21": 21, "25.0.3": 25, "1.8.0_392": 8, "21-ea": 21} {
		if got, err := javaMajor(in); err != nil || got != want {
			t.Errorf("javaMajor(%q) = %d, %v", in, got, err)
		}
	}
}

// fakeJDK makes a folder that looks like a JDK of the given version.
func fakeJDK(t *testing.T, root, name, version string) string {
	t.Helper()
	home := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "bin", "java"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "release"), []byte("JAVA_VERSION=\""+version+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

func TestFindJDK(t *testing.T) {
	root := t.TempDir()
	j11 := fakeJDK(t, root, "jdk11", "11.0.2")
	j17 := fakeJDK(t, root, "jdk17", "17.0.15")
	j25 := fakeJDK(t, root, "jdk25", "25.0.3")
	dirs := []string{root}

	// JAVA_HOME wins when supported.
	if j, err := findJDK("26.7.3", "", j25, dirs, false); err != nil || j.Home != j25 {
		t.Errorf("JAVA_HOME=25 on 26.7.3: %+v, %v", j, err)
	}
	// An unsupported JAVA_HOME is skipped for a supported system JDK.
	if j, err := findJDK("26.0.5", "", j25, dirs, false); err != nil || j.Home != j17 {
		t.Errorf("JAVA_HOME=25 on 26.0.5: %+v, %v", j, err)
	}
	// Without JAVA_HOME the preference (21, 17, 25) decides.
	if j, err := findJDK("26.7.3", "", "", dirs, false); err != nil || j.Major != 17 {
		t.Errorf("no JAVA_HOME: %+v, %v", j, err)
	}
	// An explicit unsupported JDK is an error naming both versions.
	_, err := findJDK("26.7.3", j11, "", dirs, false)
	if err == nil || !strings.Contains(err.Error(), "11.0.2") || !strings.Contains(err.Error(), "17, 21, 25") {
		t.Errorf("explicit 11: %v", err)
	}
	// Only unsupported JDKs: the error lists what was found.
	only11 := t.TempDir()
	fakeJDK(t, only11, "jdk11", "11.0.2")
	_, err = findJDK("26.7.3", "", "", []string{only11}, false)
	if err == nil || !strings.Contains(err.Error(), "Java 11.0.2") {
		t.Errorf("only 11: %v", err)
	}
	// Nothing at all.
	_, err = findJDK("26.7.3", "", "", []string{t.TempDir()}, false)
	if err == nil || !strings.Contains(err.Error(), "no JDK found") {
		t.Errorf("none: %v", err)
	}
}

func TestJDBCURL(t *testing.T) {
	for in, want := range map[string]string{
		"jdbc:postgresql://db:5432/kc": "jdbc:postgresql://db:5432/kc",
		"postgres://db:5432/kc":        "jdbc:postgresql://db:5432/kc",
		"postgresql://10.0.0.1/kc":     "jdbc:postgresql://10.0.0.1/kc",
		"jdbc:mariadb://db:3306/kc":    "jdbc:mariadb://db:3306/kc",
		"mariadb://db:3306/kc":         "jdbc:mariadb://db:3306/kc",
	} {
		if got, err := JDBCURL(in); err != nil || got != want {
			t.Errorf("JDBCURL(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "mysql://x/y", "postgres://db:5432", "postgres://u:p@db/kc", "db:5432/kc", "mariadb://u:p@db/kc"} {
		if _, err := JDBCURL(bad); err == nil {
			t.Errorf("JDBCURL(%q): want error", bad)
		}
	}
}

func TestKeycloakMessage(t *testing.T) {
	out := `Updating the configuration and installing your custom providers, if any. Please wait.
ERROR: Unknown option: '--no-such-option'
Possible solutions: --log, --log-async
Try 'kc.sh start --help' for more information on the available options.`
	if got := keycloakMessage(out); got != "Unknown option: '--no-such-option'" {
		t.Errorf("got %q", got)
	}
	// 26.7.3 prints the complaint without the ERROR: prefix.
	plain := "==== kcbench: kc.sh start --optimized\nUnknown option: '--no-such-option'\nTry 'kc.sh start --help' for more information on the available options.\n"
	if got := keycloakMessage(plain); got != "Unknown option: '--no-such-option'" {
		t.Errorf("plain: got %q", got)
	}
	log := "2026-11-23 07:27:26,455 ERROR [org.keycloak.quarkus.runtime.cli.ExecutionExceptionHandler] (main) ERROR: Failed to start server"
	if got := keycloakMessage("2026-11-23 07:27:20,000 INFO [x] (main) starting\n" + log + "\n"); got != "Failed to start server" && got != strings.TrimSpace(log) {
		t.Errorf("got %q", got)
	}
}

func TestKeycloakOptionsValidate(t *testing.T) {
	good := KeycloakOptions{Version: "26.7.3", Heap: "1g", CacheSizes: map[string]int{"realms": 20000}, ExtraOptions: []string{"--log-level=debug"},
		JavaOpts: []string{"-XX:+UseParallelGC", "-Dx=y"}}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := KeycloakOptions{Version: "25.0.1", Heap: "lots", HTTPThreads: -1, CacheSizes: map[string]int{"nope": 1, "users": 0}, ExtraOptions: []string{"log-level=debug"}, HTTPPort: 70000,
		JavaOpts: []string{"XX:+UseParallelGC", "-Da=b -Dc=d", "-Xmx2g", "-"}}
	err := bad.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"25.0.1", "heap", "threads", `"nope"`, `"users"`, "log-level=debug", "70000",
		`java option "XX:+UseParallelGC"`, `java option "-Da=b -Dc=d"`, `java option "-Xmx2g": the heap is --heap's`, `java option "-"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestJavaOptsAppend(t *testing.T) {
	o := KeycloakOptions{JavaOpts: []string{"-XX:+UseParallelGC", "-Dk=v"}}
	for _, c := range []struct{ extra, want string }{
		{"", "-XX:+UseParallelGC -Dk=v"}, {"-Djgroups.bind.port=7800", "-XX:+UseParallelGC -Dk=v -Djgroups.bind.port=7800"},
	} {
		if got := o.javaOptsAppend(c.extra); got != c.want {
			t.Errorf("javaOptsAppend(%q) = %q, want %q", c.extra, got, c.want)
		}
	}
	if got := (KeycloakOptions{}).javaOptsAppend(""); got != "" {
		t.Errorf("no options: %q", got)
	}
}

func TestStartArgsHaveNoSecrets(t *testing.T) {
	o := KeycloakOptions{Version: "26.7.3", HTTPThreads: 100, DBPoolSize: 20, CacheSizes: map[string]int{"users": 5, "realms": 7}}
	args := o.startArgs(dbConn{URL: "jdbc:postgresql://127.0.0.1:1/keycloak", User: "keycloak"}, NodeState{Index: 1, Host: "127.0.0.1", HTTPPort: 8080, MgmtPort: 9000}, nil)
	joined := strings.Join(args, " ")
	for _, want := range []string{"--optimized", "--http-host=127.0.0.1", "--http-pool-max-threads=100", "--db-pool-max-size=20", "--cache-embedded-realms-max-count=7 --cache-embedded-users-max-count=5", "--cache=local"} {
		if !strings.Contains(joined, want) {
			t.Errorf("args %q lack %q", joined, want)
		}
	}
	if strings.Contains(joined, "password") {
		t.Errorf("args carry a password: %q", joined)
	}
}

func TestDefaultDirs(t *testing.T) {
	env := map[string]string{"XDG_CACHE_HOME": "/c", "XDG_STATE_HOME": "/s"}
	d, err := DefaultDirs(func(k string) string { return env[k] })
	if err != nil || d.Cache != "/c/kcbench" || d.State != "/s/kcbench" {
		t.Fatalf("%+v, %v", d, err)
	}
}

func TestUnzipRejectsEscapes(t *testing.T) {
	// A zip whose entry climbs out of the destination must be refused.
	zipPath := filepath.Join(t.TempDir(), "evil.zip")
	writeZip(t, zipPath, map[string]string{"../evil": "x"})
	if err := unzip(zipPath, t.TempDir()); err == nil {
		t.Fatal("want error for ../evil")
	}
	writeZip(t, zipPath, map[string]string{"keycloak-26.0.0/bin/kc.sh": "#!/bin/sh\n"})
	dst := t.TempDir()
	if err := unzip(zipPath, dst); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dst, "keycloak-26.0.0/bin/kc.sh"))
	if err != nil || st.Mode()&0o100 == 0 {
		t.Fatalf("kc.sh not executable: %v %v", st, err)
	}
}

func TestDBSchema(t *testing.T) {
	for _, c := range []struct {
		opts []string
		want string
	}{
		{nil, ""},
		{[]string{"--log-level=debug"}, ""},
		{[]string{"--db-schema=kc"}, "kc"},
		{[]string{"--db-schema", "kc2", "--log-level=debug"}, "kc2"},
		{[]string{"--db-schema"}, ""},
	} {
		if got := (KeycloakOptions{ExtraOptions: c.opts}).DBSchema(); got != c.want {
			t.Errorf("DBSchema(%q) = %q, want %q", c.opts, got, c.want)
		}
	}
}

func TestParseMachineCPU(t *testing.T) {
	got, err := parseMachineCPU([]byte("cpu  100 5 50 800 20 3 2 10 0 0\ncpu0 50 2 25 400 10 1 1 5 0 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	// busy = user+nice+system+irq+softirq+steal = 170 ticks, total 990
	if want := (MachineCPU{Busy: 1700 * time.Millisecond, Total: 9900 * time.Millisecond}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "intr 1 2 3\n", "cpu 1 2 x 4 5\n", "cpu 1 2\n"} {
		if _, err := parseMachineCPU([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if m, err := ReadMachineCPU(); err != nil || m.Total <= 0 || m.Busy > m.Total {
		t.Errorf("this machine: %+v %v", m, err)
	}
}

// --persistent-sessions=false is Keycloak's feature switch at build time
// (a build of its own), joined to a --features-disabled of the user's.
func TestVolatileSessions(t *testing.T) {
	o := KeycloakOptions{Version: "26.7.3", BuildOptions: []string{"--features=admin-fine-grained-authz"}}
	if got := o.buildOptions(); slices.Contains(got, FeatureVolatileSessions) {
		t.Errorf("persistent sessions: build options %v", got)
	}
	o.VolatileSessions = true
	if got := o.buildOptions(); !slices.Contains(got, FeatureVolatileSessions) || !slices.Contains(got, "--features=admin-fine-grained-authz") || len(o.BuildOptions) != 1 {
		t.Errorf("volatile sessions: build options %v (the user's %v)", got, o.BuildOptions)
	}
	if err := o.Validate(); err != nil {
		t.Error(err)
	}
	// Keycloak takes one list: the switch joins the user's.
	o.BuildOptions = []string{"--features-disabled=organization"}
	if got := o.buildOptions(); !slices.Equal(got, []string{"--features-disabled=organization,persistent-user-sessions"}) || o.BuildOptions[0] != "--features-disabled=organization" {
		t.Errorf("beside --features-disabled: %v (the user's %v)", got, o.BuildOptions)
	}
}
