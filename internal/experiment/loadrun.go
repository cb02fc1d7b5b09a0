package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"strconv"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/observe"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// CheckOut checks kcbench load's --out: writable, and given with emit
// (--emit-results).
func (c *RunFile) CheckOut(emit bool) error {
	if emit && c.Out == "" {
		return cliutil.Usagef("--emit-results needs --out")
	}
	if c.Out != "" {
		if err := fileutil.CheckOutDir(c.Out); err != nil {
			return cliutil.Usagef("--out: %v", err)
		}
	}
	return nil
}

// Target resolves the Keycloak of a run and the default manifest path:
// an external --target (which needs --manifest or --realm), else the
// local stack (st, nil for a --target) and its dataset.json.
func (c *RunFile) Target(tf *kc.TargetFlags, w *stack.Where, getenv func(string) string, logf func(string, ...any)) (tg kc.Target, st *stack.Stack, manifest string, err error) {
	if err := tf.CheckUnused(); err != nil {
		return tg, nil, "", err
	}
	if tf.Set() {
		if tg, err = tf.LoadTarget(); err != nil {
			return tg, nil, "", err
		}
		if c.Realm == "" && c.Manifest == "" {
			return tg, nil, "", cliutil.Usagef("with --target, give --manifest or --realm")
		}
		return tg, nil, c.Manifest, nil
	}
	s, err := w.Attach(getenv, logf)
	if err != nil {
		return kc.Target{}, nil, "", err
	}
	m := cmp.Or(c.Manifest, s.DatasetManifest())
	return s.Target(), s, m, nil
}

// LoadRun is a kcbench load run made ready: the scenario's input, the
// params its summary.json records and the dataset's description.
type LoadRun struct {
	In     scenario.RunInput
	Params map[string]string
	Desc   string
}

// PrepareLoad resolves the target of c, its events and dataset, and
// checks the scenario against the users and clients before anything
// starts.
func (c *RunFile) PrepareLoad(tf *kc.TargetFlags, w *stack.Where, getenv func(string) string, logf func(string, ...any),
	seg load.Segment, startAt time.Time, keepGoing bool) (*LoadRun, error) {
	tg, st, manifestPath, err := c.Target(tf, w, getenv, logf)
	if err != nil {
		return nil, err
	}
	r := &LoadRun{In: scenario.RunInput{Target: tg, Config: c.Config, KeepGoing: keepGoing, RequireSuccess: true, Prove: true,
		Segment: seg, StartAt: startAt, RecoverySLO: c.RecoverySLO},
		Params: map[string]string{"target": "external", "machine_cores": fmt.Sprint(runtime.NumCPU())}, Desc: "realm " + c.Realm}
	load.AgentParams(r.Params, seg, startAt)
	if r.In.Events, err = EventsFor(logf, c.Events, st, c.Total()); err != nil {
		return nil, err
	}
	if st == nil {
		externalVersion(tg, r.Params, logf)
		if pods, ok := externalPods(tg); ok {
			up := observe.Youngest(pods)
			r.Params["server_uptime_s"] = strconv.FormatInt(int64(up.Round(time.Second)/time.Second), 10)
			warnCold(up, c.Warmup, logf)
			if n := observe.ClusterSize(pods); n > 0 {
				r.Params["cluster_size"] = strconv.Itoa(n)
			}
			if w := observe.PodsWarning(pods); w != "" {
				logf("load: warning: %s", w)
			}
		}
	}
	if st != nil {
		r.In.Alive = st.Watch().Check
		r.Params["target"], r.Params["keycloak_version"] = "local", st.State().Options.Version
		if h, err := st.Heap(); err == nil {
			r.Params["heap"] = h.String()
			logf("load: Keycloak heap %s", h)
		}
		for k, v := range st.RunParams() {
			r.Params[k] = v
		}
		if up := st.Uptime(); up > 0 {
			// When the run is prepared (before a --start-at wait).
			r.Params["server_uptime_s"] = strconv.FormatInt(int64(up.Round(time.Second)/time.Second), 10)
			warnCold(up, c.Warmup, logf)
		}
	}
	if c.Realm == "" {
		m, err := dataset.ReadManifest(manifestPath)
		if err != nil {
			return nil, err
		}
		r.In.Manifest = m
		r.Params["password_policy"], r.Params["password_salts"] = m.Spec.Policy.String(), cmp.Or(m.Salts, "unknown")
		maps.Copy(r.Params, ShapeParams(m.Spec.Content.Shape))
		if st := m.Sessions; st != nil && st.Any() {
			r.Params[ParamSessions], r.Params[ParamOfflineSessions] = fmt.Sprint(st.Online), fmt.Sprint(st.Offline)
		}
		r.Desc = fmt.Sprintf("dataset %s: %d tenants (%s mode), %s", manifestPath, m.Tenants(), m.Spec.Mode, skewDesc(c.TenantSkew))
		if c.SpreadClients {
			n := clientsInUse(m.Spec, c.Config)
			r.Desc += fmt.Sprintf(", grants spread over %d confidential clients", n)
			r.Params["clients_in_use"] = fmt.Sprint(n)
		}
	}
	if _, err := scenario.ByName(c.Scenario, scenario.ProbeEnv(tg, r.In.Manifest, c.Config)); err != nil {
		return nil, cliutil.Usage(err)
	}
	if !seg.Whole() {
		share, _ := c.Config.Split(seg)
		r.Desc += fmt.Sprintf("; agent %s: %s", seg, share.Describe())
	}
	r.In.KeycloakVersion = r.Params["keycloak_version"]
	return r, nil
}

