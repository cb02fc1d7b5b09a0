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
// reused buffer and checks for the document's key field instead of
// decoding it, so the load generator spends its CPU on requests, not JSON.
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
		check: load.CheckError{Check: "the answer holds " + string(s.field)}}, nil
}

type documentUser struct {
	s     *document
	rng   *rand.Rand
	buf   []byte
	check load.CheckError
}

func (u *documentUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t := u.s.env.Pool.pickTenant(u.rng)
	start := time.Now()
	var err error
	u.buf, err = u.s.fetch(u.s.env, ctx, t.Realm, u.buf[:0])
	if err == nil && !bytes.Contains(u.buf, u.s.field) {
		err = u.check
	}
	rec.Record(u.s.op, start, err)
	return err
}
