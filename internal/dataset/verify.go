package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/kc"
)

// Counts are the entities of a dataset.
type Counts struct {
	Realms           int `json:"realms"`
	Organizations    int `json:"organizations"`
	Clients          int `json:"clients"`
	ClientRoles      int `json:"client_roles"`
	RealmRoles       int `json:"realm_roles"`
	Groups           int `json:"groups"`
	Users            int `json:"users"`
	GroupMemberships int `json:"group_memberships"`
	OrgMemberships   int `json:"org_memberships"`
	// UMAResources are the resources of the tenants' resource servers.
	UMAResources int `json:"uma_resources,omitempty"`
	// IdentityProviders are the tenant realms' providers of the dataset's
	// identity-provider realm, and BrokerUsers that realm's users.
	IdentityProviders int `json:"identity_providers,omitempty"`
	BrokerUsers       int `json:"broker_users,omitempty"`
	// LinkedUsers are the tenant realms' users linked to those.
	LinkedUsers int `json:"linked_users,omitempty"`
	// ClientScopes are the tenants' client scopes (Shape.ScopesPerClient).
	ClientScopes int `json:"client_scopes,omitempty"`
}

func (c *Counts) add(o Counts) {
	c.Realms += o.Realms
	c.Organizations += o.Organizations
	c.Clients += o.Clients
	c.ClientRoles += o.ClientRoles
	c.RealmRoles += o.RealmRoles
	c.Groups += o.Groups
	c.Users += o.Users
	c.GroupMemberships += o.GroupMemberships
	c.OrgMemberships += o.OrgMemberships
	c.UMAResources += o.UMAResources
	c.IdentityProviders += o.IdentityProviders
	c.BrokerUsers += o.BrokerUsers
	c.LinkedUsers += o.LinkedUsers
	c.ClientScopes += o.ClientScopes
}

// Expected is what spec's tenants hold.
func (s Spec) Expected() Counts {
	n, c := s.Tenants, s.Content
	e := Counts{
		Clients:          n * c.Clients,
		ClientRoles:      n * c.Clients * c.ClientRolesPerClient,
		RealmRoles:       n * c.RealmRoles * (1 + int(c.compositesPerRole())),
		Groups:           n * c.Groups * (1 + int(c.subgroupsPerGroup())),
		Users:            n * (c.Users + c.OTPUsers),
		GroupMemberships: n * c.Users * max(1, c.GroupsPerUser),
		UMAResources:     n * c.UMAResources,
		ClientScopes:     n * c.ScopesPerClient,
	}
	if c.BrokerUsers > 0 {
		e.IdentityProviders, e.BrokerUsers, e.LinkedUsers = n, c.BrokerUsers, n*c.BrokerUsers
		if s.Mode == ModeOrgs { // the identity-provider realm's users are the tenants'
			e.BrokerUsers = n * c.BrokerUsers
		}
	}
	e.Clients += n * c.SAMLClients
	if c.UMAResources > 0 { // the resource server and its role
		e.Clients += n
		e.ClientRoles += n
	}
	if s.Mode == ModeOrgs {
		e.Realms = 1
		e.Organizations = n
		e.OrgMemberships = n * (c.Users + c.BrokerUsers) // linked users are members
	} else {
		e.Realms = n
	}
	return e
}

// Verification compares the Target with a manifest.
type Verification struct {
	Expected Counts `json:"expected"`
	Actual   Counts `json:"actual"`
	// Beyond counts the dataset's tenants on the Target past the
	// manifest's last (realms, or organizations in the shared realm, of
	// its prefix and numbering): left by a larger seed, outside every
	// count above.
	Beyond int `json:"beyond_manifest"`
	// Sessions compares the sessions seeded with those the realms hold
	// (nil: none were seeded).
	Sessions *SessionCheck `json:"sessions,omitempty"`
}

