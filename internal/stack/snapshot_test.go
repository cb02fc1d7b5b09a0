package stack

import (
	"context"
	"crypto/rand"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestValidSnapshotName(t *testing.T) {
	for _, ok := range []string{"a", "tenants-1000", "v26.7_base", "0", "A.b-c_d", strings.Repeat("x", maxSnapshotName)} {
		if err := ValidSnapshotName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", ".hidden", "-flag", "_x", "a/b", "../x", "a b", "a\\b", "é", "a:b", "x\n", strings.Repeat("x", maxSnapshotName+1)} {
		if err := ValidSnapshotName(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestPGMajor(t *testing.T) {
	for in, want := range map[string]string{"17.5": "17", "17.5.0": "17", "16": "16", "9.6.24": "9.6", "unknown": "unknown"} {
		if got := pgMajor(in); got != want {
			t.Errorf("pgMajor(%q) = %q, want %q", in, got, want)
		}
	}
}

// entry is what copyDir must keep of a file.
type entry struct {
	mode fs.FileMode
	link string
	data string
	uid  uint32
	gid  uint32
}

func scanTree(t *testing.T, root string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		e := entry{mode: info.Mode(), uid: st.Uid, gid: st.Gid}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			e.link, _ = os.Readlink(p)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.data = string(b)
		}
		m[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// makeTree builds a source tree with the modes PostgreSQL uses and a few it
// does not, symlinks (relative, dangling, to a folder), and a file large
// enough to take the copy_file_range path for real.
func makeTree(t *testing.T) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "src")
	big := make([]byte, 3<<20+17)
	rand.Read(big)
	files := []struct {
		path string
		mode fs.FileMode
		data []byte
	}{
		{"PG_VERSION", 0o600, []byte("17\n")},
		{"postgresql.conf", 0o600, []byte("port = 5432\n")},
		{"base/1/1259", 0o600, big},
		{"base/1/empty", 0o640, nil},
		{"global/pg_control", 0o600, []byte("control")},
		{"tool.sh", 0o755, []byte("#!/bin/sh\n")},
		{"open", 0o777, []byte("umask must not narrow this")},
		{"ro/inside", 0o444, []byte("read-only file in a read-only folder")},
	}
	for _, f := range files {
		p := filepath.Join(src, f.path)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range [][2]string{{"base/1/1259", "link-rel"}, {"/nonexistent/target", "dangling"}, {"global", "pg_tblspc_like"}} {
		if err := os.Symlink(l[0], filepath.Join(src, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []struct {
		path string
		mode fs.FileMode
	}{{"", 0o700}, {"base", 0o750}, {"global", 0o700}, {"ro", 0o555}} {
		if err := os.Chmod(filepath.Join(src, d.path), d.mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(src, "ro"), 0o755) })
	return src
}

func TestCopyDirKeepsModesSymlinksAndContent(t *testing.T) {
	src := makeTree(t)
	dst := filepath.Join(t.TempDir(), "dst")
	t.Cleanup(func() { os.Chmod(filepath.Join(dst, "ro"), 0o755) })
	st, err := copyDir(context.Background(), src, dst, copyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, got := scanTree(t, src), scanTree(t, dst)
	for rel, w := range want {
		g, ok := got[rel]
		switch {
		case !ok:
			t.Errorf("%s: missing in the copy", rel)
		case g.mode != w.mode:
			t.Errorf("%s: mode %v, want %v", rel, g.mode, w.mode)
		case g.link != w.link:
			t.Errorf("%s: link %q, want %q", rel, g.link, w.link)
		case g.data != w.data:
			t.Errorf("%s: content differs (%d bytes, want %d)", rel, len(g.data), len(w.data))
		}
	}
	if len(got) != len(want) {
		t.Errorf("copy has %d entries, source %d", len(got), len(want))
	}
	if st.Files != 8 || st.Bytes != int64(3<<20+17+3+12+7+10+26+36) {
		t.Errorf("stats %+v", st)
	}
	// A symlink to a folder is copied as a link, not followed.
	if fi, err := os.Lstat(filepath.Join(dst, "pg_tblspc_like")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("folder symlink was followed: %v %v", fi, err)
	}
}

func TestCopyDirOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to change owners")
	}
	src := makeTree(t)
	for _, p := range []string{"", "base", "base/1/1259"} {
		if err := os.Chown(filepath.Join(src, p), 1234, 2345); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Lchown(filepath.Join(src, "dangling"), 1234, 2345); err != nil {
		t.Fatal(err)
	}
	t.Run("kept", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "dst")
		if _, err := copyDir(context.Background(), src, dst, copyOptions{}); err != nil {
			t.Fatal(err)
		}
		want, got := scanTree(t, src), scanTree(t, dst)
		for rel, w := range want {
			if g := got[rel]; g.uid != w.uid || g.gid != w.gid {
				t.Errorf("%s: owner %d:%d, want %d:%d", rel, g.uid, g.gid, w.uid, w.gid)
			}
		}
		// chown must not have undone the mode (it clears setgid bits).
		if got["base"].mode != want["base"].mode {
			t.Errorf("base: mode %v, want %v", got["base"].mode, want["base"].mode)
		}
	})
	t.Run("set", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "dst")
		if _, err := copyDir(context.Background(), src, dst, copyOptions{Owner: &pgUser{Name: "x", UID: 4321, GID: 5432}}); err != nil {
			t.Fatal(err)
		}
		for rel, g := range scanTree(t, dst) {
			if g.uid != 4321 || g.gid != 5432 {
				t.Errorf("%s: owner %d:%d, want 4321:5432", rel, g.uid, g.gid)
			}
		}
	})
}

func TestCopyDirSkip(t *testing.T) {
	src := makeTree(t)
	os.WriteFile(filepath.Join(src, "postmaster.pid"), []byte("123\n"), 0o600)
	dst := filepath.Join(t.TempDir(), "dst")
	if _, err := copyDir(context.Background(), src, dst, copyOptions{Skip: func(rel string) bool { return rel == "postmaster.pid" || rel == "base" }}); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"postmaster.pid", "base"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was copied", gone)
		}
	}
}

