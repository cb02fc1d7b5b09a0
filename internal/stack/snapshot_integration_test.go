//go:build integration

package stack_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
	"github.com/kcbench/kcbench/internal/stack/stacktest"
)

func realmNames(t *testing.T, ctx context.Context, tg kc.Target) []string {
	t.Helper()
	rs, err := kc.NewAdmin(kc.NewFor(tg), tg.Admin).Realms(ctx)
	if err != nil {
		t.Fatalf("list realms: %v", err)
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.Realm)
	}
	return names
}

// checkAdmin logs in both ways the stack's Target offers: the admin
// client's client-credentials grant and the admin user's password grant.
func checkAdmin(t *testing.T, ctx context.Context, tg kc.Target) {
	t.Helper()
	if _, err := kc.NewAdmin(kc.NewFor(tg), tg.Admin).Token(ctx); err != nil {
		t.Errorf("admin client login: %v", err)
	}
	pw := tg.Admin
	pw.ClientID, pw.ClientSecret = "", ""
	if _, err := kc.NewAdmin(kc.NewFor(tg), pw).Token(ctx); err != nil {
		t.Errorf("admin password login: %v", err)
	}
}

// checkSameSchema compares the schema of cached's database, a copy of the
// cached template, with fresh's, made by Liquibase at first boot: tables,
// columns, indexes, constraints and the changelog's change sets.
func checkSameSchema(t *testing.T, ctx context.Context, cached, fresh *stack.Stack) {
	t.Helper()
	if !cached.State().SchemaCached || fresh.State().SchemaCached {
		t.Fatalf("schema cached: %v and %v, want true and false", cached.State().SchemaCached, fresh.State().SchemaCached)
	}
	queries := []string{
		`SELECT table_name, column_name, data_type, coalesce(character_maximum_length, 0), is_nullable, coalesce(column_default, '')
		 FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2`,
		`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2`,
		`SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
		 WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`,
		`SELECT id, author, filename, md5sum, exectype FROM databasechangelog ORDER BY 1, 3`,
	}
	dump := func(s *stack.Stack) []string {
		dsn, err := s.DSN()
		if err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, string(dsn))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var out []string
		for _, q := range queries {
			rows, err := conn.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				v, _ := rows.Values()
				out = append(out, fmt.Sprintln(v...))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	a, b := dump(cached), dump(fresh)
	if len(a) < 500 {
		t.Fatalf("%d schema lines: too few to be Keycloak's", len(a))
	}
	if !slices.Equal(a, b) {
		only := func(x, y []string) []string {
			var d []string
			for _, l := range x {
				if !slices.Contains(y, l) {
					d = append(d, l)
				}
			}
			return d
		}
		t.Fatalf("cached schema (%d lines) differs from Liquibase's (%d):\nonly cached:\n%s\nonly Liquibase's:\n%s", len(a), len(b),
			strings.Join(only(a, b), "\n"), strings.Join(only(b, a), "\n"))
	}
	t.Logf("cached schema = Liquibase's: %d lines of tables, indexes, constraints and change sets", len(a))
}

func logTimings(t *testing.T, what string, info stack.SnapshotInfo) {
	t.Helper()
	tm := info.Timings
	t.Logf("%s %q (%.1f MiB, %d files): stop Keycloak %.2f s, stop PostgreSQL %.2f s, copy %.2f s, start PostgreSQL %.2f s, Keycloak ready %.2f s, cleanup %.2f s, total %.2f s",
		what, info.Name, float64(info.Size)/(1<<20), info.Files, tm.StopKeycloak.Seconds(), tm.StopPG.Seconds(), tm.Copy.Seconds(),
		tm.StartPG.Seconds(), tm.KeycloakReady.Seconds(), tm.Cleanup.Seconds(), tm.Total.Seconds())
}

// TestSnapshotSaveRestore runs its own stacks: it stops and restarts their
// servers, which the package's shared stack must not see.
func TestSnapshotSaveRestore(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test skipped in -short mode")
	}
	d, cleanup, err := stacktest.Dirs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	ctx := ctxT(t, 20*time.Minute)
	// This stack's schema is made by Liquibase at first boot; the shared
	// one's is a copy of the cached template: the two must be alike.
	cfg := stacktest.Config(d, "snap")
	cfg.PG.FreshSchema = true
	s, err := stack.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	checkSameSchema(t, ctx, shared.Get(t), s)
	tg := s.Target()
	admin := kc.NewAdmin(kc.NewFor(tg), tg.Admin)
	if err := admin.Do(ctx, "POST", "/admin/realms", map[string]any{"realm": "snaptest", "enabled": true}, nil); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(s.State().Dir, "dataset.json")
	if err := os.WriteFile(manifest, []byte(`{"dataset":"A"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	origPw, _ := fileutil.ReadSecret(s.SecretPath("admin-password"))

	a, err := s.SaveSnapshot(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	logTimings(t, "save", a)
	if !a.Dataset || a.Size < 1<<20 || a.KeycloakVersion != s.State().Options.Version {
		t.Errorf("snapshot info %+v", a)
	}
	if !s.Running() || !slices.Contains(realmNames(t, ctx, s.Target()), "snaptest") {
		t.Fatal("stack not back up with its data after the save")
	}
	if _, err := s.SaveSnapshot(ctx, "a"); !errors.Is(err, stack.ErrSnapshotExists) {
		t.Errorf("second save: %v, want ErrSnapshotExists", err)
	}

	// Drift away from A: a second realm, another admin password (in the
	// database and in the stack's file), another manifest.
	admin = kc.NewAdmin(kc.NewFor(s.Target()), s.Target().Admin)
	if err := admin.Do(ctx, "POST", "/admin/realms", map[string]any{"realm": "snaptest2", "enabled": true}, nil); err != nil {
		t.Fatal(err)
	}
	var users []struct{ ID string }
	if err := admin.Do(ctx, http.MethodGet, "/admin/realms/master/users?exact=true&username="+url.QueryEscape(stack.AdminUser), nil, &users); err != nil || len(users) != 1 {
		t.Fatalf("find admin user: %v %v", users, err)
	}
	if err := admin.Do(ctx, http.MethodPut, "/admin/realms/master/users/"+users[0].ID+"/reset-password", map[string]any{"type": "password", "value": "drifted-Passw0rd", "temporary": false}, nil); err != nil {
		t.Fatal(err)
	}
	if err := fileutil.WriteSecret(s.SecretPath("admin-password"), "drifted-Passw0rd"); err != nil {
		t.Fatal(err)
	}
	checkAdmin(t, ctx, s.Target())
	os.WriteFile(manifest, []byte(`{"dataset":"B"}`), 0o644)

	r, err := s.RestoreSnapshot(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	logTimings(t, "restore", r)
	names := realmNames(t, ctx, s.Target())
	if !slices.Contains(names, "snaptest") || slices.Contains(names, "snaptest2") {
		t.Errorf("realms after restoring a: %v, want snaptest and not snaptest2", names)
	}
	if pw, _ := fileutil.ReadSecret(s.SecretPath("admin-password")); pw != origPw {
		t.Error("admin-password file not restored")
	}
	checkAdmin(t, ctx, s.Target())
	if b, _ := os.ReadFile(manifest); string(b) != `{"dataset":"A"}` {
		t.Errorf("dataset.json after restore: %q", b)
	}
	st := s.State()
	if pg := st.PG; pg.User != nil {
		fi, err := os.Stat(pg.Data)
		if err != nil {
			t.Fatal(err)
		}
		if sys := fi.Sys().(*syscall.Stat_t); int(sys.Uid) != pg.User.UID || fi.Mode().Perm() != 0o700 {
			t.Errorf("restored data folder: owner %d mode %v, want %d and 0700", sys.Uid, fi.Mode().Perm(), pg.User.UID)
		}
	}
	if _, err := s.RestoreSnapshot(ctx, "nope"); !errors.Is(err, stack.ErrSnapshotNotFound) {
		t.Errorf("restore unknown: %v", err)
	}

	// Another stack (other ports, other secrets) takes the snapshot too.
	t.Run("restore into another stack", func(t *testing.T) {
		stacktest.Long(t)
		s2, err := stack.Start(ctx, stacktest.Config(d, "snap2"))
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := s2.Down(context.Background()); err != nil {
				t.Errorf("down snap2: %v", err)
			}
		}()
		r2, err := s2.RestoreSnapshot(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		logTimings(t, "restore into another stack", r2)
		if names := realmNames(t, ctx, s2.Target()); !slices.Contains(names, "snaptest") {
			t.Errorf("realms of snap2 after restoring a: %v", names)
		}
		checkAdmin(t, ctx, s2.Target())
	})

	list, err := stack.ListSnapshots(d)
	if err != nil || len(list) != 1 || list[0].Name != "a" {
		t.Fatalf("ListSnapshots = %+v, %v", list, err)
	}
	if err := stack.DeleteSnapshot(d, "a"); err != nil {
		t.Fatal(err)
	}
	if list, _ := stack.ListSnapshots(d); len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
}
