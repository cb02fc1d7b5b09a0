// Package bench is the load generator benchmark (kcbench loadgen-bench):
// how much CPU kcbench's engine spends per request, against wrk (the
// frugal reference) and k6 (the usual tool), each driving the same
// endpoint with the same number of connections, and kcbench's HTTP
// clients against each other.
package bench

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/h1"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
)

// Bars the engine must meet: CPU per request at most 1.2× wrk's and at
// most a quarter of k6's.
const (
	BarWrk = 1.2
	BarK6  = 0.25
)

// Result is one tool's run.
type Result struct {
	Tool     string
	Requests int64
	Errors   int64
	Wall     time.Duration
	CPU      time.Duration // the tool's own user+system CPU time
	Sys      time.Duration // the system part of CPU
	Skipped  string        // why the tool did not run
}

// add sums two runs of one tool.
func (r Result) add(o Result) Result {
	return Result{Tool: o.Tool, Requests: r.Requests + o.Requests, Errors: r.Errors + o.Errors,
		Wall: r.Wall + o.Wall, CPU: r.CPU + o.CPU, Sys: r.Sys + o.Sys, Skipped: o.Skipped}
}

func (r Result) PerRequest() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.CPU.Microseconds()) / float64(r.Requests)
}

// BarsMissed is Write's error when kcbench's engine missed a bar; it lists
// the ratios that missed.
type BarsMissed []string

func (b BarsMissed) Error() string { return strings.Join(b, ", ") }

// Options of Run.
type Options struct {
	Scenario   string // kcbench's workload; wrk and k6 run only with jwks
	Base       string // Keycloak's base URL
	Realm      string // realm whose JWKS wrk and k6 fetch
	NewPool    func() (*scenario.Pool, error)
	Clients    []string      // kcbench's HTTP clients (keys of Clients); the first is held to the bars
	Conns      int           // connections (kcbench VUs, wrk -c, k6 VUs)
	Duration   time.Duration // each tool's time in all
	Repeats    int           // runs of Duration/Repeats per tool, interleaved
	Warmup     time.Duration // server warm-up with kcbench's engine, not measured
	WrkThreads int
	// TLS is the client configuration for an https Base (its CA), and
	// CAFile that CA's file, for k6 (SSL_CERT_FILE).
	TLS    *tls.Config
	CAFile string
	// NewConns opens a new connection for every request (kcbench: the
	// per-iteration policy; wrk: "Connection: close", the server closes
	// and wrk reconnects), to measure the cost of a connection, and with
	// https of a full TLS handshake.
	NewConns   bool
	CPUProfile io.Writer // when set, a Go CPU profile of kcbench's first measured run
	Logf       func(format string, args ...any)
}

// Run warms the server up, then runs kcbench's engine with each client,
// wrk and k6 (jwks only) in interleaved repeats, and returns each tool's
// sums, kcbench's first.
func Run(ctx context.Context, o Options) ([]Result, error) {
	bk := engine{scenario: o.Scenario, base: o.Base, newPool: o.NewPool, conns: o.Conns, tls: o.TLS, newConns: o.NewConns}
	url := strings.TrimRight(o.Base, "/") + "/realms/" + o.Realm + "/protocol/openid-connect/certs"
	var kcbTools []string
	for _, c := range o.Clients {
		kcbTools = append(kcbTools, "kcbench/"+c)
	}
	if o.Warmup > 0 {
		o.Logf("loadgen-bench: warming the server up for %v", o.Warmup)
		if _, err := bk.run(ctx, kcbTools[0], o.Warmup); err != nil {
			return nil, err
		}
	}
	prof := o.CPUProfile
	tools := kcbTools
	if o.Scenario == results.ScenarioJWKS {
		tools = append(tools, "wrk")
		if !o.NewConns { // k6 has no per-request connection option
			tools = append(tools, "k6")
		}
	}
	sums := make([]Result, len(tools))
	d := o.Duration / time.Duration(o.Repeats)
	o.Logf("loadgen-bench: GET %s, %d connections, %d repeats of %v per tool", url, o.Conns, o.Repeats, d)
	for repeat := range o.Repeats {
		for i, tool := range tools {
			var r Result
			var err error
			switch tool {
			default:
				if prof != nil {
					if err := pprof.StartCPUProfile(prof); err != nil {
						return nil, err
					}
				}
				r, err = bk.run(ctx, tool, d)
				if prof != nil {
					pprof.StopCPUProfile()
					prof = nil // one profile: the first repeat's run
				}
			case "wrk":
				r, err = runWrk(ctx, url, o.Conns, o.WrkThreads, d, o.NewConns)
			case "k6":
				r, err = runK6(ctx, url, o.Conns, d, o.CAFile)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", tool, err)
			}
			if r.Skipped == "" {
				o.Logf("loadgen-bench: repeat %d, %s: %d requests, %.1f µs CPU each", repeat+1, tool, r.Requests, r.PerRequest())
			}
			sums[i] = sums[i].add(r)
		}
	}
	return sums, nil
}