func TestCopyDirFailureLeavesNothing(t *testing.T) {
	t.Run("unsupported file", func(t *testing.T) {
		src := makeTree(t)
		if err := syscall.Mkfifo(filepath.Join(src, "base", "zz-fifo"), 0o600); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "dst")
		_, err := copyDir(context.Background(), src, dst, copyOptions{})
		if err == nil || !strings.Contains(err.Error(), "cannot copy a") {
			t.Fatalf("err = %v, want cannot copy", err)
		}
		if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s left behind (%v)", dst, err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		src := makeTree(t)
		dst := filepath.Join(t.TempDir(), "dst")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := copyDir(ctx, src, dst, copyOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s left behind (%v)", dst, err)
		}
	})
	t.Run("file fails in a worker", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads mode-000 files")
		}
		src := makeTree(t)
		os.Chmod(filepath.Join(src, "base", "1", "1259"), 0)
		dst := filepath.Join(t.TempDir(), "dst")
		if _, err := copyDir(context.Background(), src, dst, copyOptions{}); !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("err = %v, want permission denied", err)
		}
		if _, err := os.Lstat(dst); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s left behind (%v)", dst, err)
		}
	})
	t.Run("disk full", func(t *testing.T) {
		// A real full disk: a 1 MiB tmpfs (needs root and mount rights).
		mnt := t.TempDir()
		if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("cannot mount a small tmpfs: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
		src := makeTree(t)
		dst := filepath.Join(mnt, "dst")
		_, err := copyDir(context.Background(), src, dst, copyOptions{})
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("err = %v, want ENOSPC", err)
		}
		if msg := diskFull(err, mnt).Error(); !strings.Contains(msg, "is full") {
			t.Errorf("message %q does not say the disk is full", msg)
		}
		if ents, _ := os.ReadDir(mnt); len(ents) != 0 {
			t.Fatalf("left behind on the full disk: %v", ents)
		}
	})
	t.Run("destination exists", func(t *testing.T) {
		src := makeTree(t)
		dst := t.TempDir()
		keep := filepath.Join(dst, "keep")
		os.WriteFile(keep, []byte("x"), 0o600)
		if _, err := copyDir(context.Background(), src, dst, copyOptions{}); err == nil {
			t.Fatal("copy over an existing folder: want an error")
		}
		if _, err := os.Stat(keep); err != nil {
			t.Fatalf("existing destination was touched: %v", err)
		}
	})
}

func TestCheckSpace(t *testing.T) {
	if err := checkSpace(t.TempDir(), 1<<60); err == nil || !strings.Contains(err.Error(), "not enough disk space") {
		t.Fatalf("err = %v", err)
	}
	if err := checkSpace(t.TempDir(), 1); err != nil {
		t.Fatal(err)
	}
	if err := diskFull(syscall.ENOSPC, "/x"); !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "full") {
		t.Fatalf("diskFull: %v", err)
	}
}

