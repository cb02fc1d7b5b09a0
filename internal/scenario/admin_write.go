package scenario

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// adminWrite is an administrator's writes in a random tenant's realm, each
// iteration leaving the realm as it found it. A write iteration makes one
// object and removes it, in turn:
//
//   - a user: create, update its name, map a realm role to it, join it to
//     a group, delete it (results.OpAdminCreateUser … OpAdminDeleteUser);
//   - a group: create, rename, delete;
//   - a client: create, update, delete.
//
// With Env.AdminWritePct below 100, the other iterations read instead: a
// seeded user by username, and the tenant's backend client by client id.
// An object whose later steps fail is still deleted (not recorded), so
// that the dataset keeps its size; the names made are kcbw-… with a
// random part, so that agents of a split run do not collide.
type adminWrite struct {
	env *Env
	mu  sync.Mutex
	ref map[string]*realmRefs // by realm: the role and group the users get
}

// writePrefix begins the names of what admin-write makes.
const writePrefix = "kcbw-"

// realmRefs are a realm's role and group a created user is given.
type realmRefs struct {
	role  kc.RoleRep
	group string // id
}

var _ load.Scenario = (*adminWrite)(nil)

func newAdminWrite(env *Env) load.Scenario {
	return &adminWrite{env: env, ref: map[string]*realmRefs{}}
}

func (s *adminWrite) Name() string { return results.ScenarioAdminWrite }

func (s *adminWrite) NewUser(_ context.Context, id int) (load.User, error) {
	return &adminWriteUser{s: s, rng: s.env.rng(results.ScenarioAdminWrite, id), kind: id % 3}, nil
}

type adminWriteUser struct {
	s    *adminWrite
	rng  *rand.Rand
	kind int // the next write's object: 0 user, 1 group, 2 client
}

func (u *adminWriteUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	env := u.s.env
	t, username := env.Pool.pick(u.rng)
	pct := env.AdminWritePct
	if pct == 0 {
		pct = 100
	}
	if u.rng.Float64()*100 >= pct {
		return u.read(ctx, rec, t.Realm, username, t.Backend)
	}
	name := fmt.Sprintf("%s%s-%016x", writePrefix, strings.TrimPrefix(t.ID, "t"), rand.Uint64())
	kind := u.kind
	u.kind = (u.kind + 1) % 3
	switch kind {
	case 0:
		return u.writeUser(ctx, rec, t.Realm, name)
	case 1:
		return u.writeGroup(ctx, rec, t.Realm, name)
	default:
		return u.writeClient(ctx, rec, t.Realm, name)
	}
}

// step records one admin call.
func step(rec load.OpRecorder, op string, call func() error) error {
	start := time.Now()
	err := call()
	rec.Record(op, start, err)
	return err
}

func (u *adminWriteUser) read(ctx context.Context, rec load.OpRecorder, realm, username, clientID string) error {
	a := u.s.env.Admin
	err := step(rec, results.OpAdminGetUser, func() error {
		if username == "" {
			return load.CheckError{Check: "no username to read (--username)"}
		}
		us, err := a.FindUser(ctx, realm, username)
		if err == nil && us == nil {
			return load.CheckError{Check: fmt.Sprintf("user %s of realm %s not found (is the dataset seeded?)", username, realm)}
		}
		return err
	})
	if err != nil || clientID == "" {
		return err
	}
	return step(rec, results.OpAdminGetClient, func() error {
		cs, err := a.Clients(ctx, realm, clientID)
		if err == nil && len(cs) != 1 {
			return load.CheckError{Check: fmt.Sprintf("client %s of realm %s: %d found", clientID, realm, len(cs))}
		}
		return err
	})
}

func (u *adminWriteUser) writeUser(ctx context.Context, rec load.OpRecorder, realm, name string) (err error) {
	a := u.s.env.Admin
	refs, err := u.s.refs(ctx, realm)
	if err != nil {
		return err
	}
	var id string
	if err := step(rec, results.OpAdminCreateUser, func() (err error) {
		id, err = createdID(a.Create(ctx, kc.RealmPath(realm, "users"),
			kc.UserRep{Username: name, Enabled: true, Email: name + "@example.com", FirstName: "Admin", LastName: "Write"}))
		return err
	}); err != nil {
		return err
	}
	defer u.cleanUp(&err, realm, "users", &id)
	if err := step(rec, results.OpAdminUpdateUser, func() error {
		return a.Do(ctx, http.MethodPut, kc.RealmPath(realm, "users", id), map[string]any{"firstName": "Updated"}, nil)
	}); err != nil {
		return err
	}
	if err := step(rec, results.OpAdminMapRole, func() error {
		return a.Do(ctx, http.MethodPost, kc.RealmPath(realm, "users", id, "role-mappings", "realm"), []kc.RoleRep{refs.role}, nil)
	}); err != nil {
		return err
	}
	if err := step(rec, results.OpAdminJoinGroup, func() error {
		return a.Do(ctx, http.MethodPut, kc.RealmPath(realm, "users", id, "groups", refs.group), nil, nil)
	}); err != nil {
		return err
	}
	return u.remove(ctx, rec, results.OpAdminDeleteUser, kc.RealmPath(realm, "users", id), &id)
}

