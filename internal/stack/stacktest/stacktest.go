// Package stacktest gives integration tests a real local stack: one
// Keycloak + PostgreSQL per test package, started in TestMain, shared by the
// package's tests and stopped at the end. Stacks live in a fresh state folder;
// the download and build cache is the user's, so builds are reused.
package stacktest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/stack"
)

// Dirs returns folders for test stacks: the user's cache and a new state
// folder (mode 0755, so that an unprivileged PostgreSQL can reach it when
// tests run as root). cleanup removes the state folder.
func Dirs() (stack.Dirs, func(), error) {
	d, err := stack.DefaultDirs(os.Getenv)
	if err != nil {
		return d, nil, err
	}
	if v := os.Getenv("KCBENCH_TEST_CACHE"); v != "" {
		d.Cache = v
	}
	state, err := os.MkdirTemp("", "kcbench-test-")
	if err != nil {
		return d, nil, err
	}
	if err := os.Chmod(state, 0o755); err != nil {
		return d, nil, err
	}
	d.State = state
	return d, func() { os.RemoveAll(state) }, nil
}

// Config is a foreground stack config for tests, on the default versions.
func Config(d stack.Dirs, name string) stack.Config {
	return stack.Config{
		Name: name,
		Dirs: d,
		Keycloak: stack.KeycloakOptions{
			Version:  envOr("KCBENCH_TEST_KC_VERSION", stack.DefaultKeycloakVersion),
			JavaHome: os.Getenv("KCBENCH_TEST_JAVA_HOME"),
		},
		Logf: func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "stacktest: "+format+"\n", args...)
		},
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Shared is the package's stack, set by Main.
type Shared struct {
	Stack *stack.Stack
	Dirs  stack.Dirs
	Err   error
	// Configure, when set before Main, changes the shared stack's config
	// (a package whose tests need a directory adds --ldap slapd).
	Configure func(*stack.Config)
}

// Get returns the shared stack or skips/fails the test.
func (s *Shared) Get(t testing.TB) *stack.Stack {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test skipped in -short mode")
	}
	if s.Err != nil {
		t.Fatalf("shared stack did not start: %v", s.Err)
	}
	return s.Stack
}

// Main starts the shared stack, runs the tests and stops it. Use it as
//
//	var shared stacktest.Shared
//	func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, &shared)) }
func Main(m *testing.M, shared *Shared) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	d, cleanup, err := Dirs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stacktest:", err)
		return 1
	}
	defer cleanup()
	shared.Dirs = d
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	cfg := Config(d, "shared")
	if shared.Configure != nil {
		shared.Configure(&cfg)
	}
	shared.Stack, shared.Err = stack.Start(ctx, cfg)
	if shared.Err == nil {
		fmt.Fprintf(os.Stderr, "stacktest: shared stack up in %s\n", time.Since(start).Round(time.Second))
	}
	code := m.Run()
	if shared.Stack != nil {
		if err := shared.Stack.Down(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "stacktest: down:", err)
			code = 1
		}
	}
	return code
}

// Long skips a second-opinion test (another stack, a restart, a bigger
// dataset: a check that make test's own tests already cover more cheaply)
// unless KCBENCH_TEST_LONG is set, as `make test-long` sets it. It keeps
// make test within its time budget.
func Long(t testing.TB) {
	t.Helper()
	if os.Getenv("KCBENCH_TEST_LONG") == "" {
		t.Skip("a second-opinion test: run by make test-long (KCBENCH_TEST_LONG=1)")
	}
}

// SlapdInstalled says whether slapd is installed, so that a package's
// shared stack can keep a private directory (stack.LDAPSlapd).
func SlapdInstalled() bool {
	if _, err := exec.LookPath("slapd"); err == nil {
		return true
	}
	_, err := os.Stat("/usr/sbin/slapd")
	return err == nil
}
