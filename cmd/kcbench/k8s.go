package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/k8s"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/merge"
	"github.com/kcbench/kcbench/internal/results"
)

const k8sSynopsis = `k8s manifests|collect [flags]

kcbench k8s manifests --agents N --file run.yaml --image IMAGE --target URL [--manifest dataset.json] [--start-in 2m]
  prints a ConfigMap with the run file, a Secret with the dataset manifest
  (when given) and an Indexed Job of N pods, each running its segment of
  the run (kcbench load --segments N, index from JOB_COMPLETION_INDEX),
  all starting at the same instant, each printing its results as a bundle
  on stdout. Pipe it into kubectl apply -f -.

kcbench k8s collect --out DIR [LOG...]
  reads the pods' logs (files, or stdin: kubectl logs -l
  app.kubernetes.io/instance=NAME --tail=-1 --prefix | kcbench k8s collect
  --out DIR), writes each agent's folder to DIR/agent-<i> and the exact
  merge of them to DIR/merged (as kcbench merge).`

func cmdK8s(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("k8s: want manifests or collect (kcbench k8s -h)")
	}
	switch args[0] {
	case "manifests":
		return cmdK8sManifests(e, args[1:])
	case "collect":
		return cmdK8sCollect(e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintf(e.stderr, "Usage: kcbench %s\n", k8sSynopsis)
		return nil
	}
	return usagef("k8s: unknown subcommand %q: want manifests or collect", args[0])
}

func cmdK8sManifests(e *env, args []string) error {
	fs := newFlags(e, "k8s manifests", k8sSynopsis)
	var o k8s.Options
	var file, dataset string
	fs.IntVar(&o.Agents, "agents", 0, "`N` agent pods, each running 1/N of the load")
	fs.StringVar(&file, "file", "", "the run `FILE` (kcbench load --file), put into the ConfigMap")
	fs.StringVar(&o.Image, "image", "", "container `IMAGE` with kcbench on its PATH")
	fs.StringVar(&o.Target, "target", "", "Keycloak's `URL` as the pods reach it, e.g. http://keycloak-service:8080")
	fs.StringVar(&o.MgmtURL, "management-url", "", "Keycloak's management `URL` (server CPU from /metrics), e.g. http://keycloak-service:9000")
	fs.StringVar(&dataset, "manifest", "", "dataset manifest `FILE` (dataset.json: its users and clients), put into a Secret")
	fs.StringVar(&o.Name, "name", "kcbench", "`NAME` of the Job, ConfigMap and Secret")
	fs.StringVar(&o.Namespace, "namespace", "", "`NS` of the objects (default: kubectl's)")
	fs.StringVar(&o.CPU, "cpu", "1", "CPU request and limit per agent")
	fs.StringVar(&o.Memory, "memory", "512Mi", "memory request and limit per agent")
	startIn := fs.Duration("start-in", 2*time.Minute, "the agents start this long after now (time to apply and pull the image)")
	startAt := fs.String("start-at", "", "`TIME` (RFC 3339) the agents start at, instead of --start-in")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if o.Agents < 1 || o.Agents > k8s.MaxAgents {
		return usagef("--agents %d: must be between 1 and %d", o.Agents, k8s.MaxAgents)
	}
	if file == "" {
		return usagef("--file: the run file is required")
	}
	cfg, err := experiment.ReadRunFile(file)
	if err != nil {
		return usagef("--file: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		return usagef("--file %s: %v", file, err)
	}
	// The last agent gets the smallest share.
	if _, err := cfg.Config.Split(load.Segment{Index: o.Agents - 1, Count: o.Agents}); err != nil {
		return usagef("--file %s with --agents %d: %v", file, o.Agents, err)
	}
	if o.RunYAML, err = os.ReadFile(file); err != nil {
		return err
	}
	if dataset != "" {
		if o.Dataset, err = os.ReadFile(dataset); err != nil {
			return usagef("--manifest: %v", err)
		}
	} else if cfg.Realm == "" {
		return usagef("--file %s names no realm: give --manifest dataset.json", file)
	}
	now := time.Now()
	o.StartAt = now.Add(*startIn).Truncate(time.Second)
	if *startAt != "" {
		a := load.AgentFlags{StartAt: *startAt}
		if _, o.StartAt, err = a.Resolve(e.getenv, now); err != nil {
			return cliutil.Usage(err)
		}
	} else if *startIn <= 0 {
		return usagef("--start-in %v: must be positive", *startIn)
	}
	for _, u := range []string{o.Target, o.MgmtURL} {
		if err := kc.CheckURL(u); u != "" && err != nil {
			return usagef("%v", err)
		}
	}
	b, err := k8s.Manifests(o)
	if err != nil {
		return cliutil.Usage(err)
	}
	e.logf("k8s: %d agents start at %s: apply before then", o.Agents, o.StartAt.UTC().Format(time.RFC3339))
	_, err = e.stdout.Write(b)
	return err
}

func cmdK8sCollect(e *env, args []string) error {
	fs := newFlags(e, "k8s collect", k8sSynopsis)
	out := fs.String("out", "", "`DIR` for agent-<i>/ and merged/")
	logs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *out == "" {
		return usagef("k8s collect: --out DIR is required")
	}
	if err := fileutil.CheckWritableDir(*out); err != nil {
		return usagef("--out: %v", err)
	}
	var r io.Reader = os.Stdin
	if len(logs) > 0 {
		var rs []io.Reader
		for _, l := range logs {
			f, err := os.Open(l)
			if err != nil {
				return cliutil.Usage(err)
			}
			defer f.Close()
			rs = append(rs, f)
		}
		r = io.MultiReader(rs...)
	}
	bs, err := results.ReadBundles(r)
	if err != nil {
		return err
	}
	dirs, err := checkBundles(bs)
	if err != nil {
		return err
	}
	var paths []string
	for i, b := range bs {
		dir := filepath.Join(*out, dirs[i])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// summary.json last: its presence marks a complete folder.
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range b.Files {
				if n != results.SummaryFile && !yield(n) {
					return
				}
			}
		})
		if _, ok := b.Files[results.SummaryFile]; ok {
			names = append(names, results.SummaryFile)
		}
		for _, n := range names {
			if err := fileutil.WriteAtomic(filepath.Join(dir, n), b.Files[n], 0o644); err != nil {
				return err
			}
		}
		paths = append(paths, dir)
	}
	e.logf("k8s collect: %d agents' folders in %s", len(paths), *out)
	res, err := merge.Read(paths)
	if err != nil {
		return err
	}
	merged := filepath.Join(*out, "merged")
	if err := res.WriteDir(merged); err != nil {
		return err
	}
	for _, n := range res.Notes {
		e.logf("merge: note: %s", n)
	}
	e.logf("k8s collect: merged into %s", merged)
	if err := load.WriteSummary(e.stdout, res.Stats); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	return res.CPU.Write(e.stdout)
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
		if _, ok := b.Files[results.SummaryFile]; !ok {
			return nil, fmt.Errorf("segment %s: no %s in its bundle", seg, results.SummaryFile)
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