// SessionCheck is what the realms hold of the sessions seeded: Keycloak's
// counts (client-session-stats), and the online sessions still to be
// there (Alive): a seeded online session idles out within the realm's SSO
// idle timeout after seeding. Loads add sessions: counts above what was
// seeded are fine.
type SessionCheck struct {
	Seeded  SessionSpec `json:"seeded"`
	Counted SessionSpec `json:"counted"`
	Alive   int         `json:"online_alive"`
	// MinRealm and MaxRealm are the fewest and most a realm holds (realms
	// mode: the per-tenant figure).
	MinRealm SessionSpec `json:"min_per_realm"`
	MaxRealm SessionSpec `json:"max_per_realm"`
}

// OK: the realms hold at least the seeded offline sessions and the online
// ones not idled out yet.
func (c *SessionCheck) OK() bool {
	return c == nil || c.Counted.Offline >= c.Seeded.Offline && c.Counted.Online >= c.Alive
}

// aliveOnline is how many of the online sessions seeded at st.At are still
// within their idle timeout at now (their last refreshes were spread
// evenly over it), less 1 % for the expiry task's timing.
func aliveOnline(st *SessionState, now time.Time) int {
	idle := time.Duration(max(st.OnlineIdleSeconds, 60)) * time.Second
	left := 1 - float64(now.Sub(st.At))/float64(idle)
	if left <= 0 {
		return 0
	}
	return int(float64(st.Online) * (left - 0.01))
}

// OK reports whether every count matches and no tenant lies beyond the
// manifest.
func (v Verification) OK() bool { return v.Expected == v.Actual && v.Beyond == 0 && v.Sessions.OK() }

// tally calls progress as parts of a count finish.
type tally struct {
	progress func(done, total int)
	total    int
	done     atomic.Int64
}

func newTally(progress func(done, total int), total int) *tally {
	t := &tally{progress: progress, total: total}
	if progress != nil {
		progress(0, total)
	}
	return t
}

func (t *tally) add() {
	if t.progress != nil {
		done := int(t.done.Add(1))
		t.progress(done, max(done, t.total)) // more than expected: a mismatch, shown full
	}
}

// tick is add when t has a progress to report to, else nil.
func (t *tally) tick() func() {
	if t.progress == nil {
		return nil
	}
	return t.add
}

// bigClients is the clients per tenant from which verify counts its
// progress in clients, not tenants: a request per client makes a big
// tenant's count minutes long (20,000 clients: 3 to 4 minutes here).
const bigClients = 500

// VerifyUnit is what Verify's progress counts for m: "realms" (a file
// dataset), "clients" (tenants of bigClients clients or more) or
// "tenants".
func VerifyUnit(m *Manifest) string {
	switch {
	case m.Files != nil:
		return "realms"
	case m.Spec.Content.Clients >= bigClients:
		return "clients"
	}
	return "tenants"
}

// countTenants counts spec's tenants 1..spec.Tenants on the Target, and
// how many of the dataset's tenants lie beyond them (Verification.Beyond),
// from the same listing of realms or organizations.
func countTenants(ctx context.Context, adm *kc.Admin, spec Spec, progress func(done, total int)) (total Counts, beyond int, err error) {
	var mu sync.Mutex
	clients := &tally{} // progress by tenant, or by client (VerifyUnit)
	if spec.Content.Clients >= bigClients {
		clients, progress = newTally(progress, spec.Expected().Clients), nil
	}
	if spec.Mode == ModeOrgs {
		return countOrgTenants(ctx, adm, spec, progress, clients)
	}
	realms, err := adm.Realms(ctx)
	if err != nil {
		return total, 0, err
	}
	present := map[string]bool{}
	var ids []string
	for _, r := range realms {
		present[r.Realm] = true
		if id, ok := strings.CutPrefix(r.Realm, spec.Prefix+"-"); ok {
			ids = append(ids, id)
		}
	}
	beyond = tenantsBeyond(ids, spec.Tenants)
	var todo []string
	for i := 1; i <= spec.Tenants; i++ {
		if present[spec.RealmOf(i)] {
			todo = append(todo, spec.RealmOf(i))
		}
	}
	t := newTally(progress, len(todo))
	err = Parallel(ctx, len(todo), 8, func(ctx context.Context, k int) error {
		c, err := countRealm(ctx, adm, todo[k], nil, clients.tick())
		if err == nil && spec.Content.BrokerUsers > 0 {
			c.IdentityProviders, err = countIdPs(ctx, adm, todo[k], spec)
			if err == nil {
				c.LinkedUsers, err = adm.Count(ctx, kc.RealmPath(todo[k], "users", "count")+"?search=broker-")
			}
		}
		if err != nil {
			return err
		}
		c.Realms = 1
		mu.Lock()
		total.add(c)
		mu.Unlock()
		t.add()
		return nil
	})
	if err == nil {
		total.BrokerUsers, err = countBrokerUsers(ctx, adm, spec)
	}
	return total, beyond, err
}

