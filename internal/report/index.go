package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/results"
)

// IndexFile is what WriteIndex writes into the results folder.
const IndexFile = "index.html"

// IndexEntry is one results folder in the index.
type IndexEntry struct {
	Dir      string // relative to the index
	Kind     string // sweep, variants, capacity, point
	Date     time.Time
	Keycloak string
	Headline string
	Report   string // relative link to its report.html, "" when none
	Problem  string // why it could not be read
}

// Index lists every results folder under a directory.
func Index(root string) ([]IndexEntry, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("results %s: %w", root, err)
	}
	var out []IndexEntry
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		ie, ok := indexEntry(dir)
		if !ok {
			continue // not a results folder
		}
		ie.Dir = e.Name()
		if _, err := os.Stat(filepath.Join(dir, HTMLFile)); err == nil {
			ie.Report = e.Name() + "/" + HTMLFile
		}
		out = append(out, ie)
	}
	slices.SortStableFunc(out, func(a, b IndexEntry) int { return b.Date.Compare(a.Date) })
	return out, nil
}

// indexEntry describes dir without drawing anything; ok is false when dir
// holds no results.
func indexEntry(dir string) (IndexEntry, bool) {
	if caps, _ := results.FindCapacityDirs(dir); len(caps) > 0 {
		if pts, _ := filepath.Glob(filepath.Join(dir, "*", results.SummaryFile)); len(pts) == 0 {
			ie := IndexEntry{Kind: string(KindCapacity)}
			var heads, versions []string
			for _, d := range caps {
				r, err := results.ReadCapacityDir(d)
				if err != nil {
					ie.Problem = err.Error()
					continue
				}
				if ie.Date.IsZero() || r.Start.After(ie.Date) {
					ie.Date = r.Start
				}
				if v := r.Params[capacityParamVersion]; v != "" && !slices.Contains(versions, v) {
					versions = append(versions, v)
				}
				heads = append(heads, r.Scenario+": "+capacityFinding(r))
			}
			ie.Keycloak = strings.Join(versions, ", ")
			ie.Headline = strings.Join(heads, "; ")
			return ie, true
		}
	}
	e, err := loadExperiment(dir)
	if err != nil || len(e.points) == 0 {
		if _, serr := os.Stat(filepath.Join(dir, results.SummaryFile)); serr == nil {
			return IndexEntry{Kind: "point", Problem: fmt.Sprint(err)}, true
		}
		if pts, _ := filepath.Glob(filepath.Join(dir, "*", results.ManifestFile)); len(pts) > 0 {
			return IndexEntry{Kind: "experiment", Problem: fmt.Sprint(err)}, true
		}
		return IndexEntry{}, false
	}
	ie := IndexEntry{Kind: string(KindVariants)}
	if e.sweep {
		ie.Kind = string(KindSweep)
	}
	var versions []string
	for _, p := range e.points {
		if p.Manifest.Start.After(ie.Date) {
			ie.Date = p.Manifest.Start
		}
		if v := p.Manifest.Keycloak; v != "" && !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	ie.Keycloak = strings.Join(versions, ", ")
	ie.Headline = headline(e)
	return ie, true
}

// headline is an experiment's figure in a line: the configurations, and
// the warm (or only) phase's server CPU per operation of its first
// workload in each.
func headline(e *experiment) string {
	var parts []string
	done := 0
	for _, c := range e.configs {
		if len(c.done) > 0 {
			done++
		}
	}
	for _, c := range e.configs {
		if len(c.done) == 0 {
			continue
		}
		phase := preferredPhase([]*config{c})
		for _, w := range c.workloads() {
			if w.key.phase != phase {
				continue
			}
			s := fmt.Sprintf("%s: %s %.1f/s", c.label, w.key.String(), w.throughput.Mean)
			if w.cpuMs.Known() {
				s += fmt.Sprintf(", %.2f CPU-ms/op", w.cpuMs.Mean)
			}
			parts = append(parts, s)
			break
		}
		if len(parts) == 3 {
			break
		}
	}
	out := fmt.Sprintf("%d of %d configurations done", done, len(e.configs))
	if len(parts) > 0 {
		out += "; " + strings.Join(parts, "; ")
		if done > len(parts) {
			out += "; …"
		}
	}
	return out
}

// WriteIndex writes root/index.html: every results folder under root with
// its kind, date, Keycloak version, headline figure and a link to its
// report. It returns the page's path.
func WriteIndex(root string) (string, error) {
	es, err := Index(root)
	if err != nil {
		return "", err
	}
	m := &Model{Experiment: "results in " + filepath.Base(filepath.Clean(root)), IndexPage: true, Index: es}
	var buf bytes.Buffer
	if err := m.WriteHTML(&buf); err != nil {
		return "", err
	}
	path := filepath.Join(root, IndexFile)
	if err := fileutil.WriteAtomic(path, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}
