// Package capacity finds the highest arrival rate a server sustains while
// meeting its SLOs, and records how it got there.
//
// Search takes a StepFunc, which runs one constant-arrival-rate step at a
// given rate for a given time and returns the engine's Stats (plus server
// CPU and RSS when the caller can measure them). It searches in one of three
// ways:
//
//   - Adaptive (Options.Adaptive, kcbench capacity's default; decide.go
//     explains it): short doubling probes warm the server up and estimate
//     its limit (where it fell behind, or Cores ÷ its CPU per operation),
//     unjudged steps below it settle the server until its CPU per
//     operation stops falling, short steps bracket the estimate and narrow it to a few per cent,
//     and steps long enough to see an overload of Precision confirm and
//     narrow the answer to Precision (1 %). Step lengths follow the rate
//     and the SLO's percentile (2,000 arrivals for a p99).
//   - Linear: a discarded warm-up at the starting rate, then steps rising
//     by Step from Start until one fails, then a binary search between the
//     last passing and the first failing rate down to Resolution. It is
//     the incremental mode of Keycloak's own benchmark.
//   - Fixed (schedule.go), for a search split over agents that never talk
//     to each other: the linear ramp fixed in advance up to MaxRate
//     (Options.Schedule), run by every agent at the same instants, judged
//     after the merge of their steps (JudgeSchedule), within Step.
//
// The adaptive and the linear search are rules (Next): a pure function
// from the steps run so far to the next step, which Search runs, judges
// and records until the rules say done; a table test replays the
// searches published in docs/results through them.
//
// None has its false passes: a step passes only when every SLO holds
// AND it achieved at least 95 % of the asked rate AND it dropped (or cut
// off) fewer than 1 % of its arrivals AND it completed at least 50
// successful iterations (Options.MinAchieved, MaxDropped, MinOK); the
// adaptive search's steps also fail when their median latency rose
// through the step (a growing queue: MaxLatencyRise). A step in which
// every iteration failed is a failure whatever the SLOs say; if even the
// starting rate fails, the Result says so plainly.
//
// The package knows nothing of Keycloak: kcbench's CLI binds the StepFunc
// to a scenario against a Keycloak. It imports results (the figures it
// judges and writes), load (a cancellable sleep) and the standard library
// only; it must not import kc, scenario, stack,
// dataset or experiment. Its gate subpackage compares results for CI.
//
// # capacity.json
//
// A search writes capacity.json and steps.csv (one row per step, the same
// figures) into its folder (Result.WriteDir). Other tools (kcbench gate,
// kcbench report, kcbench size --from) read capacity.json with ReadFile.
// Rates are iterations per second, latencies milliseconds from each
// arrival's intended start (open model: no coordinated omission), CPU is
// the server process's own CPU time.
//
//	schema               1
//	kind                 "capacity"
//	scenario             workload name, e.g. "password-grant" or "mix"
//	params               free-form labels: keycloak_version, dataset,
//	                     password_policy, target, machine_cores, repeat,
//	                     restarted ("true": Keycloak was restarted just
//	                     before the search, kcbench capacity --restart)…
//	slos                 the SLOs, canonical text, e.g. ["p99<500ms","errors<0.1%"]
//	settings             mode (adaptive | linear | fixed: a split
//	                     search's schedule, schedule.go), start, step,
//	                     step_duration_s, warmup_s, resolution, max_rate
//	                     (0: none), min_ok, min_achieved_pct,
//	                     max_dropped_pct, pause_s; adaptive: precision_pct,
//	                     cores, min_step_duration_s, max_step_duration_s,
//	                     max_latency_rise_pct
//	found                true when at least one step met every SLO
//	max_rate             THE RESULT: highest asked rate that met every SLO
//	                     (0 when none)
//	first_failed_rate    lowest rate that failed after the ramp: the limit
//	                     lies in [max_rate, first_failed_rate)
//	resolution_pct       adaptive: (first_failed_rate − max_rate) in % of
//	                     max_rate: how well the answer is known
//	predicted_rate       adaptive: cores ÷ CPU per operation in the probes
//	                     (absent when unknown)
//	estimated_rate       adaptive: where the bracket started
//	cpu_bound            adaptive: true when the server's cores were busy
//	                     at the first failure, false when not (then the
//	                     prediction was only a start)
//	failed_at_or_below   adaptive: judged steps at or below max_rate
//	                     that failed (a warming server, or a limit whose
//	                     latency is unsteady; absent when none)
//	server_uptime_s      how long the server had been up when the search
//	                     began (the local stack's youngest node; absent
//	                     when unknown): a just-booted JVM is still warming
//	                     up, and the conclusion says so
//	boot_s, rss_at_ready_bytes
//	                     the restart just before the search, when the
//	                     caller made one (--restart, a version matrix)
//	elapsed_s            the search's wall time
//	best_step            index of the step that set max_rate (-1: none)
//	achieved_rate        iterations/s finished at the best step
//	p95_ms, p99_ms       latency at the best step
//	cpu_ms_per_op        server CPU-ms per successful iteration at the best
//	                     step: what sizing needs (kcbench size --from)
//	server_cores         server CPU cores busy at the best step
//	ops_per_cpu_second   1000 / cpu_ms_per_op: operations per second per
//	                     fully used vCPU of server at that cost
//	max_rss_bytes        highest server RSS seen during any step
//	capped               true when max_rate is the cap (settings.max_rate
//	                     or the step limit) and no SLO failed: a lower bound
//	interrupted          true when the search was cancelled
//	conclusion           one sentence: the finding, or why there is none
//	boot_s, rss_at_ready_bytes  the server boot measured before the search
//	                     (version matrix), when measured
//	steps[]              every step in the order run, warm-up included:
//	  index, phase       warmup | probe | ramp | search | confirm (warmup
//	                     and probe steps are not judged; adaptive answers
//	                     come from confirm steps, or from bracket steps
//	                     as long as confirming ones)
//	  rate               asked; achieved_rate, ok_rate: finished and
//	                     successful iterations per second
//	  duration_s         measured window
//	  iterations, ok, errors, dropped, interrupted, dropped_pct, error_pct
//	  p50_ms, p95_ms, p99_ms, max_ms
//	  cpu_ms_per_op, server_cores, rss_bytes   (absent when unknown)
//	  slos[]             each SLO with its actual value and pass
//	  pass, failures[]   the verdict and every reason it failed
//	start, end           UTC times of the search
package capacity
