// Package buildinfo tells which kcbench is running, for manifests and
// `kcbench version`.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version is the module version and the VCS revision it was built from
// (with "+dirty" when the work tree had changes), e.g.
// "v0.0.0-20261128063613-2515837b4b53" or "(devel) 2515837b4b53+dirty".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return version(bi)
}

func version(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && !strings.Contains(v, rev) {
		v += " " + rev
	}
	if dirty && !strings.HasSuffix(v, "+dirty") {
		v += "+dirty"
	}
	return v
}
