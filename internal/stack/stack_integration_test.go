//go:build integration

package stack_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

var shared stacktest.Shared

func TestMain(m *testing.M) { os.Exit(stacktest.Main(m, &shared)) }

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestAdminTokenAndVersion(t *testing.T) {
	s := shared.Get(t)
	ctx := ctxT(t, time.Minute)
	tg := s.Target()
	if !tg.Local() || tg.ManagementURL == "" {
		t.Fatalf("target %+v: want a local target with a management URL", tg)
	}
	info, err := kc.Check(ctx, tg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != s.State().Options.Version {
		t.Errorf("server says %s, stack started %s", info.Version, s.State().Options.Version)
	}
	if info.ManagementReady == nil || !*info.ManagementReady {
		t.Errorf("management not ready: %+v", info)
	}
	// Password grant on admin-cli works too (the bootstrap admin user).
	pwOnly := tg
	pwOnly.Admin.ClientID, pwOnly.Admin.ClientSecret = "", ""
	tok, err := kc.NewAdmin(kc.NewFor(tg), pwOnly.Admin).Token(ctx)
	if err != nil || len(tok) < 100 {
		t.Fatalf("admin password grant: %q, %v", tok, err)
	}
}

func TestEverythingListensOnLoopbackOnly(t *testing.T) {
	s := shared.Get(t)
	ls, err := stack.Listeners(s.Pids())
	if err != nil {
		t.Fatal(err)
	}
	st := s.State()
	want := map[int]bool{st.Nodes[0].HTTPPort: false, st.Nodes[0].MgmtPort: false, st.PG.Port: false}
	for _, l := range ls {
		if !l.IsLoopback() {
			t.Errorf("pid %d listens on %s, not loopback", l.PID, l.Addr)
		}
		_, p, _ := net.SplitHostPort(l.Addr)
		for port := range want {
			if p == fmt.Sprint(port) {
				want[port] = true
			}
		}
	}
	for port, seen := range want {
		if !seen {
			t.Errorf("port %d not among the stack's listeners %v", port, ls)
		}
	}
}

func TestRSSFromRealProcess(t *testing.T) {
	s := shared.Get(t)
	pid := s.Target().PID
	rss, err := stack.RSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	// A booted Keycloak JVM holds hundreds of MiB; less than 100 would
	// mean we read the wrong process (e.g. kc.sh).
	if rss < 100<<20 || rss > 64<<30 {
		t.Fatalf("JVM RSS %d MiB is implausible", rss>>20)
	}
	st := s.Status(context.Background())
	if !st.Ready || st.Keycloak.RSS <= 0 || st.Postgres == nil || st.Postgres.RSS <= 0 {
		t.Fatalf("status %+v", st)
	}
}

func TestRestartMeasuresBoot(t *testing.T) {
	s := shared.Get(t)
	ctx := ctxT(t, 5*time.Minute)
	before := s.Target().PID
	// A session made before: persistent sessions (Keycloak 26's default)
	// keep it in the database, so it outlives the JVM.
	tg := s.Target()
	adminCLI := kc.OAuthClient{ID: "admin-cli"}
	tr, err := kc.NewFor(tg).PasswordGrant(ctx, "master", adminCLI, tg.Admin.Username, tg.Admin.Password.Reveal(), "")
	if err != nil {
		t.Fatal(err)
	}
	br, err := s.Restart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.NewFor(s.Target()).Refresh(ctx, "master", adminCLI, tr.RefreshToken); err != nil {
		t.Errorf("a session made before the restart: %v, want it refreshed (persistent sessions)", err)
	}
	after := s.Target().PID
	if after == 0 || after == before {
		t.Fatalf("JVM pid %d → %d: not a new process", before, after)
	}
	if br.Duration < time.Second || br.Duration > 5*time.Minute {
		t.Errorf("boot took %s: implausible", br.Duration)
	}
	if br.FirstDB {
		t.Error("a restart is not a first boot")
	}
	if br.RSS < 100<<20 || br.CPU <= 0 {
		t.Errorf("boot RSS %d MiB CPU %s", br.RSS>>20, br.CPU)
	}
	ok, err := kc.Ready(ctx, s.Target().HTTPClient(time.Minute), s.Target().ManagementURL)
	if err != nil || !ok {
		t.Fatalf("not ready after restart: %v %v", ok, err)
	}
	t.Logf("restart: %.2f s to ready, RSS %d MiB, CPU %.1f s", br.Duration.Seconds(), br.RSS>>20, br.CPU.Seconds())
}

func TestSecretsStayOutOfLogsAndState(t *testing.T) {
	s := shared.Get(t)
	tg := s.Target()
	secrets := []string{tg.Admin.Password.Reveal(), tg.Admin.ClientSecret.Reveal()}
	dbpw, err := os.ReadFile(s.SecretPath("db-password"))
	if err != nil {
		t.Fatal(err)
	}
	secrets = append(secrets, strings.TrimSpace(string(dbpw)))
	for _, name := range []string{"admin-password", "admin-client-secret", "db-password"} {
		st, err := os.Stat(s.SecretPath(name))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", name, st.Mode().Perm(), err)
		}
	}
	for _, f := range []string{s.LogPath(), s.PGLogPath(), filepath.Join(s.State().Dir, "stack.json")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range secrets {
			if len(sec) < 16 {
				t.Fatalf("secret too short: %d", len(sec))
			}
			if strings.Contains(string(b), sec) {
				t.Errorf("%s contains a secret", f)
			}
		}
	}
	// The Target must not print its secrets either.
	for _, form := range []string{fmt.Sprintf("%v", tg), fmt.Sprintf("%+v", tg), fmt.Sprintf("%#v", tg)} {
		for _, sec := range secrets {
			if strings.Contains(form, sec) {
				t.Errorf("formatted Target leaks a secret: %s", form)
			}
		}
	}
}

