package load

import (
	"context"
	"time"
)

// Scenario is a workload: what one virtual user does. Implementations live
// outside this package (kcbench's scenario package).
type Scenario interface {
	// Name identifies the scenario in results.
	Name() string
	// NewUser creates the per-VU state (credentials, cookies, tokens) for
	// VU id. It is called once per VU, concurrently for different ids, before
	// the VU runs its first iteration.
	NewUser(ctx context.Context, id int) (User, error)
}

// User is one virtual user's state. Iterate runs one iteration; the engine
// records the iteration as a whole under IterationOp, and Iterate records its
// individual operations through rec.
//
// Iterate must return promptly once ctx is done. Its returned error fails the
// iteration and is classified like an operation error (see Classify).
type User interface {
	Iterate(ctx context.Context, rec OpRecorder) error
}

// OpRecorder records named operations of one VU. It is safe for use by
// several goroutines within one Iterate call, but must not be used after
// Iterate returns.
type OpRecorder interface {
	// Record records operation op, started at start and ending now, failed
	// with err when err is not nil (see Classify for how errors are counted).
	// It does not allocate once op has been seen by this VU.
	Record(op string, start time.Time, err error)
}