// Clients are the HTTP clients the benchmark can put under kcbench's
// engine; cfg is the TLS configuration of an https server. A binary built
// with the fasthttp tag (make bench-loadgen) has fasthttp too, over plain
// http only (fasthttp.go); the release binary does not carry it.
var Clients = map[string]func(conns int, timeout time.Duration, cfg *tls.Config) *http.Client{
	"h1": func(conns int, timeout time.Duration, cfg *tls.Config) *http.Client {
		return &http.Client{Transport: &h1.Transport{Timeout: timeout, MaxIdlePerHost: conns, TLSConfig: cfg}}
	},
	"net-http": func(conns int, timeout time.Duration, cfg *tls.Config) *http.Client {
		return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: conns, DisableCompression: true, TLSClientConfig: cfg}}
	},
}

// engine runs a scenario in this process.
type engine struct {
	scenario string
	base     string
	newPool  func() (*scenario.Pool, error)
	conns    int
	tls      *tls.Config
	newConns bool
}

// newConnsScenario closes a VU's connections after every iteration
// (one request each in the benchmark's scenarios).
type newConnsScenario struct{ load.Scenario }

func (s newConnsScenario) NewUser(ctx context.Context, id int) (load.User, error) {
	u, err := s.Scenario.NewUser(ctx, id)
	if err != nil {
		return nil, err
	}
	return newConnsUser{User: u, scope: &h1.Scope{Private: true}}, nil
}

type newConnsUser struct {
	load.User
	scope *h1.Scope
}

func (u newConnsUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	err := u.User.Iterate(h1.WithScope(ctx, u.scope), rec)
	u.scope.CloseIdle()
	return err
}

// run runs the scenario for d and measures the process's CPU time around
// the run; tool is "kcbench/<client>".
func (b engine) run(ctx context.Context, tool string, d time.Duration) (Result, error) {
	pool, err := b.newPool()
	if err != nil {
		return Result{}, err
	}
	conns := b.conns
	client := strings.TrimPrefix(tool, "kcbench/")
	hc := Clients[client](conns, load.DefaultHTTPTimeout, b.tls)
	defer hc.CloseIdleConnections()
	var sc load.Scenario
	sc, err = scenario.ByName(b.scenario, scenario.Env{Client: kc.New(b.base, hc), Pool: pool})
	if err != nil {
		return Result{}, err
	}
	if b.tls != nil && client == "fasthttp" {
		return Result{}, fmt.Errorf("fasthttp is measured over plain http only (up --tls=false)")
	}
	if b.newConns {
		if client != "h1" {
			return Result{}, fmt.Errorf("a new connection per request is measured with kcbench's own client (h1) only")
		}
		sc = newConnsScenario{Scenario: sc}
	}
	c0, s0 := selfCPU()
	t0 := time.Now()
	s, err := load.ConstantVUs{VUs: conns, Duration: d, GracefulStop: 5 * time.Second}.Run(ctx, sc, nil)
	c1, s1 := selfCPU()
	wall, cpu, sys := time.Since(t0), c1-c0, s1-s0
	if err != nil {
		return Result{}, err
	}
	var r Result
	for _, o := range s.Ops {
		if o.Name != results.IterationOp {
			r.Requests += o.Count
			r.Errors += o.Errors
		}
	}
	r.Tool, r.Wall, r.CPU, r.Sys = tool, wall, cpu, sys
	return r, nil
}

// selfCPU returns the process's CPU time and its system part.
func selfCPU() (time.Duration, time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return rusageCPU(&ru)
}

func rusageCPU(ru *syscall.Rusage) (cpu, sys time.Duration) {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano())
}

