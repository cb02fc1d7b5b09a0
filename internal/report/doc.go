// Package report turns the result files of an experiment into a report:
// one self-contained report.html (PNG charts embedded), report.md (tables)
// and charts/*.png, and compares two runs scenario by scenario.
//
// It reads files only (internal/results' point folders), so a report can
// always be rebuilt after the fact: Build reads and aggregates, the Model
// renders. Compare reads two result folders and flags each delta as noise
// when it lies within the spread of the repeats.
//
// A folder of capacity searches (capacity.json) gets its own report:
// latency and achieved rate against the asked rate (capacity.go).
//
// report imports results, capacity (capacity.json's reader), load (for
// the Stats inside summary.json),
// observe (for observe.csv's reader only) and fileutil; it must not import
// the stages that drive a server (stack, kc, dataset, scenario) nor the
// experiment runner.
package report
