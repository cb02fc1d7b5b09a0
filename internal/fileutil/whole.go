package fileutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// probeBytes is what CheckOutDir writes to see that a folder takes data:
// a full disk refuses it at once rather than after a run.
const probeBytes = 64 << 10

// CheckOutDir checks, before a run, that dir can be created and written:
// it creates the folders missing, writes and syncs a probeBytes temporary
// file in dir, and removes what it made. The run's results are lost when
// this is found only at their end.
func CheckOutDir(dir string) error {
	if err := CheckWritableDir(dir); err != nil {
		return err
	}
	made, err := mkdirAllTracked(dir)
	defer removeEmpty(made)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".kcbench-probe*")
	if err != nil {
		return fmt.Errorf("%s: cannot create a file: %w", dir, err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(make([]byte, probeBytes))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: cannot write %s into it: %w", dir, FormatBytes(probeBytes), err)
	}
	return nil
}

// mkdirAllTracked creates dir and its missing parents and returns the
// folders it created, deepest first.
func mkdirAllTracked(dir string) ([]string, error) {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		missing = append(missing, p)
	}
	var made []string
	for _, p := range slices.Backward(missing) {
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			slices.Reverse(made)
			return made, err
		}
		made = append(made, p)
	}
	slices.Reverse(made)
	return made, nil
}

// removeEmpty removes the folders given, deepest first, while empty.
func removeEmpty(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}

// WriteDir writes a results folder whole: write fills a new temporary
// folder beside dir; only when it succeeds are the files moved into dir,
// the one named last moved last (summary.json: its presence means a
// complete folder). A missing dir is renamed into place in one step. On
// any error — a full disk — dir is left as it was and the temporary folder
// is removed.
func WriteDir(dir, last string, write func(tmp string) error) (err error) {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	if err := write(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err == nil {
		return syncDir(parent)
	} else if !errors.Is(err, syscall.EEXIST) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EBUSY) && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("write %s: %w", dir, err)
	}
	return moveInto(tmp, dir, last)
}

// moveInto renames every file of src into the existing folder dst, last
// at the end.
func moveInto(src, dst, last string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	slices.SortStableFunc(ents, func(a, b fs.DirEntry) int {
		return boolInt(a.Name() == last) - boolInt(b.Name() == last)
	})
	for _, e := range ents {
		if err := os.Rename(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return fmt.Errorf("write %s: %w", dst, err)
		}
	}
	return syncDir(dst)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Files is a set of files written together: Add writes each into a
// synced temporary file beside its path, Commit renames them all into
// place in the order added, Abort removes what Add wrote. A write that
// fails (a full disk) leaves none of the files half there.
type Files struct{ staged [][2]string } // temporary name, path

// Add writes one file of the set into its temporary file.
func (fs *Files) Add(path string, perm os.FileMode, write func(io.Writer) error) error {
	tmp, err := stage(path, perm, write)
	if err != nil {
		return err
	}
	fs.staged = append(fs.staged, [2]string{tmp, path})
	return nil
}

// Commit renames the files into place, in the order added.
func (fs *Files) Commit() error {
	for i, s := range fs.staged {
		if err := os.Rename(s[0], s[1]); err != nil {
			fs.staged = fs.staged[i:]
			fs.Abort()
			return fmt.Errorf("write %s: %w", s[1], err)
		}
	}
	fs.staged = nil
	return nil
}

// Abort removes the temporary files of the set.
func (fs *Files) Abort() {
	for _, s := range fs.staged {
		os.Remove(s[0])
	}
	fs.staged = nil
}

// FreeBytes is what the file system holding dir has free for this user.
func FreeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}