// runTool runs a benchmark tool to completion and returns its output and
// its own CPU time.
func runTool(ctx context.Context, name string, args []string, env []string) (out string, wall, cpu, sys time.Duration, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var b strings.Builder
	cmd.Stdout, cmd.Stderr = &b, &b
	t0 := time.Now()
	err = cmd.Run()
	wall = time.Since(t0)
	if err != nil {
		return b.String(), 0, 0, 0, fmt.Errorf("%v\n%s", err, lastLines(b.String(), 10))
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru == nil {
		return b.String(), 0, 0, 0, errors.New("no resource usage for the child")
	}
	cpu, sys = rusageCPU(ru)
	return b.String(), wall, cpu, sys, nil
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

func runWrk(ctx context.Context, url string, conns, threads int, d time.Duration, newConns bool) (Result, error) {
	r := Result{Tool: "wrk"}
	if _, err := exec.LookPath("wrk"); err != nil {
		r.Skipped = "not installed (apt-get install wrk)"
		return r, nil
	}
	args := []string{"-t", strconv.Itoa(min(threads, conns)), "-c", strconv.Itoa(conns),
		"-d", strconv.Itoa(max(1, int(d.Round(time.Second).Seconds()))) + "s"}
	if newConns {
		args = append(args, "-H", "Connection: close")
	}
	out, wall, cpu, sys, err := runTool(ctx, "wrk", append(args, url), nil)
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
	r.Wall, r.CPU, r.Sys = wall, cpu, sys
	return r, nil
}

// k6Script is a plain k6 test: GET the URL in a loop, as a k6 user writes
// it. The summary goes to a file for the request count.
const k6Script = `import http from 'k6/http';
export const options = { vus: Number(__ENV.VUS), duration: __ENV.DURATION };
export default function () { http.get(__ENV.URL); }
export function handleSummary(data) { return { [__ENV.SUMMARY]: JSON.stringify(data) }; }
`

func runK6(ctx context.Context, url string, conns int, d time.Duration, caFile string) (Result, error) {
	r := Result{Tool: "k6"}
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
	_, wall, cpu, sys, err := runTool(ctx, bin, []string{"run", "--quiet", "--no-color", "--no-usage-report", script},
		append([]string{"URL=" + url, "VUS=" + strconv.Itoa(conns), "DURATION=" + d.String(), "SUMMARY=" + summary}, caEnv(caFile)...))
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
	r.Wall, r.CPU, r.Sys = wall, cpu, sys
	return r, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Write prints the table and the ratios; missed bars are a BarsMissed
// error.
func Write(w io.Writer, scen string, rs []Result, conns int, d time.Duration) error {
	fmt.Fprintf(w, "load generator CPU per request: %s, %d connections, %v per tool\n\n", scen, conns, d)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tool\trequests\terrors\treq/s\tcpu s\tcpu µs/req\tsys µs/req\t")
	var kcb float64
	for _, r := range rs {
		if r.Skipped != "" {
			fmt.Fprintf(tw, "%s\t\t\t\t\t%s\t\n", r.Tool, "skipped: "+r.Skipped)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.2f\t%.1f\t%.1f\t\n", r.Tool, r.Requests, r.Errors,
			float64(r.Requests)/r.Wall.Seconds(), r.CPU.Seconds(), r.PerRequest(), float64(r.Sys.Microseconds())/float64(max(r.Requests, 1)))
		if strings.HasPrefix(r.Tool, "kcbench") && kcb == 0 {
			kcb = r.PerRequest()
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	var missed []string
	for _, r := range rs {
		if strings.HasPrefix(r.Tool, "kcbench") || r.Skipped != "" || r.PerRequest() == 0 {
			continue
		}
		ratio := kcb / r.PerRequest()
		bar, cmp := BarWrk, "≤ 1.2×"
		if r.Tool == "k6" {
			bar, cmp = BarK6, "≤ 0.25×"
		}
		verdict := "ok"
		if ratio > bar {
			verdict = "MISSED"
			missed = append(missed, fmt.Sprintf("%.2f× %s (bar %s)", ratio, r.Tool, cmp))
		}
		fmt.Fprintf(w, "kcbench / %-4s %.2f×  (bar %s)  %s\n", r.Tool, ratio, cmp, verdict)
	}
	if len(missed) > 0 {
		return BarsMissed(missed)
	}
	return nil
}

// caEnv makes a Go program (k6) trust caFile ("": no change).
func caEnv(caFile string) []string {
	if caFile == "" {
		return nil
	}
	return []string{"SSL_CERT_FILE=" + caFile}
}
