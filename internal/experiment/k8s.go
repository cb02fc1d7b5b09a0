package experiment

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/k8s"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
)

// K8sFlags are kcbench k8s manifests' flags: the objects' options, the
// run file or a split capacity search's flags, the dataset manifest and
// the start time.
type K8sFlags struct {
	O             k8s.Options
	file, dataset string
	startIn       *time.Duration
	startAt       *string
}

// RegisterFlags adds kcbench k8s manifests' flags.
func (f *K8sFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.file, "file", "", "the run `FILE` (kcbench load --file), put into the ConfigMap")
	fs.StringVar(&f.dataset, "manifest", "", "dataset manifest `FILE` (dataset.json: its users and clients), put into a Secret")
	f.startIn, f.startAt = f.O.RegisterFlags(fs)
}

// k8sSet are the flags of a split capacity search that the manifests set
// for every pod.
var k8sSet = []string{"manifest", "out", "target", "management-url", "segment", "segments", "start-at", "emit-results"}

// Manifests checks the parsed flags (fs's arguments after "--", when
// any, are `capacity FLAGS…`: a split capacity search instead of a load),
// reads the files and returns the objects with their common start time.
// Every error is a usage error.
func (f *K8sFlags) Manifests(fs *flag.FlagSet, now time.Time, getenv func(string) string) ([]byte, error) {
	o := &f.O
	if o.Agents < 1 || o.Agents > k8s.MaxAgents {
		return nil, cliutil.Usagef("--agents %d: must be between 1 and %d", o.Agents, k8s.MaxAgents)
	}
	var realm string
	switch rest := fs.Args(); {
	case len(rest) > 0 && rest[0] == "capacity":
		if f.file != "" {
			return nil, cliutil.Usagef("--file is a load's run file: a capacity search takes its flags after -- capacity")
		}
		var err error
		if realm, err = checkSplitCapacity(rest[1:], o.Agents); err != nil {
			return nil, err
		}
		o.Capacity = slices.Clone(rest[1:])
	case len(rest) > 0:
		return nil, cliutil.Usagef("k8s manifests: unexpected arguments %s (a split capacity search: -- capacity FLAGS…)", strings.Join(rest, " "))
	case f.file == "":
		return nil, cliutil.Usagef("--file: the run file is required (or -- capacity FLAGS… for a split capacity search)")
	default:
		cfg, err := ReadSplitRunFile(f.file, o.Agents)
		if err != nil {
			return nil, err
		}
		if o.RunYAML, err = fileutil.ReadFile(f.file, fileutil.MaxConfigFile); err != nil {
			return nil, cliutil.Usage(err)
		}
		realm = cfg.Realm
	}
	if f.dataset != "" {
		var err error
		if o.Dataset, err = fileutil.ReadFile(f.dataset, fileutil.MaxConfigFile); err != nil {
			return nil, cliutil.Usagef("--manifest: %v", err)
		}
	} else if realm == "" {
		return nil, cliutil.Usagef("the run names no realm: give --manifest dataset.json")
	}
	var err error
	if o.StartAt, err = load.StartTime(now, *f.startIn, *f.startAt, getenv); err != nil {
		return nil, cliutil.Usage(err)
	}
	for _, u := range append([]string{o.Target}, o.MgmtURLs...) {
		if err := kc.CheckURL(u); u != "" && err != nil {
			return nil, cliutil.Usage(err)
		}
	}
	b, err := k8s.Manifests(*o)
	if err != nil {
		return nil, cliutil.Usage(err)
	}
	return b, nil
}

// checkSplitCapacity checks a split capacity search's flags as the last of
// agents agents would (a fixed schedule: --max-rate required…) and returns
// the realm they name.
func checkSplitCapacity(args []string, agents int) (string, error) {
	fs := flag.NewFlagSet("capacity", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f CapacityFlags
	f.RegisterFlags(fs)
	var mf metrics.Flags
	mf.RegisterFlags(fs)
	for _, n := range k8sSet {
		if fs.Lookup(n) == nil {
			fs.String(n, "", "") // known, to be refused by name below
		}
	}
	if err := cliutil.Parse(fs, args, 0); err != nil {
		return "", cliutil.Usagef("-- capacity: %v", err)
	}
	var set []string
	fs.Visit(func(fl *flag.Flag) {
		if slices.Contains(k8sSet, fl.Name) {
			set = append(set, "--"+fl.Name)
		}
	})
	if len(set) > 0 {
		return "", cliutil.Usagef("-- capacity: %s: set by kcbench k8s manifests for every pod", strings.Join(set, ", "))
	}
	if fs.Lookup("kc-version").Value.String() != "" {
		return "", cliutil.Usagef("-- capacity: --kc-version starts local stacks: not for agent pods")
	}
	if err := errors.Join(matrixOnly(fs), mf.Check()); err != nil {
		return "", err
	}
	f.Segment, f.StartAt = load.Segment{Index: agents - 1, Count: agents}, time.Now().Add(time.Hour)
	if err := f.Validate(fs); err != nil {
		return "", cliutil.Usagef("-- capacity with --agents %d: %v", agents, err)
	}
	return f.Scen.Realm, nil
}
