package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// ReadDir reads the points of a results folder: an experiment folder
// (results/<experiment>) or one point's folder. A path that is not a folder
// is a usage error; a folder without finished points is an error.
func ReadDir(flagName, dir string) ([]*Point, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, cliutil.Usagef("--%s %s: no such folder (want results/<experiment>, as kcbench experiment run writes it)", flagName, dir)
	case err != nil:
		return nil, fmt.Errorf("--%s %s: %w", flagName, dir, err)
	case !st.IsDir():
		return nil, cliutil.Usagef("--%s %s: not a folder (want results/<experiment>)", flagName, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, SummaryFile)); err == nil {
		p, err := ReadPoint(dir)
		if err != nil {
			return nil, fmt.Errorf("--%s %s: %w", flagName, dir, err)
		}
		return []*Point{p}, nil
	}
	pts, err := ReadExperiment(dir)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	return pts, nil
}
