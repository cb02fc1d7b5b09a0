package stack

import (
	"errors"
	"os"
	"path/filepath"
)

// Dirs are kcbench's folders: Cache holds what can be fetched again
// (distributions, builds, PostgreSQL binaries), State holds stacks.
type Dirs struct {
	Cache string
	State string
}

// DefaultDirs follows the XDG base directory spec: $XDG_CACHE_HOME/kcbench
// and $XDG_STATE_HOME/kcbench. As root without XDG variables it uses
// /var/cache/kcbench and /var/lib/kcbench instead of /root/..., because the
// unprivileged PostgreSQL account must be able to reach its data folder.
func DefaultDirs(getenv func(string) string) (Dirs, error) {
	var d Dirs
	home, _ := os.UserHomeDir()
	root := os.Geteuid() == 0
	switch {
	case getenv("XDG_CACHE_HOME") != "":
		d.Cache = filepath.Join(getenv("XDG_CACHE_HOME"), "kcbench")
	case root:
		d.Cache = "/var/cache/kcbench"
	case home != "":
		d.Cache = filepath.Join(home, ".cache", "kcbench")
	}
	switch {
	case getenv("XDG_STATE_HOME") != "":
		d.State = filepath.Join(getenv("XDG_STATE_HOME"), "kcbench")
	case root:
		d.State = "/var/lib/kcbench"
	case home != "":
		d.State = filepath.Join(home, ".local", "state", "kcbench")
	}
	if d.Cache == "" || d.State == "" {
		return d, errors.New("no home folder: set XDG_CACHE_HOME and XDG_STATE_HOME")
	}
	return d, nil
}
