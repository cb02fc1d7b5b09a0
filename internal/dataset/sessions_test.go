package dataset

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
)

// What Keycloak 26.7.3 wrote for a password grant's session (user data
// and client data), cut at what varies, then filled for another session.
func TestSessionTemplateCut(t *testing.T) {
	const (
		client = "b0903e09-569a-4c37-bccd-290c59eb312f"
		exec1  = "3c2826b6-6f5f-40c8-92b1-c4121457ec6b"
		exec2  = "4f02539f-0d42-4b20-b143-9ea42ac2c10d"
		at     = 1795921856
	)
	user := `{"ipAddress":"127.0.0.1","authMethod":"openid-connect","rememberMe":false,"started":0,"notes":{"KC_DEVICE_NOTE":"eyJpcEFkZHJlc3MiOiIxMjcuMC4wLjEiLCJsYXN0QWNjZXNzIjoxNzk1OTIxODU2fQ==","authenticators-completed":"{\"` + exec1 + `\":1795921856,\"` + exec2 + `\":1795921857}"},"state":"LOGGED_IN"}`
	cdata := `{"authMethod":"openid-connect","notes":{"clientId":"` + client + `","userSessionStartedAt":"1795921856","iss":"https://127.0.0.1:43549/realms/kcb-t00001","startedAt":"1795921856","level-of-authentication":"-1","scope":"openid"}}`
	tp := &sessionTemplate{realmName: "kcb-t00001", clientID: client}
	execs := map[string]bool{exec1: true, exec2: true}
	up, err := tp.cut(user, at, execs)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := tp.cut(cdata, at, execs)
	if err != nil {
		t.Fatal(err)
	}
	if len(tp.execs) != 2 {
		t.Fatalf("executions found: %v", tp.execs)
	}
	r := &sessionRealm{id: "r2", name: "kcb-t00002", execs: []string{"e-1", "e-2"}, idle: 1800, maxLife: 36000, offlineIdle: 2592000,
		tenants: []sessionTenant{{index: 1, users: []string{"u1"}, clients: []string{"c2"}}}}
	w := sessionWriter{tp: tp, now: at + 1000, rnd: newFastRand()}
	tp.user = map[string]sessionRow{"0": {cols: []string{"user_session_id", "data", "created_on", "last_session_refresh"}, vals: []any{"x", user, int32(0), int32(0)}}}
	tp.client = map[string]sessionRow{"0": {cols: []string{"user_session_id", "data", "client_id", "timestamp"}, vals: []any{"x", cdata, "", int32(0)}}}
	tp.userData = map[string][]piece{"0": up}
	tp.clientData = map[string][]piece{"0": cp}
	tp.idLen = 18
	u, c := w.session(sessionPart{realm: r, tenant: r.tenants[0]}, 0)
	created, last := u[2].(int32), u[3].(int32)
	if last > int32(w.now) || int64(last) < w.now-1800 || created > last || int64(created) < w.now-36000 {
		t.Errorf("created %d, last refresh %d, now %d: outside the realm's timeouts", created, last, w.now)
	}
	ud, cd := u[1].(string), c[1].(string)
	for _, bad := range []string{exec1, exec2, client, "kcb-t00001", "1795921856"} {
		if strings.Contains(ud, bad) || strings.Contains(cd, bad) {
			t.Errorf("the copy still holds %s:\n%s\n%s", bad, ud, cd)
		}
	}
	for _, want := range []string{`\"e-1\":`, `\"e-2\":`, `"clientId":"c2"`, `/realms/kcb-t00002"`, `"startedAt":"` + strconv.Itoa(int(created)) + `"`, "eyJpcEFkZHJlc3MiOiIxMjcuMC4wLjEiLCJsYXN0QWNjZXNzIjoxNzk1OTIxODU2fQ=="} {
		if !strings.Contains(ud+cd, want) {
			t.Errorf("the copy lacks %s:\n%s\n%s", want, ud, cd)
		}
	}
	if id := u[0].(string); len(id) != 24 || c[0] != id {
		t.Errorf("session id %q (want 24 characters, the same in both rows: %q)", id, c[0])
	}
	if c[2] != "c2" {
		t.Errorf("client session's client %v", c[2])
	}
	// An id the writer does not know is refused.
	if _, err := tp.cut(`{"x":"11111111-2222-4333-8444-555555555555"}`, at, execs); err == nil || !strings.Contains(err.Error(), "does not know") {
		t.Errorf("an unknown id: %v", err)
	}
}