// countOrgTenants is countTenants in orgs mode; clients ticks as the
// shared realm's clients are counted.
func countOrgTenants(ctx context.Context, adm *kc.Admin, spec Spec, progress func(done, total int), clients *tally) (total Counts, beyond int, err error) {
	var mu sync.Mutex
	realm := spec.SharedRealm()
	if _, err := adm.GetRealm(ctx, realm); err != nil {
		if isNotFound(err) {
			return total, 0, nil
		}
		return total, 0, err
	}
	total.Realms = 1
	shared, err := countRealm(ctx, adm, realm, func(name string) bool {
		return tenantOf(name) <= spec.Tenants && tenantOf(name) > 0 && !strings.Contains(name, linkedMark)
	}, clients.tick())
	if err != nil {
		return total, 0, err
	}
	total.add(shared)
	if spec.Content.BrokerUsers > 0 {
		if total.IdentityProviders, err = countIdPs(ctx, adm, realm, spec); err == nil {
			total.LinkedUsers, err = adm.Count(ctx, kc.RealmPath(realm, "users", "count")+"?search="+url.QueryEscape("*"+linkedMark+"*"))
		}
		if err != nil {
			return total, 0, err
		}
	}
	all, err := adm.AllOrganizations(ctx, realm)
	if err != nil {
		return total, 0, err
	}
	orgs := map[string]string{}
	var aliases []string
	for _, o := range all {
		orgs[o.Alias] = o.ID
		aliases = append(aliases, o.Alias)
	}
	beyond = tenantsBeyond(aliases, spec.Tenants)
	var ids []string
	for i := 1; i <= spec.Tenants; i++ {
		if id := orgs[TenantID(i)]; id != "" {
			ids = append(ids, id)
		}
	}
	total.Organizations = len(ids)
	t := newTally(progress, len(ids))
	err = Parallel(ctx, len(ids), 8, func(ctx context.Context, k int) error {
		n, err := adm.Count(ctx, kc.RealmPath(realm, "organizations", ids[k], "members", "count"))
		mu.Lock()
		total.OrgMemberships += n
		mu.Unlock()
		t.add()
		return err
	})
	if err == nil {
		total.BrokerUsers, err = countBrokerUsers(ctx, adm, spec)
	}
	return total, beyond, err
}

// countBrokerUsers counts the identity-provider realm's users (0 when
// the spec or the server has none).
func countBrokerUsers(ctx context.Context, adm *kc.Admin, spec Spec) (int, error) {
	if spec.Content.BrokerUsers == 0 {
		return 0, nil
	}
	search := "broker-"
	if spec.Mode == ModeOrgs {
		search = "*" + linkedMark + "*"
	}
	n, err := adm.Count(ctx, kc.RealmPath(spec.IdPRealm(), "users", "count")+"?search="+url.QueryEscape(search))
	if errors.Is(err, kc.ErrNotFound) {
		err = nil // no identity-provider realm: counted 0
	}
	return n, err
}

