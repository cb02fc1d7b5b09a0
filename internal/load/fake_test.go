package load

import (
	"context"
	"sync/atomic"
	"time"
)

// fakeScenario is an in-memory Scenario that counts calls, in the manner of
// k6's minirunner. Its behaviour is set by the function fields.
type fakeScenario struct {
	newUser func(ctx context.Context, id int) error                          // nil: succeed at once
	iterate func(ctx context.Context, id int, n int64, rec OpRecorder) error // nil: return nil at once

	users      atomic.Int64
	iterations atomic.Int64
}

func (f *fakeScenario) Name() string { return "fake" }

func (f *fakeScenario) NewUser(ctx context.Context, id int) (User, error) {
	f.users.Add(1)
	if f.newUser != nil {
		if err := f.newUser(ctx, id); err != nil {
			return nil, err
		}
	}
	return &fakeUser{f: f, id: id}, nil
}

type fakeUser struct {
	f  *fakeScenario
	id int
}

func (u *fakeUser) Iterate(ctx context.Context, rec OpRecorder) error {
	n := u.f.iterations.Add(1)
	if u.f.iterate == nil {
		return nil
	}
	return u.f.iterate(ctx, u.id, n, rec)
}

// busy returns an iterate function that records one operation "op" taking d.
func busy(d time.Duration) func(context.Context, int, int64, OpRecorder) error {
	return func(ctx context.Context, _ int, _ int64, rec OpRecorder) error {
		start := time.Now()
		err := Sleep(ctx, d)
		rec.Record("op", start, err)
		return err
	}
}
