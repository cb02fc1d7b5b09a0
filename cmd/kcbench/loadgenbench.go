package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/fhttp"
	"github.com/kcbench/kcbench/internal/h1"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
)

// The load generator benchmark: how much CPU kcbench's engine spends per
// request, against wrk (the frugal reference) and k6 (the usual tool),
// each driving the same endpoint with the same number of connections.

// Bars the engine must meet: CPU per request at most 1.5× wrk's and at
// most a quarter of k6's.
const (
	benchBarWrk = 1.5
	benchBarK6  = 0.25
)

// benchResult is one tool's run.
type benchResult struct {
	Tool     string
	Requests int64
	Errors   int64
	Wall     time.Duration
	CPU      time.Duration // the tool's own user+system CPU time
	Skipped  string        // why the tool did not run
}

// add sums two runs of one tool.
func (r benchResult) add(o benchResult) benchResult {
	return benchResult{Tool: o.Tool, Requests: r.Requests + o.Requests, Errors: r.Errors + o.Errors,
		Wall: r.Wall + o.Wall, CPU: r.CPU + o.CPU, Skipped: o.Skipped}
}

func (r benchResult) perRequest() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.CPU.Microseconds()) / float64(r.Requests)
}

func cmdLoadgenBench(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "loadgen-bench", "loadgen-bench [--connections N] [--duration D] [flags]\n\n"+
		"Drives the realm's JWKS endpoint of the local stack (or --target) with kcbench's engine, then with wrk\n"+
		"and k6 when installed, each with the same connections for the same time, and prints each tool's own\n"+
		"CPU time per request and kcbench's ratios to them (bars: ≤ 1.5× wrk, ≤ ¼ of k6; exit 3 when missed).\n"+
		"--clients h1,fasthttp,net-http measures kcbench with each HTTP client in turn (the first is held to the\n"+
		"bars); --scenario password-grant (users from the local stack's dataset) compares them on another workload.")
	conns := fs.Int("connections", 50, "`N` connections (kcbench VUs, wrk -c, k6 VUs)")
	dur := fs.Duration("duration", 20*time.Second, "how long each tool runs, in all")
	rounds := fs.Int("rounds", 4, "`N` rounds of duration/N per tool, interleaved, so that a change in the box's load touches every tool alike")
	warm := fs.Duration("warmup", 5*time.Second, "server warm-up before the measured runs (kcbench, not measured)")
	realm := fs.String("realm", "master", "realm whose JWKS is fetched")
	wrkThreads := fs.Int("wrk-threads", 2, "wrk -t")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of kcbench's measured runs to `FILE` (for go tool pprof)")
	procs := fs.Int("procs", defaultProcs, "`N` cores for kcbench's engine (GOMAXPROCS), as kcbench load --procs")
	scen := fs.String("scenario", results.ScenarioJWKS, "`NAME` of kcbench's workload; other than jwks (e.g. password-grant, users from the local stack's dataset) only kcbench's clients run, to compare them")
	clients := fs.String("clients", "h1", "kcbench's HTTP clients to measure, comma-separated: h1, fasthttp (behind http.RoundTripper), net-http; the first is held to the bars")
	var w where
	w.register(fs)
	var tf targetFlags
	tf.register(fs)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	}
	var kcbTools []string
	for _, c := range strings.Split(*clients, ",") {
		if _, ok := benchClients[c]; !ok {
			return usagef("--clients: unknown client %q (h1, fasthttp, net-http)", c)
		}
		kcbTools = append(kcbTools, "kcbench/"+c)
	}
	if *conns < 1 || *dur <= 0 || *warm < 0 || *rounds < 1 || *dur/time.Duration(*rounds) < time.Second {
		return usagef("--connections and --rounds must be at least 1, --duration/--rounds at least 1s, --warmup not negative")
	}
	base := tf.url
	newPool := func() (*scenario.Pool, error) { return scenario.NewSinglePool(scenario.Single{Realm: *realm}) }
	if !tf.set() {
		s, err := w.attach(e)
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
	bk := benchKcbench{scenario: *scen, base: base, newPool: newPool, conns: *conns}
	url := strings.TrimRight(base, "/") + "/realms/" + *realm + "/protocol/openid-connect/certs"

	if *warm > 0 {
		e.logf("loadgen-bench: warming the server up for %v", *warm)
		if _, err := bk.run(ctx, kcbTools[0], *warm); err != nil {
			return err
		}
	}
	var prof *os.File
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		prof = f
	}
	tools := kcbTools
	if *scen == results.ScenarioJWKS {
		tools = append(tools, "wrk", "k6")
	}
	results := make([]benchResult, len(tools))
	d := *dur / time.Duration(*rounds)
	e.logf("loadgen-bench: GET %s, %d connections, %d rounds of %v per tool", url, *conns, *rounds, d)
	for round := range *rounds {
		for i, tool := range tools {
			var r benchResult
			var err error
			switch tool {
			default:
				if prof != nil {
					if err := pprof.StartCPUProfile(prof); err != nil {
						return err
					}
				}
				r, err = bk.run(ctx, tool, d)
				if prof != nil {
					pprof.StopCPUProfile()
					prof = nil // one profile: the first round's run
				}
			case "wrk":
				r, err = benchWrk(ctx, url, *conns, *wrkThreads, d)
			case "k6":
				r, err = benchK6(ctx, url, *conns, d)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", tool, err)
			}
			if r.Skipped == "" {
				e.logf("loadgen-bench: round %d, %s: %d requests, %.1f µs CPU each", round+1, tool, r.Requests, r.perRequest())
			}
			results[i] = results[i].add(r)
		}
	}
	return writeBench(e.stdout, *scen, results, *conns, *dur)
}

