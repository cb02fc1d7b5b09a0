package scenario

import (
	"strings"
	"testing"
)

// Every recording reads and names only the screens the workload knows;
// a version takes its line's recording, or the newest line's before it;
// a line older than every recording, or no version, is an error naming
// what kcbench has.
func TestConsoleRecordings(t *testing.T) {
	entries, err := consoleFiles.ReadDir("adminconsole")
	if err != nil || len(entries) == 0 {
		t.Fatalf("recordings: %v", err)
	}
	for _, e := range entries {
		line := strings.TrimSuffix(e.Name(), ".json")
		r, err := loadRecording(line)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Screens) != len(consoleOps) || !strings.HasPrefix(r.Keycloak, line+".") {
			t.Errorf("recording %s: %d screens, recorded on %s", line, len(r.Screens), r.Keycloak)
		}
		for _, s := range r.Screens {
			for _, q := range s.Requests {
				if !strings.HasPrefix(q, "GET /admin/") {
					t.Errorf("recording %s, screen %s: %q is not an admin read", line, s.Name, q)
				}
			}
		}
	}
	r, err := recordingFor("26.99.0")
	if err != nil || r == nil {
		t.Fatalf("a line after every recording: %v", err)
	}
	for _, v := range []string{"25.0.6", "banana", "26"} {
		if _, err := recordingFor(v); err == nil {
			t.Errorf("%s: a recording", v)
		}
	}
	if _, err := recordingFor("25.0.6"); err == nil || !strings.Contains(err.Error(), "KCBENCH_RECORD=1") {
		t.Errorf("25.0.6: %v", err)
	}
}
