package scenario

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
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
		// 26.2 was recorded before the role mapping tab was a screen (no
		// 26.2 distribution is served here to record it again).
		want := len(consoleOps)
		if line == "26.2" {
			want--
		}
		if len(r.Screens) != want || !strings.HasPrefix(r.Keycloak, line+".") {
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

// A server too slow for the first VU's deadline (the proof before a run
// allows a few seconds) does not fail the run's VUs: the next asks its
// version again.
func TestAdminConsoleAsksAgain(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/token"):
			fmt.Fprint(w, `{"access_token":"a","expires_in":300,"token_type":"Bearer"}`)
		case r.URL.Path == "/admin/serverinfo":
			if calls.Add(1) == 1 {
				<-r.Context().Done() // slower than the caller waits
				return
			}
			fmt.Fprint(w, `{"systemInfo":{"version":"26.7.3"}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env := testEnv(t, dataset.ModeRealms)
	env.Admin = kc.NewAdmin(kc.New(srv.URL, srv.Client()), kc.Credentials{Username: "admin", Password: "x"})
	sc, err := ByName(results.ScenarioAdminConsole, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := sc.NewUser(ctx, 0); err == nil {
		t.Fatal("a server that did not answer in time: no error")
	}
	if _, err := sc.NewUser(t.Context(), 1); err != nil {
		t.Errorf("the next VU, the server answering: %v", err)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the server was asked its version %d times, want 2", n)
	}
}
