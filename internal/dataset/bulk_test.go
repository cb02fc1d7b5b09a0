package dataset

import (
	"testing"
)

func TestBulkHeadOf(t *testing.T) {
	c := DefaultContent
	for _, tc := range []struct {
		mode           Mode
		users, clients int
		roles, groups  int
		want           bulkHead
	}{
		{ModeRealms, 10, 2, 5, 2, bulkHead{}},                  // small: all through the API
		{ModeRealms, 130, 2, 5, 2, bulkHead{users: 10}},        // a period of roles (5) and groups (2)
		{ModeRealms, 100, 51, 5, 2, bulkHead{clients: 3}},      // users within a part
		{ModeRealms, 200, 60, 11, 7, bulkHead{77, 3}},          // lcm(11, 7)
		{ModeRealms, 5000, 2, 1000, 999, bulkHead{}},           // a period past maxBulkPeriod
		{ModeRealms, 150, 2, 150, 1, bulkHead{}},               // the period is every user
		{ModeOrgs, 100_000, 20_000, 5, 2, bulkHead{}},          // orgs mode: the API
		{ModeRealms, 1_000_000, 20_000, 5, 2, bulkHead{10, 3}}, //
	} {
		s := Spec{Mode: tc.mode, Tenants: 1, Content: c}
		s.Content.Users, s.Content.Clients, s.Content.RealmRoles, s.Content.Groups = tc.users, tc.clients, tc.roles, tc.groups
		if got := bulkHeadOf(s); got != tc.want {
			t.Errorf("%s %d users %d clients %d roles %d groups: head %+v, want %+v", tc.mode, tc.users, tc.clients, tc.roles, tc.groups, got, tc.want)
		}
	}
}

func TestByRoot(t *testing.T) {
	users := table(t, "user_entity", "id", "realm_id", "username")
	creds := table(t, "credential", "id", "user_id")
	tp := &template{tables: []*dbTable{users, creds}, tenant: "t00001",
		ids:    map[string]bool{"u1": true, "u2": true, "c1": true, "c2": true, "c3": true},
		rootOf: map[string]string{"u1": "u1", "u2": "u2", "c1": "u1", "c2": "u2", "c3": "u2"},
		rows: map[*dbTable][][]*string{
			users: {{strp("u1"), strp("r"), strp("a")}, {strp("u2"), strp("r"), strp("b")}},
			creds: {{strp("c1"), strp("u1")}, {strp("c2"), strp("u2")}, {strp("c3"), strp("u2")}},
		},
		rowRoots: map[*dbTable][]string{users: {"u1", "u2"}, creds: {"u1", "u2", "u2"}},
	}
	parts := tp.byRoot()
	if len(parts) != 2 || parts["u1"].rowCount() != 2 || parts["u2"].rowCount() != 3 {
		t.Fatalf("parts %v", parts)
	}
	if !parts["u2"].ids["c3"] || parts["u2"].ids["c1"] || *parts["u1"].rows[users][0][2] != "a" {
		t.Errorf("u1 %+v, u2 %+v", parts["u1"], parts["u2"])
	}
}

func TestBisectCount(t *testing.T) {
	for _, n := range []int{0, 1, 999, 1000, 1001, 1999, 2000, 2001, 4095, 500_000, 1_000_000, 1_234_567} {
		calls := 0
		got, err := bisectCount(func(first, size int) (int, error) {
			calls++
			return max(0, min(first+size, n)-first), nil
		})
		if err != nil || got != n {
			t.Errorf("%d items: counted %d, %v", n, got, err)
		}
		if calls > 45 {
			t.Errorf("%d items: %d pages", n, calls)
		}
	}
}
