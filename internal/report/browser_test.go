package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kcbench/kcbench/internal/results"
)

// The browser tests open reports in a real headless Chromium (Debian's
// chromium package; .ci/run installs it) and check what a reader sees:
// no console error, no request leaving the page's origin, every chart
// drawn with data, a hover tooltip showing the value in the result files,
// and the verdict's figures equal to summary.json's. Screenshots go to
// $KCBENCH_ARTIFACTS when set, else to the test's temp dir (logged).

// chromium finds the browser, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("browser test skipped: no chromium on PATH (apt-get install chromium; .ci/run installs it)")
	return ""
}

// browserPage is one open tab with what it logged and requested.
type browserPage struct {
	ctx      context.Context
	mu       sync.Mutex
	errors   []string
	requests []string
}

func newBrowser(t *testing.T) *browserPage {
	t.Helper()
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1000), chromedp.Flag("allow-file-access-from-files", false))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	p := &browserPage{ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p.errors = append(p.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			p.errors = append(p.errors, fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber))
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, ev.Request.URL)
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return p
}

// open loads u and waits until every chart is drawn.
func (p *browserPage) open(t *testing.T, u string) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](`window.kcbenchDrawnMs !== undefined && document.querySelectorAll("[data-chart]").length === Object.keys(window.kcbenchCharts || {}).length`, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
}

// checkClean fails on console errors and on requests that left origin.
func (p *browserPage) checkClean(t *testing.T, origin string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errors {
		t.Errorf("browser: %s", e)
	}
	for _, r := range p.requests {
		if strings.HasPrefix(r, "data:") || strings.HasPrefix(r, "blob:") || strings.HasPrefix(r, origin) {
			continue
		}
		t.Errorf("request left the page's origin %s: %s", origin, r)
	}
}

// chartsDrawn returns the charts whose canvas has no coloured pixel or
// whose series hold no value.
const chartsDrawnJS = `(() => {
  const bad = [];
  for (const el of document.querySelectorAll("[data-chart]")) {
    const name = el.getAttribute("data-chart");
    const c = window.kcbenchCharts[name];
    if (!c) { bad.push(name + ": not drawn"); continue; }
    const series = c.chart.getOption().series || [];
    const values = series.some(s => (s.data || []).some(d => d !== null && (!Array.isArray(d) || d[1] !== null)));
    if (!values) { bad.push(name + ": no data"); continue; }
    const cv = el.querySelector("canvas");
    const ctx = cv.getContext("2d");
    const px = ctx.getImageData(0, 0, cv.width, cv.height).data;
    let coloured = 0;
    for (let i = 0; i < px.length; i += 4) {
      const r = px[i], g = px[i+1], b = px[i+2];
      if (px[i+3] > 200 && Math.max(r, g, b) - Math.min(r, g, b) > 80) coloured++;
    }
    if (coloured < 30) bad.push(name + ": " + coloured + " coloured pixels");
  }
  return bad;
})()`

func (p *browserPage) checkCharts(t *testing.T) int {
	t.Helper()
	bad := eval[[]string](t, p, chartsDrawnJS)
	n := eval[int](t, p, `document.querySelectorAll("[data-chart]").length`)
	for _, b := range bad {
		t.Errorf("chart %s", b)
	}
	if n == 0 {
		t.Error("no chart on the page")
	}
	return n
}

// hover moves the mouse onto point i of series s of chart name and
// returns the tooltip's text.
func (p *browserPage) hover(t *testing.T, name string, s, i int) string {
	t.Helper()
	js := fmt.Sprintf(`(() => {
  const c = window.kcbenchCharts[%q];
  const el = c.chart.getDom();
  el.scrollIntoView({block: "center"});
  const d = c.chart.getOption().series[%d].data[%d];
  const px = c.chart.convertToPixel({seriesIndex: %d}, d);
  const r = el.getBoundingClientRect();
  return [r.left + px[0], r.top + px[1]];
})()`, name, s, i, s)
	xy := eval[[]float64](t, p, js)
	if err := chromedp.Do(p.ctx, chromedp.MouseEvent(chromedp.MouseMoved, xy[0]-3, xy[1]), chromedp.MouseEvent(chromedp.MouseMoved, xy[0], xy[1])); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(p.ctx,
		chromedp.Poll[string](fmt.Sprintf(`(() => {
  const el = window.kcbenchCharts[%q].chart.getDom();
  for (const d of el.querySelectorAll("div")) {
    if (d.style.display !== "none" && d.style.position === "absolute" && d.innerText.trim() !== "" && d.style.zIndex) return d.innerText;
  }
  return false;
})()`, name), chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		t.Fatalf("no tooltip on %s: %v", name, err)
	}
	return text
}

// verdictFigures reads the verdict's figures (the first screen's table and
// sentences, and the verdict in full): key → value and shown text.
func (p *browserPage) verdictFigures(t *testing.T) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for _, f := range p.figures(t, "#verdict") {
		out[f[0]] = [2]string{f[1], f[2]}
	}
	return out
}

