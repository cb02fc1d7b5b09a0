package stack

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFindMariaDBMissing(t *testing.T) {
	_, err := findMariaDB(filepath.Join(t.TempDir(), "no-mariadbd"))
	if !errors.Is(err, ErrNoMariaDB) {
		t.Fatalf("err = %v, want ErrNoMariaDB", err)
	}
	if !strings.Contains(err.Error(), "apt-get install mariadb-server") {
		t.Errorf("the error does not say how to install MariaDB: %v", err)
	}
}

func TestParseMariaDBVersion(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n": "10.11.19",
		"mariadbd  Ver 11.4.2-MariaDB for Linux on x86_64 (MariaDB Server)":                               "11.4.2",
		"garbage": "unknown",
	} {
		if got := parseMariaDBVersion(in); got != want {
			t.Errorf("parseMariaDBVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMariaDBArgs(t *testing.T) {
	s := &mariaServer{Dir: "/st/mariadb", Port: 4321, Socket: "/st/mariadb/mariadbd.sock"}
	args := mariadbArgs(s, PGOptions{})
	for _, want := range []string{"--no-defaults", "--bind-address=127.0.0.1", "--port=4321", "--socket=/st/mariadb/mariadbd.sock",
		"--datadir=/st/mariadb/data", "--character-set-server=utf8mb4", "--innodb-flush-log-at-trx-commit=0", "--max-connections=200"} {
		if !slices.Contains(args, want) {
			t.Errorf("args lack %s: %v", want, args)
		}
	}
	if args[0] != "--no-defaults" {
		t.Errorf("--no-defaults must come first (mariadbd reads it only there): %v", args)
	}
	durable := mariadbArgs(s, PGOptions{Durable: true, MaxConnections: 500})
	if slices.Contains(durable, "--innodb-flush-log-at-trx-commit=0") || !slices.Contains(durable, "--max-connections=500") {
		t.Errorf("durable args: %v", durable)
	}
}

func TestDBKindValidate(t *testing.T) {
	ok := KeycloakOptions{Version: "26.7.3", DB: DBMariaDB}
	if err := ok.Validate(); err != nil {
		t.Errorf("--db mariadb refused: %v", err)
	}
	if err := (KeycloakOptions{Version: "26.7.3", DB: "mysql"}).Validate(); err == nil || !strings.Contains(err.Error(), "postgres or mariadb") {
		t.Errorf("--db mysql: %v", err)
	}
	if err := (KeycloakOptions{Version: "26.7.3", BuildOptions: []string{"--db=mariadb"}}).Validate(); err == nil || !strings.Contains(err.Error(), "--db postgres|mariadb") {
		t.Errorf("--build-opt --db=mariadb: %v", err)
	}
	c := Config{Dirs: Dirs{Cache: "/c", State: "/s"}, Keycloak: KeycloakOptions{Version: "26.7.3"},
		DB: &ExternalDB{URL: "jdbc:mariadb://db:3306/kc", User: "kc"}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "built for postgres") {
		t.Errorf("a MariaDB URL with a PostgreSQL build: %v", err)
	}
	c.Keycloak.DB = DBMariaDB
	if err := c.Validate(); err != nil {
		t.Errorf("a MariaDB URL with --db mariadb: %v", err)
	}
}

// The database kind is a build-time option: each kind has its own cached
// build.
func TestBuildKeyHasDBKind(t *testing.T) {
	java := JDK{Major: 17}
	pg, maria := baseBuildOptions("26.7.3", ""), baseBuildOptions("26.7.3", DBMariaDB)
	if !slices.Contains(pg, "--db=postgres") || !slices.Contains(maria, "--db=mariadb") {
		t.Fatalf("build options: %v / %v", pg, maria)
	}
	if buildKey(pg, java) == buildKey(maria, java) {
		t.Error("PostgreSQL and MariaDB builds share a cache folder")
	}
}

// TestMariaDBStartStop runs the private MariaDB: it greets on its port,
// Keycloak's user logs in with the generated password (and not with
// another) to a utf8mb4 database, the init file with the password is
// gone, and stop leaves no process.
func TestMariaDBStartStop(t *testing.T) {
	files, err := findMariaDB("")
	if errors.Is(err, ErrNoMariaDB) || testing.Short() {
		t.Skip("mariadbd not installed (apt-get install mariadb-server)")
	}
	if err != nil {
		t.Fatal(err)
	}
	u, err := chooseMariaDBUser()
	if err != nil {
		t.Fatal(err)
	}
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(reachableTempDir(t), "mariadb")
	s := &mariaServer{mariadbFiles: files, Dir: dir, Port: port, User: u, LogPath: filepath.Join(filepath.Dir(dir), "mariadb.log"),
		Socket: filepath.Join(dir, "mariadbd.sock")}
	s.Args = mariadbArgs(s, PGOptions{})
	const pw = "kc-db-secret"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	initFile, err := initMariaDB(ctx, s, pw)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(initFile); st.Mode().Perm() != 0o600 {
		t.Errorf("init file mode %v, want 0600", st.Mode().Perm())
	}
	if err := startMariaDB(ctx, s, initFile, false); err != nil {
		t.Fatal(err)
	}
	defer s.stop()
	if _, err := os.Stat(initFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the init file holding the password is left after start: %v", err)
	}
	if client, err := exec.LookPath("mariadb"); err == nil {
		query := func(password string) (string, error) {
			cmd := exec.CommandContext(ctx, client, "--no-defaults", "--protocol=tcp", "-h", "127.0.0.1", "-P", strconv.Itoa(port),
				"-u", "keycloak", "-N", "-B", "-e", "SELECT @@character_set_database, @@bind_address", "keycloak")
			cmd.Env = append(os.Environ(), "MYSQL_PWD="+password)
			out, err := cmd.CombinedOutput()
			return strings.TrimSpace(string(out)), err
		}
		if out, err := query(pw); err != nil || out != "utf8mb4\t127.0.0.1" {
			t.Errorf("keycloak's login: %q, %v; want utf8mb4 on 127.0.0.1", out, err)
		}
		if out, err := query("wrong"); err == nil || !strings.Contains(out, "Access denied") {
			t.Errorf("a wrong password: %q, %v; want access denied", out, err)
		}
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if left := s.Proc.Members(); len(left) > 0 {
		t.Fatalf("mariadbd processes left after stop: %v", left)
	}
	if err := mariadbGreets("127.0.0.1:" + strconv.Itoa(port)); err == nil {
		t.Error("mariadbd still answers after stop")
	}
}
