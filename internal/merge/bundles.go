package merge

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// Synopsis is the usage line of kcbench merge (its help page is cmd/kcbench/help).
const Synopsis = `merge DIR... --out DIR`

// WriteBundles writes the agents' bundles (kcbench k8s collect reads them
// from the pods' logs) into out/agent-<i>, one folder per segment of one
// run, all there, and returns the folders.
func WriteBundles(out string, bs []results.Bundle) ([]string, error) {
	dirs, err := checkBundles(bs)
	if err != nil {
		return nil, err
	}
	var paths []string
	for i, b := range bs {
		dir := filepath.Join(out, dirs[i])
		// The folder's mark last (summary.json, or a capacity agent's
		// capacity-agent.json): its presence marks a complete folder.
		marks := []string{results.SummaryFile, results.CapacityAgentFile}
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range b.Files {
				if !slices.Contains(marks, n) && !yield(n) {
					return
				}
			}
		})
		for _, m := range marks {
			if _, ok := b.Files[m]; ok {
				names = append(names, m)
			}
		}
		for _, n := range names {
			p := filepath.Join(dir, filepath.FromSlash(n))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, err
			}
			if err := fileutil.WriteAtomic(p, b.Files[n], 0o644); err != nil {
				return nil, err
			}
		}
		paths = append(paths, dir)
	}
	return paths, nil
}

// checkBundles wants one bundle per segment of one run, all there, and
// names their folders.
func checkBundles(bs []results.Bundle) ([]string, error) {
	if len(bs) == 0 {
		return nil, errors.New("no kcbench results in the logs (did the pods finish? kubectl logs --tail=-1 gives whole logs)")
	}
	var n int
	seen := map[int]bool{}
	var dirs []string
	for _, b := range bs {
		seg, err := load.ParseSegment(strings.TrimPrefix(b.Label, "segment="))
		if err != nil {
			return nil, fmt.Errorf("bundle %q: %w", b.Label, err)
		}
		if n != 0 && seg.Count != n {
			return nil, fmt.Errorf("bundles of %d and %d agents: logs of two runs", n, seg.Count)
		}
		n = seg.Count
		if seen[seg.Index] {
			return nil, fmt.Errorf("segment %s twice in the logs (a retried pod?): give one log per agent", seg)
		}
		seen[seg.Index] = true
		_, load := b.Files[results.SummaryFile]
		if _, capacity := b.Files[results.CapacityAgentFile]; !load && !capacity {
			return nil, fmt.Errorf("segment %s: no %s (nor %s) in its bundle", seg, results.SummaryFile, results.CapacityAgentFile)
		}
		dirs = append(dirs, fmt.Sprintf("agent-%d", seg.Index))
	}
	var missing []string
	for i := range n {
		if !seen[i] {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("no results of agent(s) %s of %d in the logs", strings.Join(missing, ", "), n)
	}
	return dirs, nil
}

// WriteText writes the merged summary and the server's CPU per operation.
func (res *Result) WriteText(w io.Writer) error {
	if err := load.WriteSummary(w, res.Stats); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return res.CPU.Write(w)
}

// Collect reads the agents' bundles from r (their pods' logs, kcbench k8s
// collect), writes each agent's folder into dir/agent-<i>/ and their merge
// into dir/merged/, and prints the merged summary to out. The agents of a
// split capacity search merge into a capacity folder (CapacityReadWrite),
// whose result it returns (nil for a load).
func Collect(out io.Writer, r io.Reader, dir string, logf func(string, ...any)) (*results.CapacityResult, error) {
	bs, err := results.ReadBundles(r)
	if err != nil {
		return nil, err
	}
	paths, err := WriteBundles(dir, bs)
	if err != nil {
		return nil, err
	}
	logf("k8s collect: %d agents' folders in %s", len(paths), dir)
	merged := filepath.Join(dir, "merged")
	if split, err := IsCapacity(paths); err != nil {
		return nil, err
	} else if split {
		return CapacityReadWrite(paths, merged, out, logf)
	}
	res, err := ReadWrite(paths, merged, Options{}, logf)
	if err != nil {
		return nil, err
	}
	logf("k8s collect: merged into %s", merged)
	return nil, res.WriteText(out)
}

// ReadWrite reads the agents' folders dirs, writes their merge into dir and
// logs its notes (kcbench merge).
func ReadWrite(dirs []string, dir string, o Options, logf func(string, ...any)) (*Result, error) {
	res, err := Read(dirs, o)
	if err != nil {
		return nil, err
	}
	if err := write(dir, res, res.Notes, logf); err != nil {
		return nil, err
	}
	return res, nil
}

// write writes a merge into dir and logs its notes.
func write(dir string, m interface{ WriteDir(string) error }, notes []string, logf func(string, ...any)) error {
	if err := m.WriteDir(dir); err != nil {
		return err
	}
	for _, n := range notes {
		logf("merge: note: %s", n)
	}
	return nil
}
