package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// hostileCase is one command run on hostile input: the exit code and the
// message it must give, within a few seconds.
type hostileCase struct {
	name string
	args []string
	code int
	want string
}

// runHostile runs each case with a deadline: a hang is a failure, not a
// test that never ends.
func runHostile(t *testing.T, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			done := make(chan struct{})
			var code int
			var stdout, stderr string
			go func() { code, stdout, stderr = runCLICtx(t, ctx, c.args...); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("kcbench %s still running after 30 s", strings.Join(c.args, " "))
			}
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout, stderr)
			}
			if msg := errorLine(stderr); !strings.Contains(msg, c.want) {
				t.Errorf("error %q lacks %q\nstderr: %s", msg, c.want, stderr)
			}
		})
	}
}

// hostileFiles makes a FIFO, a symbolic link loop, a folder and a sparse
// file of size bytes in dir.
func hostileFiles(t *testing.T, dir string, size int64) (fifo, loop, folder, big string) {
	t.Helper()
	fifo, loop, folder, big = filepath.Join(dir, "fifo"), filepath.Join(dir, "loop"), filepath.Join(dir, "folder"), filepath.Join(dir, "big")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return fifo, loop, folder, big
}

// Every file a user gives is read through one bounded, regular-file-only
// reader: a FIFO, a device, a folder, a symlink loop or an oversized file
// is an error at once, naming the file and what it is.
func TestHostileInputFiles(t *testing.T) {
	dir := t.TempDir()
	fifo, loop, folder, big := hostileFiles(t, dir, fileutil.MaxConfigFile+1)
	status := func(pwFile string) []string {
		return []string{"status", "--target", "http://127.0.0.1:1", "--admin-password-file", pwFile}
	}
	// A results folder whose summary.json is a FIFO.
	res := filepath.Join(dir, "res")
	os.Mkdir(res, 0o755)
	if err := syscall.Mkfifo(filepath.Join(res, "summary.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	runHostile(t, []hostileCase{
		{"password file FIFO", status(fifo), exitUsage, "is a FIFO (named pipe), not a regular file"},
		{"password file /dev/zero", status("/dev/zero"), exitUsage, "/dev/zero is a character device"},
		{"password file too large", status(big), exitUsage, "larger than the 64 KiB limit"},
		{"password file symlink loop", status(loop), exitUsage, "a loop of symbolic links"},
		{"password file folder", status(folder), exitUsage, "is a directory"},
		{"experiment FIFO", []string{"experiment", "plan", fifo}, exitUsage, "is a FIFO"},
		{"experiment /dev/zero", []string{"experiment", "plan", "/dev/zero"}, exitUsage, "/dev/zero is a character device"},
		{"experiment too large", []string{"experiment", "plan", big}, exitUsage, "larger than the 16 MiB limit"},
		{"experiment symlink loop", []string{"experiment", "plan", loop}, exitUsage, "a loop of symbolic links"},
		{"run file FIFO", []string{"load", "--file", fifo}, exitUsage, "is a FIFO"},
		{"run file /dev/zero", []string{"load", "--file", "/dev/zero"}, exitUsage, "character device"},
		{"run file too large", []string{"load", "--file", big}, exitUsage, "larger than the 16 MiB limit"},
		{"report summary FIFO", []string{"report", res}, exitError, "is a FIFO"},
		{"gate summary FIFO", []string{"gate", "--baseline", res, "--current", res}, exitError, "is a FIFO"},
		{"compare summary FIFO", []string{"compare", res, res}, exitError, "is a FIFO"},
	})
}
