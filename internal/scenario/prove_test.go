package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

// proofScenario's one operation fails with err (nil: succeeds).
type proofScenario struct{ err error }

func (p proofScenario) Name() string { return "fake" }

func (p proofScenario) NewUser(context.Context, int) (load.User, error) { return p, nil }

func (p proofScenario) Iterate(_ context.Context, rec load.OpRecorder) error {
	rec.Record("op", time.Now(), p.err)
	return nil
}

type httpStatus int

func (h httpStatus) Error() string   { return fmt.Sprintf("HTTP %d", int(h)) }
func (h httpStatus) HTTPStatus() int { return int(h) }

// The setup check refuses what the server refused or a check failed, and
// leaves a down, slow or broken server to the run.
func TestProve(t *testing.T) {
	for _, tc := range []struct {
		err    error
		refuse string // the class named, "" when the run goes on
	}{
		{nil, ""},
		{httpStatus(401), "http_401"},
		{httpStatus(404), "http_404"},
		{load.CheckError{Check: "access_token present"}, "check"},
		{httpStatus(503), ""},
		{syscall.ECONNREFUSED, ""},
		{context.DeadlineExceeded, ""},
		{load.MalformedError{What: "not a JSON object"}, ""},
	} {
		err := Prove(t.Context(), proofScenario{tc.err}, "26.7.3")
		var se *SetupError
		switch {
		case tc.refuse == "" && err != nil:
			t.Errorf("%v: refused: %v", tc.err, err)
		case tc.refuse != "" && (!errors.As(err, &se) || se.Class != tc.refuse || !errors.Is(err, tc.err) ||
			!strings.Contains(err.Error(), "on Keycloak 26.7.3 ("+tc.refuse+")")):
			t.Errorf("%v: %v, want a setup error of class %s", tc.err, err, tc.refuse)
		}
	}
}
