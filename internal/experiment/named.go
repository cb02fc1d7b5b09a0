package experiment

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/kcbench/kcbench/experiments"
	"github.com/kcbench/kcbench/internal/cliutil"
)

// LoadNamed reads an experiment file, or a shipped one by name
// (quickstart, multitenancy, hashing, versions). Any path that exists,
// even as a broken or looping symbolic link, is read as a file, so that
// its problem is named rather than hidden behind "no such file".
func LoadNamed(arg string) (*File, error) {
	if _, err := os.Lstat(arg); err == nil {
		f, err := Load(arg)
		if err != nil {
			return nil, cliutil.Usage(err)
		}
		return f, nil
	}
	name := strings.TrimSuffix(arg, ".yaml") + ".yaml"
	b, err := fs.ReadFile(experiments.FS, name)
	if err != nil {
		var names []string
		ents, _ := fs.ReadDir(experiments.FS, ".")
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".yaml") {
				names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
			}
		}
		return nil, cliutil.Usagef("%s: no such file, and not a shipped experiment (%s)", arg, strings.Join(names, ", "))
	}
	f, err := Parse(b)
	if err != nil {
		return nil, cliutil.Usage(fmt.Errorf("%s (shipped): %w", name, err))
	}
	return f, nil
}