// benchClients are the HTTP clients loadgen-bench can put under kcbench's
// engine.
var benchClients = map[string]func(conns int, timeout time.Duration) *http.Client{
	"h1":       h1.NewClient,
	"fasthttp": fhttp.NewClient,
	"net-http": func(conns int, timeout time.Duration) *http.Client {
		return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: conns, DisableCompression: true}}
	},
}

// benchKcbench runs a scenario in this process.
type benchKcbench struct {
	scenario string
	base     string
	newPool  func() (*scenario.Pool, error)
	conns    int
}

// run runs the scenario for d and measures the process's CPU time around
// the run; tool is "kcbench/<client>".
func (b benchKcbench) run(ctx context.Context, tool string, d time.Duration) (benchResult, error) {
	pool, err := b.newPool()
	if err != nil {
		return benchResult{}, err
	}
	conns := b.conns
	hc := benchClients[strings.TrimPrefix(tool, "kcbench/")](conns, load.DefaultHTTPTimeout)
	defer hc.CloseIdleConnections()
	sc, err := scenario.ByName(b.scenario, scenario.Env{Client: kc.New(b.base, hc), Pool: pool})
	if err != nil {
		return benchResult{}, err
	}
	c0 := selfCPU()
	t0 := time.Now()
	s, err := load.ConstantVUs{VUs: conns, Duration: d, GracefulStop: 5 * time.Second}.Run(ctx, sc, nil)
	wall, cpu := time.Since(t0), selfCPU()-c0
	if err != nil {
		return benchResult{}, err
	}
	var r benchResult
	for _, o := range s.Ops {
		if o.Name != results.IterationOp {
			r.Requests += o.Count
			r.Errors += o.Errors
		}
	}
	r.Tool, r.Wall, r.CPU = tool, wall, cpu
	return r, nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return rusageCPU(&ru)
}

func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runTool runs a benchmark tool to completion and returns its output and
// its own CPU time.
func runTool(ctx context.Context, name string, args []string, env []string) (string, time.Duration, time.Duration, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return out.String(), 0, 0, fmt.Errorf("%v\n%s", err, lastLines(out.String(), 10))
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return out.String(), 0, 0, errors.New("no resource usage for the child")
	}
	return out.String(), wall, rusageCPU(ru), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var (
	wrkRequests = regexp.MustCompile(`(\d+) requests in`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	wrkSockErr  = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func benchWrk(ctx context.Context, url string, conns, threads int, d time.Duration) (benchResult, error) {
	r := benchResult{Tool: "wrk"}
	if _, err := exec.LookPath("wrk"); err != nil {
		r.Skipped = "not installed (apt-get install wrk)"
		return r, nil
	}
	out, wall, cpu, err := runTool(ctx, "wrk", []string{"-t", strconv.Itoa(min(threads, conns)), "-c", strconv.Itoa(conns),
		"-d", strconv.Itoa(max(1, int(d.Round(time.Second).Seconds()))) + "s", url}, nil)
	if err != nil {
		return r, err
	}
	m := wrkRequests.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("no request count in its output:\n%s", out)
	}
	r.Requests, _ = strconv.ParseInt(m[1], 10, 64)
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.Errors, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for _, v := range m[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			r.Errors += n
		}
	}
	r.Wall, r.CPU = wall, cpu
	return r, nil
}

