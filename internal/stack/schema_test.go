package stack

import (
	"path/filepath"
	"strings"
	"testing"
)

// Each build, server binary and --db-schema has a template of its own,
// outside the build's private folder.
func TestSchemaTemplateDir(t *testing.T) {
	b := Build{Home: "/c/keycloak/26.7.3/builds/abc/keycloak"}
	d := schemaTemplateDir(b, "/c/postgres/17.5.0/bin", "17.5", "")
	if filepath.Dir(d) != "/c/keycloak/26.7.3/schemas" || !strings.HasPrefix(filepath.Base(d), "abc-pg17-") {
		t.Fatalf("template folder %s", d)
	}
	others := []string{
		schemaTemplateDir(Build{Home: "/c/keycloak/26.7.3/builds/def/keycloak"}, "/c/postgres/17.5.0/bin", "17.5", ""),
		schemaTemplateDir(b, "/usr/lib/postgresql/17/bin", "17.5", ""),
		schemaTemplateDir(b, "/c/postgres/17.5.0/bin", "17.5", "kc"),
		schemaTemplateDir(b, "/c/postgres/16.4.0/bin", "16.4", ""),
	}
	for _, o := range others {
		if o == d {
			t.Errorf("%s shared by another build, server or schema", o)
		}
	}
}
