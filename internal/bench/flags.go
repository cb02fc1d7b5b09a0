package bench

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
	"github.com/kcbench/kcbench/internal/stack"
)

// Synopsis is the usage line of kcbench loadgen-bench (its help page is cmd/kcbench/help).
const Synopsis = "loadgen-bench [--connections N] [--duration D] [flags]"

// Flags are kcbench loadgen-bench's flags for the Options.
type Flags struct {
	Options
	clients    string
	CPUProfile string // where to write a Go CPU profile
}

// RegisterFlags adds the flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&f.Conns, "connections", 50, "`N` connections (kcbench VUs, wrk -c, k6 VUs)")
	fs.DurationVar(&f.Duration, "duration", 20*time.Second, "how long each tool runs, in all")
	fs.IntVar(&f.Repeats, "repeats", 4, "`N` runs of duration/N per tool, interleaved, so that a change in the box's load touches every tool alike")
	cliutil.Renamed(fs, "rounds", "repeats")
	fs.DurationVar(&f.Warmup, "warmup", 5*time.Second, "server warm-up before the measured runs (kcbench, not measured)")
	fs.StringVar(&f.Realm, "realm", "master", "realm whose JWKS is fetched")
	fs.IntVar(&f.WrkThreads, "wrk-threads", 2, "wrk -t")
	fs.BoolVar(&f.NewConns, "new-conns", false, "a new connection (over https: a full TLS handshake) for every request: kcbench's per-iteration policy, wrk with Connection: close; measures what a connection costs the load generator")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a Go CPU profile of kcbench's measured runs to `FILE` (for go tool pprof)")
	fs.StringVar(&f.Scenario, "scenario", results.ScenarioJWKS, "`NAME` of kcbench's workload; other than jwks (e.g. password-grant, users from the local stack's dataset) only kcbench's clients run, to compare them")
	cliutil.Renamed(fs, "clients", "http-clients")
	fs.StringVar(&f.clients, "http-clients", "h1", "kcbench's HTTP clients to measure, comma-separated: h1, net-http, and fasthttp (behind http.RoundTripper) in a binary built by make bench-loadgen; the first is held to the bars")
}

// Check checks the flags and sets the Options' clients; problems are
// usage errors.
func (f *Flags) Check() error {
	f.Options.Clients = strings.Split(f.clients, ",")
	for _, c := range f.Options.Clients {
		if _, ok := Clients[c]; !ok {
			if c == "fasthttp" {
				return cliutil.Usagef("--http-clients: fasthttp is in a binary built with -tags fasthttp only (make bench-loadgen)")
			}
			return cliutil.Usagef("--http-clients: unknown client %q (%s)", c, strings.Join(slices.Sorted(maps.Keys(Clients)), ", "))
		}
	}
	if f.Conns < 1 || f.Conns > scenario.MaxVUs || f.Duration <= 0 || f.Duration > time.Hour || f.Warmup < 0 || f.Repeats < 1 || f.Duration/time.Duration(f.Repeats) < time.Second {
		return cliutil.Usagef("--connections must be between 1 and %d, --repeats at least 1, --duration at most 1h and --duration/--repeats at least 1s, --warmup not negative", scenario.MaxVUs)
	}
	return nil
}

// Resolve completes the Options against the Keycloak to drive: tf's
// external target (JWKS only), else the local stack w names, whose
// dataset gives the users of other scenarios; and opens the CPU profile.
// done closes what it opened.
func (f *Flags) Resolve(tf *kc.TargetFlags, w *stack.Where, getenv func(string) string, logf func(string, ...any)) (o Options, done func(), err error) {
	o, done = f.Options, func() {}
	o.Logf = logf
	o.Base = tf.URL
	o.NewPool = func() (*scenario.Pool, error) { return scenario.NewSinglePool(scenario.Single{Realm: f.Realm}) }
	if err := tf.CheckUnused(); err != nil {
		return o, done, err
	}
	if !tf.Set() {
		s, err := w.Attach(getenv, logf)
		if err != nil {
			return o, done, err
		}
		o.Base = s.Target().BaseURL
		if o.TLS, err = s.Target().TLSConfig(); err != nil {
			return o, done, err
		}
		o.CAFile = s.Target().CAFile
		if f.Scenario != results.ScenarioJWKS {
			m, err := dataset.ReadManifest(s.DatasetManifest())
			if err != nil {
				return o, done, fmt.Errorf("--scenario %s needs the local stack's dataset (kcbench seed): %w", f.Scenario, err)
			}
			o.NewPool = func() (*scenario.Pool, error) { return scenario.NewManifestPool(m, 0) }
		}
	} else {
		if f.Scenario != results.ScenarioJWKS {
			return o, done, cliutil.Usagef("--scenario other than jwks needs the local stack (its dataset)")
		}
		tg, err := tf.LoadTarget()
		if err != nil {
			return o, done, err
		}
		if o.TLS, err = tg.TLSConfig(); err != nil {
			return o, done, err
		}
		o.CAFile = tg.CAFile
	}
	if f.CPUProfile != "" {
		pf, err := os.Create(f.CPUProfile)
		if err != nil {
			return o, done, err
		}
		o.CPUProfile, done = pf, func() { pf.Close() }
	}
	return o, done, nil
}
