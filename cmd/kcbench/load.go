package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/experiment"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/metrics"
	"github.com/kcbench/kcbench/internal/progress"
	"github.com/kcbench/kcbench/internal/report"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdLoad(ctx context.Context, e *env, args []string) error {
	cfg := experiment.DefaultRunFile()
	var file string
	var w stack.Where
	var tf kc.TargetFlags
	var af load.AgentFlags
	var df report.DashboardFlags
	var mf metrics.Flags
	var quiet, keepGoing bool
	newFS := func(f *experiment.RunFile) *flag.FlagSet {
		fs := newFlags(e, "load", experiment.LoadSynopsis)
		f.RegisterFlags(fs)
		fs.StringVar(&file, "file", file, "YAML `FILE` with the run's settings (keys: the flag names with _ for -)")
		fs.BoolVar(&quiet, "quiet", quiet, "no progress line on stderr")
		fs.BoolVar(&keepGoing, "keep-going", keepGoing, "when the target dies or refuses every connection, run on to the end and exit 0 (or 3), e.g. for a deliberate restart; without it the run stops and exits 5")
		w.RegisterFlags(fs)
		tf.RegisterFlags(fs)
		af.RegisterFlags(fs)
		df.RegisterFlags(fs)
		mf.RegisterFlags(fs)
		return fs
	}
	fs := newFS(&cfg)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if file != "" {
		fc, err := experiment.ReadRunFile(file)
		if err != nil {
			return usagef("--file: %v", err)
		}
		cfg = fc
		fs = newFS(&cfg)
		if err := parse(fs, args, 0); err != nil { // flags override the file
			return err
		}
	}
	if err := cfg.Validate(); err != nil {
		return cliutil.Usage(flagNames(fs, err))
	}
	if err := df.Check(); err != nil {
		return err
	}
	seg, startAt, err := af.Resolve(e.getenv, time.Now())
	if err != nil {
		return cliutil.Usage(err)
	}
	if _, err := cfg.Config.Split(seg); err != nil {
		return cliutil.Usage(err)
	}
	if err := mf.Check(); err != nil {
		return err
	}
	if af.Emit && cfg.Out == "" {
		return usagef("--emit-results needs --out")
	}
	if cfg.Out != "" {
		if err := fileutil.CheckWritableDir(cfg.Out); err != nil {
			return usagef("--out: %v", err)
		}
	}
	tg, st, manifestPath, err := loadTarget(e, &cfg, &tf, &w)
	if err != nil {
		return err
	}
	in := scenario.RunInput{Target: tg, Config: cfg.Config, KeepGoing: keepGoing, RequireSuccess: true, Segment: seg, StartAt: startAt, RecoverySLO: cfg.RecoverySLO}
	// params describe the run's setting in summary.json, as other
	// results' params do.
	params := map[string]string{"target": "external", "machine_cores": fmt.Sprint(runtime.NumCPU())}
	load.AgentParams(params, seg, startAt)
	if in.Events, err = experiment.EventsFor(e.logf, cfg.Events, st, cfg.Total()); err != nil {
		return err
	}
	if st != nil {
		in.Alive = st.Watch().Check
		params["target"], params["keycloak_version"] = "local", st.State().Options.Version
		if h, err := st.Heap(); err == nil {
			params["heap"] = h.String()
			e.logf("load: Keycloak heap %s", h)
		}
		for k, v := range st.LatencyParams() {
			params[k] = v
		}
	}
	desc := "realm " + cfg.Realm
	if cfg.Realm == "" {
		m, err := dataset.ReadManifest(manifestPath)
		if err != nil {
			return err
		}
		in.Manifest = m
		params["password_policy"], params["password_salts"] = m.Spec.Policy.String(), cmp.Or(m.Salts, "unknown")
		desc = fmt.Sprintf("dataset %s: %d tenants (%s mode), %s", manifestPath, m.Tenants(), m.Spec.Mode, skewDesc(cfg.TenantSkew))
	}
	// Check the scenario against the users and clients before starting.
	if _, err := scenario.ByName(cfg.Scenario, scenario.ProbeEnv(tg, in.Manifest, cfg.Config)); err != nil {
		return cliutil.Usage(err)
	}
	if cfg.Procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.Procs))
	}
	hook, stopMetrics, err := mf.Start(e.logf, seg)
	if err != nil {
		return err
	}
	defer stopMetrics()
	in.IntervalHook = hook
	prog := progress.NewLoad(e.stderr, quiet)
	in.Progress = prog.Update
	live, err := df.Start(e.logf, "load "+cfg.Scenario)
	if err != nil {
		return err
	}
	if live != nil {
		total := cfg.Config.Total()
		in.Progress = func(p load.Progress) {
			prog.Update(p)
			live.Add(liveSample(cfg.Scenario, total, p))
		}
		defer report.FinishLive(live, "")
	}

	if !seg.Whole() {
		share, _ := cfg.Config.Split(seg)
		desc += fmt.Sprintf("; agent %s: %s", seg, share.Describe())
	}
	e.logf("load: %s, against %s; %s", cfg.Describe(), tg.BaseURL, desc)
	start := time.Now()
	res, runErr := scenario.Run(ctx, in)
	prog.Done()
	if res == nil {
		return runErr // nothing ran (e.g. a VU could not log in)
	}
	e.logf("load: done in %s", time.Since(start).Round(time.Millisecond))
	if err := load.WriteSummary(e.stdout, res.Stats); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout)
	if err := res.CPU.Write(e.stdout); err != nil {
		return err
	}
	if res.DB != nil {
		if err := res.DB.Write(e.stdout); err != nil {
			return err
		}
		res.DB.RecordDurable(params)
	}
	if cfg.Out != "" {
		if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
			return err
		}
		res.Params = params
		if err := res.WriteDir(cfg.Out); err != nil {
			return err
		}
		e.logf("load: results in %s", cfg.Out)
		if af.Emit {
			if err := load.EmitResults(e.stdout, cfg.Out, seg); err != nil {
				return err
			}
		}
	}
	var down *scenario.DownError
	if errors.As(runErr, &down) {
		sep := ": "
		if down.At > 0 {
			sep = " " // "target down 42 s into the run: …"
		}
		return codedError{code: exitTargetDown, err: fmt.Errorf("target down%s%w", sep, down)}
	}
	if runErr != nil {
		return runErr
	}
	if res.ThresholdErr != nil {
		return codedError{code: exitThresholds, err: res.ThresholdErr}
	}
	return nil
}

