// Package buildinfo tells which kcbench is running, for manifests and
// `kcbench version`.
package buildinfo

import "runtime/debug"

// Version is the module version, plus the VCS revision of a dev build.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v
}