// figures reads every figure under the element sel (a figure shown twice,
// in the first screen's table and in the verdict in full, is read twice):
// key, value and shown text.
func (p *browserPage) figures(t *testing.T, sel string) [][3]string {
	t.Helper()
	return eval[[][3]string](t, p, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).map(s => [s.dataset.fig, s.dataset.value, s.textContent])`, sel+" span.fig"))
}

// screenshot saves the whole page as name.png.
func (p *browserPage) screenshot(t *testing.T, name string) string {
	t.Helper()
	return p.saveShot(t, name, chromedp.FullScreenshot(100))
}

// viewportShot saves what the window shows, unscrolled, as name.png.
func (p *browserPage) viewportShot(t *testing.T, name string) string {
	t.Helper()
	return p.saveShot(t, name, chromedp.CaptureScreenshot())
}

func (p *browserPage) saveShot(t *testing.T, name string, shot chromedp.Action[[]byte]) string {
	t.Helper()
	dir := os.Getenv("KCBENCH_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	buf, err := chromedp.Run(p.ctx, shot)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// paintTimes returns the first contentful paint and the time all charts
// were drawn, in ms since navigation.
func (p *browserPage) paintTimes(t *testing.T) (fcp, drawn float64) {
	t.Helper()
	return eval[float64](t, p, `(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`),
		eval[float64](t, p, `window.kcbenchDrawnMs || -1`)
}

// waitFor polls a JavaScript condition until it holds, across page loads
// (a reload drops the context a chromedp poll runs in).
func (p *browserPage) waitFor(cond string, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return nil
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not true after %s (last error: %v)", d, last)
}

// eval runs a JavaScript expression in the page and decodes its value.
func eval[T any](t *testing.T, p *browserPage, js string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %.80q: %v", js, err)
	}
	return v
}

func fileURL(path string) string {
	abs, _ := filepath.Abs(path)
	return (&url.URL{Scheme: "file", Path: abs}).String()
}

// quickstartPoints is the shape of make run's results: both modes at one
// tenant count, five workloads cold and warm; an event (a node killed)
// during the warm login of the realms point.
func quickstartPoints(ns ...int) []pt {
	var ps []pt
	for mi, mode := range []string{"orgs", "realms"} {
		for _, n := range ns {
			var wls []wl
			for _, phase := range []string{results.PhaseCold, results.PhaseWarm} {
				k := 1.0
				if phase == results.PhaseCold {
					k = 0.6
				}
				f := 1 + 0.15*float64(mi) + 0.002*float64(n)
				wls = append(wls,
					wl{"login", results.ScenarioPasswordGrant, phase, results.ModelClosed, 120 * k / f, 20 / k * f, 35 / k * f, 50 / k * f, 120 / k, 0, 4 * f, 600, 0, 10},
					wl{"token", results.ScenarioClientCredentials, phase, results.ModelClosed, 400 * k / f, 8 / k * f, 15 / k * f, 25 / k * f, 60 / k, 0, 1.5 * f, 610, 0, 10},
					wl{"refresh", results.ScenarioRefresh, phase, results.ModelClosed, 380 * k / f, 9 / k * f, 16 / k * f, 26 / k * f, 70 / k, 0, 1.6 * f, 615, 0, 10},
					wl{"jwks", results.ScenarioJWKS, phase, results.ModelClosed, 2500 * k, 1 / k, 3 / k, 5 / k, 12 / k, 0, 0.1, 620, 0, 5},
					wl{"admin", results.ScenarioAdminAPI, phase, results.ModelClosed, 60 * k / f, 25 / k * f, 60 / k * f, 90 / k * f, 200 / k, 0, 9 * f, 630, 0, 5},
				)
			}
			ps = append(ps, pt{
				id:      fmt.Sprintf("%s-n%03d", mode, n),
				params:  map[string]string{ParamMode: mode, ParamTenants: strconv.Itoa(n), ParamVariant: "default", ParamRepeat: "1"},
				status:  results.StatusDone,
				seed:    &results.Seed{Tenants: n, Added: n, Strategy: "fast", Seconds: 2 + float64(n)/10},
				boot:    &results.Boot{Seconds: 9, RSSBytes: 500 * mib, CPUSeconds: 14},
				wls:     wls,
				observe: true,
			})
		}
	}
	return ps
}

func writeQuickstartFixture(t *testing.T, dir string, ns ...int) {
	t.Helper()
	for _, p := range quickstartPoints(ns...) {
		writePoint(t, dir, "quickstart", p)
	}
	// an action on the system under test, as the fault schedule stamps it
	path := filepath.Join(dir, fmt.Sprintf("realms-n%03d", ns[0]), results.SummaryFile)
	var sum results.Summary
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	for i := range sum.Workloads {
		if sum.Workloads[i].Name == "login" && sum.Workloads[i].Phase == results.PhaseWarm {
			sum.Workloads[i].Stats.Events = []results.Event{{At: 4 * time.Second, Action: "kill", Args: "node=2"}}
		}
	}
	writeJSONFile(t, path, sum)
	writeHlog(t, filepath.Join(filepath.Dir(path), "warm-login-iteration.hlog"))
}

// writeHlog writes an HDR interval log of two one-second intervals:
// 1 to 100 ms, then 2 to 200 ms (values in µs, as the load engine's).
func writeHlog(t *testing.T, path string) {
	t.Helper()
	var buf bytes.Buffer
	w := hdr.NewHistogramLogWriter(&buf)
	if err := w.OutputLogFormatVersion(); err != nil {
		t.Fatal(err)
	}
	w.OutputStartTime(t0.UnixMilli()) //nolint:errcheck // a bytes.Buffer
	for i, k := range []int64{1, 2} {
		h := hdr.New(1, 3_600_000_000, 3)
		for v := int64(1); v <= 1000; v++ {
			h.RecordValue(v * 100 * k)
		}
		h.SetStartTimeMs(t0.UnixMilli() + int64(i)*1000)
		h.SetEndTimeMs(t0.UnixMilli() + int64(i+1)*1000)
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// expectedFigure is a verdict figure from summary.json: configuration
// label "<mode> N=<n>" (or the mode, or the variant, alone), workload
// "<phase> <name>".
func expectedFigure(t *testing.T, pts []*results.Point, key string) (float64, bool) {
	t.Helper()
	parts := strings.Split(key, "|")
	if len(parts) != 3 {
		t.Errorf("figure key %q: want config|workload|metric", key)
		return 0, false
	}
	var mode, tenants string
	if _, err := fmt.Sscanf(parts[0], "%s N=%s", &mode, &tenants); err != nil {
		mode = parts[0]
	}
	for _, p := range pts {
		ps := p.Summary.Params
		if ps[ParamVariant] != parts[0] && (ps[ParamMode] != mode || (tenants != "" && ps[ParamTenants] != tenants)) {
			continue
		}
		for _, w := range p.Summary.Workloads {
			if (wlKey{w.Name, w.Phase}).String() != parts[1] {
				continue
			}
			o, _ := w.Stats.Op(results.IterationOp)
			switch parts[2] {
			case "throughput":
				return o.Rate, true
			case "p95":
				return msOf(o.Latency.P95), true
			case "cpu":
				return w.ServerCPUMsPerOp, true
			}
		}
	}
	return 0, false
}

var leadingNum = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?`)

// checkVerdict compares every verdict figure (figures' key, value and
// shown text, each place it is shown) with summary.json: the exact value,
// and the shown text rounded from it.
func checkVerdict(t *testing.T, figs [][3]string, pts []*results.Point) {
	t.Helper()
	if len(figs) == 0 {
		t.Fatal("the verdict shows no figure")
	}
	for _, f := range figs {
		key := f[0]
		want, ok := expectedFigure(t, pts, key)
		if !ok {
			t.Errorf("verdict figure %q: not in summary.json", key)
			continue
		}
		got, err := strconv.ParseFloat(f[1], 64)
		if err != nil || math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("verdict figure %q = %s, summary.json says %g", key, f[1], want)
		}
		m := leadingNum.FindString(f[2])
		shown, err := strconv.ParseFloat(m, 64)
		dec := 0
		if i := strings.IndexByte(m, '.'); i >= 0 {
			dec = len(m) - i - 1
		}
		if err != nil || math.Abs(shown-want) > 0.5*math.Pow10(-dec)+1e-9 {
			t.Errorf("verdict figure %q shows %q, summary.json says %g", key, f[2], want)
		}
	}
}

