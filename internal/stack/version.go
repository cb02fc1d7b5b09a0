package stack

import (
	"fmt"
	"regexp"
	"strconv"
)

// DefaultKeycloakVersion is the newest 26.x release known to boot here.
const DefaultKeycloakVersion = "26.7.3"

// Version is a Keycloak release number.
type Version struct{ Major, Minor, Patch int }

var versionRe = regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)$`)

// ParseVersion accepts "26.M.P" only: kcbench drives the Keycloak 26 line.
func ParseVersion(s string) (Version, error) {
	m := versionRe.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("keycloak version %q: want MAJOR.MINOR.PATCH, e.g. %s", s, DefaultKeycloakVersion)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	if v.Major != 26 {
		return Version{}, fmt.Errorf("keycloak version %s: kcbench supports the 26.x line only", s)
	}
	return v, nil
}
