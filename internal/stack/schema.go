package stack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A schema template is a stopped PostgreSQL cluster whose keycloak
// database holds what Keycloak's Liquibase changelog makes on an empty
// database (tables, indexes and the changelog's record of its change
// sets) and nothing else: no realm, no user, no key. A new stack copies it
// instead of running initdb, so that its first boot skips the schema's
// creation (a third of a first boot) and does the rest as a
// first boot does: the master realm, its keys and the bootstrap admin,
// with the stack's own secrets.
//
// The template is made once per Keycloak build, PostgreSQL major and
// --db-schema, by Keycloak itself: a first boot on an empty database,
// then every table but Liquibase's two emptied. (Keycloak's manual
// migration strategy writes the schema's SQL without running it, but
// judges each change set's precondition against the empty database: the
// indexes and a column that later change sets drop stay, so its schema
// is not Liquibase's.) Nothing in it is a secret: its password is thrown
// away, each stack sets its own.

// schemaTemplateDir is where build's template for the PostgreSQL server
// of binaries bin and version and for schema lives: with the version's
// builds, in a folder of its own that PostgreSQL's user can enter (a
// build's folder is private). Another server binary, even of the same
// major, gets a template of its own.
func schemaTemplateDir(b Build, bin, version, schema string) string {
	buildDir := filepath.Dir(b.Home)
	h := sha256.Sum256([]byte(bin + "\n" + version + "\n" + schema))
	name := fmt.Sprintf("%s-pg%s-%s", filepath.Base(buildDir), pgMajor(version), hex.EncodeToString(h[:])[:8])
	return filepath.Join(filepath.Dir(filepath.Dir(buildDir)), "schemas", name)
}

// schemaTemplate returns the data folder of build's schema template for
// the PostgreSQL server tpl describes (Bin, Version, User), making it when
// it is not there yet.
func schemaTemplate(ctx context.Context, b Build, tpl pgServer, schema string, logf func(string, ...any)) (string, error) {
	dir := schemaTemplateDir(b, tpl.Bin, tpl.Version, schema)
	data := filepath.Join(dir, "data")
	done := filepath.Join(dir, "schema.ok")
	if _, err := os.Stat(done); err == nil {
		return data, nil
	}
	root := filepath.Dir(dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, filepath.Join(root, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return data, nil
	}
	logf("making the cached empty schema of Keycloak %s for PostgreSQL %s (once per build)", b.Dist.Version, tpl.Version)
	start := time.Now()
	tmp, err := os.MkdirTemp(root, ".schema-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil { // the server's user reaches its data
		return "", err
	}
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	srv := &pgServer{Bin: tpl.Bin, Version: tpl.Version, Data: filepath.Join(tmp, "data"), Port: port, User: tpl.User, LogPath: filepath.Join(tmp, "postgres.log")}
	pw := newSecret()
	if err := initPG(ctx, srv, pw, PGOptions{}, schema); err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	if err := startPG(ctx, srv, false); err != nil {
		return "", fmt.Errorf("postgres: %w", err)
	}
	err = createSchema(ctx, b, srv, pw, schema, tmp)
	if serr := srv.stop(); err == nil && serr != nil {
		err = fmt.Errorf("stop postgres: %w", serr)
	}
	if err != nil {
		return "", err
	}
	info := fmt.Sprintf("keycloak %s\npostgres %s\nschema %q\nmade %s\n", b.Dist.Version, tpl.Version, schema, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(tmp, "schema.ok"), []byte(info), 0o644); err != nil {
		return "", err
	}
	os.Remove(srv.LogPath)
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	logf("cached schema made in %s", time.Since(start).Round(100*time.Millisecond))
	return data, nil
}

// createSchema boots Keycloak once on srv's empty keycloak database, so
// that Liquibase creates the schema, stops it, and empties every table
// but Liquibase's own.
func createSchema(ctx context.Context, b Build, srv *pgServer, pw, schema, dir string) error {
	home := filepath.Join(dir, "keycloak")
	if err := copyTree(b.Home, home, true); err != nil {
		return fmt.Errorf("keycloak home: %w", err)
	}
	defer os.RemoveAll(home)
	httpPort, err := FreePort()
	if err != nil {
		return err
	}
	mgmtPort, err := FreePort()
	if err != nil {
		return err
	}
	args := []string{"start", "--optimized",
		fmt.Sprintf("--db-url=jdbc:postgresql://127.0.0.1:%d/keycloak", srv.Port), "--db-username=keycloak",
		"--http-enabled=true", "--http-host=127.0.0.1", "--http-port=" + strconv.Itoa(httpPort),
		"--http-management-port=" + strconv.Itoa(mgmtPort), "--hostname-strict=false", "--cache=local"}
	if schema != "" {
		args = append(args, "--db-schema="+schema)
	}
	logPath := filepath.Join(dir, "keycloak.log")
	n, _, err := launchKeycloak(home, b.Java, args, map[string]string{"KC_DB_PASSWORD": pw}, logPath, false, nil)
	if err != nil {
		return err
	}
	err = n.findJVM(ctx)
	if err == nil {
		err = n.waitReady(ctx, &http.Client{Timeout: readyPollTimeout}, fmt.Sprintf("http://127.0.0.1:%d", mgmtPort), 5*time.Minute)
	}
	if serr := n.stop(30 * time.Second); err == nil && serr != nil {
		err = fmt.Errorf("stop keycloak: %w", serr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out, _ := os.ReadFile(logPath)
		return &KeycloakError{Op: "kc.sh start (schema)", Reason: err.Error(), Message: keycloakMessage(string(out)), LogTail: lastLines(string(out), 20)}
	}
	return emptyTables(ctx, fmt.Sprintf("postgres://keycloak:%s@127.0.0.1:%d/keycloak", url.QueryEscape(pw), srv.Port), schema)
}

// emptyTables empties every table of schema ("" is public) but
// Liquibase's, and restarts its sequences.
func emptyTables(ctx context.Context, dsn, schema string) error {
	if schema == "" {
		schema = "public"
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var tables, seqs []string
	rows, err := conn.Query(ctx, `SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
		WHERE schemaname = $1 AND tablename NOT IN ('databasechangelog', 'databasechangeloglock')`, schema)
	if err == nil {
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return fmt.Errorf("list keycloak's tables: %w", err)
	}
	if len(tables) < 50 {
		return fmt.Errorf("keycloak's first boot left %d tables in schema %s: not its schema", len(tables), schema)
	}
	rows, err = conn.Query(ctx, `SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences WHERE schemaname = $1`, schema)
	if err == nil {
		seqs, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return err
	}
	sql := "TRUNCATE " + strings.Join(tables, ", ")
	if len(seqs) > 0 {
		sql += "; ALTER SEQUENCE " + strings.Join(seqs, " RESTART; ALTER SEQUENCE ") + " RESTART"
	}
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("empty keycloak's tables: %w", err)
	}
	return nil
}

// initPGFrom makes s's data folder a copy of the template data folder tpl,
// configured for s (pgConf) and with password for its superuser.
func initPGFrom(ctx context.Context, s *pgServer, tpl, password string, o PGOptions) error {
	if err := s.User.checkReachable(filepath.Dir(s.Data)); err != nil {
		return err
	}
	if _, err := copyDir(ctx, tpl, s.Data, copyOptions{Owner: s.User}); err != nil {
		return err
	}
	if err := appendPGConf(s.Data, pgConf(s.Port, o)); err != nil {
		return err
	}
	return s.single(ctx, "postgres", "ALTER ROLE keycloak PASSWORD '"+strings.ReplaceAll(password, "'", "''")+"';")
}
