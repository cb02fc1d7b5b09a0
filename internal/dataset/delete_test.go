package dataset

import (
	"context"
	"strings"
	"testing"
)

// What a manifest lists is what delete removes: each realm once; a
// manifest naming the master realm or none is refused before any request.
func TestDeleteRefusesBeforeAsking(t *testing.T) {
	t.Parallel()
	m := &Manifest{Realms: []string{"kcb-t00001", "kcb-t00002"}, Files: []FileRealm{{Realm: "kcb-t00002"}, {Realm: "shop"}}}
	if got := strings.Join(m.SeededRealms(), ","); got != "kcb-t00001,kcb-t00002,shop" {
		t.Errorf("seeded realms %s", got)
	}
	for _, c := range []struct {
		m    *Manifest
		want string
	}{
		{&Manifest{Realms: []string{"kcb-t00001", "master"}}, "never deletes it"},
		{&Manifest{}, "nothing to delete"},
	} {
		var out strings.Builder
		// a nil admin: any request would panic
		err := DeleteText(context.Background(), &out, nil, c.m, "m.json", false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DeleteText(%v) = %v, want %q", c.m.Realms, err, c.want)
		}
	}
}