// tooltipValue finds "name value" in a tooltip's text.
func tooltipValue(t *testing.T, text, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `\s+(-?[0-9.e+]+)\s*$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("tooltip %q has no value for %s", text, name)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBrowserQuickstartReport(t *testing.T) {
	skipUnderRace(t)
	cases := []struct {
		name string
		ns   []int
	}{{"one-n", []int{5}}, {"three-n", []int{1, 10, 50}}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := t.TempDir()
			writeQuickstartFixture(t, res, tc.ns...)
			m, err := Build(t.Context(), res)
			if err != nil {
				t.Fatal(err)
			}
			m.Sizing = "sizing: 3 pods of 2 vCPU (test text)"
			out := t.TempDir()
			if err := m.Write(out); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(out, HTMLFile)
			fi, _ := os.Stat(page)
			p := newBrowser(t)
			u := fileURL(page)
			p.open(t, u)
			n := p.checkCharts(t)
			fcp, drawn := p.paintTimes(t)
			t.Logf("%s: %d charts, report.html %d KiB, first contentful paint %.0f ms, charts drawn at %.0f ms", tc.name, n, fi.Size()/1024, fcp, drawn)

			pts, err := results.ReadExperiment(res)
			if err != nil {
				t.Fatal(err)
			}
			checkVerdict(t, p.figures(t, "#verdict"), pts)

			// hover the p95 line of the realms point's latency timeline: the
			// tooltip shows the value of its timeline.csv row
			id := fmt.Sprintf("realms-n%03d", tc.ns[0])
			chart := "point-" + id + "-latency"
			var pp *results.Point
			for _, q := range pts {
				if q.Manifest.Point == id {
					pp = q
				}
			}
			segs, err := readTimeline(filepath.Join(pp.Dir, results.TimelineFile))
			if err != nil {
				t.Fatal(err)
			}
			want := segs[0].rows[3].p95 // fourth row of the first workload
			text := p.hover(t, chart, 1, 3)
			if got := tooltipValue(t, text, "p95"); got != want {
				t.Errorf("tooltip p95 %g, timeline.csv says %g (tooltip %q)", got, want, text)
			}

			// the percentile distribution from the .hlog: its last point is
			// the largest value recorded (200 ms)
			pc := eval[[]float64](t, p, fmt.Sprintf(`(() => { const d = window.kcbenchCharts[%q].chart.getOption().series[0].data; return d[d.length-1]; })()`, "point-"+id+"-percentiles"))
			if len(pc) != 2 || math.Abs(pc[1]-200) > 0.2 {
				t.Errorf("percentile chart ends at %v, want the max 200 ms", pc)
			}
			// the kill event is drawn on the timeline
			marks := eval[[]string](t, p, fmt.Sprintf(`window.kcbenchCharts[%q].spec.marks.filter(m => m.kind === "event").map(m => m.label)`, chart))
			if len(marks) != 1 || marks[0] != "kill node=2" {
				t.Errorf("event marks %q, want [kill node=2]", marks)
			}
			// a drag across the plot zooms into that time range
			zoomJS := fmt.Sprintf(`(() => { const z = window.kcbenchCharts[%q].chart.getOption().dataZoom[0]; return [z.start, z.end]; })()`, chart)
			box := eval[[]float64](t, p, fmt.Sprintf(`(() => { const el = window.kcbenchCharts[%q].chart.getDom(); el.scrollIntoView({block: "center"}); const r = el.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`, chart))
			y := box[1] + box[3]*0.45
			if err := chromedp.Do(p.ctx,
				chromedp.MouseEvent(chromedp.MouseMoved, box[0]+box[2]*0.3, y),
				chromedp.MouseEvent(chromedp.MousePressed, box[0]+box[2]*0.3, y, chromedp.ButtonLeft),
				chromedp.MouseEvent(chromedp.MouseMoved, box[0]+box[2]*0.45, y, chromedp.ButtonLeft),
				chromedp.MouseEvent(chromedp.MouseMoved, box[0]+box[2]*0.6, y, chromedp.ButtonLeft),
				chromedp.MouseEvent(chromedp.MouseReleased, box[0]+box[2]*0.6, y, chromedp.ButtonLeft)); err != nil {
				t.Fatal(err)
			}
			if z := eval[[]float64](t, p, zoomJS); len(z) != 2 || z[0] <= 0 || z[1] >= 100 {
				t.Errorf("after a drag the zoom is %v%%, want a range inside 0-100", z)
			}
			// a click on a legend entry hides its series
			at := eval[[]float64](t, p, fmt.Sprintf(`(() => {
  const c = window.kcbenchCharts[%q].chart;
  const txt = c.getZr().storage.getDisplayList().find(e => e.style && e.style.text === "p99");
  const b = txt.getBoundingRect(), m = txt.transform || [1, 0, 0, 1, 0, 0];
  const r = c.getDom().getBoundingClientRect();
  return [r.left + m[0] * (b.x + b.width / 2) + m[4], r.top + m[3] * (b.y + b.height / 2) + m[5]];
})()`, chart))
			if err := chromedp.Do(p.ctx, chromedp.MouseClickXY(at[0], at[1])); err != nil {
				t.Fatal(err)
			}
			if hidden := eval[bool](t, p, fmt.Sprintf(`window.kcbenchCharts[%q].chart.getOption().legend[0].selected["p99"] === false`, chart)); !hidden {
				t.Error("a click on the p99 legend entry did not hide the series")
			}
			// the log/linear switch redraws the latency axis
			axisJS := fmt.Sprintf(`window.kcbenchCharts[%q].chart.getOption().yAxis[0].type`, chart)
			before := eval[string](t, p, axisJS)
			if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`#chart-`+chart+` button.logswitch`))); err != nil {
				t.Fatal(err)
			}
			after := eval[string](t, p, axisJS)
			if flip := map[string]string{"log": "value", "value": "log"}; flip[before] != after {
				t.Errorf("the log/linear switch turned a %q latency axis into %q", before, after)
			}
			if len(tc.ns) < 3 {
				// grouped bars, not lines over one N
				kinds := eval[[]string](t, p, `Object.values(window.kcbenchCharts).map(c => c.spec.kind + ":" + c.chart.getDom().getAttribute("data-chart")).filter(s => s.includes("sweep"))`)
				if len(kinds) > 0 {
					t.Errorf("with one N the sweep is drawn as lines: %q", kinds)
				}
			}
			p.screenshot(t, "quickstart-"+tc.name)
			p.checkClean(t, u)
		})
	}
}

