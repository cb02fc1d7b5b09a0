package kc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// esc escapes one path segment.
func esc(s string) string { return url.PathEscape(s) }

// RealmPath is "/admin/realms/{realm}" plus elements, each escaped.
func RealmPath(realm string, elems ...string) string {
	p := "/admin/realms/" + esc(realm)
	for _, e := range elems {
		p += "/" + esc(e)
	}
	return p
}

// Create POSTs body to path and returns the id from the Location header
// ("" when there is none).
func (a *Admin) Create(ctx context.Context, path string, body any) (string, error) {
	var loc string
	err := a.send(ctx, http.MethodPost, path, body, func(resp *http.Response) error {
		loc = resp.Header.Get("Location")
		return nil
	})
	if err != nil {
		return "", err
	}
	if loc == "" {
		return "", nil
	}
	return loc[strings.LastIndexByte(loc, '/')+1:], nil
}

// Count GETs a .../count endpoint, which answers a bare number.
func (a *Admin) Count(ctx context.Context, path string) (int, error) {
	var n int
	err := a.send(ctx, http.MethodGet, path, nil, func(resp *http.Response) error {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
		if err != nil {
			return err
		}
		n, err = strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("GET %s: not a count: %q", path, b)
		}
		return nil
	})
	return n, err
}

