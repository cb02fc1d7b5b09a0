package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtures are internal/report's synthetic result folders.
const fixtures = "../../internal/report/testdata/results"

// copyTree copies a results folder, so that report can write into it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReportCommand(t *testing.T) {
	if raceDetector {
		// 30 s under the detector, 1.4 s without; report builds run on
		// one goroutine. make test's integration pass runs it.
		t.Skip("builds a whole report on one goroutine: run without -race (make test's integration pass)")
	}
	t.Parallel()
	dir := copyTree(t, filepath.Join(fixtures, "sweep"))
	code, out, errs := runCLI(t, "report", dir)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	html := filepath.Join(dir, "report.html")
	if strings.TrimSpace(out) != html {
		t.Errorf("stdout %q, want the report path %q", out, html)
	}
	mustContain(t, errs, "note: Point realms-n250 is aborted", "32 charts")
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, "charts", "*.png"))
	if len(pngs) != 32 {
		t.Errorf("%d charts, want 32", len(pngs))
	}
	for _, p := range pngs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.DecodeConfig(f); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		f.Close()
		name := strings.TrimSuffix(filepath.Base(p), ".png")
		if !strings.Contains(string(page), `id="chart-`+name+`"`) {
			t.Errorf("report.html lacks chart %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Error(err)
	}
}

func TestCompareCommand(t *testing.T) {
	t.Parallel()
	a, b := filepath.Join(fixtures, "hashing"), filepath.Join(fixtures, "hashing-rerun")
	code, out, errs := runCLI(t, "compare", a, b)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	mustContain(t, out, "A: "+a, "CPU-ms/op", "worse", "better", "noise")

	// flags after the folders, JSON output
	code, out, errs = runCLI(t, "compare", a, b, "--json")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	var v struct {
		Rows []struct{ Verdict string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Rows) == 0 {
		t.Fatalf("not JSON (%v):\n%s", err, out)
	}

	// single runs: the spread is unknown
	code, out, _ = runCLI(t, "compare", filepath.Join(a, "default-r1"), filepath.Join(a, "pbkdf2-1-r1"))
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	mustContain(t, out, "spread unknown")
}

func TestReportCompareErrors(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	empty := t.TempDir()
	ok := filepath.Join(fixtures, "hashing")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"report without folder", []string{"report"}, exitUsage, "want one results folder"},
		{"report two folders", []string{"report", ok, ok}, exitUsage, "unexpected arguments"},
		{"report missing folder", []string{"report", missing}, exitError, "does not exist"},
		{"report empty folder", []string{"report", empty}, exitError, "no finished points"},
		{"report help", []string{"report", "-h"}, exitOK, "report DIR"},
		{"compare one folder", []string{"compare", ok}, exitUsage, "want two results folders"},
		{"compare bad flag", []string{"compare", ok, ok, "--frob"}, exitUsage, "frob"},
		{"compare missing folder", []string{"compare", ok, missing}, exitError, "does not exist"},
		{"compare nothing in common", []string{"compare", ok, filepath.Join(fixtures, "sweep")}, exitError, "no configuration in common"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCLI(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, out, errs)
			}
			if !strings.Contains(out+errs, c.want) {
				t.Errorf("output lacks %q\nstdout: %s\nstderr: %s", c.want, out, errs)
			}
		})
	}
}