func (u *adminWriteUser) writeGroup(ctx context.Context, rec load.OpRecorder, realm, name string) (err error) {
	a := u.s.env.Admin
	var id string
	if err := step(rec, results.OpAdminCreateGroup, func() (err error) {
		id, err = createdID(a.Create(ctx, kc.RealmPath(realm, "groups"), kc.GroupRep{Name: name}))
		return err
	}); err != nil {
		return err
	}
	defer u.cleanUp(&err, realm, "groups", &id)
	if err := step(rec, results.OpAdminUpdateGroup, func() error {
		return a.Do(ctx, http.MethodPut, kc.RealmPath(realm, "groups", id), kc.GroupRep{Name: name + "-renamed"}, nil)
	}); err != nil {
		return err
	}
	return u.remove(ctx, rec, results.OpAdminDeleteGroup, kc.RealmPath(realm, "groups", id), &id)
}

func (u *adminWriteUser) writeClient(ctx context.Context, rec load.OpRecorder, realm, name string) (err error) {
	a := u.s.env.Admin
	rep := kc.ClientRep{ClientID: name, Enabled: kc.Bool(true), PublicClient: true, StandardFlowEnabled: true,
		RedirectURIs: []string{"https://app.example.com/*"}}
	var id string
	if err := step(rec, results.OpAdminCreateClient, func() (err error) {
		id, err = createdID(a.Create(ctx, kc.RealmPath(realm, "clients"), rep))
		return err
	}); err != nil {
		return err
	}
	defer u.cleanUp(&err, realm, "clients", &id)
	rep.Name, rep.RedirectURIs = "Updated "+name, append(rep.RedirectURIs, "https://app2.example.com/*")
	if err := step(rec, results.OpAdminUpdateClient, func() error {
		return a.Do(ctx, http.MethodPut, kc.RealmPath(realm, "clients", id), rep, nil)
	}); err != nil {
		return err
	}
	return u.remove(ctx, rec, results.OpAdminDeleteClient, kc.RealmPath(realm, "clients", id), &id)
}

// remove deletes path, recorded as op; *id is cleared once it is gone, so
// that cleanUp leaves it alone.
func (u *adminWriteUser) remove(ctx context.Context, rec load.OpRecorder, op, path string, id *string) error {
	err := step(rec, op, func() error { return u.s.env.Admin.Do(ctx, http.MethodDelete, path, nil, nil) })
	if err == nil || errors.Is(err, kc.ErrNotFound) {
		*id = ""
	}
	return err
}

// cleanUpWait bounds the deletion of an object whose iteration failed.
const cleanUpWait = 10 * time.Second

// cleanUp deletes the object id of a realm's collection when the
// iteration failed after making it and before deleting it, even when the
// run's context has ended.
func (u *adminWriteUser) cleanUp(err *error, realm, collection string, id *string) {
	if *err == nil || *id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cleanUpWait)
	defer cancel()
	u.s.env.Admin.Do(ctx, http.MethodDelete, kc.RealmPath(realm, collection, *id), nil, nil)
}

// createdID is Admin.Create's id, which must not be empty.
func createdID(id string, err error) (string, error) {
	if err == nil && id == "" {
		err = load.CheckError{Check: "the create's answer has no Location"}
	}
	return id, err
}

// refs looks up (once per realm) the realm role and the group a created
// user gets: the first of the realm's own roles (not Keycloak's defaults)
// and its first group.
func (s *adminWrite) refs(ctx context.Context, realm string) (*realmRefs, error) {
	s.mu.Lock()
	r := s.ref[realm]
	s.mu.Unlock()
	if r != nil {
		return r, nil
	}
	roles, err := s.env.Admin.RealmRoles(ctx, realm)
	if err != nil {
		return nil, err
	}
	groups, err := s.env.Admin.Groups(ctx, realm)
	if err != nil {
		return nil, err
	}
	r = &realmRefs{}
	for _, role := range roles {
		if role.Name != "offline_access" && role.Name != "uma_authorization" && !strings.HasPrefix(role.Name, "default-roles-") {
			r.role = kc.RoleRep{ID: role.ID, Name: role.Name}
			break
		}
	}
	for _, g := range groups {
		// Not one of the groups admin-write itself makes and deletes (in
		// the shared realm of orgs mode "kcbw-…" sorts before the
		// tenants' groups, and another VU's may be listed).
		if !strings.HasPrefix(g.Name, writePrefix) {
			r.group = g.ID
			break
		}
	}
	if r.role.ID == "" || r.group == "" {
		return nil, load.CheckError{Check: fmt.Sprintf("realm %s has no role of its own or no group for the created users (seed --roles N --groups N)", realm)}
	}
	s.mu.Lock()
	s.ref[realm] = r
	s.mu.Unlock()
	return r, nil
}
