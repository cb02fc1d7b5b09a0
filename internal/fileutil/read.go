package fileutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Size limits of the files kcbench reads from the user, one per kind, so
// that a wrong path (/dev/zero, a log, a disk image) is an error naming the
// limit instead of a process out of memory.
const (
	// MaxSecretFile bounds a password or client-secret file.
	MaxSecretFile = 64 << 10
	// MaxConfigFile bounds an experiment, run, SLO or dataset manifest file.
	MaxConfigFile = 16 << 20
	// MaxResultFile bounds one file of a results folder: summary JSON,
	// timeline CSV, HDR log, observations.
	MaxResultFile = 1 << 30
	// MaxRealmFile bounds a realm file (a realm with a million users is
	// about 1 GiB of JSON).
	MaxRealmFile = 2 << 30
)

// ErrTooLarge is returned, wrapped with the file and the limit, when a file
// is larger than the limit its kind allows.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is returned, wrapped with the file and what it is, for a
// FIFO, device, socket or directory given where a file is wanted.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads the regular file at path (symbolic links followed), at
// most limit bytes. It never blocks on a FIFO and never reads a device.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// File is a regular file open for reading whose Read fails with
// ErrTooLarge past its limit.
type File struct {
	f     *os.File
	path  string
	limit int64
	n     int64
}

// Open opens the regular file at path for reading, bounded to limit bytes
// (see ReadFile). The open does not block: a FIFO is refused at once.
func Open(path string, limit int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is %s: %w", path, kindOf(fi.Mode()), ErrNotRegular)
	}
	if fi.Size() > limit {
		f.Close()
		return nil, tooLarge(path, limit)
	}
	return &File{f: f, path: path, limit: limit}, nil
}

// Read reads from the file; past the limit it returns ErrTooLarge (a file
// that grew after Open).
func (r *File) Read(p []byte) (int, error) {
	if r.n >= r.limit+1 {
		return 0, tooLarge(r.path, r.limit)
	}
	if rest := r.limit + 1 - r.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := r.f.Read(p)
	r.n += int64(n)
	if r.n > r.limit {
		return n - int(r.n-r.limit), tooLarge(r.path, r.limit)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("read %s: %w", r.path, err)
	}
	return n, err
}

// Close closes the file.
func (r *File) Close() error { return r.f.Close() }

// Name is the path the file was opened with.
func (r *File) Name() string { return r.path }

func openError(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%s: a loop of symbolic links", path)
	}
	return err
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s is larger than the %s limit for this kind of file: %w", path, FormatBytes(limit), ErrTooLarge)
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory, not a file"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe), not a regular file"
	case m&fs.ModeSocket != 0:
		return "a socket, not a regular file"
	case m&fs.ModeCharDevice != 0:
		return "a character device, not a regular file"
	case m&fs.ModeDevice != 0:
		return "a block device, not a regular file"
	default:
		return "not a regular file (" + m.Type().String() + ")"
	}
}

// FormatBytes prints a power-of-two size the way a limit is read: 64 KiB,
// 16 MiB, 1 GiB.
func FormatBytes(n int64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && n%1024 == 0 && i < len(units)-1 {
		n /= 1024
		i++
	}
	return fmt.Sprintf("%d %s", n, units[i])
}