// firstScreenJS lists what of the first screen (the answer's sentences
// and its table) a reader does not see at the top of the page in a w×h
// window: hidden, or outside it. Empty: all of it is in view without
// scrolling.
const firstScreenJS = `((w, h, needTable) => {
  window.scrollTo(0, 0);
  const bad = [];
  if (window.innerWidth !== w || window.innerHeight !== h) bad.push("window " + window.innerWidth + "×" + window.innerHeight + ", want " + w + "×" + h);
  if (window.scrollY !== 0) bad.push("scrolled to " + window.scrollY);
  const els = Array.from(document.querySelectorAll("#answer p.answer"));
  if (els.length === 0) bad.push("no answer sentence");
  const table = document.getElementById("answer-table");
  if (table) els.push(table); else if (needTable) bad.push("no answer table");
  for (const el of els) {
    const r = el.getBoundingClientRect();
    const name = el.id ? "#" + el.id : JSON.stringify(el.textContent.slice(0, 50));
    if (r.width === 0 || r.height === 0 || !el.checkVisibility({opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true})) {
      bad.push(name + ": not shown");
    } else if (r.top < 0 || r.left < 0 || r.bottom > h || r.right > w) {
      bad.push(name + " at left " + Math.round(r.left) + ", top " + Math.round(r.top) + ", right " + Math.round(r.right) + ", bottom " + Math.round(r.bottom) + ": not inside " + w + "×" + h);
    }
  }
  return bad;
})`