// warnCold says when a load begins on a JVM up for less than coldUptime
// (warm-up included).
func warnCold(up, warmup time.Duration, logf func(string, ...any)) {
	if up+warmup < coldUptime {
		logf("load: Keycloak has been up only %s: a just-booted JVM costs more per operation for minutes (a fixed arrival rate it sustains warm may fall behind and drop arrivals at first); --warmup, or a run a few minutes later, measures the warm server", up.Round(time.Second))
	}
}

// externalPods reads what an external target's pods say of themselves
// (uptime, cluster view) from their management metrics; false without a
// management URL or when they cannot be read.
func externalPods(tg kc.Target) ([]observe.Pod, bool) {
	if tg.ManagementURL == "" {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	pods, err := observe.ReadPods(ctx, tg.HTTPClient(observe.DefaultScrapeTimeout), tg.ManagementURLs())
	return pods, err == nil
}

// externalVersion records an external target's Keycloak version in
// params (keycloak_version), read from the admin API with the target's
// admin credentials (none: the version stays unknown, as the docs of
// --admin-password-file say); a read that fails is logged.
func externalVersion(tg kc.Target, params map[string]string, logf func(string, ...any)) {
	if tg.Admin.Password == "" && tg.Admin.ClientSecret == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	si, err := kc.NewAdmin(kc.NewFor(tg), tg.Admin).ServerInfo(ctx)
	if err != nil || si.SystemInfo.Version == "" {
		logf("Keycloak's version unknown (%v): the results will not name it", err)
		return
	}
	params["keycloak_version"] = si.SystemInfo.Version
}

func skewDesc(s float64) string {
	if s == 0 {
		return "tenants picked uniformly"
	}
	return fmt.Sprintf("tenants picked with zipf skew %g", s)
}

// Write prints the run's summary, server CPU and database work to w and,
// with --out, writes the results folder (and with emit prints it as a
// bundle for kcbench k8s collect).
func (r *LoadRun) Write(w io.Writer, res *scenario.RunResult, out string, emit bool, logf func(string, ...any)) error {
	if err := load.WriteSummary(w, res.Stats); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if err := res.CPU.Write(w); err != nil {
		return err
	}
	if err := results.WriteConnections(w, res.Connections); err != nil {
		return err
	}
	if c := res.Connections; c != nil {
		if r.Params == nil {
			r.Params = map[string]string{}
		}
		c.RecordParams(r.Params)
	}
	if res.DB != nil {
		if err := res.DB.Write(w); err != nil {
			return err
		}
		res.DB.RecordDurable(r.Params)
	}
	if out == "" {
		return nil
	}
	res.Params = r.Params
	if err := fileutil.WriteDir(out, results.SummaryFile, res.WriteDir); err != nil {
		return err
	}
	logf("load: results in %s", out)
	if emit {
		return load.EmitResults(w, out, r.In.Segment)
	}
	return nil
}

// TargetDown is kcbench load's error for a run the target's death ended
// ("target down: …", or "target down 42 s into the run: …"); nil when err
// holds no *scenario.DownError.
func TargetDown(err error) error {
	var down *scenario.DownError
	if !errors.As(err, &down) {
		return nil
	}
	sep := ": "
	if down.At > 0 {
		sep = " "
	}
	return fmt.Errorf("target down%s%w", sep, down)
}