// countIdPs counts a tenant realm's identity providers of the dataset
// (IdPAlias).
func countIdPs(ctx context.Context, adm *kc.Admin, realm string, spec Spec) (int, error) {
	var ps []kc.IdentityProviderRep
	if err := adm.Do(ctx, http.MethodGet, kc.RealmPath(realm, "identity-provider", "instances")+"?first=0&max=1000000", nil, &ps); err != nil {
		return 0, err
	}
	n := 0
	for _, p := range ps {
		i := tenantOf(p.Alias)
		if (spec.Mode == ModeRealms && p.Alias == IdPAlias) || (spec.Mode == ModeOrgs && i > 0 && i <= spec.Tenants && p.Alias == spec.IdPAliasOf(i)) {
			n++
		}
	}
	return n, nil
}

// scopeMark starts the names of the dataset's client scopes (after the
// tenant's prefix in orgs mode).
const scopeMark = "kcb-scope-"

// linkedMark is in the names of the users linked to an identity
// provider, and only in theirs.
const linkedMark = "-broker-"

// tenantsBeyond counts the tenant ids (tNNNNN) among names numbered above
// n.
func tenantsBeyond(names []string, n int) int {
	k := 0
	for _, name := range names {
		if i := tenantOf(name + "-"); len(name) == len(TenantID(1)) && i > n {
			k++
		}
	}
	return k
}

// tenantOf reads the tenant number from an orgs-mode name ("t00042-web"
// → 42); 0 when the name is not a tenant's.
func tenantOf(name string) int {
	var n int
	if len(name) < 7 || name[0] != 't' || name[6] != '-' {
		return 0
	}
	if _, err := fmt.Sscanf(name[1:6], "%05d", &n); err != nil {
		return 0
	}
	return n
}

// ours tells the dataset's entities from Keycloak's built-in ones in a
// realms-mode realm.
func ours(name string) bool {
	for _, p := range []string{"web", "backend", "saml-", "role-", "group-", "user-", "otp-user-", scopeMark} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return name == "api" // the resource server (Spec.UMAClient)
}

// verifyRequests is how many requests a realm's count has under way.
const verifyRequests = 4

