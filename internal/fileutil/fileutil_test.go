package fileutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "summary.json")
	if err := WriteFile(path, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "first"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("render failed")
	err := WriteFile(path, 0o644, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile = %v, want %v", err, boom)
	}
	if b, _ := os.ReadFile(path); string(b) != "first" {
		t.Errorf("file holds %q after a failed write, want the previous %q", b, "first")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %s, want only summary.json", strings.Join(names, ", "))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), 0o644, func(io.Writer) error { return nil }); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}