// send is Do with access to the raw response.
func (a *Admin) send(ctx context.Context, method, p string, body any, read func(*http.Response) error) error {
	tok, err := a.Token(ctx)
	if err != nil {
		return err
	}
	req, err := newJSONRequest(ctx, method, a.c.base+p, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return a.c.exchange(req, method+" "+p, read)
}

// CreateRealm creates a realm from a full representation (clients, roles,
// groups, users and organizations inline). Keycloak imports it in one
// transaction.
func (a *Admin) CreateRealm(ctx context.Context, rep any) error {
	return a.Do(ctx, http.MethodPost, "/admin/realms", rep, nil)
}

// GetRealm reads a realm.
func (a *Admin) GetRealm(ctx context.Context, realm string) (*RealmRep, error) {
	var r RealmRep
	if err := a.Do(ctx, http.MethodGet, RealmPath(realm), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// UpdateRealm PUTs a (partial) realm representation.
func (a *Admin) UpdateRealm(ctx context.Context, realm string, rep any) error {
	return a.Do(ctx, http.MethodPut, RealmPath(realm), rep, nil)
}

// DeleteRealm deletes a realm.
func (a *Admin) DeleteRealm(ctx context.Context, realm string) error {
	return a.Do(ctx, http.MethodDelete, RealmPath(realm), nil, nil)
}

// DeleteUser deletes a realm's user by id.
func (a *Admin) DeleteUser(ctx context.Context, realm, id string) error {
	return a.Do(ctx, http.MethodDelete, RealmPath(realm, "users", id), nil, nil)
}

// ClearRealmCache empties Keycloak's realm cache: every realm's realms,
// clients, roles, groups, client scopes and organizations (the endpoint is
// a realm's, the cache is the server's). For after the database was
// written behind Keycloak's back.
func (a *Admin) ClearRealmCache(ctx context.Context, realm string) error {
	return a.Do(ctx, http.MethodPost, RealmPath(realm, "clear-realm-cache"), nil, nil)
}

// LogoutAll ends every user session of a realm.
func (a *Admin) LogoutAll(ctx context.Context, realm string) error {
	return a.Do(ctx, http.MethodPost, RealmPath(realm, "logout-all"), nil, nil)
}

// ClientSessions counts a realm's online client sessions (GET
// client-session-stats: per client in use).
func (a *Admin) ClientSessions(ctx context.Context, realm string) (int, error) {
	online, _, err := a.SessionStats(ctx, realm)
	return online, err
}

// SessionStats counts a realm's online and offline client sessions (GET
// client-session-stats: per client in use).
func (a *Admin) SessionStats(ctx context.Context, realm string) (online, offline int, err error) {
	var stats []struct {
		Active  string `json:"active"`
		Offline string `json:"offline"`
	}
	if err := a.Do(ctx, http.MethodGet, RealmPath(realm, "client-session-stats"), nil, &stats); err != nil {
		return 0, 0, err
	}
	for _, s := range stats {
		on, err1 := strconv.Atoi(s.Active)
		off, err2 := strconv.Atoi(s.Offline)
		if err := errors.Join(err1, err2); err != nil {
			return 0, 0, fmt.Errorf("client-session-stats of %s: %w", realm, err)
		}
		online, offline = online+on, offline+off
	}
	return online, offline, nil
}

// PartialImport adds users, clients, groups and roles to a realm.
func (a *Admin) PartialImport(ctx context.Context, realm string, rep PartialImportRep) (*PartialImportResult, error) {
	var res PartialImportResult
	if err := a.Do(ctx, http.MethodPost, RealmPath(realm, "partialImport"), rep, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Organizations lists a realm's organizations, optionally filtered by an
// exact name.
func (a *Admin) Organizations(ctx context.Context, realm, exactName string, first, max int) ([]OrganizationRep, error) {
	q := url.Values{"first": {strconv.Itoa(first)}, "max": {strconv.Itoa(max)}, "briefRepresentation": {"false"}}
	if exactName != "" {
		q.Set("search", exactName)
		q.Set("exact", "true")
	}
	var orgs []OrganizationRep
	if err := a.Do(ctx, http.MethodGet, RealmPath(realm, "organizations")+"?"+q.Encode(), nil, &orgs); err != nil {
		return nil, err
	}
	return orgs, nil
}

// AllOrganizations lists every organization of a realm, page by page.
func (a *Admin) AllOrganizations(ctx context.Context, realm string) ([]OrganizationRep, error) {
	const page = 500
	var all []OrganizationRep
	for first := 0; ; first += page {
		orgs, err := a.Organizations(ctx, realm, "", first, page)
		if err != nil {
			return nil, err
		}
		all = append(all, orgs...)
		if len(orgs) < page {
			return all, nil
		}
	}
}

// AddOrganizationMember makes a user a member of an organization.
func (a *Admin) AddOrganizationMember(ctx context.Context, realm, orgID, userID string) error {
	// The bare id: Keycloak 26.0 looks up the body's text as it is (a
	// JSON string's quotes included: "User does not exist"); later lines
	// take either.
	return a.Do(ctx, http.MethodPost, RealmPath(realm, "organizations", orgID, "members"), rawBody(userID), nil)
}

// LinkOrganizationIdP links the realm's identity provider alias to an
// organization (as the bare alias: Keycloak 26.0 does not strip a JSON
// string's quotes).
func (a *Admin) LinkOrganizationIdP(ctx context.Context, realm, orgID, alias string) error {
	return a.Do(ctx, http.MethodPost, RealmPath(realm, "organizations", orgID, "identity-providers"), rawBody(alias), nil)
}

// OrganizationMembers lists an organization's members.
func (a *Admin) OrganizationMembers(ctx context.Context, realm, orgID string, first, max int) ([]UserRep, error) {
	var us []UserRep
	p := RealmPath(realm, "organizations", orgID, "members") + fmt.Sprintf("?first=%d&max=%d", first, max)
	if err := a.Do(ctx, http.MethodGet, p, nil, &us); err != nil {
		return nil, err
	}
	return us, nil
}

// FindUser looks a user up by exact username; nil when absent.
func (a *Admin) FindUser(ctx context.Context, realm, username string) (*UserRep, error) {
	var us []UserRep
	p := RealmPath(realm, "users") + "?exact=true&username=" + url.QueryEscape(username)
	if err := a.Do(ctx, http.MethodGet, p, nil, &us); err != nil {
		return nil, err
	}
	for i := range us {
		if us[i].Username == username {
			return &us[i], nil
		}
	}
	return nil, nil
}

// Users pages through a realm's users (brief representation).
func (a *Admin) Users(ctx context.Context, realm string, first, max int) ([]UserRep, error) {
	var us []UserRep
	p := RealmPath(realm, "users") + fmt.Sprintf("?first=%d&max=%d&briefRepresentation=true", first, max)
	if err := a.Do(ctx, http.MethodGet, p, nil, &us); err != nil {
		return nil, err
	}
	return us, nil
}

// SearchUsers is the admin console's user search: the users whose
// username, email, first or last name contain search, from first, at
// most max, in brief representation.
func (a *Admin) SearchUsers(ctx context.Context, realm, search string, first, max int) ([]UserRep, error) {
	var us []UserRep
	q := url.Values{"search": {search}, "first": {strconv.Itoa(first)}, "max": {strconv.Itoa(max)}, "briefRepresentation": {"true"}}
	if err := a.Do(ctx, http.MethodGet, RealmPath(realm, "users")+"?"+q.Encode(), nil, &us); err != nil {
		return nil, err
	}
	return us, nil
}

// Clients lists a realm's clients, or the one with clientID.
func (a *Admin) Clients(ctx context.Context, realm, clientID string) ([]ClientRep, error) {
	if clientID != "" {
		var cs []ClientRep
		err := a.Do(ctx, http.MethodGet, RealmPath(realm, "clients")+"?clientId="+url.QueryEscape(clientID), nil, &cs)
		return cs, err
	}
	// A page at a time: Keycloak 26.7.3 takes about 8 ms a client (a
	// page of 1,000 in 8 s), and one request for 20,000 ran past the
	// client's time-out.
	const page = 500
	var all []ClientRep
	for first := 0; ; first += page {
		var cs []ClientRep
		if err := a.Do(ctx, http.MethodGet, RealmPath(realm, "clients")+fmt.Sprintf("?first=%d&max=%d", first, page), nil, &cs); err != nil {
			return nil, err
		}
		all = append(all, cs...)
		if len(cs) < page {
			return all, nil
		}
	}
}

// AuthzResources lists a page of the resources of client id's (its
// internal id) authorization services.
func (a *Admin) AuthzResources(ctx context.Context, realm, id string, first, max int) ([]AuthzResourceRep, error) {
	var rs []AuthzResourceRep
	p := fmt.Sprintf("%s/authz/resource-server/resource?first=%d&max=%d", RealmPath(realm, "clients", id), first, max)
	if err := a.Do(ctx, http.MethodGet, p, nil, &rs); err != nil {
		return nil, err
	}
	return rs, nil
}

// RealmRoles lists a realm's roles.
func (a *Admin) RealmRoles(ctx context.Context, realm string) ([]RoleRep, error) {
	var rs []RoleRep
	if err := a.Do(ctx, http.MethodGet, RealmPath(realm, "roles")+"?first=0&max=100000&briefRepresentation=true", nil, &rs); err != nil {
		return nil, err
	}
	return rs, nil
}

// Groups lists a realm's top-level groups.
func (a *Admin) Groups(ctx context.Context, realm string) ([]GroupRep, error) {
	var gs []GroupRep
	if err := a.Do(ctx, http.MethodGet, RealmPath(realm, "groups")+"?first=0&max=100000&briefRepresentation=true", nil, &gs); err != nil {
		return nil, err
	}
	return gs, nil
}

// GroupChildren lists a page of a group's subgroups (their subgroup
// counts included).
func (a *Admin) GroupChildren(ctx context.Context, realm, id string, first, max int) ([]GroupRep, error) {
	var gs []GroupRep
	p := RealmPath(realm, "groups", id, "children") + fmt.Sprintf("?first=%d&max=%d&briefRepresentation=true", first, max)
	if err := a.Do(ctx, http.MethodGet, p, nil, &gs); err != nil {
		return nil, err
	}
	return gs, nil
}

// UserCredentials lists a user's credentials (secret data is not returned).
func (a *Admin) UserCredentials(ctx context.Context, realm, userID string) ([]CredentialRep, error) {
	var cs []CredentialRep
	if err := a.Do(ctx, http.MethodGet, RealmPath(realm, "users", userID, "credentials"), nil, &cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// Client is the client a carries its token with.
func (a *Admin) Client() *Client { return a.c }

// DeleteSession ends a user session of realm (an offline one with
// offline).
func (a *Admin) DeleteSession(ctx context.Context, realm, id string, offline bool) error {
	p := RealmPath(realm, "sessions", id)
	if offline {
		p += "?isOffline=true"
	}
	return a.Do(ctx, http.MethodDelete, p, nil, nil)
}
