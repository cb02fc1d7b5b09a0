package load

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// JobIndexEnv is the variable a Kubernetes Indexed Job sets to the pod's
// completion index.
const JobIndexEnv = "JOB_COMPLETION_INDEX"

// AgentFlags make one process an agent of a run split over several
// (Segment): --segment i/n, or --segments n with i from the Indexed
// Job's JOB_COMPLETION_INDEX, and --start-at for a common start.
type AgentFlags struct {
	segment  string
	segments int
	StartAt  string
	Emit     bool
	sourceIP string
	// LocalAddr is --source-ip, read by Resolve (zero: not given).
	LocalAddr netip.Addr
}

// RegisterFlags adds --segment, --segments, --emit-results and --start-at.
func (a *AgentFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.segment, "segment", a.segment, "`I/N`: run as agent I (0-based) of N: every N-th arrival of the schedule (open model) or 1/N of the VUs (closed), and a disjoint slice of the users; merge the agents' --out folders with kcbench merge")
	fs.IntVar(&a.segments, "segments", a.segments, "`N` agents, this one's index from $"+JobIndexEnv+" (a Kubernetes Indexed Job)")
	fs.BoolVar(&a.Emit, "emit-results", a.Emit, "after writing --out, print the folder on stdout as a bundle (a gzipped tar in base64 lines between markers) for kcbench k8s collect to read back from the pods' logs")
	fs.StringVar(&a.StartAt, "start-at", a.StartAt, "`TIME` (RFC 3339, e.g. 2026-11-25T06:00:00Z) at which the run's clock starts, after the VUs are set up: agents started apart begin together")
}

// RegisterSourceFlag adds --source-ip (kcbench load).
func (a *AgentFlags) RegisterSourceFlag(fs *flag.FlagSet) {
	fs.StringVar(&a.sourceIP, "source-ip", a.sourceIP, "`IP` (of this machine) to connect to the target from, e.g. 127.0.0.2, 127.0.0.3… for agents on one machine against a local Keycloak, so that its sessions and events tell them apart as they do pods")
}

// Resolve reads the flags; now is the current time.
func (a *AgentFlags) Resolve(getenv func(string) string, now time.Time) (Segment, time.Time, error) {
	var seg Segment
	var err error
	switch {
	case a.segment != "" && a.segments != 0:
		return seg, time.Time{}, errors.New("--segment and --segments exclude each other")
	case a.segment != "":
		if seg, err = ParseSegment(a.segment); err != nil {
			return seg, time.Time{}, fmt.Errorf("--segment: %w", err)
		}
	case a.segments != 0:
		v := getenv(JobIndexEnv)
		if v == "" {
			return seg, time.Time{}, fmt.Errorf("--segments: $%s is not set (give --segment I/N outside an Indexed Job)", JobIndexEnv)
		}
		i, err := strconv.Atoi(v)
		if err != nil {
			return seg, time.Time{}, fmt.Errorf("--segments: $%s=%q: not a number", JobIndexEnv, v)
		}
		seg = Segment{Index: i, Count: a.segments}
		if err := seg.Validate(); err != nil {
			return seg, time.Time{}, fmt.Errorf("--segments %d with $%s=%d: %w", a.segments, JobIndexEnv, i, err)
		}
	}
	if a.sourceIP != "" {
		if a.LocalAddr, err = netip.ParseAddr(a.sourceIP); err != nil {
			return seg, time.Time{}, fmt.Errorf("--source-ip %q: not an IP address", a.sourceIP)
		}
	}
	var at time.Time
	if a.StartAt != "" {
		if at, err = time.Parse(time.RFC3339, a.StartAt); err != nil {
			return seg, at, fmt.Errorf("--start-at %q: want an RFC 3339 time, e.g. 2026-11-25T06:00:00Z", a.StartAt)
		}
		if !at.After(now) {
			return seg, at, fmt.Errorf("--start-at %s is %s in the past: give a time after the agents' start", a.StartAt, now.Sub(at).Round(time.Second))
		}
	}
	return seg, at, nil
}

// EmitResults prints the --out folder as a bundle labelled with the
// segment, for kcbench k8s collect.
func EmitResults(w io.Writer, dir string, seg Segment) error {
	label := "segment=" + seg.String()
	if seg.Whole() {
		label = "segment=0/1"
	}
	return results.WriteBundle(w, dir, label)
}

// AgentParams records the agent's identity in its results' params.
func AgentParams(p map[string]string, seg Segment, at time.Time) {
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

// StartTime is when agents started now start together (kcbench k8s
// manifests): startAt (as --start-at) when given, else now + startIn,
// which must then be positive.
func StartTime(now time.Time, startIn time.Duration, startAt string, getenv func(string) string) (time.Time, error) {
	if startAt != "" {
		a := AgentFlags{StartAt: startAt}
		_, at, err := a.Resolve(getenv, now)
		return at, err
	}
	if startIn <= 0 {
		return time.Time{}, fmt.Errorf("--start-in %v: must be positive", startIn)
	}
	return now.Add(startIn).Truncate(time.Second), nil
}
