package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/capacity/gate"
	"github.com/kcbench/kcbench/internal/fileutil"
)

const gateSynopsis = `gate --baseline DIR --current DIR [--max-regression 10%] [--min-latency-delta 2ms] [--json] [--json-out FILE]

Compares the current results against the baseline scenario by scenario and
exits 3 when one regressed: throughput at SLO (capacity searches) or
throughput (fixed-rate runs) dropped, or p95, p99 or server CPU-ms per op
rose, by more than --max-regression AND by more than the run-to-run spread
(max − min) of the repeats on either side (and latencies by more than
--min-latency-delta). A capacity search's p95/p99 are read at the highest
ramp rate every search passed, so that they compare like for like; its
CPU-ms per op at each search's best step (near saturation, where the
server's idle work weighs least).

DIR is a capacity folder (capacity.json; repeats in repeat-<i>/ or the
versions of a matrix in subfolders), an experiment results folder or point
(kcbench experiment), or a 'kcbench load --out' folder, or a folder of such
folders (repeats). The table goes to stdout (--json: JSON instead);
--json-out also writes the JSON to FILE.`

// percentFlag reads "10%" or "10".
type percentFlag float64

func (p *percentFlag) String() string { return strconv.FormatFloat(float64(*p), 'g', -1, 64) + "%" }

func (p *percentFlag) Set(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "%")), 64)
	if err != nil || f < 0 || f != f {
		return fmt.Errorf("%q: want a percentage such as 10%%", v)
	}
	*p = percentFlag(f)
	return nil
}

func cmdGate(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "gate", gateSynopsis)
	baseline := fs.String("baseline", "", "`DIR` of the baseline results")
	current := fs.String("current", "", "`DIR` of the results to check")
	maxReg := percentFlag(gate.DefaultMaxRegressionPct)
	fs.Var(&maxReg, "max-regression", "`PCT` a figure may worsen by before it fails the gate")
	floor := fs.Duration("min-latency-delta", time.Duration(gate.DefaultMinLatencyDeltaMs*float64(time.Millisecond)),
		"latency changes smaller than this never fail the gate")
	asJSON := fs.Bool("json", false, "write the comparison as JSON instead of a table")
	jsonOut := fs.String("json-out", "", "also write the comparison as JSON to `FILE`")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *baseline == "" || *current == "" {
		return usagef("gate: want --baseline DIR and --current DIR")
	}
	if *floor < 0 {
		return usagef("gate: --min-latency-delta must not be negative")
	}
	o := gate.Options{MaxRegressionPct: float64(maxReg), MinLatencyDeltaMs: float64(*floor) / float64(time.Millisecond)}
	rep, err := gate.Compare(*baseline, *current, o)
	if err != nil {
		return err
	}
	if *jsonOut != "" {
		if err := fileutil.WriteFile(*jsonOut, 0o644, rep.WriteJSON); err != nil {
			return err
		}
	}
	if *asJSON {
		err = rep.WriteJSON(e.stdout)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	if !rep.Pass {
		return codedError{code: exitThresholds, err: fmt.Errorf("gate: %d regression(s) beyond %g%%", len(rep.Regressions), float64(maxReg))}
	}
	return nil
}
