package fileutil

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func writeString(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func TestWriteDir(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk full")
	write := func(fail bool) func(string) error {
		return func(tmp string) error {
			if err := writeString(filepath.Join(tmp, "a.hlog"), "new"); err != nil {
				return err
			}
			if fail {
				return boom
			}
			return writeString(filepath.Join(tmp, "summary.json"), "new")
		}
	}
	tests := []struct {
		name     string
		existing bool // dir holds an older result
		fail     bool
		want     []string // dir's files afterwards; nil: no dir
		content  string   // summary.json's content afterwards
	}{
		{"new folder", false, false, []string{"a.hlog", "summary.json"}, "new"},
		{"new folder, write fails", false, true, nil, ""},
		{"existing folder", true, false, []string{"a.hlog", "old.txt", "summary.json"}, "new"},
		{"existing folder, write fails", true, true, []string{"old.txt", "summary.json"}, "old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			if tt.existing {
				os.Mkdir(dir, 0o755)
				writeString(filepath.Join(dir, "summary.json"), "old")
				writeString(filepath.Join(dir, "old.txt"), "old")
			}
			err := WriteDir(dir, "summary.json", write(tt.fail))
			if tt.fail != errors.Is(err, boom) || (!tt.fail && err != nil) {
				t.Fatalf("WriteDir = %v", err)
			}
			if got := names(t, parent); !slices.Equal(got, []string{"out"}) && tt.want != nil || tt.want == nil && len(got) != 0 {
				t.Errorf("parent holds %v (a temporary folder left?)", got)
			}
			if tt.want == nil {
				return
			}
			if got := names(t, dir); !slices.Equal(got, tt.want) {
				t.Errorf("dir holds %v, want %v", got, tt.want)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "summary.json")); string(b) != tt.content {
				t.Errorf("summary.json = %q, want %q", b, tt.content)
			}
		})
	}
}

func TestFilesAllOrNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	boom := errors.New("disk full")
	var set Files
	ok := func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }
	if err := set.Add(filepath.Join(dir, "chart.png"), 0o644, ok); err != nil {
		t.Fatal(err)
	}
	if err := set.Add(filepath.Join(dir, "report.html"), 0o644, func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Add = %v", err)
	}
	set.Abort()
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("after Abort the folder holds %v", got)
	}
	for _, n := range []string{"chart.png", "report.md", "report.html"} {
		if err := set.Add(filepath.Join(dir, n), 0o644, ok); err != nil {
			t.Fatal(err)
		}
	}
	if got := names(t, dir); len(got) != 3 || !strings.HasPrefix(got[0], ".") {
		t.Errorf("before Commit: %v, want three temporary files", got)
	}
	if err := set.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"chart.png", "report.html", "report.md"}) {
		t.Errorf("after Commit: %v", got)
	}
}

func TestCheckOutDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	file := filepath.Join(root, "file")
	writeString(file, "x")
	ro := filepath.Join(root, "ro")
	os.Mkdir(ro, 0o555)
	tests := []struct {
		name, dir, want string
	}{
		{"new nested folder", filepath.Join(root, "a", "b", "c"), ""},
		{"existing folder", root, ""},
		{"a file", file, "is a file, not a folder"},
		{"below a file", filepath.Join(file, "sub"), "is a file, not a folder"},
	}
	if os.Geteuid() != 0 {
		tests = append(tests, struct{ name, dir, want string }{"read-only", filepath.Join(ro, "sub"), "not writable"})
	}
	for _, tt := range tests {
		err := CheckOutDir(tt.dir)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	// Nothing is left behind: the probe and the folders it made are gone.
	if got := names(t, root); !slices.Equal(got, []string{"file", "ro"}) {
		t.Errorf("root holds %v after the checks", got)
	}
}

// --out . (the current folder, which cannot be renamed onto): the files
// are moved into it, the last one last, and no temporary folder is left.
func TestWriteDirCurrentFolder(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	err := WriteDir(".", "summary.json", func(tmp string) error {
		return errors.Join(os.WriteFile(filepath.Join(tmp, "a.csv"), []byte("a"), 0o644),
			os.WriteFile(filepath.Join(tmp, "summary.json"), []byte("{}"), 0o644))
	})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "a.csv" || names[1] != "summary.json" {
		t.Errorf("folder holds %v, want a.csv and summary.json only", names)
	}
}