// k6Script is a plain k6 test: GET the URL in a loop, as a k6 user writes
// it. The summary goes to a file for the request count.
const k6Script = `import http from 'k6/http';
export const options = { vus: Number(__ENV.VUS), duration: __ENV.DURATION };
export default function () { http.get(__ENV.URL); }
export function handleSummary(data) { return { [__ENV.SUMMARY]: JSON.stringify(data) }; }
`

func benchK6(ctx context.Context, url string, conns int, d time.Duration) (benchResult, error) {
	r := benchResult{Tool: "k6"}
	bin, err := exec.LookPath("k6")
	if err != nil {
		if home, herr := os.UserHomeDir(); herr == nil {
			if p := filepath.Join(home, "go", "bin", "k6"); fileExists(p) {
				bin, err = p, nil
			}
		}
	}
	if err != nil {
		r.Skipped = "not installed (go install go.k6.io/k6@v1.8.1)"
		return r, nil
	}
	dir, err := os.MkdirTemp("", "kcbench-k6-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	script, summary := filepath.Join(dir, "jwks.js"), filepath.Join(dir, "summary.json")
	if err := os.WriteFile(script, []byte(k6Script), 0o644); err != nil {
		return r, err
	}
	_, wall, cpu, err := runTool(ctx, bin, []string{"run", "--quiet", "--no-color", "--no-usage-report", script},
		[]string{"URL=" + url, "VUS=" + strconv.Itoa(conns), "DURATION=" + d.String(), "SUMMARY=" + summary})
	if err != nil {
		return r, err
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		return r, err
	}
	var sum struct {
		Metrics map[string]struct {
			Values map[string]float64 `json:"values"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		return r, fmt.Errorf("its summary: %w", err)
	}
	r.Requests = int64(sum.Metrics["http_reqs"].Values["count"])
	r.Errors = int64(sum.Metrics["http_req_failed"].Values["passes"])
	r.Wall, r.CPU = wall, cpu
	return r, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// writeBench prints the table and the ratios; missed bars are an error
// with the threshold exit code.
func writeBench(w io.Writer, scen string, rs []benchResult, conns int, d time.Duration) error {
	fmt.Fprintf(w, "load generator CPU per request: %s, %d connections, %v per tool\n\n", scen, conns, d)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\trequests\terrors\treq/s\tcpu s\tcpu µs/req\t")
	var kcb float64
	for _, r := range rs {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t\t\t\t\t%s\t\n", r.Tool, "skipped: "+r.Skipped)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.2f\t%.1f\t\n", r.Tool, r.Requests, r.Errors,
			float64(r.Requests)/r.Wall.Seconds(), r.CPU.Seconds(), r.perRequest())
		if strings.HasPrefix(r.Tool, "kcbench") && kcb == 0 {
			kcb = r.perRequest()
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	var missed []string
	for _, r := range rs {
		if strings.HasPrefix(r.Tool, "kcbench") || r.Skipped != "" || r.perRequest() == 0 {
			continue
		}
		ratio := kcb / r.perRequest()
		bar, cmp := benchBarWrk, "≤ 1.5×"
		if r.Tool == "k6" {
			bar, cmp = benchBarK6, "≤ 0.25×"
		}
		verdict := "ok"
		if ratio > bar {
			verdict = "MISSED"
			missed = append(missed, fmt.Sprintf("%.2f× %s (bar %s)", ratio, r.Tool, cmp))
		}
		fmt.Fprintf(w, "kcbench / %-4s %.2f×  (bar %s)  %s\n", r.Tool, ratio, cmp, verdict)
	}
	if len(missed) > 0 {
		return codedError{code: exitThresholds, err: fmt.Errorf("loadgen-bench: %s", strings.Join(missed, ", "))}
	}
	return nil
}
