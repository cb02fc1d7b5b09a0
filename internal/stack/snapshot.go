package stack

// Snapshots of a stack's database, so that an experiment can jump to "N
// tenants" in seconds instead of seeding for minutes.
//
// A snapshot is a copy of the private PostgreSQL's data folder, taken while
// the server is stopped (fast shutdown, so the files are consistent), plus the
// stack files that belong with that data: the database holds the keycloak
// role's password and the master realm's bootstrap admin and admin client,
// so the 0600 files admin-password, admin-client-secret and db-password are
// copied with it, and so is the dataset manifest (dataset.json) if the stack
// has one. Snapshots live in Dirs.State/snapshots/<name>/ and can be restored
// into any local stack of the same Keycloak version and PostgreSQL major:
//
//	snapshots/<name>/snapshot.json   SnapshotInfo
//	snapshots/<name>/data/           the data folder, owner and modes kept
//	snapshots/<name>/admin-password, admin-client-secret, db-password
//	snapshots/<name>/dataset.json    if the stack had one
//
// Why a copy of the folder and not pg_dump: the PostgreSQL binaries kcbench
// fetches through Maven (io.zonky.test.postgres) hold only initdb, pg_ctl
// and postgres, no pg_dump or pg_restore. A copy is also the faster restore:
// pg_restore replays every row and rebuilds every index, a copy costs what
// the disk takes (Go's io.Copy between files is copy_file_range, a reflink on
// file systems that have them), and Keycloak's boot dominates either way.
//
// Snapshot files are not fsynced: like the benchmark database itself (fsync
// off), a snapshot is disposable, and a per-file fsync doubled the copy's
// time. A snapshot whose files a power loss truncated fails to start on
// restore, and the restore then puts the previous data back.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"golang.org/x/sync/errgroup"
)

// Errors of snapshots.
var (
	ErrSnapshotNotFound = errors.New("no such snapshot")
	ErrSnapshotExists   = errors.New("snapshot already exists")
	// ErrExternalDB: kcbench can only snapshot the PostgreSQL it runs.
	ErrExternalDB = errors.New("the stack uses an external database (--db-url); snapshots need kcbench's private PostgreSQL")
)

