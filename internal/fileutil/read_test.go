package fileutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	small := write("small", "hello")
	link := filepath.Join(dir, "link")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string // content, or the error's text
		wantErr    error
	}{
		{"regular", small, 5, "hello", nil},
		{"symlink followed", link, 5, "hello", nil},
		{"FIFO refused at once", fifo, 5, fifo + " is a FIFO (named pipe), not a regular file", ErrNotRegular},
		{"device refused", "/dev/zero", 1 << 20, "/dev/zero is a character device, not a regular file", ErrNotRegular},
		{"directory refused", dir, 5, dir + " is a directory, not a file", ErrNotRegular},
		{"over the bound", write("big", "123456"), 5, "is larger than the 5 bytes limit", ErrTooLarge},
		{"symlink loop", loop, 5, loop + ": a loop of symbolic links", nil},
		{"missing", filepath.Join(dir, "none"), 5, "no such file or directory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan struct{})
			var b []byte
			var err error
			go func() { b, err = ReadFile(tt.path, tt.limit); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("ReadFile(%s) still blocked after 5 s", tt.path)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("ReadFile = %v, want %v", err, tt.wantErr)
			}
			switch {
			case err == nil && string(b) != tt.want:
				t.Errorf("ReadFile = %q, want %q", b, tt.want)
			case err != nil && !strings.Contains(err.Error(), tt.want):
				t.Errorf("ReadFile error %q, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestReadSecretRefusesDevicesAndFIFOs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pw")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxSecretFile+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, big} {
		done := make(chan error, 1)
		go func() { _, err := ReadSecret(p); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("ReadSecret(%s) succeeded", p)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadSecret(%s) still blocked after 5 s", p)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{5: "5 bytes", MaxSecretFile: "64 KiB", MaxConfigFile: "16 MiB", MaxRealmFile: "2 GiB", 1500: "1500 bytes"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
