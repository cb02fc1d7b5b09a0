package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// adminSessions is an administrator looking at a random tenant's sessions
// as the admin console does, the reads that grow with the sessions a realm
// holds:
//
//   - results.OpAdminSessionStats: the realm's sessions per client
//     (client-session-stats: each client's online and offline counts);
//   - results.OpAdminRealmSessions: the first page of the realm's
//     sessions screen (the console's ui-ext/sessions, online and offline);
//     a realm the dataset seeded offline sessions into must list some;
//   - results.OpAdminClientSessions: the first page of one of the
//     tenant's backend clients' user sessions (its id looked up once per
//     client, before the clock starts).
//
// A page longer than asked for, or an entry without an id, is a check
// error.
type adminSessions struct {
	env       *Env
	clientIDs sync.Map // realm + "/" + clientId → the client's id
}

var _ load.Scenario = (*adminSessions)(nil)

func newAdminSessions(env *Env) load.Scenario { return &adminSessions{env: env} }

func (s *adminSessions) Name() string { return results.ScenarioAdminSessions }

func (s *adminSessions) NewUser(_ context.Context, id int) (load.User, error) {
	return &adminSessionsUser{s: s, rng: s.env.rng(results.ScenarioAdminSessions, id)}, nil
}

type adminSessionsUser struct {
	s   *adminSessions
	rng *rand.Rand
}

// sessionRep is what kcbench reads of a session in a listing.
type sessionRep struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

func (u *adminSessionsUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	p, a := u.s.env.Pool, u.s.env.Admin
	t := p.pickTenant(u.rng)
	c := p.client(u.rng, t)
	id, err := u.s.clientID(ctx, t.Realm, c.ID)
	if err != nil {
		return err
	}
	start := time.Now()
	var stats []struct {
		ID      string `json:"id"`
		Active  string `json:"active"`
		Offline string `json:"offline"`
	}
	err = a.Do(ctx, http.MethodGet, kc.RealmPath(t.Realm, "client-session-stats"), nil, &stats)
	rec.Record(results.OpAdminSessionStats, start, err)
	if err != nil {
		return err
	}
	q := url.Values{"first": {"0"}, "max": {strconv.Itoa(consolePage + 1)}, "type": {"ALL"}, "search": {""}}
	start = time.Now()
	var ss []sessionRep
	err = a.Do(ctx, http.MethodGet, kc.RealmPath(t.Realm, "ui-ext", "sessions")+"?"+q.Encode(), nil, &ss)
	if err == nil {
		err = checkSessionPage(ss, "realm "+t.Realm+"'s sessions")
	}
	if err == nil && len(ss) == 0 && p.seededOffline() {
		err = load.CheckError{Check: fmt.Sprintf("realm %s lists no sessions, though the dataset seeded offline sessions into it", t.Realm)}
	}
	rec.Record(results.OpAdminRealmSessions, start, err)
	if err != nil {
		return err
	}
	q = url.Values{"first": {"0"}, "max": {strconv.Itoa(consolePage + 1)}}
	start = time.Now()
	ss = ss[:0]
	err = a.Do(ctx, http.MethodGet, kc.RealmPath(t.Realm, "clients", id, "user-sessions")+"?"+q.Encode(), nil, &ss)
	if err == nil {
		err = checkSessionPage(ss, "client "+c.ID+"'s user sessions")
	}
	rec.Record(results.OpAdminClientSessions, start, err)
	return err
}

// checkSessionPage refuses a page of sessions longer than the console
// asks for, or with an entry without an id.
func checkSessionPage(ss []sessionRep, what string) error {
	if len(ss) > consolePage+1 {
		return load.CheckError{Check: fmt.Sprintf("%s: %d on a page of %d", what, len(ss), consolePage+1)}
	}
	for _, s := range ss {
		if s.ID == "" {
			return load.CheckError{Check: what + ": a session without an id"}
		}
	}
	return nil
}

// clientID is the id of realm's client clientID, looked up once.
func (s *adminSessions) clientID(ctx context.Context, realm, clientID string) (string, error) {
	k := realm + "/" + clientID
	if v, ok := s.clientIDs.Load(k); ok {
		return v.(string), nil
	}
	cs, err := s.env.Admin.Clients(ctx, realm, clientID)
	if err != nil {
		return "", fmt.Errorf("look up client %s of realm %s: %w", clientID, realm, err)
	}
	for _, c := range cs {
		if c.ClientID == clientID {
			s.clientIDs.Store(k, c.ID)
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("realm %s has no client %s (is the dataset seeded?)", realm, clientID)
}