// firstScreen opens u in a w×h window and fails what of the answer's
// sentences and table (needed or not) lies outside it unscrolled; it saves
// a screenshot of the window as name.png and returns the browser.
func firstScreen(t *testing.T, u, name string, w, h int, needTable bool) *browserPage {
	t.Helper()
	p := newBrowser(t)
	if err := chromedp.Do(p.ctx, chromedp.EmulateViewport(int64(w), int64(h))); err != nil {
		t.Fatal(err)
	}
	p.open(t, u)
	shot := p.viewportShot(t, name)
	for _, b := range eval[[]string](t, p, fmt.Sprintf("%s(%d, %d, %v)", firstScreenJS, w, h, needTable)) {
		t.Errorf("first screen: %s (see %s)", b, shot)
	}
	return p
}

// TestBrowserFirstScreen opens the quickstart's report (both modes, five
// workloads cold and warm, a sizing estimate) in a 1280×800 window and
// checks its first screen: the answer's sentences and its table are in
// view without scrolling, the table's figures are summary.json's, and the
// verdict in full is one click below. A screenshot of the window goes to
// $KCBENCH_ARTIFACTS/quickstart-first-screen.png.
func TestBrowserFirstScreen(t *testing.T) {
	skipUnderRace(t)
	const w, h = 1280, 800
	res := t.TempDir()
	writeQuickstartFixture(t, res, 5)
	m, err := Build(t.Context(), res)
	if err != nil {
		t.Fatal(err)
	}
	m.Sizing = "sizing: 3 pods of 2 vCPU (test text)"
	out := t.TempDir()
	if err := m.Write(out); err != nil {
		t.Fatal(err)
	}
	u := fileURL(filepath.Join(out, HTMLFile))
	p := firstScreen(t, u, "quickstart-first-screen", w, h, true)

	// what it says: the sentences, and a row per warm workload whose
	// figures are summary.json's
	text := eval[string](t, p, `document.getElementById("answer").innerText`)
	for _, want := range []string{"orgs and realms compared at N=5", "orgs did better than realms in 4 of 5 workloads", "Each configuration ran once", "Both points finished"} {
		if !strings.Contains(text, want) {
			t.Errorf("the first screen does not say %q:\n%s", want, text)
		}
	}
	rows := eval[[]string](t, p, `Array.from(document.querySelectorAll("#answer-table tbody tr")).map(r => r.cells[0].textContent)`)
	if !slices.Equal(rows, []string{"login", "token", "refresh", "jwks", "admin"}) {
		t.Errorf("table rows %q, want the five warm workloads", rows)
	}
	pts, err := results.ReadExperiment(res)
	if err != nil {
		t.Fatal(err)
	}
	figs := p.figures(t, "#answer-table")
	if len(figs) != 30 {
		t.Errorf("%d figures in the table, want 5 workloads × 2 modes × 3 metrics", len(figs))
	}
	checkVerdict(t, figs, pts)

	// the verdict in full: closed, one click opens it
	detail := `(() => { const d = document.getElementById("verdict-detail"); const li = d.querySelector("ul.verdict li"); return [String(d.open), String(li.checkVisibility({visibilityProperty: true})), d.innerText]; })()`
	if st := eval[[]string](t, p, detail); st[0] != "false" || st[1] != "false" {
		t.Errorf("the verdict in full is open on the first screen (open %s, shown %s)", st[0], st[1])
	}
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`#verdict-detail summary`))); err != nil {
		t.Fatal(err)
	}
	if st := eval[[]string](t, p, detail); st[0] != "true" || st[1] != "true" || !strings.Contains(st[2], "warm login: throughput orgs") || !strings.Contains(st[2], "Cold (right after a restart) against warm") {
		t.Errorf("one click did not show the verdict in full: open %s, shown %s:\n%s", st[0], st[1], st[2])
	}
	if err := chromedp.Do(p.ctx, chromedp.Click(chromedp.CSS(`#verdict-detail summary`))); err != nil {
		t.Fatal(err)
	}

	// the check fails a page whose answer is pushed below the window
	eval[[]string](t, p, `(() => { const d = document.createElement("div"); d.id = "push"; d.style.height = "600px"; document.getElementById("answer").before(d); return []; })()`)
	if bad := eval[[]string](t, p, fmt.Sprintf("%s(%d, %d, true)", firstScreenJS, w, h)); !slices.ContainsFunc(bad, func(s string) bool { return strings.HasPrefix(s, "#answer-table at ") }) {
		t.Errorf("with the answer pushed 600 px down the check finds nothing wrong: %q", bad)
	}
	eval[[]string](t, p, `(() => { document.getElementById("push").remove(); return []; })()`)
	p.checkClean(t, u)

	// a sweep over three tenant counts with an aborted point: its first
	// screen says what failed, and still fits
	sweep := t.TempDir()
	m, err = Build(t.Context(), filepath.Join(fixturesDir, "sweep"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(sweep); err != nil {
		t.Fatal(err)
	}
	su := fileURL(filepath.Join(sweep, HTMLFile))
	sp := firstScreen(t, su, "sweep-first-screen", w, h, true)
	if text := eval[string](t, sp, `document.getElementById("answer").innerText`); !strings.Contains(text, "What failed: point realms-n250 was aborted") {
		t.Errorf("the sweep's first screen does not say what failed:\n%s", text)
	}
	sp.checkClean(t, su)
}

func TestBrowserCapacityReport(t *testing.T) {
	skipUnderRace(t)
	dir := t.TempDir()
	writeCapacityResult(t, dir, "26.7.3", 97)
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	u := fileURL(filepath.Join(dir, HTMLFile))
	p := firstScreen(t, u, "capacity-first-screen", 1280, 800, false)
	p.checkCharts(t)
	res, err := results.ReadCapacityDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	figs := p.verdictFigures(t)
	want := map[string]float64{
		"client-credentials|client-credentials|max_rate": res.MaxRate,
		"client-credentials|client-credentials|cpu":      res.CPUMsPerOp,
	}
	for key, want := range want {
		f, ok := figs[key]
		if !ok {
			t.Errorf("verdict lacks %s (has %v)", key, figs)
			continue
		}
		if got, _ := strconv.ParseFloat(f[0], 64); got != want {
			t.Errorf("verdict %s = %s, capacity.json says %g", key, f[0], want)
		}
	}
	p.screenshot(t, "capacity")
	p.checkClean(t, u)
}

// followLive waits until the live page shows a run of phase with three
// seconds of throughput drawn and an ETA, every chart drawn.
func (p *browserPage) followLive(t *testing.T, phase string) {
	t.Helper()
	if _, err := chromedp.Run(p.ctx, chromedp.Poll[bool](fmt.Sprintf(`(() => {
  const c = (window.kcbenchCharts || {})["live-throughput"];
  return !!c && document.getElementById("live-phase").textContent.includes(%q) && c.chart.getOption().series[0].data.length >= 3;
})()`, phase), chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the live page did not follow the run: %v", err)
	}
	if eta := eval[string](t, p, `document.getElementById("live-eta").textContent`); eta == "-" || eta == "" {
		t.Errorf("no ETA while the run goes")
	}
	p.checkCharts(t)
}

func TestBrowserLiveDashboard(t *testing.T) {
	l, err := ListenLive("127.0.0.1:0", false, "load get")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := newBrowser(t)
	if err := chromedp.Do(p.ctx, chromedp.Navigate(l.URL())); err != nil {
		t.Fatal(err)
	}

	// a short run feeding the dashboard a sample every 250 ms, as the
	// load engine's progress does (cmd/kcbench's liveSample)
	const runFor = 6 * time.Second
	l.SetStatus(LiveStatus{Point: "local", Step: "1 of 1"})
	runErr := make(chan error, 1)
	go func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		start := time.Now()
		for n := int64(1); time.Since(start) < runFor; n++ {
			<-tick.C
			l.Add(LiveSample{Label: "get", Elapsed: time.Since(start), Total: runFor, Rate: 400 + float64(n%7),
				Iterations: 100 * n, Errors: n / 10, ActiveVUs: 2, VUs: 2})
		}
		runErr <- nil
	}()

	// while it runs: the status and the charts follow it
	p.followLive(t, "get")
	p.screenshot(t, "live-running")
	if err := <-runErr; err != nil {
		t.Fatal(err)
	}

	// at the end the page shows the final report
	res := t.TempDir()
	writeQuickstartFixture(t, res, 5)
	m, err := Build(t.Context(), res)
	if err != nil {
		t.Fatal(err)
	}
	var final bytes.Buffer
	if err := m.WriteHTML(&final); err != nil {
		t.Fatal(err)
	}
	l.Finish(final.Bytes(), 15*time.Second)
	if err := p.waitFor(`!!document.getElementById("verdict") && window.kcbenchDrawnMs !== undefined`, 20*time.Second); err != nil {
		t.Fatalf("the page did not turn into the final report: %v", err)
	}
	p.checkCharts(t)
	p.screenshot(t, "live-final")
	p.checkClean(t, strings.TrimSuffix(l.URL(), "/"))
}

func TestDashboardAddr(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		remote bool
		bad    string
	}{
		{"127.0.0.1:8090", false, ""},
		{"[::1]:8090", false, ""},
		{"localhost:8090", false, ""},
		{"0.0.0.0:8090", false, "not a loopback address"},
		{"192.168.1.5:8090", false, "--dashboard-allow-remote"},
		{"192.168.1.5:8090", true, ""},
		{"8090", false, "want HOST:PORT"},
	} {
		err := CheckDashboardAddr(tc.addr, tc.remote)
		if (err != nil) != (tc.bad != "") || err != nil && !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%s (remote %v): %v, want %q", tc.addr, tc.remote, err, tc.bad)
		}
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, err = ListenLive(busy.Addr().String(), false, "x")
	if err == nil || !strings.Contains(err.Error(), "address already in use") || strings.Count(err.Error(), "\n") > 0 {
		t.Errorf("busy port: %v, want one line saying the address is in use", err)
	}
}

