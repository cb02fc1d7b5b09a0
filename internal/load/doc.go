// Package load is kcbench's generic load engine: it decides how many virtual
// users (VUs) run a Scenario and when, records what they do, and renders the
// results. It knows nothing of Keycloak.
//
// The pieces, in the order data flows through them:
//
//   - Scenario and User (scenario.go) are the interfaces a workload
//     implements; they live here, at their consumer. Users record named
//     operations through an OpRecorder.
//   - Schedule (schedule.go) is a pure function from arrival index to
//     intended start offset: Constant and Ramp.
//   - Executors decide who runs when. Closed model (a fixed population of
//     VUs looping): ConstantVUs, RampingVUs, PerVUIterations. Open model
//     (arrivals on a Schedule, independent of how fast the target answers):
//     ConstantArrivalRate and RampingArrivalRate, which share one scheduler
//     loop. In the open model latency is measured from each arrival's
//     intended start, so a stalled target cannot hide its stall (no
//     coordinated omission), and an arrival that finds no free VU is counted
//     as dropped, never silently delayed.
//   - Recorder collects samples per VU without locks shared between VUs and
//     merges them once a second into HDR histograms, a timeline and totals.
//   - results.Stats is the typed result (results owns it, with Threshold
//     that checks it and WriteTimelineCSV); WriteSummary and
//     Recorder.WriteHlog render it.
//
// The engine never prints: progress is reported through a callback and all
// output goes to an io.Writer the caller passes in.
//
// Imports: the standard library, github.com/HdrHistogram/hdrhistogram-go
// and kcbench's results, which owns the file formats the engine writes
// (Stats, per-op stats, timeline rows, thresholds); results imports none
// of the pipeline's stages, so report and sizing read what load writes
// without importing load. This package must not import kcbench's kc,
// scenario or any other Keycloak-aware package; they import it.
package load
