package experiment

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/scenario"
)

func TestLoadFileFlagsOverride(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(file, []byte("scenario: jwks\nvus: 7\nduration: 1m\nstages: [\"1s:5\", {duration: 2s, target: 10}]\nmix: {jwks: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadRunFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if c.VUs != 7 || c.Duration != time.Minute || c.Stages.String() != "1s:5,2s:10" || c.Mix["jwks"] != 1 || c.Executor != scenario.DefaultExecutor || c.Procs != DefaultProcs {
		t.Fatalf("%+v", c)
	}
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	c.RegisterFlags(fs)
	if err := fs.Parse([]string{"--vus", "3"}); err != nil {
		t.Fatal(err)
	}
	if c.VUs != 3 || c.Duration != time.Minute {
		t.Fatalf("flags over file: %+v", c)
	}
}