// SnapshotInfo describes a snapshot (its snapshot.json).
type SnapshotInfo struct {
	Schema    int       `json:"schema"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	// Stack is the stack the snapshot was saved from.
	Stack           string `json:"stack"`
	KeycloakVersion string `json:"keycloak_version"`
	PGVersion       string `json:"postgres_version"`
	// Size is the bytes of the copied data folder and dataset manifest.
	Size  int64 `json:"size_bytes"`
	Files int   `json:"files"`
	// Dataset tells whether the stack had a dataset.json.
	Dataset bool `json:"dataset"`
	// Timings are the save's in snapshot.json and ListSnapshots;
	// RestoreSnapshot returns the restore's.
	Timings SnapshotTimings `json:"timings"`
	// Dir is the snapshot's folder.
	Dir string `json:"-"`
}

// SnapshotTimings are the phases of a save or restore. Copy includes moving
// the copy into place and the stack files.
type SnapshotTimings struct {
	StopKeycloak  time.Duration `json:"stop_keycloak_ns"`
	StopPG        time.Duration `json:"stop_postgres_ns"`
	Copy          time.Duration `json:"copy_ns"`
	StartPG       time.Duration `json:"start_postgres_ns"`
	KeycloakReady time.Duration `json:"keycloak_ready_ns"`
	// Cleanup is removing the replaced data folder after a restore.
	Cleanup time.Duration `json:"cleanup_ns,omitempty"`
	Total   time.Duration `json:"total_ns"`
}

const snapshotSchema = 1

// Files of a snapshot besides data/.
const (
	snapshotFile = "snapshot.json"
	datasetFile  = "dataset.json"
)

// snapshotSecrets are the stack's secret files whose counterparts live in
// the database.
var snapshotSecrets = []string{"admin-password", "admin-client-secret", "db-password"}

// maxSnapshotName bounds a name (it is a folder name).
const maxSnapshotName = 100

// ValidSnapshotName checks a snapshot name: letters, digits, - _ and .,
// starting with a letter or digit.
func ValidSnapshotName(name string) error {
	if name == "" {
		return errors.New("snapshot name is empty")
	}
	if len(name) > maxSnapshotName {
		return fmt.Errorf("snapshot name %q: longer than %d characters", name, maxSnapshotName)
	}
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if i == 0 && !alnum {
			return fmt.Errorf("snapshot name %q: must start with a letter or digit", name)
		}
		if !alnum && r != '-' && r != '_' && r != '.' {
			return fmt.Errorf("snapshot name %q: letters, digits, -, _ and . only", name)
		}
	}
	return nil
}

func snapshotsDir(d Dirs) string { return filepath.Join(d.State, "snapshots") }

// snapshotsDir is Dirs.State/snapshots of the stack's state folder (its
// folder is Dirs.State/stacks/<name>).
func (s *Stack) snapshotsDir() string {
	return snapshotsDir(Dirs{State: filepath.Dir(filepath.Dir(s.st.Dir))})
}

// ListSnapshots returns the snapshots of d sorted by name. It returns those it
// could read together with an error naming any it could not.
func ListSnapshots(d Dirs) ([]SnapshotInfo, error) {
	root := snapshotsDir(d)
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	var infos []SnapshotInfo
	var errs []error
	for _, e := range ents {
		// Dot names are temporary folders and the lock file.
		if strings.HasPrefix(e.Name(), ".") || !e.IsDir() {
			continue
		}
		info, err := readSnapshot(root, e.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		infos = append(infos, info)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos, errors.Join(errs...)
}

func readSnapshot(root, name string) (SnapshotInfo, error) {
	dir := filepath.Join(root, name)
	b, err := os.ReadFile(filepath.Join(dir, snapshotFile))
	if errors.Is(err, os.ErrNotExist) {
		return SnapshotInfo{}, fmt.Errorf("%w: %q", ErrSnapshotNotFound, name)
	}
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	var info SnapshotInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return SnapshotInfo{}, fmt.Errorf("snapshot %q: corrupt %s: %w", name, snapshotFile, err)
	}
	if info.Schema != snapshotSchema {
		return SnapshotInfo{}, fmt.Errorf("snapshot %q: schema %d, this kcbench reads %d", name, info.Schema, snapshotSchema)
	}
	info.Dir = dir
	return info, nil
}

// DeleteSnapshot removes snapshot name of d. It waits for a save or restore
// that holds the snapshots' lock.
func DeleteSnapshot(d Dirs, name string) error {
	if err := ValidSnapshotName(name); err != nil {
		return err
	}
	root := snapshotsDir(d)
	if _, err := os.Lstat(filepath.Join(root, name)); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %q", ErrSnapshotNotFound, name)
	}
	unlock, err := lockFile(context.Background(), filepath.Join(root, ".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	// Move it aside first, so that no half-deleted snapshot is ever listed.
	trash := filepath.Join(root, "."+name+".tmp-delete")
	os.RemoveAll(trash)
	if err := os.Rename(filepath.Join(root, name), trash); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %q", ErrSnapshotNotFound, name)
		}
		return fmt.Errorf("delete snapshot %q: %w", name, err)
	}
	if err := os.RemoveAll(trash); err != nil {
		return fmt.Errorf("delete snapshot %q: %w", name, err)
	}
	return nil
}

// lockSnapshots serializes saves, restores and deletes of a state folder,
// and removes temporary folders that a killed kcbench left behind.
func lockSnapshots(ctx context.Context, root string) (func(), error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("snapshots folder: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(root, ".lock"))
	if err != nil {
		return nil, err
	}
	stale, _ := filepath.Glob(filepath.Join(root, ".*.tmp-*"))
	for _, p := range stale {
		os.RemoveAll(p)
	}
	return unlock, nil
}

// canSnapshot tells why the stack cannot be snapshotted, if it cannot.
func (s *Stack) canSnapshot() error {
	if s.st.MariaDB != nil {
		return fmt.Errorf("stack %q: snapshots are %w: seed again instead", s.st.Name, ErrNotPostgres)
	}
	if s.st.PG == nil {
		return fmt.Errorf("stack %q: %w", s.st.Name, ErrExternalDB)
	}
	return nil
}

// SaveSnapshot stops Keycloak and PostgreSQL, copies the database and the
// stack files that go with it to Dirs.State/snapshots/<name>, and starts
// both again. The copy goes through a temporary folder, so a failed save
// (a full disk, an interrupt) leaves no snapshot behind. Whatever happens
// after the stop, SaveSnapshot brings the stack up again, even when ctx is
// cancelled: only the copy is interruptible. If that start fails, the stack
// is stopped and recorded as such.
func (s *Stack) SaveSnapshot(ctx context.Context, name string) (SnapshotInfo, error) {
	if err := ValidSnapshotName(name); err != nil {
		return SnapshotInfo{}, err
	}
	if err := s.canSnapshot(); err != nil {
		return SnapshotInfo{}, err
	}
	root := s.snapshotsDir()
	final := filepath.Join(root, name)
	exists := func() error {
		if _, err := os.Lstat(final); err == nil {
			return fmt.Errorf("%w: %q (kcbench snapshot delete %s first)", ErrSnapshotExists, name, name)
		}
		return nil
	}
	if err := exists(); err != nil {
		return SnapshotInfo{}, err
	}
	unlock, err := lockSnapshots(ctx, root)
	if err != nil {
		return SnapshotInfo{}, err
	}
	defer unlock()
	if err := exists(); err != nil {
		return SnapshotInfo{}, err
	}
	size, _, err := treeSize(s.st.PG.Data)
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("snapshot %q: %w", name, err)
	}
	if err := checkSpace(root, size); err != nil {
		return SnapshotInfo{}, fmt.Errorf("snapshot %q: %w", name, err)
	}

	start := time.Now()
	info := SnapshotInfo{
		Schema: snapshotSchema, Name: name, CreatedAt: start.UTC(), Stack: s.st.Name,
		KeycloakVersion: s.st.Options.Version, PGVersion: s.st.PG.Version,
	}
	s.logf("snapshot %q: saving the database of stack %q (%.0f MiB); Keycloak and PostgreSQL stop meanwhile", name, s.st.Name, mib(size))
	t := &info.Timings
	if err := s.stopServers(t); err != nil {
		return info, fmt.Errorf("snapshot %q: %w", name, err)
	}

	phase := time.Now()
	tmp, err := os.MkdirTemp(root, "."+name+".tmp-")
	if err == nil {
		err = s.writeSnapshot(ctx, tmp, &info)
		if err == nil {
			err = os.Rename(tmp, final)
		}
		if err != nil {
			os.RemoveAll(tmp)
		}
	}
	if err != nil {
		return info, s.afterFailure(ctx, fmt.Errorf("snapshot %q: %w", name, diskFull(err, root)), t)
	}
	t.Copy = time.Since(phase)
	s.logf("snapshot %q: copied %.0f MiB in %d files in %s", name, mib(info.Size), info.Files, t.Copy.Round(time.Millisecond))

	if err := s.startServers(context.WithoutCancel(ctx), t); err != nil {
		return info, fmt.Errorf("snapshot %q was saved, but the stack did not start again (it is stopped now): %w", name, err)
	}
	t.Total = time.Since(start)
	// Record the timings; the snapshot is complete without them.
	if err := fileutil.WriteJSON(filepath.Join(final, snapshotFile), info, 0o644); err != nil {
		return info, err
	}
	info.Dir = final
	s.logf("snapshot %q: saved in %s", name, t.Total.Round(time.Millisecond))
	return info, nil
}

// writeSnapshot fills dir with a snapshot of the stack (servers stopped):
// the data folder, the secret files, dataset.json and snapshot.json.
func (s *Stack) writeSnapshot(ctx context.Context, dir string, info *SnapshotInfo) error {
	// postmaster.pid is absent after a clean shutdown; never carry a stale
	// one, whose pid may belong to another process at restore time.
	cs, err := copyDir(ctx, s.st.PG.Data, filepath.Join(dir, "data"), copyOptions{
		Skip: func(rel string) bool { return rel == "postmaster.pid" },
	})
	if err != nil {
		return fmt.Errorf("copy data: %w", err)
	}
	info.Size, info.Files = cs.Bytes, cs.Files
	for _, sec := range snapshotSecrets {
		v, err := s.secret(sec)
		if err != nil {
			return err
		}
		if err := fileutil.WriteSecret(filepath.Join(dir, sec), v); err != nil {
			return err
		}
	}
	b, mode, err := readOptional(filepath.Join(s.st.Dir, datasetFile))
	if err != nil {
		return err
	}
	if b != nil {
		if err := fileutil.WriteAtomic(filepath.Join(dir, datasetFile), b, mode); err != nil {
			return err
		}
		info.Dataset = true
		info.Size += int64(len(b))
	}
	return fileutil.WriteJSON(filepath.Join(dir, snapshotFile), info, 0o644)
}

// RestoreSnapshot stops Keycloak and PostgreSQL, replaces the data folder
// with a copy of the snapshot's (the snapshot stays), puts back the
// snapshot's secret files and dataset.json, and starts both again. It
// refuses a snapshot of another Keycloak version or PostgreSQL major.
//
// The copy is made beside the data folder and swapped in by rename. If the
// copy fails or is interrupted, the stack starts again on its own data; if
// the stack does not start on the restored data, the previous data and files
// are put back and started. Once the copy is in place, an interrupt no longer
// stops the restore. If no start succeeds, the stack is left stopped and
// recorded as such.
func (s *Stack) RestoreSnapshot(ctx context.Context, name string) (SnapshotInfo, error) {
	if err := ValidSnapshotName(name); err != nil {
		return SnapshotInfo{}, err
	}
	if err := s.canSnapshot(); err != nil {
		return SnapshotInfo{}, err
	}
	root := s.snapshotsDir()
	if _, err := readSnapshot(root, name); err != nil {
		return SnapshotInfo{}, err
	}
	unlock, err := lockSnapshots(ctx, root)
	if err != nil {
		return SnapshotInfo{}, err
	}
	defer unlock()
	info, err := readSnapshot(root, name) // again: it may have gone meanwhile
	if err != nil {
		return SnapshotInfo{}, err
	}
	// Read everything that can be missing before stopping anything.
	newFiles, oldFiles, err := s.checkRestore(info, name)
	if err != nil {
		return info, err
	}
	start := time.Now()
	info.Timings = SnapshotTimings{}
	t := &info.Timings
	s.logf("restore %q: replacing the database of stack %q (%.0f MiB); Keycloak and PostgreSQL stop meanwhile", name, s.st.Name, mib(info.Size))
	if err := s.stopServers(t); err != nil {
		return info, fmt.Errorf("restore %q: %w", name, err)
	}
	phase := time.Now()
	sw, err := s.swapData(ctx, info, name, newFiles, oldFiles)
	if err != nil {
		if sw != nil {
			if rerr := sw.revert(); rerr != nil {
				return info, s.recordStopped(errors.Join(err, rerr))
			}
		}
		return info, s.afterFailure(ctx, err, t)
	}
	t.Copy = time.Since(phase)
	s.logf("restore %q: copied %.0f MiB in %s", name, mib(info.Size), t.Copy.Round(time.Millisecond))

	uctx := context.WithoutCancel(ctx)
	if err := s.startServers(uctx, t); err != nil {
		err = fmt.Errorf("restore %q: the stack did not start on the restored data: %w", name, err)
		if rerr := sw.revert(); rerr != nil {
			return info, s.recordStopped(errors.Join(err, rerr))
		}
		s.logf("restore %q: failed; starting the stack on its previous data", name)
		var ignored SnapshotTimings
		if serr := s.startServers(uctx, &ignored); serr != nil {
			return info, errors.Join(err, fmt.Errorf("the previous data did not start either (the stack is stopped): %w", serr))
		}
		return info, fmt.Errorf("%w; the stack runs on its previous data", err)
	}
	phase = time.Now()
	if err := os.RemoveAll(sw.work); err != nil {
		s.logf("restore %q: removing the replaced data: %v", name, err)
	}
	t.Cleanup = time.Since(phase)
	t.Total = time.Since(start)
	s.logf("restore %q: done in %s", name, t.Total.Round(time.Millisecond))
	return info, nil
}

// checkRestore checks that snapshot info can replace the stack's
// database (same Keycloak, same PostgreSQL major, room on the disk) and
// reads the stack files of both.
func (s *Stack) checkRestore(info SnapshotInfo, name string) (newFiles, oldFiles stackFiles, err error) {
	if info.KeycloakVersion != s.st.Options.Version {
		return newFiles, oldFiles, fmt.Errorf("snapshot %q holds the database of Keycloak %s; stack %q runs %s (start a stack with --kc-version %s)", name, info.KeycloakVersion, s.st.Name, s.st.Options.Version, info.KeycloakVersion)
	}
	if pgMajor(info.PGVersion) != pgMajor(s.st.PG.Version) {
		return newFiles, oldFiles, fmt.Errorf("snapshot %q holds a PostgreSQL %s data folder; stack %q runs PostgreSQL %s (another major version cannot read it)", name, info.PGVersion, s.st.Name, s.st.PG.Version)
	}
	if newFiles, err = readStackFiles(info.Dir); err != nil {
		return newFiles, oldFiles, fmt.Errorf("snapshot %q is incomplete: %w", name, err)
	}
	if oldFiles, err = readStackFiles(s.st.Dir); err != nil {
		return newFiles, oldFiles, fmt.Errorf("stack %q: %w", s.st.Name, err)
	}
	if err := checkSpace(filepath.Dir(s.st.PG.Data), info.Size); err != nil {
		return newFiles, oldFiles, fmt.Errorf("restore %q: %w", name, err)
	}
	return newFiles, oldFiles, nil
}

// dataSwap is a restore's work folder: the new copy, then the replaced
// data until the stack runs on the new one.
type dataSwap struct {
	data, work, old string
	oldFiles        stackFiles
	stackDir        string
}

// swapData copies the snapshot's data beside the stack's (servers
// stopped) and swaps it in with its stack files. On an error it returns
// the swap to revert when the old data was moved already (nil before).
func (s *Stack) swapData(ctx context.Context, info SnapshotInfo, name string, newFiles, oldFiles stackFiles) (*dataSwap, error) {
	pgDir := filepath.Dir(s.st.PG.Data)
	work, err := os.MkdirTemp(pgDir, ".restore-")
	if err != nil {
		return nil, fmt.Errorf("restore %q: %w", name, err)
	}
	sw := &dataSwap{data: s.st.PG.Data, work: work, old: filepath.Join(work, "old"), oldFiles: oldFiles, stackDir: s.st.Dir}
	staged := filepath.Join(work, "data")
	_, err = copyDir(ctx, filepath.Join(info.Dir, "data"), staged, copyOptions{Owner: s.st.PG.User})
	if err == nil {
		err = s.fixPort(staged, name)
	}
	if err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("restore %q: copy data: %w", name, diskFull(err, pgDir))
	}
	// Swap. From here on the old data is in work/old until the stack runs.
	if err := os.Rename(sw.data, sw.old); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("restore %q: %w", name, err)
	}
	if err := os.Rename(staged, sw.data); err != nil {
		return sw, fmt.Errorf("restore %q: %w", name, err)
	}
	if err := newFiles.write(s.st.Dir); err != nil {
		return sw, fmt.Errorf("restore %q: %w", name, err)
	}
	return sw, nil
}

// revert puts the replaced data and stack files back.
func (sw *dataSwap) revert() error {
	var errs []error
	if _, err := os.Lstat(sw.data); err == nil {
		if err := os.Rename(sw.data, filepath.Join(sw.work, "failed")); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if err := os.Rename(sw.old, sw.data); err != nil {
			errs = append(errs, err)
		}
	}
	if err := sw.oldFiles.write(sw.stackDir); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("putting back the previous data failed (it is in %s): %w", sw.old, errors.Join(errs...))
	}
	os.RemoveAll(sw.work)
	return nil
}

// fixPort points the restored cluster at this stack's port: a snapshot may
// come from another stack. The last setting in postgresql.conf wins.
func (s *Stack) fixPort(data, name string) error {
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "\n# kcbench: restored from snapshot %q\nport = %d\n", name, s.st.PG.Port); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// stopServers stops Keycloak, then PostgreSQL (fast shutdown), and records
// both as stopped.
func (s *Stack) stopServers(t *SnapshotTimings) error {
	phase := time.Now()
	if err := s.stopKeycloak(); err != nil {
		return err
	}
	t.StopKeycloak = time.Since(phase)
	phase = time.Now()
	if err := s.st.PG.stop(); err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	s.st.PG.Proc = Proc{}
	if err := s.save(); err != nil {
		return err
	}
	t.StopPG = time.Since(phase)
	s.logf("Keycloak stopped in %s, PostgreSQL in %s", t.StopKeycloak.Round(time.Millisecond), t.StopPG.Round(time.Millisecond))
	return nil
}

// startServers starts PostgreSQL and Keycloak and waits until Keycloak is
// ready. On failure it stops both and records the stack as stopped.
func (s *Stack) startServers(ctx context.Context, t *SnapshotTimings) error {
	phase := time.Now()
	if !s.st.PG.Proc.Alive() {
		if err := startPG(ctx, s.st.PG, s.st.Detached); err != nil {
			return s.recordStopped(fmt.Errorf("postgres: %w", err))
		}
		if err := s.save(); err != nil {
			return s.recordStopped(err)
		}
	}
	t.StartPG = time.Since(phase)
	s.logf("PostgreSQL up in %s", t.StartPG.Round(time.Millisecond))
	phase = time.Now()
	br, err := s.startNodes(ctx, false, nil)
	if err != nil {
		return s.recordStopped(err)
	}
	t.KeycloakReady = time.Since(phase)
	s.logf("Keycloak ready in %s, RSS %.0f MiB", br.Duration.Round(10*time.Millisecond), mib(br.RSS))
	return nil
}

// afterFailure brings the stack up again after a failed save or restore
// whose data folder is intact, and returns err (joined with the start's
// error, if any).
func (s *Stack) afterFailure(ctx context.Context, err error, t *SnapshotTimings) error {
	s.logf("%v; starting the stack again", err)
	if serr := s.startServers(context.WithoutCancel(ctx), t); serr != nil {
		return errors.Join(err, fmt.Errorf("the stack did not start again (it is stopped): %w", serr))
	}
	return err
}

// recordStopped stops whatever runs of the stack, records it as stopped
// and returns err.
func (s *Stack) recordStopped(err error) error {
	errs := []error{err}
	if serr := s.stopKeycloak(); serr != nil {
		errs = append(errs, serr)
	}
	for i := range s.st.Nodes {
		s.st.Nodes[i].Proc = nil
	}
	if s.st.PG != nil {
		if serr := s.st.PG.stop(); serr != nil {
			errs = append(errs, fmt.Errorf("stop postgres: %w", serr))
		}
		s.st.PG.Proc = Proc{}
	}
	if serr := s.save(); serr != nil {
		errs = append(errs, serr)
	}
	return errors.Join(errs...)
}

// stackFiles are the stack files that go with a database.
type stackFiles struct {
	secrets     map[string]string
	dataset     []byte // nil: none
	datasetMode os.FileMode
}

func readStackFiles(dir string) (stackFiles, error) {
	f := stackFiles{secrets: map[string]string{}}
	for _, sec := range snapshotSecrets {
		v, err := fileutil.ReadSecret(filepath.Join(dir, sec))
		if err != nil {
			return f, err
		}
		f.secrets[sec] = v
	}
	var err error
	f.dataset, f.datasetMode, err = readOptional(filepath.Join(dir, datasetFile))
	return f, err
}

// write puts the files into a stack folder, each atomically, and removes a
// dataset.json that f does not have.
func (f stackFiles) write(dir string) error {
	for _, sec := range snapshotSecrets {
		if err := fileutil.WriteSecret(filepath.Join(dir, sec), f.secrets[sec]); err != nil {
			return err
		}
	}
	p := filepath.Join(dir, datasetFile)
	if f.dataset == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	return fileutil.WriteAtomic(p, f.dataset, f.datasetMode)
}

// readOptional reads a file that may be absent (nil, no error).
func readOptional(path string) ([]byte, os.FileMode, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, st.Mode().Perm(), nil
}

// pgMajor is the major of a PostgreSQL version: "17" of 17.5, "9.6" of
// 9.6.24.
func pgMajor(v string) string {
	parts := strings.Split(v, ".")
	if len(parts) >= 2 && (parts[0] == "9" || parts[0] == "8") {
		return parts[0] + "." + parts[1]
	}
	return parts[0]
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// treeSize sums the sizes of the regular files under dir.
func treeSize(dir string) (size int64, files int, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			size += info.Size()
			files++
		}
		return nil
	})
	return size, files, err
}

// checkSpace fails early, before anything is stopped, when the file system
// of dir has less than need bytes free (plus a margin).
func checkSpace(dir string, need int64) error {
	free, err := fileutil.FreeBytes(dir)
	if err != nil {
		return nil // no answer: the copy will tell
	}
	if want := need + need/20 + 16<<20; free < want {
		return fmt.Errorf("not enough disk space in %s: the copy needs %.0f MiB, %.0f MiB are free", dir, mib(want), mib(free))
	}
	return nil
}

// diskFull explains ENOSPC.
func diskFull(err error, dir string) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w (the disk holding %s is full: free space or delete snapshots; nothing was kept of this copy)", err, dir)
	}
	return err
}

// copyWorkers copy files in parallel. PostgreSQL's data is ~1,000-2,000
// files, most small; the bytes move in the kernel (copy_file_range), so
// the workers pay off where opening and creating files has latency
// (network disks) and with more cores; on a local disk their number
// hardly matters (docs/results/seeding).
const copyWorkers = 4

type copyOptions struct {
	// Owner, when set and kcbench runs as root, owns every copy. Otherwise
	// copies keep their source's owner when running as root (and are
	// kcbench's own when not).
	Owner *pgUser
	// Skip leaves out the entries it returns true for (paths relative to
	// the source, slash-separated).
	Skip func(rel string) bool
}

type copyStats struct {
	Files int
	Bytes int64
}

// copyDir copies the tree src to dst, which must not exist. It keeps modes,
// copies symlinks as symlinks (never following them), keeps or sets owners
// (see copyOptions), and copies regular files with copyWorkers goroutines
// (io.Copy between files is copy_file_range). Any other file type is an
// error. On error, including a cancelled ctx, dst is removed: there is
// never half a copy.
func copyDir(ctx context.Context, src, dst string, o copyOptions) (stats copyStats, err error) {
	if _, err := os.Lstat(dst); err == nil {
		return stats, fmt.Errorf("copy to %s: it exists", dst)
	}
	if st, err := os.Stat(src); err != nil {
		return stats, err
	} else if !st.IsDir() {
		return stats, fmt.Errorf("copy %s: not a folder", src)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(copyWorkers + 1) // the walk and the workers
	c := &copier{o: o, src: src, dst: dst, root: os.Geteuid() == 0, g: g, ctx: gctx}
	defer func() {
		if err != nil && c.created {
			os.RemoveAll(dst)
		}
	}()
	g.Go(func() error { return filepath.WalkDir(src, c.visit) })
	if err := g.Wait(); err != nil {
		return stats, err
	}
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	// Deepest first, so a read-only folder is closed after its content.
	for i := len(c.dirs) - 1; i >= 0; i-- {
		dm := c.dirs[i]
		if dm.chown {
			if err := os.Chown(dm.path, dm.uid, dm.gid); err != nil {
				return stats, err
			}
		}
		if err := os.Chmod(dm.path, fileMode(dm.mode)); err != nil {
			return stats, err
		}
	}
	return copyStats{Files: int(c.files.Load()), Bytes: c.bytes.Load()}, nil
}

// copier is one copyDir: the walk makes folders and symlinks at once and
// hands regular files to the group's workers; folders get their modes
// and owners once everything is in.
type copier struct {
	o        copyOptions
	src, dst string
	root     bool // kcbench runs as root: owners are kept or set
	g        *errgroup.Group
	ctx      context.Context // cancelled on the first error
	created  bool            // dst exists
	dirs     []dirMeta
	files    atomic.Int64
	bytes    atomic.Int64
}

type dirMeta struct {
	path     string
	mode     fs.FileMode
	uid, gid int
	chown    bool
}

// owner is who owns the copy of a file with info, when chown.
func (c *copier) owner(info fs.FileInfo) (uid, gid int, chown bool) {
	if !c.root {
		return 0, 0, false
	}
	if c.o.Owner != nil {
		return c.o.Owner.UID, c.o.Owner.GID, true
	}
	st := info.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid), true
}

// visit copies one entry of the walk (a file through a worker).
func (c *copier) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		return err
	}
	if err := c.ctx.Err(); err != nil {
		return err
	}
	rel, err := filepath.Rel(c.src, p)
	if err != nil {
		return err
	}
	if rel != "." && c.o.Skip != nil && c.o.Skip(filepath.ToSlash(rel)) {
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	}
	t := filepath.Join(c.dst, rel)
	info, err := d.Info()
	if err != nil {
		return err
	}
	uid, gid, chown := c.owner(info)
	switch mode := info.Mode(); {
	case mode.IsDir():
		// Writable for us until every file is in; its mode comes last.
		if err := os.Mkdir(t, 0o700); err != nil {
			return err
		}
		c.created = true
		c.dirs = append(c.dirs, dirMeta{t, mode, uid, gid, chown})
	case mode&fs.ModeSymlink != 0:
		l, err := os.Readlink(p)
		if err != nil {
			return err
		}
		if err := os.Symlink(l, t); err != nil {
			return err
		}
		if chown {
			return os.Lchown(t, uid, gid)
		}
	case mode.IsRegular():
		c.g.Go(func() error {
			if c.ctx.Err() != nil {
				return c.ctx.Err()
			}
			n, err := copyFileMeta(p, t, mode, uid, gid, chown)
			if err != nil {
				return err
			}
			c.files.Add(1)
			c.bytes.Add(n)
			return nil
		})
	default:
		return fmt.Errorf("%s: cannot copy a %s", p, fileKind(mode))
	}
	return nil
}

// fileKind names the file types copyDir refuses.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "file of type " + m.Type().String()
}

// fileMode keeps the permission and setuid/setgid/sticky bits, which
// os.Chmod takes in Go's notation.
func fileMode(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// copyFileMeta copies one regular file, then sets its owner (if chown) and
// mode. The mode is set explicitly because the umask applies at creation.
func copyFileMeta(src, dst string, mode fs.FileMode, uid, gid int, chown bool) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if err == nil && chown {
		err = out.Chown(uid, gid)
	}
	if err == nil {
		err = out.Chmod(fileMode(mode))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("copy %s: %w", src, err)
	}
	return n, nil
}
