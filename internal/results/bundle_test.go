package results

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBundleRoundTrip(t *testing.T) {
	dir := t.TempDir()
	// A capacity agent's folder: files, and step folders one level down
	// (deeper ones are not carried).
	want := map[string][]byte{"summary.json": []byte(`{"scenario":"x"}`), "op.hlog": bytes.Repeat([]byte("HISTFAAAA\n"), 500),
		"step-001/summary.json": []byte(`{"step":1}`)}
	for _, d := range []string{"step-001/deeper", "empty"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "step-001/deeper/x"), []byte("x"), 0o644) // not carried
	for n, b := range want {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	log.WriteString("12:00:00  load: starting\n")
	if err := WriteBundle(&log, dir, "segment=0/2"); err != nil {
		t.Fatal(err)
	}
	log.WriteString("some other line\n")
	var b2 bytes.Buffer
	if err := WriteBundle(&b2, dir, "segment=1/2"); err != nil {
		t.Fatal(err)
	}
	// kubectl logs --prefix puts the pod before every line.
	for _, l := range strings.SplitAfter(b2.String(), "\n") {
		if l != "" {
			log.WriteString("[pod/kcbench-1-abcde/kcbench] " + l)
		}
	}
	bs, err := ReadBundles(&log)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Label != "segment=0/2" || bs[1].Label != "segment=1/2" {
		t.Fatalf("bundles %+v", bs)
	}
	for _, b := range bs {
		if !reflect.DeepEqual(b.Files, want) {
			t.Errorf("%s: files differ", b.Label)
		}
	}
	// A log cut in the middle of a bundle is an error, not a short folder.
	var cut bytes.Buffer
	WriteBundle(&cut, dir, "segment=0/1")
	s := cut.String()
	if _, err := ReadBundles(strings.NewReader(s[:len(s)/2])); err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("truncated bundle: %v", err)
	}
	if err := WriteBundle(&cut, dir, "two words"); err == nil {
		t.Error("a label with a space: no error")
	}
}