// countRealm counts one realm's dataset entities; keep (nil: ours) picks
// them by name.
func countRealm(ctx context.Context, adm *kc.Admin, realm string, keep func(string) bool, tick func()) (Counts, error) {
	own := keep == nil
	if own {
		keep = ours
	}
	var c Counts
	clients, err := adm.Clients(ctx, realm, "")
	if err != nil {
		return c, err
	}
	var ourClients []kc.ClientRep
	for _, cl := range clients {
		if keep(cl.ClientID) {
			ourClients = append(ourClients, cl)
		}
	}
	c.Clients = len(ourClients)
	// A request per client, a few at a time (20,000 clients: 20,000
	// requests).
	var mu sync.Mutex
	err = Parallel(ctx, len(ourClients), verifyRequests, func(ctx context.Context, k int) error {
		cl := ourClients[k]
		n := 0
		if cl.AuthorizationServicesEnabled {
			var err error
			if n, err = countAuthzResources(ctx, adm, realm, cl.ID); err != nil {
				return err
			}
		}
		var rs []kc.RoleRep
		if err := adm.Do(ctx, http.MethodGet, kc.RealmPath(realm, "clients", cl.ID, "roles"), nil, &rs); err != nil {
			return err
		}
		mu.Lock()
		c.UMAResources += n
		c.ClientRoles += len(rs)
		mu.Unlock()
		if tick != nil {
			tick()
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	roles, err := adm.RealmRoles(ctx, realm)
	if err != nil {
		return c, err
	}
	for _, r := range roles {
		if keep(r.Name) {
			c.RealmRoles++
		}
	}
	groups, err := adm.Groups(ctx, realm)
	if err != nil {
		return c, err
	}
	var scopes []kc.ClientScopeRep
	if err := adm.Do(ctx, http.MethodGet, kc.RealmPath(realm, "client-scopes"), nil, &scopes); err != nil {
		return c, err
	}
	for _, s := range scopes {
		if keep(s.Name) && strings.Contains(s.Name, scopeMark) {
			c.ClientScopes++
		}
	}
	for _, g := range groups {
		if !keep(g.Name) {
			continue
		}
		n, m, err := countGroupTree(ctx, adm, realm, g)
		if err != nil {
			return c, err
		}
		c.Groups += n
		c.GroupMemberships += m
	}
	n, err := countUsers(ctx, adm, realm, keep, own)
	c.Users = n
	return c, err
}

// countGroupTree counts group g and its subgroups, and their members.
func countGroupTree(ctx context.Context, adm *kc.Admin, realm string, g kc.GroupRep) (groups, members int, err error) {
	groups = 1
	if members, err = countMembers(ctx, adm, realm, g.ID); err != nil || g.SubGroupCount == 0 {
		return groups, members, err
	}
	const page = 1000
	for first := 0; ; first += page {
		cs, err := adm.GroupChildren(ctx, realm, g.ID, first, page)
		if err != nil {
			return groups, members, err
		}
		for _, c := range cs {
			n, m, err := countGroupTree(ctx, adm, realm, c)
			if err != nil {
				return groups, members, err
			}
			groups, members = groups+n, members+m
		}
		if len(cs) < page {
			return groups, members, nil
		}
	}
}

// countMembers counts a group's members: a page of 1,000, and past that by
// bisection over pages of one (does the member at offset x exist?).
// Keycloak pages with an SQL OFFSET: with 500,000 members a page took
// 1.3 s, so paging through them all would take 10 minutes; about 40
// single-member pages do.
func countMembers(ctx context.Context, adm *kc.Admin, realm, id string) (int, error) {
	page := func(first, max int) (int, error) {
		var ms []kc.UserRep
		p := kc.RealmPath(realm, "groups", id, "members") + fmt.Sprintf("?first=%d&max=%d&briefRepresentation=true", first, max)
		err := adm.Do(ctx, http.MethodGet, p, nil, &ms)
		return len(ms), err
	}
	return bisectCount(page)
}

// bisectCount counts what page(first, max) pages through (page answers
// how many items of [first, first+max) exist).
func bisectCount(page func(first, max int) (int, error)) (int, error) {
	const first = 1000
	n, err := page(0, first)
	if err != nil || n < first {
		return n, err
	}
	// At least lo members (one at offset lo-1), fewer than hi (none at
	// hi-1).
	lo, hi := first, 2*first
	for {
		k, err := page(hi-1, 1)
		if err != nil {
			return 0, err
		}
		if k == 0 {
			break
		}
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		k, err := page(mid-1, 1)
		if err != nil {
			return 0, err
		}
		if k > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// countUsers counts a realm's dataset users. In a realms-mode realm (own)
// without user federation Keycloak counts them: users/count of the
// dataset's username prefixes (a prefix search since Keycloak 22), one
// request where paging through 1,000,000 users took over 10 minutes;
// otherwise (the shared realm, users in LDAP) a page of users at a time,
// kept by name.
func countUsers(ctx context.Context, adm *kc.Admin, realm string, keep func(string) bool, own bool) (int, error) {
	if own {
		var fed []kc.ComponentRep
		if err := adm.Do(ctx, http.MethodGet, kc.RealmPath(realm, "components")+"?type="+url.QueryEscape(UserStorageType), nil, &fed); err != nil {
			return 0, err
		}
		if len(fed) == 0 {
			n := 0
			for _, prefix := range []string{"user-", "otp-user-"} {
				k, err := adm.Count(ctx, kc.RealmPath(realm, "users", "count")+"?search="+url.QueryEscape(prefix))
				if err != nil {
					return 0, err
				}
				n += k
			}
			return n, nil
		}
	}
	n := 0
	for first := 0; ; first += 1000 {
		us, err := adm.Users(ctx, realm, first, 1000)
		if err != nil {
			return n, err
		}
		for _, u := range us {
			if keep(u.Username) {
				n++
			}
		}
		if len(us) < 1000 {
			return n, nil
		}
	}
}

// countAuthzResources counts the dataset's resources (UMAResource's
// names) of client id's authorization services, a page at a time. Keycloak
// 26.0 adds a "Default Resource" of its own to a resource server made
// through the admin API (seed --strategy rest), not counted.
func countAuthzResources(ctx context.Context, adm *kc.Admin, realm, id string) (int, error) {
	n := 0
	for first := 0; ; first += 1000 {
		rs, err := adm.AuthzResources(ctx, realm, id, first, 1000)
		if err != nil {
			return n, fmt.Errorf("resources of client %s in realm %s: %w", id, realm, err)
		}
		for _, r := range rs {
			if strings.HasPrefix(r.Name, umaResourcePrefix) {
				n++
			}
		}
		if len(rs) < 1000 {
			return n, nil
		}
	}
}

func isNotFound(err error) bool { return errors.Is(err, kc.ErrNotFound) }

// Verify counts the Target's copy of the manifest's dataset.
//
// progress, when not nil, is called with the tenants (or realm files, or
// clients: VerifyUnit) counted so far and their total, as the counting
// goes, from several goroutines at once.
func Verify(ctx context.Context, adm *kc.Admin, m *Manifest, progress func(done, total int)) (Verification, error) {
	if m.Files != nil {
		return verifyFiles(ctx, adm, m.Files, progress)
	}
	act, beyond, err := countTenants(ctx, adm, m.Spec, progress)
	if err != nil {
		return Verification{}, err
	}
	v := Verification{Expected: m.Spec.Expected(), Actual: act, Beyond: beyond}
	if st := m.Sessions; st != nil && st.Any() {
		v.Sessions = &SessionCheck{Seeded: st.SessionSpec, Alive: aliveOnline(st, time.Now())}
		for _, r := range m.Realms {
			on, off, err := adm.SessionStats(ctx, r)
			if err != nil {
				return v, err
			}
			c := v.Sessions
			c.Counted.Online += on
			c.Counted.Offline += off
			if r == m.Realms[0] {
				c.MinRealm, c.MaxRealm = SessionSpec{on, off}, SessionSpec{on, off}
			}
			c.MinRealm = SessionSpec{min(c.MinRealm.Online, on), min(c.MinRealm.Offline, off)}
			c.MaxRealm = SessionSpec{max(c.MaxRealm.Online, on), max(c.MaxRealm.Offline, off)}
		}
	}
	return v, nil
}

// verifyFiles counts the realms, users and clients of a file dataset.
func verifyFiles(ctx context.Context, adm *kc.Admin, files []FileRealm, progress func(done, total int)) (Verification, error) {
	var v Verification
	realms, err := adm.Realms(ctx)
	if err != nil {
		return v, err
	}
	present := map[string]bool{}
	for _, r := range realms {
		present[r.Realm] = true
	}
	var mu sync.Mutex
	for _, f := range files {
		v.Expected.Realms++
		v.Expected.Users += len(f.Users)
		v.Expected.Clients += len(f.Clients)
	}
	t := newTally(progress, len(files))
	err = Parallel(ctx, len(files), 8, func(ctx context.Context, k int) error {
		f := files[k]
		defer t.add()
		if !present[f.Realm] {
			return nil
		}
		n, err := adm.Count(ctx, kc.RealmPath(f.Realm, "users", "count"))
		if err != nil {
			return err
		}
		cs, err := adm.Clients(ctx, f.Realm, "")
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, c := range f.Clients {
			want[c.ClientID] = true
		}
		found := 0
		for _, c := range cs {
			if want[c.ClientID] {
				found++
			}
		}
		mu.Lock()
		v.Actual.Realms++
		v.Actual.Users += n
		v.Actual.Clients += found
		mu.Unlock()
		return nil
	})
	return v, err
}

// WriteText writes the manifest's counts beside the target's, one entity a
// row, each marked ok or MISMATCH.
func (v Verification) WriteText(w io.Writer) {
	var exp, act map[string]int
	b, _ := json.Marshal(v.Expected)
	json.Unmarshal(b, &exp)
	b, _ = json.Marshal(v.Actual)
	json.Unmarshal(b, &act)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "entity\tmanifest\ttarget\t\t")
	for _, k := range []string{"realms", "organizations", "clients", "client_roles", "realm_roles", "groups", "users", "group_memberships", "org_memberships", "uma_resources", "identity_providers", "broker_users", "linked_users", "client_scopes"} {
		if (k == "uma_resources" || k == "identity_providers" || k == "broker_users" || k == "linked_users" || k == "client_scopes") && exp[k] == 0 && act[k] == 0 {
			continue // a dataset without resource servers: no row
		}
		mark := "ok"
		if exp[k] != act[k] {
			mark = "MISMATCH"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", k, exp[k], act[k], mark)
	}
	if v.Beyond > 0 {
		fmt.Fprintf(tw, "tenants beyond the manifest\t0\t%d\tMISMATCH\t\n", v.Beyond)
	}
	if c := v.Sessions; c != nil {
		mark := func(ok bool) string {
			if ok {
				return "ok"
			}
			return "TOO FEW"
		}
		fmt.Fprintf(tw, "offline sessions (at least)\t%d\t%d\t%s\t\n", c.Seeded.Offline, c.Counted.Offline, mark(c.Counted.Offline >= c.Seeded.Offline))
		fmt.Fprintf(tw, "online sessions (at least)\t%d\t%d\t%s\t\n", c.Alive, c.Counted.Online, mark(c.Counted.Online >= c.Alive))
	}
	tw.Flush()
	if c := v.Sessions; c != nil && c.Seeded.Online > 0 {
		fmt.Fprintf(w, "(%d online sessions seeded, %d of them not idled out yet: seeded ones idle out over the realms' SSO idle timeout)\n", c.Seeded.Online, c.Alive)
	}
	if c := v.Sessions; c != nil && v.Actual.Realms > 1 {
		fmt.Fprintf(w, "sessions per realm (tenant): online %d–%d, offline %d–%d\n", c.MinRealm.Online, c.MaxRealm.Online, c.MinRealm.Offline, c.MaxRealm.Offline)
	}
}

// ErrMismatch is the error of a verification that found the target
// holding other than what the manifest says.
var ErrMismatch = errors.New("the target does not hold what the manifest says")

// VerifyText verifies m (read from mpath) against the target of adm
// (kcbench dataset verify), prints the verification to w as text or JSON
// and returns ErrMismatch when it failed. progress, when set, gives a
// progress display for what is counted ("tenants" or "realms").
func VerifyText(ctx context.Context, w io.Writer, adm *kc.Admin, m *Manifest, mpath string, asJSON bool, progress func(what string) func(done, total int)) error {
	v, err := Verify(ctx, adm, m, progress(VerifyUnit(m)))
	if err != nil {
		return err
	}
	if asJSON {
		if err := cliutil.WriteJSON(w, map[string]any{"manifest": mpath, "ok": v.OK(), "expected": v.Expected, "actual": v.Actual, "beyond_manifest": v.Beyond, "sessions": v.Sessions}); err != nil {
			return err
		}
	} else {
		v.WriteText(w)
	}
	if !v.OK() {
		return ErrMismatch
	}
	return nil
}
