package dataset

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/kcbench/kcbench/internal/kc"
)

// rest seeds todo with one admin call per entity and plain passwords,
// o.Concurrency tenants (and so requests) in flight.
func (sd *seeder) rest(ctx context.Context, todo []int) error {
	if sd.s.Mode == ModeOrgs && sd.orgIDs == nil {
		// The shared realm, empty, once.
		r := sd.b.realmBase(sd.s.SharedRealm(), true)
		if err := sd.adm.CreateRealm(ctx, r); err != nil && !errors.Is(err, kc.ErrConflict) {
			return fmt.Errorf("realm %s: %w", r.Realm, err)
		}
		sd.orgIDs = map[string]string{}
	}
	return Parallel(ctx, len(todo), sd.o.Concurrency, func(ctx context.Context, k int) error {
		if err := sd.restTenant(ctx, todo[k]); err != nil {
			return fmt.Errorf("tenant %s: %w", TenantID(todo[k]), err)
		}
		return nil
	})
}

// created tolerates a 409: in orgs mode a redone tenant may be half there.
func created(id string, err error) (string, error) {
	if errors.Is(err, kc.ErrConflict) {
		return "", nil
	}
	return id, err
}

func (sd *seeder) restTenant(ctx context.Context, i int) error {
	s := sd.s
	realm := s.RealmOf(i)
	if s.Mode == ModeRealms {
		// Marked incomplete until the last call.
		complete, err := sd.createRealm(ctx, realm, sd.b.realmBase(realm, false))
		if err != nil {
			return err
		}
		if complete {
			sd.markDone(i)
			return nil
		}
	} else if _, err := sd.ensureOrg(ctx, i); err != nil {
		// The organization first, incomplete: a seed cut off after this
		// leaves users that a resume can tell for half-made (a cut
		// between the users and a later organization left users without
		// their group, which a clone resume then skipped: 59 of 60
		// group memberships).
		return err
	}
	if err := sd.restClients(ctx, realm, i); err != nil {
		return err
	}
	roles, err := sd.restRoles(ctx, realm, i)
	if err != nil {
		return err
	}
	groups, err := sd.restGroups(ctx, realm, i)
	if err != nil {
		return err
	}
	userIDs, err := sd.restUsers(ctx, realm, i, roles, groups)
	if err != nil {
		return err
	}
	if s.Mode == ModeOrgs {
		return sd.completeOrg(ctx, i, userIDs)
	}
	if err := sd.markRealmComplete(ctx, realm); err != nil {
		return err
	}
	sd.markDone(i)
	return nil
}

// restClients makes tenant i's clients and their roles.
func (sd *seeder) restClients(ctx context.Context, realm string, i int) error {
	a := sd.adm
	for _, c := range sd.b.clients(i) {
		id, err := created(a.Create(ctx, kc.RealmPath(realm, "clients"), c))
		if err != nil {
			return err
		}
		if id == "" {
			cs, err := a.Clients(ctx, realm, c.ClientID)
			if err != nil || len(cs) == 0 {
				return fmt.Errorf("client %s: %v", c.ClientID, err)
			}
			id = cs[0].ID
		}
		if c.AuthorizationServicesEnabled || c.Protocol == "saml" {
			continue // Keycloak gave a resource server its role (UMAProtection); SAML clients have none
		}
		for k := 1; k <= sd.s.Content.ClientRolesPerClient; k++ {
			if _, err := created(a.Create(ctx, kc.RealmPath(realm, "clients", id, "roles"), kc.RoleRep{Name: ClientRole(k)})); err != nil {
				return err
			}
		}
	}
	return nil
}

// restRoles makes tenant i's realm roles and reads them back for their
// ids, by name.
func (sd *seeder) restRoles(ctx context.Context, realm string, i int) (map[string]kc.RoleRep, error) {
	roles := map[string]kc.RoleRep{}
	for k := 1; k <= sd.s.Content.RealmRoles; k++ {
		n := sd.s.RealmRole(i, k)
		if _, err := created(sd.adm.Create(ctx, kc.RealmPath(realm, "roles"), kc.RoleRep{Name: n})); err != nil {
			return nil, err
		}
		var r kc.RoleRep
		if err := sd.adm.Do(ctx, http.MethodGet, kc.RealmPath(realm, "roles", n), nil, &r); err != nil {
			return nil, err
		}
		roles[n] = r
	}
	return roles, nil
}

// restGroups makes tenant i's groups: their ids by name.
func (sd *seeder) restGroups(ctx context.Context, realm string, i int) (map[string]string, error) {
	groups := map[string]string{}
	for _, g := range sd.b.groups(i) {
		id, err := created(sd.adm.Create(ctx, kc.RealmPath(realm, "groups"), kc.GroupRep{Name: g.Name}))
		if err != nil {
			return nil, err
		}
		if id == "" {
			gs, err := sd.adm.Groups(ctx, realm)
			if err != nil {
				return nil, err
			}
			for _, x := range gs {
				if x.Name == g.Name {
					id = x.ID
				}
			}
		}
		groups[g.Name] = id
	}
	return groups, nil
}

// restUsers makes tenant i's users with a plain password (the server
// hashes it), then a role mapping and a group membership each: their ids
// by username.
func (sd *seeder) restUsers(ctx context.Context, realm string, i int, roles map[string]kc.RoleRep, groups map[string]string) (map[string]string, error) {
	s, a := sd.s, sd.adm
	userIDs := map[string]string{}
	for j := 1; j <= s.Content.Users; j++ {
		u := kc.UserRep{Username: s.Username(i, j), Enabled: true, Email: s.Email(i, j), EmailVerified: true,
			FirstName: "User", LastName: fmt.Sprintf("%s-%05d", TenantID(i), j),
			Credentials: []kc.CredentialRep{{Type: "password", Value: s.Password()}}}
		id, err := created(a.Create(ctx, kc.RealmPath(realm, "users"), u))
		if err != nil {
			return nil, err
		}
		if id == "" {
			found, err := a.FindUser(ctx, realm, u.Username)
			if err != nil || found == nil {
				return nil, fmt.Errorf("user %s: %v", u.Username, err)
			}
			id = found.ID
		}
		userIDs[u.Username] = id
		role := roles[s.UserRole(i, j)]
		if err := a.Do(ctx, http.MethodPost, kc.RealmPath(realm, "users", id, "role-mappings", "realm"), []kc.RoleRep{role}, nil); err != nil {
			return nil, err
		}
		if err := a.Do(ctx, http.MethodPut, kc.RealmPath(realm, "users", id, "groups", groups[s.UserGroup(i, j)]), nil, nil); err != nil {
			return nil, err
		}
	}
	for _, u := range sd.b.otpUsers(i) {
		u.Credentials[0] = kc.CredentialRep{Type: "password", Value: s.Password()}
		id, err := created(a.Create(ctx, kc.RealmPath(realm, "users"), u))
		if err != nil {
			return nil, fmt.Errorf("OTP user %s: %w", u.Username, err)
		}
		userIDs[u.Username] = id
	}
	return userIDs, nil
}
