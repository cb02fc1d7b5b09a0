package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kcbench/kcbench/internal/kc"
)

// SeededRealms are the realms a manifest says kcbench created: every
// tenant's realm (the one shared realm in orgs mode) and the realms of
// realm files, each once, in order.
func (m *Manifest) SeededRealms() []string {
	var out []string
	add := func(r string) {
		if r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, r := range m.Realms {
		add(r)
	}
	for _, f := range m.Files {
		add(f.Realm)
	}
	if m.Spec.Content.BrokerUsers > 0 {
		add(m.Spec.IdPRealm())
	}
	return out
}

// DeleteText removes from a Keycloak exactly what the manifest at mpath
// says kcbench seeded there, its realms, and then the manifest itself;
// with dryRun it lists them and changes nothing. The master realm is
// never deleted; a realm already gone is said and skipped.
func DeleteText(ctx context.Context, w io.Writer, adm *kc.Admin, m *Manifest, mpath string, dryRun bool) error {
	realms := m.SeededRealms()
	if slices.Contains(realms, "master") {
		return fmt.Errorf("%s lists the master realm; kcbench never deletes it (is this a kcbench manifest?)", mpath)
	}
	if len(realms) == 0 {
		return fmt.Errorf("%s lists no realm: nothing to delete", mpath)
	}
	verb := "deleted"
	if dryRun {
		verb = "would delete"
	}
	deleted := 0
	for _, r := range realms {
		rep, err := adm.GetRealm(ctx, r)
		if errors.Is(err, kc.ErrNotFound) {
			fmt.Fprintf(w, "realm %s: not there (deleted before?)\n", r)
			continue
		}
		if err != nil {
			return fmt.Errorf("realm %s: %w", r, err)
		}
		if !dryRun {
			if err := adm.DeleteRealm(ctx, rep.Realm); err != nil {
				return fmt.Errorf("delete realm %s: %w (%d of %d deleted; rerun to go on)", r, err, deleted, len(realms))
			}
		}
		deleted++
		fmt.Fprintf(w, "realm %s: %s\n", r, verb)
	}
	if dryRun {
		fmt.Fprintf(w, "%d realms of %d listed in %s would be deleted, with everything in them (users, clients, organizations, sessions); nothing was changed\n", deleted, len(realms), mpath)
		return nil
	}
	if err := os.Remove(mpath); err != nil {
		return fmt.Errorf("the realms are deleted, the manifest is not: %w", err)
	}
	fmt.Fprintf(w, "%d realms deleted; manifest %s removed\n", deleted, mpath)
	return nil
}
