package scenario

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// exchangeAudience is the audience a token is exchanged for: the account
// console's client, which every user's default roles make available, so
// the exchange narrows a token for the backend (and account) to a token
// for account alone.
const exchangeAudience = "account"

// tokenExchange has the backend client exchange a user's access token the
// VU holds (obtained at VU creation, refreshed as results.OpRefresh shortly
// before it expires) for a token for exchangeAudience, with Keycloak's
// standard token exchange (RFC 8693, Keycloak 26.2 and later). The
// dataset's backend clients have it enabled and put themselves in their
// tokens' audience, as the exchanging client must be. An answer of another
// token type fails a check.
type tokenExchange struct{ env *Env }

var _ load.Scenario = (*tokenExchange)(nil)

func newTokenExchange(env *Env) load.Scenario { return &tokenExchange{env: env} }

func (s *tokenExchange) Name() string { return results.ScenarioTokenExchange }

func (s *tokenExchange) NewUser(ctx context.Context, id int) (load.User, error) {
	sess, err := newSession(ctx, s.env, s.env.rng(results.ScenarioTokenExchange, id), "")
	if err != nil {
		return nil, err
	}
	return &tokenExchangeUser{env: s.env, s: sess}, nil
}

type tokenExchangeUser struct {
	env *Env
	s   *session
}

func (u *tokenExchangeUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	if err := u.s.renew(ctx, u.env.Client, rec); err != nil {
		return err
	}
	start := time.Now()
	tr, err := u.env.Client.ExchangeToken(ctx, u.s.t.Realm, u.s.cl, u.s.access, exchangeAudience)
	switch {
	case isStatus(err, http.StatusBadRequest):
		err = fmt.Errorf("%w (standard token exchange needs Keycloak 26.2 or later and the client's standard.token.exchange.enabled, which the datasets of this kcbench set on backend clients; a dataset or snapshot seeded before lacks it: delete it and seed again)", err)
	case err == nil && tr.IssuedTokenType != kc.TokenTypeAccessToken:
		err = load.CheckError{Check: fmt.Sprintf("the exchange issued %q, not an access token", tr.IssuedTokenType)}
	}
	rec.Record(results.OpTokenExchange, start, err)
	return err
}
