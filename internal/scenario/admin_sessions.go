package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
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
//   - results.OpAdminClientSessions: the first page of one of the
//     tenant's backend clients' user sessions (the clients' ids looked
//     up before the clock starts, up to maxPreparedClients of them; past
//     that, each on its first use).
//
// A page longer than asked for, or an entry without an id, is a check
// error; so is a realm the dataset seeded offline sessions into (they do
// not idle out in a run's time) whose counts or first page show none.
type adminSessions struct {
	env       *Env
	clientIDs sync.Map // realm + "/" + clientId → the client's id
}

var _ load.Scenario = (*adminSessions)(nil)

func newAdminSessions(env *Env) load.Scenario { return &adminSessions{env: env} }

// maxPreparedClients bounds the client ids looked up before a run.
const maxPreparedClients = 5000

// prepare looks up the ids of the clients the run lists the sessions of.
func (s *adminSessions) prepare(ctx context.Context, _ int) error {
	p := s.env.Pool
	if len(p.tenants)*p.Clients() > maxPreparedClients {
		return nil
	}
	type tc struct{ realm, client string }
	var all []tc
	for i := range p.tenants {
		for _, c := range p.clientsOf(&p.tenants[i]) {
			all = append(all, tc{p.tenants[i].Realm, c})
		}
	}
	return dataset.Parallel(ctx, len(all), 4, func(ctx context.Context, k int) error {
		_, err := s.clientID(ctx, all[k].realm, all[k].client)
		return err
	})
}

func (s *adminSessions) Name() string { return results.ScenarioAdminSessions }

func (s *adminSessions) NewUser(_ context.Context, id int) (load.User, error) {
	return &adminSessionsUser{s: s, rng: s.env.rng(results.ScenarioAdminSessions, id)}, nil
}

type adminSessionsUser struct {
	s   *adminSessions
	rng *rand.Rand
}

// sessionStat is what kcbench reads of a client's session counts.
type sessionStat struct {
	Offline string `json:"offline"` // a number, as Keycloak writes it
}

func (s sessionStat) hasOffline() bool { return s.Offline != "" && s.Offline != "0" }

// sessionRep is what kcbench reads of a session in a listing.
type sessionRep struct {
	ID string `json:"id"`
}

// The listings' queries: the console's first page (one more than it
// shows, to know whether a next page exists), online and offline.
var (
	realmSessionsQuery  = url.Values{"first": {"0"}, "max": {strconv.Itoa(consolePage + 1)}, "type": {"ALL"}, "search": {""}}.Encode()
	clientSessionsQuery = url.Values{"first": {"0"}, "max": {strconv.Itoa(consolePage + 1)}}.Encode()
)

func (u *adminSessionsUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	p, a := u.s.env.Pool, u.s.env.Admin
	t := p.pickTenant(u.rng)
	c := p.client(u.rng, t)
	id, err := u.s.clientID(ctx, t.Realm, c.ID)
	if err != nil {
		return err
	}
	seeded := p.seededOffline(t)
	start := time.Now()
	var stats []sessionStat
	err = a.Do(ctx, http.MethodGet, kc.RealmPath(t.Realm, "client-session-stats"), nil, &stats)
	if err == nil && seeded && !slices.ContainsFunc(stats, sessionStat.hasOffline) {
		err = load.CheckError{Check: fmt.Sprintf("realm %s counts no offline sessions, though the dataset seeded some into it", t.Realm)}
	}
	rec.Record(results.OpAdminSessionStats, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	var realmPage []sessionRep
	err = a.Do(ctx, http.MethodGet, kc.RealmPath(t.Realm, "ui-ext", "sessions")+"?"+realmSessionsQuery, nil, &realmPage)
	if err == nil {
		err = checkSessionPage(realmPage, "realm "+t.Realm+"'s sessions")
	}
	if err == nil && len(realmPage) == 0 && seeded {
		err = load.CheckError{Check: fmt.Sprintf("realm %s lists no sessions, though the dataset seeded offline sessions into it", t.Realm)}
	}
	rec.Record(results.OpAdminRealmSessions, start, err)
	if err != nil {
		return err
	}
	start = time.Now()
	var clientPage []sessionRep
	err = a.Do(ctx, http.MethodGet, kc.RealmPath(t.Realm, "clients", id, "user-sessions")+"?"+clientSessionsQuery, nil, &clientPage)
	if err == nil {
		err = checkSessionPage(clientPage, "client "+c.ID+"'s user sessions")
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
