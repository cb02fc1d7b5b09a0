package dataset

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// Export writes spec's tenants as Keycloak realm files into dir, one file
// per realm (<realm>-realm.json, the name `kc.sh export` uses), in the
// format `kc.sh import` and the admin console read. Passwords are
// pre-hashed where the policy allows, so an import does not hash.
func Export(spec Spec, dir string, progress func(done, total int)) ([]string, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	b := newBuilder(spec)
	var files []string
	write := func(name string, rep any) error {
		p := filepath.Join(dir, name+"-realm.json")
		if err := fileutil.WriteJSON(p, rep, 0o644); err != nil {
			return err
		}
		files = append(files, p)
		return nil
	}
	if spec.Mode == ModeOrgs {
		var all []int
		for i := 1; i <= spec.Tenants; i++ {
			all = append(all, i)
		}
		if err := write(spec.SharedRealm(), b.sharedRealm(all)); err != nil {
			return files, err
		}
		if progress != nil {
			progress(1, 1)
		}
		return files, nil
	}
	for i := 1; i <= spec.Tenants; i++ {
		if err := write(spec.RealmOf(i), b.tenantRealm(i)); err != nil {
			return files, fmt.Errorf("export tenant %s: %w", TenantID(i), err)
		}
		if progress != nil {
			progress(i, spec.Tenants)
		}
	}
	return files, nil
}

// ExportText writes spec's realm files into dir (kcbench dataset export)
// and says what it wrote on w.
func ExportText(w io.Writer, spec Spec, dir string, progress func(done, total int)) error {
	files, err := Export(spec, dir, progress)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %d realm files (%s mode, %d tenants) to %s\n", len(files), spec.Mode, spec.Tenants, dir)
	return nil
}