// Sessions spread evenly over tenants; those there count against the
// first tenants' shares.
func TestPlanSessions(t *testing.T) {
	m := NewManifest(Spec{Mode: ModeRealms, Tenants: 3, Content: DefaultContent, Prefix: "p"}, "")
	var realms []*sessionRealm
	for i := 1; i <= 3; i++ {
		realms = append(realms, &sessionRealm{name: m.Spec.RealmOf(i), tenants: []sessionTenant{{index: i}}})
	}
	realms[0].found = SessionSpec{Online: 5, Offline: 50}
	p := planSessions(m, realms, SessionSpec{Online: 10, Offline: 7})
	// shares: online 4 3 3, offline 3 2 2; tenant 1 holds more than its shares
	if p.found != (SessionSpec{Online: 5, Offline: 50}) || p.todo != (SessionSpec{Online: 6, Offline: 4}) {
		t.Errorf("found %+v todo %+v, want found {5 50} todo {6 4}", p.found, p.todo)
	}
	for _, pt := range p.parts {
		if pt.tenant.index == 1 {
			t.Errorf("tenant 1 holds enough, yet gets %+v", pt)
		}
	}
}

func TestCheckSessions(t *testing.T) {
	spec := Spec{Mode: ModeRealms, Tenants: 1, Content: DefaultContent}
	noUsers := spec
	noUsers.Content.Users = 0
	for name, c := range map[string]struct {
		spec     Spec
		want     SessionSpec
		kind     string
		db       kc.Secret
		inMemory bool
		err      string
	}{
		"negative":       {spec, SessionSpec{Online: -1}, "", "postgres://x", false, "--sessions: -1: must be between 0 and 10000000"},
		"absurd":         {spec, SessionSpec{Offline: 1e12}, "", "postgres://x", false, "--offline-sessions: 1000000000000"},
		"no users":       {noUsers, SessionSpec{Online: 1}, "", "postgres://x", false, "need users to own them"},
		"mariadb":        {spec, SessionSpec{Online: 1}, "mariadb", "", false, "not available on MariaDB"},
		"no database":    {spec, SessionSpec{Online: 1}, "", "", false, "the local stack only"},
		"in memory":      {spec, SessionSpec{Online: 1}, "", "postgres://x", true, "--persistent-sessions=false"},
		"offline, kept":  {spec, SessionSpec{Offline: 1}, "", "postgres://x", true, ""},
		"both, database": {spec, SessionSpec{Online: 1, Offline: 1}, "", "postgres://x", false, ""},
	} {
		err := CheckSessions(c.spec, c.want, c.kind, c.db, c.inMemory)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v, want %q", name, err, c.err)
		}
	}
}

func TestAliveOnline(t *testing.T) {
	at := time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC)
	st := &SessionState{SessionSpec: SessionSpec{Online: 1000}, At: at, OnlineIdleSeconds: 1800}
	for _, c := range []struct {
		after time.Duration
		want  int
	}{{0, 990}, {15 * time.Minute, 490}, {30 * time.Minute, 0}, {time.Hour, 0}} {
		if got := aliveOnline(st, at.Add(c.after)); got != c.want {
			t.Errorf("after %s: %d alive, want %d", c.after, got, c.want)
		}
	}
}

func TestSessionIDShape(t *testing.T) {
	for id, want := range map[string]int{"UXOV8GKnANAbBSKkQib7FaRx": 18, "71836555-ea03-40ba-bbe5-bad47c730fce": 36} {
		if n, err := sessionIDShape(id); err != nil || n != want {
			t.Errorf("%s: %d %v, want %d", id, n, err, want)
		}
	}
	if _, err := sessionIDShape("not an id!"); err == nil {
		t.Error("a session id of no known shape was taken")
	}
}

