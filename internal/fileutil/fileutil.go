// Package fileutil holds the few file helpers every stage shares: atomic
// writes (temp file + rename, so readers never see half a file), secret
// files (mode 0600), and the one bounded reader of every file the user
// gives (regular files only, a size limit per kind of file).
package fileutil

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// WriteAtomic writes data to path through a temporary file in the same
// directory (see WriteFile).
func WriteAtomic(path string, data []byte, perm os.FileMode) error {
	return WriteFile(path, perm, func(w io.Writer) error { _, err := w.Write(data); return err })
}

// WriteFile writes a file atomically: write renders into a temporary file
// in the same directory, which is synced, given mode perm and renamed to
// path only if write and every file operation succeed. Readers never see a
// partial file; on any error path is left untouched and the temporary file
// is removed.
func WriteFile(path string, perm os.FileMode, write func(io.Writer) error) error {
	tmp, err := stage(path, perm, write)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// stage writes a synced temporary file of mode perm beside path, for a
// rename to path, and returns its name; on error it leaves nothing.
func stage(path string, perm os.FileMode, write func(io.Writer) error) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return "", err
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return f.Name(), nil
}

// WriteJSON marshals v with indentation and writes it atomically.
func WriteJSON(path string, v any, perm os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return WriteAtomic(path, append(b, '\n'), perm)
}

// WriteSecret writes a secret value atomically with mode 0600.
func WriteSecret(path, secret string) error {
	return WriteAtomic(path, []byte(secret+"\n"), 0o600)
}

// ReadSecret reads a secret file written by WriteSecret (or by hand) and
// trims one trailing newline. It refuses empty files and, through
// ReadFile, anything that is not a regular file of at most MaxSecretFile.
func ReadSecret(path string) (string, error) {
	b, err := ReadFile(path, MaxSecretFile)
	if err != nil {
		return "", fmt.Errorf("read secret: %w", err)
	}
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	if s == "" {
		return "", fmt.Errorf("read secret: %s is empty", path)
	}
	return s, nil
}

// CheckWritableDir reports why dir cannot be made (or is not) a folder
// kcbench can write into, without creating anything: dir must be a folder
// that is writable, or not exist below a writable folder.
func CheckWritableDir(dir string) error {
	p := filepath.Clean(dir)
	for {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s is a file, not a folder", p)
		case err == nil:
			if err := unix.Access(p, unix.W_OK|unix.X_OK); err != nil {
				return fmt.Errorf("%s is not writable", p)
			}
			return nil
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return err // below a file (ENOTDIR): the loop names that file
		}
		parent := filepath.Dir(p)
		if parent == p {
			return fmt.Errorf("%s: no existing parent folder", dir)
		}
		p = parent
	}
}

// Tail copies the last n lines of f (all if n == 0) and leaves f at its end.
func Tail(f *os.File, w io.Writer, n int) error {
	b, err := io.ReadAll(f)
	if err != nil {
		return err
	}
	if n > 0 {
		lines := strings.SplitAfter(string(b), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		b = []byte(strings.Join(lines, ""))
	}
	_, err = w.Write(b)
	return err
}

// Follow copies what is appended to r to w until ctx is done, checking
// every 200 ms at its end.
func Follow(ctx context.Context, r io.Reader, w io.Writer) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			io.WriteString(w, line)
		}
		if err == io.EOF {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return err
		}
	}
}
