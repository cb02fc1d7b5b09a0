package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/bench"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdLoadgenBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "loadgen-bench", "loadgen-bench [--connections N] [--duration D] [flags]\n\n"+
		"Drives the realm's JWKS endpoint of the local stack (or --target) with kcbench's engine, then with wrk\n"+
		"and k6 when installed, each with the same connections for the same time, and prints each tool's own\n"+
		"CPU time per request and kcbench's ratios to them (bars: ≤ 1.2× wrk, ≤ ¼ of k6; exit 3 when missed).\n"+
		"--clients h1,fasthttp,net-http measures kcbench with each HTTP client in turn (the first is held to the\n"+
		"bars); --scenario password-grant (users from the local stack's dataset) compares them on another workload.")
	conns := fs.Int("connections", 50, "`N` connections (kcbench VUs, wrk -c, k6 VUs)")
	dur := fs.Duration("duration", 20*time.Second, "how long each tool runs, in all")
	rounds := fs.Int("rounds", 4, "`N` rounds of duration/N per tool, interleaved, so that a change in the box's load touches every tool alike")
	warm := fs.Duration("warmup", 5*time.Second, "server warm-up before the measured runs (kcbench, not measured)")
	realm := fs.String("realm", "master", "realm whose JWKS is fetched")
	wrkThreads := fs.Int("wrk-threads", 2, "wrk -t")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of kcbench's measured runs to `FILE` (for go tool pprof)")
	procs := fs.Int("procs", experiment.DefaultProcs, "`N` cores for kcbench's engine (GOMAXPROCS), as kcbench load --procs")
	scen := fs.String("scenario", results.ScenarioJWKS, "`NAME` of kcbench's workload; other than jwks (e.g. password-grant, users from the local stack's dataset) only kcbench's clients run, to compare them")
	clients := fs.String("clients", "h1", "kcbench's HTTP clients to measure, comma-separated: h1, fasthttp (behind http.RoundTripper), net-http; the first is held to the bars")
	var w stack.Where
	w.RegisterFlags(fs)
	var tf kc.TargetFlags
	tf.RegisterFlags(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	}
	kcbClients := strings.Split(*clients, ",")
	for _, c := range kcbClients {
		if _, ok := bench.Clients[c]; !ok {
			return usagef("--clients: unknown client %q (h1, fasthttp, net-http)", c)
		}
	}
	if *conns < 1 || *conns > scenario.MaxVUs || *dur <= 0 || *dur > time.Hour || *warm < 0 || *rounds < 1 || *dur/time.Duration(*rounds) < time.Second {
		return usagef("--connections must be between 1 and %d, --rounds at least 1, --duration at most 1h and --duration/--rounds at least 1s, --warmup not negative", scenario.MaxVUs)
	}
	base := tf.URL
	newPool := func() (*scenario.Pool, error) { return scenario.NewSinglePool(scenario.Single{Realm: *realm}) }
	if !tf.Set() {
		s, err := w.Attach(e.getenv, e.logf)
		if err != nil {
			return err
		}
		base = s.Target().BaseURL
		if *scen != results.ScenarioJWKS {
			m, err := dataset.ReadManifest(filepath.Join(s.State().Dir, "dataset.json"))
			if err != nil {
				return fmt.Errorf("--scenario %s needs the local stack's dataset (kcbench seed): %w", *scen, err)
			}
			newPool = func() (*scenario.Pool, error) { return scenario.NewManifestPool(m, 0) }
		}
	} else if *scen != results.ScenarioJWKS {
		return usagef("--scenario other than jwks needs the local stack (its dataset)")
	}
	o := bench.Options{Scenario: *scen, Base: base, Realm: *realm, NewPool: newPool, Clients: kcbClients, Conns: *conns,
		Duration: *dur, Rounds: *rounds, Warmup: *warm, WrkThreads: *wrkThreads, Logf: e.logf}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		o.CPUProfile = f
	}
	rs, err := bench.Run(ctx, o)
	if err != nil {
		return err
	}
	var missed bench.BarsMissed
	if err := bench.Write(e.stdout, *scen, rs, *conns, *dur); errors.As(err, &missed) {
		return codedError{code: exitThresholds, err: fmt.Errorf("loadgen-bench: %w", err)}
	} else if err != nil {
		return err
	}
	return nil
}