// fakeStack is a stack whose servers are not running and cannot start (its
// PostgreSQL binaries do not exist): enough to drive the copy, swap and
// revert paths of save and restore without real servers.
func fakeStack(t *testing.T, d Dirs, name string) *Stack {
	t.Helper()
	dir := stackDir(d, name)
	data := filepath.Join(dir, "postgres", "data")
	if err := os.MkdirAll(filepath.Join(data, "base"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string, mode fs.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(data, "PG_VERSION"), "17\n", 0o600)
	write(filepath.Join(data, "postgresql.conf"), "port = 1\n", 0o600)
	write(filepath.Join(data, "base", "table"), name+" rows", 0o600)
	for _, sec := range snapshotSecrets {
		write(filepath.Join(dir, sec), name+"-"+sec+"\n", 0o600)
	}
	s := &Stack{logf: t.Logf, st: State{
		Schema: stateSchema, Name: name, Dir: dir,
		Options: KeycloakOptions{Version: "26.7.3"},
		PG:      &pgServer{Bin: filepath.Join(d.State, "no-such-bin"), Version: "17.5", Data: data, Port: 5599, LogPath: filepath.Join(dir, "postgres.log")},
	}}
	if err := s.save(); err != nil {
		t.Fatal(err)
	}
	return s
}

func testDirs(t *testing.T) Dirs {
	d := t.TempDir()
	return Dirs{Cache: filepath.Join(d, "cache"), State: filepath.Join(d, "state")}
}

func TestSaveSnapshotFailedCopyLeavesNothing(t *testing.T) {
	d := testDirs(t)
	s := fakeStack(t, d, "a")
	if err := syscall.Mkfifo(filepath.Join(s.st.PG.Data, "base", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.SaveSnapshot(context.Background(), "snap")
	if err == nil || !strings.Contains(err.Error(), "cannot copy") {
		t.Fatalf("err = %v", err)
	}
	// It tried to bring the stack back; that failed here, so it is recorded
	// as stopped.
	if !strings.Contains(err.Error(), "did not start again") {
		t.Errorf("err = %v, want the failed restart reported", err)
	}
	ents, _ := os.ReadDir(snapshotsDir(d))
	for _, e := range ents {
		if e.Name() != ".lock" {
			t.Errorf("left behind in snapshots: %s", e.Name())
		}
	}
	if infos, err := ListSnapshots(d); err != nil || len(infos) != 0 {
		t.Errorf("ListSnapshots = %v, %v", infos, err)
	}
	back, err := Attach(d, "a")
	if err != nil {
		t.Fatal(err)
	}
	if nodeRecorded(back.st) || back.st.PG.Proc.PID != 0 || back.Running() {
		t.Errorf("stack not recorded as stopped: %+v %+v", back.st.Nodes, back.st.PG.Proc)
	}
}

func TestSnapshotSaveListRestoreRevertDelete(t *testing.T) {
	d := testDirs(t)
	a := fakeStack(t, d, "a")
	os.WriteFile(filepath.Join(a.st.Dir, datasetFile), []byte(`{"tenants":10}`), 0o640)
	os.WriteFile(filepath.Join(a.st.PG.Data, "postmaster.pid"), []byte("stale\n"), 0o600)

	// The data is copied; the restart fails (no binaries) and says so.
	info, err := a.SaveSnapshot(context.Background(), "ten")
	if err == nil || !strings.Contains(err.Error(), `snapshot "ten" was saved`) {
		t.Fatalf("save: %v", err)
	}
	if _, err := a.SaveSnapshot(context.Background(), "ten"); !errors.Is(err, ErrSnapshotExists) {
		t.Fatalf("second save: %v, want ErrSnapshotExists", err)
	}
	if info.Files != 3 || !info.Dataset || info.KeycloakVersion != "26.7.3" || info.PGVersion != "17.5" {
		t.Errorf("info %+v", info)
	}
	snap := filepath.Join(snapshotsDir(d), "ten")
	if _, err := os.Stat(filepath.Join(snap, "data", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Error("postmaster.pid was copied")
	}
	for _, f := range append(snapshotSecrets, datasetFile) {
		fi, err := os.Stat(filepath.Join(snap, f))
		if err != nil {
			t.Fatal(err)
		}
		if want := fs.FileMode(0o600); f == datasetFile {
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("%s: mode %v, want 0640", f, fi.Mode().Perm())
			}
		} else if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", f, fi.Mode().Perm(), want)
		}
	}
	os.Mkdir(filepath.Join(snapshotsDir(d), ".x.tmp-123"), 0o700) // a crashed save
	os.Mkdir(filepath.Join(snapshotsDir(d), "junk"), 0o700)       // not a snapshot
	infos, err := ListSnapshots(d)
	if len(infos) != 1 || infos[0].Name != "ten" || infos[0].Size != info.Size || infos[0].Dir != snap {
		t.Errorf("ListSnapshots = %+v", infos)
	}
	if !errors.Is(err, ErrSnapshotNotFound) || !strings.Contains(err.Error(), "junk") {
		t.Errorf("ListSnapshots error = %v, want one naming junk", err)
	}
	os.Remove(filepath.Join(snapshotsDir(d), "junk"))

	// Restore into stack b, whose servers cannot start: the restore must
	// put b's own data and files back.
	b := fakeStack(t, d, "b")
	if _, err := b.RestoreSnapshot(context.Background(), "nope"); !errors.Is(err, ErrSnapshotNotFound) {
		t.Fatalf("restore unknown: %v", err)
	}
	_, err = b.RestoreSnapshot(context.Background(), "ten")
	if err == nil || !strings.Contains(err.Error(), "did not start on the restored data") {
		t.Fatalf("restore: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(b.st.PG.Data, "base", "table")); string(got) != "b rows" {
		t.Errorf("b's data after a failed restore: %q, want its own", got)
	}
	if got, _ := b.secret("db-password"); got != "b-db-password" {
		t.Errorf("b's db-password after a failed restore: %q", got)
	}
	if _, err := os.Stat(filepath.Join(b.st.Dir, datasetFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dataset.json left in b: %v", err)
	}
	if ents, _ := filepath.Glob(filepath.Join(b.st.Dir, "postgres", ".restore-*")); len(ents) > 0 {
		t.Errorf("work folders left: %v", ents)
	}
	if b.Running() || nodeRecorded(b.st) {
		t.Error("b not recorded as stopped")
	}

	// The swap itself, without the start: the data, port and files of the
	// snapshot are in place.
	work := filepath.Join(t.TempDir(), "data")
	if _, err := copyDir(context.Background(), filepath.Join(snap, "data"), work, copyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.fixPort(work, "ten"); err != nil {
		t.Fatal(err)
	}
	conf, _ := os.ReadFile(filepath.Join(work, "postgresql.conf"))
	if !strings.HasSuffix(string(conf), "port = 5599\n") {
		t.Errorf("postgresql.conf after fixPort:\n%s", conf)
	}
	files, err := readStackFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	if err := files.write(b.st.Dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.secret("admin-password"); got != "a-admin-password" {
		t.Errorf("admin-password = %q, want a's", got)
	}
	if got, _ := os.ReadFile(filepath.Join(b.st.Dir, datasetFile)); string(got) != `{"tenants":10}` {
		t.Errorf("dataset.json = %q", got)
	}

	// Another Keycloak version or PostgreSQL major is refused before
	// anything stops.
	c := fakeStack(t, d, "c")
	c.st.Options.Version = "26.5.0"
	if _, err := c.RestoreSnapshot(context.Background(), "ten"); err == nil || !strings.Contains(err.Error(), "Keycloak 26.7.3") {
		t.Errorf("other Keycloak: %v", err)
	}
	c.st.Options.Version, c.st.PG.Version = "26.7.3", "16.9"
	if _, err := c.RestoreSnapshot(context.Background(), "ten"); err == nil || !strings.Contains(err.Error(), "PostgreSQL 17.5") {
		t.Errorf("other PostgreSQL: %v", err)
	}

	if err := DeleteSnapshot(d, "ten"); err != nil {
		t.Fatal(err)
	}
	if err := DeleteSnapshot(d, "ten"); !errors.Is(err, ErrSnapshotNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if infos, _ := ListSnapshots(d); len(infos) != 0 {
		t.Errorf("after delete: %+v", infos)
	}
}

func TestSnapshotExternalDB(t *testing.T) {
	s := &Stack{logf: t.Logf, st: State{Name: "ext", Dir: t.TempDir()}}
	if _, err := s.SaveSnapshot(context.Background(), "x"); !errors.Is(err, ErrExternalDB) {
		t.Errorf("save: %v", err)
	}
	if _, err := s.RestoreSnapshot(context.Background(), "x"); !errors.Is(err, ErrExternalDB) {
		t.Errorf("restore: %v", err)
	}
	if _, err := s.SaveSnapshot(context.Background(), "../x"); err == nil || errors.Is(err, ErrExternalDB) {
		t.Errorf("bad name: %v", err)
	}
}

// nodeRecorded reports whether a node process is recorded in st.
func nodeRecorded(st State) bool {
	for _, n := range st.Nodes {
		if n.Proc != nil {
			return true
		}
	}
	return false
}

func TestSnapshotTimingsOutput(t *testing.T) {
	var b strings.Builder
	(SnapshotTimings{StopKeycloak: 520 * time.Millisecond, Copy: 410 * time.Millisecond, KeycloakReady: 12 * time.Second, Total: 14 * time.Second}).WriteText(&b)
	for _, w := range []string{"stop Keycloak", "0.52 s", "copy", "0.41 s", "Keycloak ready", "12.00 s", "total", "14.00 s"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("timings lack %q:\n%s", w, b.String())
		}
	}
	if strings.Contains(b.String(), "cleanup") {
		t.Errorf("cleanup shown though zero:\n%s", b.String())
	}
}
