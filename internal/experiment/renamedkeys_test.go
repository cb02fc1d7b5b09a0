package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run file or experiment file with a key that was renamed with its flag
// is refused with an error naming the new key; the new key is read.
func TestRenamedKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, yaml, want string }{
		{"run file seed", "scenario: jwks\nseed: 3\n", "line 2: seed is now random_seed (kcbench help load)"},
		{"capacity start", "name: x\nworkloads: [{scenario: jwks, capacity: {start: 5}}]\n", "line 2: workloads[0].capacity.start is now start_rate"},
		{"stack pg_durable", "name: x\nstack:\n  pg_durable: true\nworkloads: [{scenario: jwks}]\n", "line 3: stack.pg_durable is now db_durable"},
		{"workload seed", "name: x\nworkloads:\n  - {scenario: jwks}\n  - scenario: jwks\n    seed: 3\n", "line 5: workloads[1].seed is now random_seed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var err error
			if strings.HasPrefix(c.yaml, "name:") {
				_, err = Parse([]byte(c.yaml))
			} else {
				file := filepath.Join(t.TempDir(), "run.yaml")
				if werr := os.WriteFile(file, []byte(c.yaml), 0o644); werr != nil {
					t.Fatal(werr)
				}
				_, err = ReadRunFile(file)
			}
			if err == nil || !strings.HasSuffix(err.Error(), c.want) {
				t.Errorf("error %v, want it to end in %q", err, c.want)
			}
		})
	}
	file := filepath.Join(t.TempDir(), "run.yaml")
	if err := os.WriteFile(file, []byte("scenario: jwks\nrandom_seed: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := ReadRunFile(file); err != nil || f.Seed != 3 {
		t.Errorf("random_seed: %v, seed %d", err, f.Seed)
	}
	if f, err := Parse([]byte("name: x\nworkloads: [{scenario: jwks, random_seed: 3}]\n")); err != nil || f.Workload[0].Seed != 3 {
		t.Errorf("workload random_seed: %v", err)
	}
}
