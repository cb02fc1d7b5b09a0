// Package golden compares test output with golden files: the one helper
// the packages' tests share.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the file at path, or writes it there when update
// is set (the test's -update flag); how says how to update, e.g. "go test
// -update".
func Check(t testing.TB, path string, got []byte, update bool, how string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s to create it)", err, how)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run %s and review the diff):\n--- got ---\n%s\n--- want ---\n%s", path, how, got, want)
	}
}