func TestExternalTarget(t *testing.T) {
	s := shared.Get(t)
	ctx := ctxT(t, time.Minute)
	local := s.Target()
	// The same Keycloak, seen as an external Target: no pid, user+password.
	ext := kc.Target{BaseURL: local.BaseURL, ManagementURL: local.ManagementURL,
		Admin: kc.Credentials{Username: local.Admin.Username, Password: local.Admin.Password}}
	if ext.Local() {
		t.Fatal("external target claims to be local")
	}
	// Over https without its CA: refused, saying what to pass.
	var ue *kc.UntrustedError
	if _, err := kc.Check(ctx, ext, nil); !errors.As(err, &ue) || !strings.Contains(err.Error(), "--ca-file") {
		t.Fatalf("untrusted certificate: %v", err)
	}
	if err := kc.CheckTLS(ctx, ext); !errors.As(err, &ue) {
		t.Fatalf("CheckTLS without the CA: %v", err)
	}
	ext.CAFile = local.CAFile
	info, err := kc.Check(ctx, ext, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Realms < 1 {
		t.Errorf("realms = %d", info.Realms)
	}
	wrong := ext
	wrong.Admin.Password = "not-the-password"
	_, err = kc.Check(ctx, wrong, nil)
	if err == nil || !errors.Is(err, kc.ErrUnauthorized) && !strings.Contains(err.Error(), "wrong admin") {
		t.Errorf("wrong password: %v", err)
	}
	port, _ := stack.FreePort()
	unreachable := ext
	unreachable.BaseURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	_, err = kc.Check(ctx, unreachable, nil)
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("unreachable: %v", err)
	}
}

func TestAlreadyUp(t *testing.T) {
	s := shared.Get(t)
	cfg := stacktest.Config(shared.Dirs, s.State().Name)
	_, err := stack.Start(ctxT(t, time.Minute), cfg)
	if !errors.Is(err, stack.ErrAlreadyUp) {
		t.Fatalf("second start: %v, want ErrAlreadyUp", err)
	}
	if !s.Running() {
		t.Fatal("the refused start must leave the running stack alone")
	}
}

// assertNothingLeft checks that a failed start left no process and no folder.
func assertNothingLeft(t *testing.T, d stack.Dirs, name string) {
	t.Helper()
	if _, err := stack.Attach(d, name); !errors.Is(err, stack.ErrNotUp) {
		t.Errorf("stack %s left a state behind: %v", name, err)
	}
	if _, err := os.Stat(filepath.Join(d.State, "stacks", name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stack %s left its folder: %v", name, err)
	}
}

func TestRejectedStartOption(t *testing.T) {
	shared.Get(t)
	cfg := stacktest.Config(shared.Dirs, "badopt")
	cfg.Keycloak.ExtraOptions = []string{"--no-such-option=1"}
	_, err := stack.Start(ctxT(t, 5*time.Minute), cfg)
	var kerr *stack.KeycloakError
	if !errors.As(err, &kerr) {
		t.Fatalf("err = %v, want a KeycloakError", err)
	}
	if !strings.Contains(kerr.Message, "no-such-option") {
		t.Errorf("message %q does not quote Keycloak's complaint", kerr.Message)
	}
	assertNothingLeft(t, shared.Dirs, "badopt")
}

func TestRejectedBuildOption(t *testing.T) {
	shared.Get(t)
	cfg := stacktest.Config(shared.Dirs, "badbuild")
	cfg.Keycloak.BuildOptions = []string{"--features=no-such-feature"}
	_, err := stack.Start(ctxT(t, 5*time.Minute), cfg)
	var kerr *stack.KeycloakError
	if !errors.As(err, &kerr) || kerr.Op != "kc.sh build" {
		t.Fatalf("err = %v, want a kc.sh build KeycloakError", err)
	}
	if !strings.Contains(err.Error(), "no-such-feature") {
		t.Errorf("error %q does not name the feature", err)
	}
	assertNothingLeft(t, shared.Dirs, "badbuild")
}

func TestPortInUse(t *testing.T) {
	s := shared.Get(t)
	cfg := stacktest.Config(shared.Dirs, "busyport")
	cfg.Keycloak.HTTPPort = s.State().Nodes[0].HTTPPort
	_, err := stack.Start(ctxT(t, time.Minute), cfg)
	if !errors.Is(err, stack.ErrPortInUse) {
		t.Fatalf("err = %v, want ErrPortInUse", err)
	}
	assertNothingLeft(t, shared.Dirs, "busyport")
}

func TestUnservedVersion(t *testing.T) {
	shared.Get(t)
	cfg := stacktest.Config(shared.Dirs, "unserved")
	cfg.Keycloak.Version = "26.99.1"
	_, err := stack.Start(ctxT(t, 5*time.Minute), cfg)
	if !errors.Is(err, stack.ErrNotServed) {
		t.Fatalf("err = %v, want ErrNotServed", err)
	}
	assertNothingLeft(t, shared.Dirs, "unserved")
}

func TestMissingPostgresBinaries(t *testing.T) {
	shared.Get(t)
	cfg := stacktest.Config(shared.Dirs, "nopg")
	cfg.PG.BinDir = t.TempDir()
	_, err := stack.Start(ctxT(t, 5*time.Minute), cfg)
	if err == nil || !strings.Contains(err.Error(), "no initdb") {
		t.Fatalf("err = %v, want a missing-binaries error", err)
	}
	assertNothingLeft(t, shared.Dirs, "nopg")
}