func TestSignHS512(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	tok, err := signHS512("kid-1", key, map[string]any{"sid": "s1", "typ": "Offline"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	mac := hmac.New(sha512.New, key)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if base64.RawURLEncoding.EncodeToString(mac.Sum(nil)) != parts[2] {
		t.Error("the signature is not HMAC-SHA512 of header and claims")
	}
	if sid, err := kc.SessionID(tok); err != nil || sid != "s1" {
		t.Errorf("sid %q %v", sid, err)
	}
}

// The shape knobs: composite roles named level by level, users' roles and
// groups round robin, bounds and the composite explosion refused with its
// estimate, the default shape's fingerprint unchanged.
func TestShape(t *testing.T) {
	s := Spec{Mode: ModeOrgs, Tenants: 1, Content: DefaultContent, Prefix: "kcb", Seed: 1}
	plain := s.Fingerprint()
	s.Content.Shape = Shape{RolesPerUser: 2, GroupsPerUser: 2, CompositeDepth: 2, CompositeWidth: 2, MappersPerClient: 3}
	if s.Fingerprint() == plain {
		t.Error("a shape does not change the fingerprint")
	}
	crs := s.CompositeRoles(3, 1)
	var names []string
	for _, cr := range crs {
		names = append(names, cr.Name+":"+strings.Join(cr.Composites, ","))
	}
	// the role, then its composites, each level's before the one above
	want := "t00003-role-1:t00003-role-1-c1,t00003-role-1-c2 t00003-role-1-c1-1: t00003-role-1-c1-2: t00003-role-1-c1:t00003-role-1-c1-1,t00003-role-1-c1-2 " +
		"t00003-role-1-c2-1: t00003-role-1-c2-2: t00003-role-1-c2:t00003-role-1-c2-1,t00003-role-1-c2-2"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("composite roles\n got %s\nwant %s", got, want)
	}
	if e := s.Expected(); e.RealmRoles != 5*7 || e.GroupMemberships != 10*2 {
		t.Errorf("expected %d realm roles (want 35), %d memberships (want 20)", e.RealmRoles, e.GroupMemberships)
	}
	if got := strings.Join(s.UserRoles(1, 5), ","); got != "t00001-role-5,t00001-role-1" {
		t.Errorf("user 5's roles: %s", got)
	}
	if got := strings.Join(s.UserGroups(1, 2), ","); got != "t00001-group-2,t00001-group-1" {
		t.Errorf("user 2's groups: %s", got)
	}
	b := newBuilder(s)
	var mappers []string
	for _, m := range b.clients(1)[1].ProtocolMappers {
		mappers = append(mappers, m.Name)
	}
	if got := strings.Join(mappers, ","); got != "audience-self,claim-1,claim-2,claim-3,groups" {
		t.Errorf("the backend client's mappers: %s", got)
	}
	if _, err := (SeedOptions{Strategy: Rest}).resolve(s); err == nil || !strings.Contains(err.Error(), "not with --strategy rest") {
		t.Errorf("a shape with the rest strategy: %v", err)
	}
	for _, c := range []struct {
		shape Shape
		err   string
	}{
		{Shape{RolesPerUser: 6}, "roles per user = 6: must be between 0 and the realm roles (5)"},
		{Shape{GroupsPerUser: 3}, "groups per user = 3"},
		{Shape{ClientRolesPerUser: 3}, "client roles per user = 3"},
		{Shape{CompositeDepth: 2}, "set both or neither"},
		{Shape{CompositeDepth: 4, CompositeWidth: 20}, "composite roles 4 deep, 20 wide: 8.42e+05 realm roles a tenant (at most 100000"},
		{Shape{MappersPerClient: -1}, "must be >= 0"},
		{Shape{GroupDepth: 2}, "group depth 2 and fan-out 0: set both or neither"},
		{Shape{GroupDepth: 5, GroupFanout: 10}, "group trees 5 deep, 10 wide: 2.22e+05 groups a tenant (at most 100000)"},
	} {
		c2 := DefaultContent
		c2.Shape = c.shape
		if err := c2.Validate(); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.shape, err, c.err)
		}
	}
}