func TestBrowserIndexAndCompare(t *testing.T) {
	skipUnderRace(t)
	root := t.TempDir()
	writeQuickstartFixture(t, filepath.Join(root, "quickstart"), 1, 10, 50)
	writeCapacityResult(t, filepath.Join(root, "capacity-jwks"), "26.7.3", 97)
	for _, p := range hashingPoints(false) {
		writePoint(t, filepath.Join(root, "hashing"), "hashing", p)
	}
	for _, p := range hashingPoints(true) {
		writePoint(t, filepath.Join(root, "hashing-rerun"), "hashing", p)
	}
	os.MkdirAll(filepath.Join(root, "not-results"), 0o755) //nolint:errcheck // listed or not, checked below
	m, err := Build(t.Context(), filepath.Join(root, "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(filepath.Join(root, "quickstart")); err != nil {
		t.Fatal(err)
	}
	path, err := WriteIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	p := newBrowser(t)
	u := fileURL(path)
	if err := chromedp.Do(p.ctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	if err := p.waitFor(`window.kcbenchDrawnMs !== undefined`, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	rows := eval[[][]string](t, p, `Array.from(document.querySelectorAll("#index tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent))`)
	kinds := map[string]string{}
	for _, r := range rows {
		kinds[r[0]] = r[1]
	}
	want := map[string]string{"quickstart": "sweep", "capacity-jwks": "capacity", "hashing": "variants", "hashing-rerun": "variants"}
	if !maps.Equal(kinds, want) {
		t.Errorf("index lists %v, want %v", kinds, want)
	}
	links := eval[[]string](t, p, `Array.from(document.querySelectorAll("#index a")).map(a => a.getAttribute("href"))`)
	if !slices.Equal(links, []string{"quickstart/report.html"}) {
		t.Errorf("report links %q, want the quickstart's only", links)
	}
	p.screenshot(t, "index")
	p.checkClean(t, u)

	// compare as a page of the same kind
	cmp, err := Compare(t.Context(), filepath.Join(root, "hashing"), filepath.Join(root, "hashing-rerun"))
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := cmp.WriteHTML(t.Context(), &page); err != nil {
		t.Fatal(err)
	}
	cpath := filepath.Join(root, "compare.html")
	if err := os.WriteFile(cpath, page.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cu := fileURL(cpath)
	p2 := firstScreen(t, cu, "compare-first-screen", 1280, 800, true)
	p2.checkCharts(t)
	figs := p2.verdictFigures(t)
	if len(figs) == 0 {
		t.Error("the comparison's verdict shows no figure")
	}
	for key, f := range figs {
		k := strings.Split(key, "|")
		found := false
		for _, d := range cmp.Rows {
			if d.Config == k[0] && (wlKey{d.Workload, d.Phase}).String() == k[1] && d.Metric == k[2] {
				want := d.A.Mean
				if k[3] == "B" {
					want = d.B.Mean
				}
				got, _ := strconv.ParseFloat(f[0], 64)
				found = got == want
			}
		}
		if !found {
			t.Errorf("verdict figure %s = %s is not in the comparison", key, f[0])
		}
	}
	p2.screenshot(t, "compare")
	p2.checkClean(t, cu)
}

// TestMeasureThreeHourReport measures the page of a synthetic 3-hour
// experiment point (one workload, one timeline row and one observe sample
// per second... every 2 s): size and time to first paint. A measurement,
// not a check: it runs with KCBENCH_MEASURE=1.
//
//	KCBENCH_MEASURE=1 go test -run TestMeasureThreeHourReport -v ./internal/report/
func TestMeasureThreeHourReport(t *testing.T) {
	if os.Getenv("KCBENCH_MEASURE") == "" {
		t.Skip("a measurement: set KCBENCH_MEASURE=1")
	}
	dir := t.TempDir()
	p := hashingPoints(false)[0]
	p.wls = p.wls[:1]
	p.wls[0].rows = 3 * 3600
	writePoint(t, dir, "three-hours", p)
	start := time.Now()
	m, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Write(dir); err != nil {
		t.Fatal(err)
	}
	built := time.Since(start)
	fi, err := os.Stat(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	u := fileURL(filepath.Join(dir, HTMLFile))
	b.open(t, u)
	n := b.checkCharts(t)
	fcp, drawn := b.paintTimes(t)
	points := eval[int](t, b, `window.kcbenchCharts["point-default-r1-latency"].chart.getOption().series[0].data.length`)
	t.Logf("3-hour point: report built in %s; report.html %.2f MiB, %d charts, %d points per latency line; first contentful paint %.0f ms, every chart drawn at %.0f ms",
		built.Round(time.Millisecond), float64(fi.Size())/(1<<20), n, points, fcp, drawn)
	b.checkClean(t, u)
}

// TestMeasureReport measures an existing report.html: size and time to
// first paint.
//
//	KCBENCH_MEASURE_REPORT=results/quickstart/report.html go test -run TestMeasureReport -v ./internal/report/
func TestMeasureReport(t *testing.T) {
	path := os.Getenv("KCBENCH_MEASURE_REPORT")
	if path == "" {
		t.Skip("a measurement: set KCBENCH_MEASURE_REPORT to a report.html")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	u := fileURL(path)
	b.open(t, u)
	n := b.checkCharts(t)
	fcp, drawn := b.paintTimes(t)
	t.Logf("%s: %d KiB, %d charts; first contentful paint %.0f ms, every chart drawn at %.0f ms", path, fi.Size()/1024, n, fcp, drawn)
	b.checkClean(t, u)
}

// A folder with one point, and one whose other point failed, still render
// and say what is missing.
func TestBrowserMissing(t *testing.T) {
	skipUnderRace(t)
	root := t.TempDir()
	ps := quickstartPoints(5)
	writePoint(t, filepath.Join(root, "one"), "quickstart", ps[0])
	failed := ps[1]
	failed.status, failed.reason, failed.wls, failed.noTL, failed.observe = results.StatusFailed, "seed: Keycloak answered 500", nil, true, false
	writePoint(t, filepath.Join(root, "failed"), "quickstart", ps[0])
	writePoint(t, filepath.Join(root, "failed"), "quickstart", failed)
	for _, tc := range []struct{ dir, verdict, note string }{
		{"one", "One configuration (mode=orgs, variant=default N=5)", "nothing to compare it with"},
		{"failed", "What failed: point realms-n005 failed", "seed: Keycloak answered 500"},
	} {
		dir := filepath.Join(root, tc.dir)
		m, err := Build(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Write(dir); err != nil {
			t.Fatal(err)
		}
		p := newBrowser(t)
		u := fileURL(filepath.Join(dir, HTMLFile))
		p.open(t, u)
		p.checkCharts(t)
		text := eval[string](t, p, `document.body.innerText`)
		for _, want := range []string{tc.verdict, tc.note} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: the page does not say %q", tc.dir, want)
			}
		}
		p.screenshot(t, "missing-"+tc.dir)
		p.checkClean(t, u)
	}
}