// codedError gives an error its own exit code (cliutil.go exitCode reads it).
type codedError struct {
	code int
	err  error
}

func (x codedError) Error() string { return x.err.Error() }
func (x codedError) Unwrap() error { return x.err }
func (x codedError) ExitCode() int { return x.code }

func skewDesc(s float64) string {
	if s == 0 {
		return "tenants picked uniformly"
	}
	return fmt.Sprintf("tenants picked with zipf skew %g", s)
}

// loadTarget resolves the Keycloak and the default manifest path. An
// external --target needs admin credentials only for admin-api.
func loadTarget(e *env, c *experiment.RunFile, tf *kc.TargetFlags, w *stack.Where) (kc.Target, *stack.Stack, string, error) {
	if tf.Set() {
		tg, err := tf.LoadTarget()
		if err != nil {
			return tg, nil, "", err
		}
		if c.Realm == "" && c.Manifest == "" {
			return tg, nil, "", usagef("with --target, give --manifest or --realm")
		}
		return tg, nil, c.Manifest, nil
	}
	s, err := w.Attach(e.getenv, e.logf)
	if err != nil {
		return kc.Target{}, nil, "", err
	}
	m := c.Manifest
	if m == "" {
		m = filepath.Join(s.State().Dir, "dataset.json")
	}
	return s.Target(), s, m, nil
}

func cmdScenarios(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "scenarios", "scenarios")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	for _, i := range scenario.List() {
		fmt.Fprintf(tw, "%s\t%s\n", i.Name, i.Description)
	}
	return tw.Flush()
}
