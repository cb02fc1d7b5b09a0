// Package report turns the result files of an experiment into a report:
// one self-contained report.html, report.md (tables) and charts/*.png, and
// compares two runs scenario by scenario.
//
// report.html opens with the verdict (sentences whose figures come from
// the data, verdict.go), then the sizing estimate and where the run ran,
// then interactive charts: every PNG chart has a twin spec (spec.go) that
// assets/kcbench.js draws with Apache ECharts (assets/, vendored release,
// embedded with go:embed), so the page needs no network. A sweep with
// fewer than three tenant counts is drawn as grouped bars per workload.
//
// It reads files only (internal/results' point folders), so a report can
// always be rebuilt after the fact: Build reads and aggregates, the Model
// renders. Compare reads two result folders and flags each delta as noise
// when it lies within the spread of the repeats.
//
// A folder of capacity searches (capacity.json) gets its own report:
// latency and achieved rate against the asked rate (capacity.go).
//
// The live dashboard (live.go) serves the same page and chart code while a
// run goes: the CLI feeds it samples converted from the load engine's
// progress (report does not import load; only its browser test does, to
// drive a short run against an httptest server), and hands it the final
// report.html when the run ends.
//
// report imports results (every file format it reads, capacity.json,
// the per-op stats and observe.csv included), capacity/gate (the one
// regression judge, which Compare shares with kcbench gate), cliutil (the
// dashboard's flags) and fileutil; it must not import the stages that
// drive or watch a server (stack, kc, dataset, scenario, load, observe)
// nor the experiment runner: go list -deps ./internal/report shows no
// internal/load. The CLI's report and compare commands are Rebuild
// and CompareDirs (cli.go), with their help.
package report
