package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// jobIndexEnv is the variable a Kubernetes Indexed Job sets to the pod's
// completion index.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// agentFlags make one process an agent of a run split over several
// (load.Segment): --segment i/n, or --segments n with i from the Indexed
// Job's JOB_COMPLETION_INDEX, and --start-at for a common start.
type agentFlags struct {
	segment  string
	segments int
	startAt  string
	emit     bool
}

func (a *agentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.segment, "segment", a.segment, "`I/N`: run as agent I (0-based) of N: every N-th arrival of the schedule (open model) or 1/N of the VUs (closed), and a disjoint slice of the users; merge the agents' --out folders with kcbench merge")
	fs.IntVar(&a.segments, "segments", a.segments, "`N` agents, this one's index from $"+jobIndexEnv+" (a Kubernetes Indexed Job)")
	fs.BoolVar(&a.emit, "emit-results", a.emit, "after writing --out, print the folder on stdout as a bundle (a gzipped tar in base64 lines between markers) for kcbench k8s collect to read back from the pods' logs")
	fs.StringVar(&a.startAt, "start-at", a.startAt, "`TIME` (RFC 3339, e.g. 2026-11-25T06:00:00Z) at which the run's clock starts, after the VUs are set up: agents started apart begin together")
}

// resolve reads the flags; now is the current time.
func (a *agentFlags) resolve(getenv func(string) string, now time.Time) (load.Segment, time.Time, error) {
	var seg load.Segment
	var err error
	switch {
	case a.segment != "" && a.segments != 0:
		return seg, time.Time{}, errors.New("--segment and --segments exclude each other")
	case a.segment != "":
		if seg, err = load.ParseSegment(a.segment); err != nil {
			return seg, time.Time{}, fmt.Errorf("--segment: %w", err)
		}
	case a.segments != 0:
		v := getenv(jobIndexEnv)
		if v == "" {
			return seg, time.Time{}, fmt.Errorf("--segments: $%s is not set (give --segment I/N outside an Indexed Job)", jobIndexEnv)
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return seg, time.Time{}, fmt.Errorf("--segments: $%s=%q: not a number", jobIndexEnv, v)
		}
		seg = load.Segment{Index: i, Count: a.segments}
		if err := seg.Validate(); err != nil {
			return seg, time.Time{}, fmt.Errorf("--segments %d with $%s=%d: %w", a.segments, jobIndexEnv, i, err)
		}
	}
	var at time.Time
	if a.startAt != "" {
		if at, err = time.Parse(time.RFC3339, a.startAt); err != nil {
			return seg, at, fmt.Errorf("--start-at %q: want an RFC 3339 time, e.g. 2026-11-25T06:00:00Z", a.startAt)
		}
		if !at.After(now) {
			return seg, at, fmt.Errorf("--start-at %s is %s in the past: give a time after the agents' start", a.startAt, now.Sub(at).Round(time.Second))
		}
	}
	return seg, at, nil
}

// emitResults prints the --out folder as a bundle labelled with the
// segment, for kcbench k8s collect.
func emitResults(w io.Writer, dir string, seg load.Segment) error {
	label := "segment=" + seg.String()
	if seg.Whole() {
		label = "segment=0/1"
	}
	return results.WriteBundle(w, dir, label)
}

// params records the agent's identity in its results' params.
func agentParams(p map[string]string, seg load.Segment, at time.Time) {
	if !seg.Whole() {
		p["segment"] = seg.String()
		host, _ := os.Hostname()
		p["agent_host"] = host
		p["agent_pid"] = strconv.Itoa(os.Getpid())
	}
	if !at.IsZero() {
		p["start_at"] = at.UTC().Format(time.RFC3339Nano)
	}
}
