package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "2515837b4b53aaaaaaaa"}}
	for _, c := range []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"(devel)", nil, "(devel)"},
		{"(devel)", rev, "(devel) 2515837b4b53"},
		{"v0.0.0-20261128063613-2515837b4b53", rev, "v0.0.0-20261128063613-2515837b4b53"},
		{"v0.0.0-20261128063613-2515837b4b53+dirty", append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "v0.0.0-20261128063613-2515837b4b53+dirty"},
		{"(devel)", append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "(devel) 2515837b4b53+dirty"},
		{"v1.2.0", nil, "v1.2.0"},
	} {
		bi := &debug.BuildInfo{Main: debug.Module{Version: c.main}, Settings: c.settings}
		if got := version(bi); got != c.want {
			t.Errorf("version(%q, %v) = %q, want %q", c.main, c.settings, got, c.want)
		}
	}
}