// Group trees: every group the root of one, named level by level, users
// in their leaves round robin, counted by Expected; a shape without trees
// keeps its fingerprint.
func TestGroupTrees(t *testing.T) {
	s := Spec{Mode: ModeOrgs, Tenants: 2, Content: DefaultContent, Prefix: "kcb", Seed: 1}
	s.Content.Shape = Shape{RolesPerUser: 2, GroupsPerUser: 2, CompositeDepth: 2, CompositeWidth: 2, MappersPerClient: 3}
	if got := s.Content.Shape.String(); strings.Contains(got, "group-tree") {
		t.Errorf("a shape without group trees says %s (its fingerprint would change)", got)
	}
	s.Content.GroupDepth, s.Content.GroupFanout = 2, 3
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	names := s.GroupNames(1)
	if len(names) != 2*(1+3+9) || names[0] != "t00001-group-1" || names[1] != "t00001-group-1.1" || names[2] != "t00001-group-1.1.1" {
		t.Errorf("%d groups, first %v", len(names), names[:3])
	}
	if e := s.Expected(); e.Groups != 2*2*13 || e.GroupMemberships != 2*10*2 {
		t.Errorf("expected %d groups (want 52), %d memberships (want 40)", e.Groups, e.GroupMemberships)
	}
	// user 6: leaf 5 of 9 (digits 1, 2: the second child's third child)
	if got := strings.Join(s.UserGroupPaths(1, 6), " "); got != "/t00001-group-2/t00001-group-2.2/t00001-group-2.2.3 /t00001-group-1/t00001-group-1.2/t00001-group-1.2.3" {
		t.Errorf("user 6's groups: %s", got)
	}
	if got := strings.Join(s.UserGroupNames(1, 10), " "); got != "t00001-group-2.1.1 t00001-group-1.1.1" {
		t.Errorf("user 10's groups (leaf 0 again): %s", got)
	}
	g := s.GroupTree(1, 2)
	if len(g.SubGroups) != 3 || g.SubGroups[2].Path != "/t00001-group-2/t00001-group-2.3" || len(g.SubGroups[2].SubGroups[0].SubGroups) != 0 {
		t.Errorf("group 2's tree: %+v", g)
	}
	for _, m := range newBuilder(s).clients(1)[1].ProtocolMappers {
		if m.Name == "groups" && m.Config["full.path"] != "true" {
			t.Errorf("the groups claim with trees: full.path %q", m.Config["full.path"])
		}
	}
	if h := bulkHeadOf(Spec{Mode: ModeRealms, Content: Content{RealmRoles: 5, Groups: 2, Users: 1000, Clients: 2, Shape: Shape{GroupDepth: 2, GroupFanout: 3}}}); h.users != 90 {
		t.Errorf("a big tenant with group trees: a head of %d users, want lcm(5, 2, 9) = 90", h.users)
	}
}

// Client scopes per client: named per tenant, a claim each, counted by
// Expected; a realms-mode tenant with them is made in parts (its realm
// complete after them).
func TestClientScopesShape(t *testing.T) {
	s := Spec{Mode: ModeOrgs, Tenants: 3, Content: DefaultContent, Prefix: "kcb", Seed: 1}
	plain := s.Fingerprint()
	s.Content.ScopesPerClient = 2
	if s.Fingerprint() == plain {
		t.Error("client scopes do not change the fingerprint")
	}
	cs := s.clientScopes(2)
	if len(cs) != 2 || cs[1].Name != "t00002-kcb-scope-2" || cs[1].ProtocolMappers[0].Config["claim.name"] != "kcb_scope_2" {
		t.Errorf("tenant 2's client scopes: %+v", cs)
	}
	if e := s.Expected(); e.ClientScopes != 6 {
		t.Errorf("expected %d client scopes, want 6", e.ClientScopes)
	}
	if !newBuilder(Spec{Mode: ModeRealms, Tenants: 1, Content: s.Content, Prefix: "kcb"}).big() {
		t.Error("a tenant with client scopes is not made in parts")
	}
	c := DefaultContent
	c.ScopesPerClient = 101
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "client scopes per client = 101") {
		t.Errorf("101 scopes: %v", err)
	}
}
