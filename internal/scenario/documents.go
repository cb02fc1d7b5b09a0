package scenario

import (
	"bytes"
	"context"
	"math/rand/v2"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// jwks and discovery fetch a random tenant realm's public documents: the
// JWKS (certs) and the OpenID configuration. Each VU reads into its own
// reused buffer and checks that it holds a JSON object ({…}: a body cut
// short by a wrong Content-Length is not one) with the document's key
// field, instead of decoding it, so the load generator spends its CPU on
// requests, not JSON.
type document struct {
	name, op string
	field    []byte // the answer must contain it
	fetch    func(env *Env, ctx context.Context, realm string, buf []byte) ([]byte, error)
	env      *Env
}

var _ load.Scenario = (*document)(nil)

func newJWKS(env *Env) load.Scenario {
	return &document{name: results.ScenarioJWKS, op: results.OpJWKS, field: []byte(`"keys"`), env: env,
		fetch: func(env *Env, ctx context.Context, realm string, buf []byte) ([]byte, error) {
			return env.Client.JWKSRaw(ctx, realm, buf)
		}}
}

func newDiscovery(env *Env) load.Scenario {
	return &document{name: results.ScenarioDiscovery, op: results.OpDiscovery, field: []byte(`"issuer"`), env: env,
		fetch: func(env *Env, ctx context.Context, realm string, buf []byte) ([]byte, error) {
			return env.Client.DiscoveryRaw(ctx, realm, buf)
		}}
}

func (s *document) Name() string { return s.name }

func (s *document) NewUser(_ context.Context, id int) (load.User, error) {
	return &documentUser{s: s, rng: s.env.rng(s.name, id), buf: make([]byte, 0, 8<<10),
		check: load.CheckError{Check: "no " + string(s.field) + " in the answer"}}, nil
}

type documentUser struct {
	s     *document
	rng   *rand.Rand
	buf   []byte
	check load.CheckError
}

// notAnObject is the error of a document that is not a JSON object.
var notAnObject = load.MalformedError{What: "not a JSON object ({…})"}

// jsonObject reports whether b, without surrounding white space, starts
// with { and ends with }.
func jsonObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}'
}

func (u *documentUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t := u.s.env.Pool.pickTenant(u.rng)
	start := time.Now()
	var err error
	u.buf, err = u.s.fetch(u.s.env, ctx, t.Realm, u.buf[:0])
	switch {
	case err != nil:
	case !jsonObject(u.buf):
		err = notAnObject
	case !bytes.Contains(u.buf, u.s.field):
		err = u.check
	}
	rec.Record(u.s.op, start, err)
	return err
}
