package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Live is the live dashboard: report.html's page and chart code served
// while a run goes, fed with samples of the running load (iterations/s,
// errors/s, VUs) and its status (point, workload and phase, step, ETA).
// The page polls live.json once a second; when the run ends it reloads
// and shows the final report.
type Live struct {
	title string
	ln    net.Listener
	srv   *http.Server
	start time.Time

	mu      sync.Mutex
	status  LiveStatus
	samples []liveRow
	marks   []MarkSpec
	label   string // of the last sample, to mark when it changes
	done    bool
	final   []byte        // the final report page, when there is one
	served  chan struct{} // closed when the final page was served
	serveMu sync.Once
}

// LiveStatus is what the run is doing now.
type LiveStatus struct {
	Run   string        `json:"run"`             // e.g. "experiment quickstart"
	Point string        `json:"point,omitempty"` // the point running
	Phase string        `json:"phase,omitempty"` // the workload and phase, or what runs besides load (seed, boot)
	Step  string        `json:"step,omitempty"`  // e.g. "point 2 of 6"
	ETA   time.Duration `json:"-"`               // time left, when known
}

// LiveSample is one progress report of the running load (the
// caller converts the load engine's progress into it).
type LiveSample struct {
	Label      string        // what runs, e.g. "realms-n010 warm login"
	Elapsed    time.Duration // since this load started
	Total      time.Duration // the load's planned length, 0 if unknown
	Warmup     bool
	Rate       float64 // iterations/s over the last interval
	Iterations int64
	Errors     int64
	ActiveVUs  int
	VUs        int
}

type liveRow struct {
	at        float64 // seconds since the dashboard started
	rate      float64
	errRate   float64
	active    int
	vus       int
	lastErrs  int64
	lastAt    float64
	lastLabel string
}

// CheckDashboardAddr checks a --dashboard address: host:port, on a
// loopback address unless allowRemote.
func CheckDashboardAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--dashboard %q: want HOST:PORT, e.g. 127.0.0.1:8090", addr)
	}
	if port == "" {
		return fmt.Errorf("--dashboard %q: no port", addr)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--dashboard %q: not a loopback address; the dashboard shows the run to anyone who can reach it, so add --dashboard-allow-remote to serve it on %s", addr, host)
	}
	return nil
}

// ListenLive checks addr and listens on it, so that a busy port or a bad
// address is an error before the run starts. Serve starts serving.
func ListenLive(addr string, allowRemote bool, title string) (*Live, error) {
	if err := CheckDashboardAddr(addr, allowRemote); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return nil, fmt.Errorf("--dashboard %s: cannot listen: %v", addr, err)
	}
	l := &Live{title: title, ln: ln, start: time.Now(), served: make(chan struct{}), status: LiveStatus{Run: title}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", l.page)
	mux.HandleFunc("GET /live.json", l.json)
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go l.srv.Serve(ln) //nolint:errcheck // ends with Close
	return l, nil
}

// URL is the dashboard's address for people.
func (l *Live) URL() string { return "http://" + l.ln.Addr().String() + "/" }

// SetStatus sets what the run is doing now.
func (l *Live) SetStatus(s LiveStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.Run == "" {
		s.Run = l.title
	}
	l.status = s
}

// Add records a sample of the running load.
func (l *Live) Add(s LiveSample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := time.Since(l.start).Round(time.Millisecond).Seconds()
	row := liveRow{at: at, rate: s.Rate, active: s.ActiveVUs, vus: s.VUs}
	if n := len(l.samples); n > 0 && l.label == s.Label {
		prev := l.samples[n-1]
		if dt := at - prev.lastAt; dt > 0 && s.Errors >= prev.lastErrs {
			row.errRate = float64(s.Errors-prev.lastErrs) / dt
		}
	}
	row.lastErrs, row.lastAt = s.Errors, at
	if s.Label != l.label {
		l.marks = append(l.marks, MarkSpec{X: at, Label: s.Label, Kind: "start"})
		l.label = s.Label
	}
	l.samples = append(l.samples, row)
	if s.Total > 0 {
		l.status.ETA = max(0, s.Total-s.Elapsed)
	}
	if s.Warmup {
		l.status.Phase = strings.TrimSuffix(s.Label, " (warm-up)") + " (warm-up)"
	} else if s.Label != "" {
		l.status.Phase = s.Label
	}
}

// Finish ends the run: the page shows finalHTML (the report) when given,
// else its last state, marked finished. It waits up to wait for an open
// page to fetch the final state, so that a page left open shows it.
func (l *Live) Finish(finalHTML []byte, wait time.Duration) {
	l.mu.Lock()
	l.done, l.final = true, finalHTML
	l.status.ETA = 0
	l.mu.Unlock()
	select {
	case <-l.served:
	case <-time.After(wait):
	}
}

// Close stops the server.
func (l *Live) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return l.srv.Shutdown(ctx)
}

func (l *Live) page(w http.ResponseWriter, _ *http.Request) {
	l.mu.Lock()
	final, done := l.final, l.done
	l.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if final != nil {
		w.Write(final) //nolint:errcheck // the client went away
		l.serveMu.Do(func() { close(l.served) })
		return
	}
	m := &Model{Experiment: l.title, Live: true}
	var buf bytes.Buffer
	if err := m.WriteHTML(&buf); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(buf.Bytes()) //nolint:errcheck // the client went away
	if done {
		l.serveMu.Do(func() { close(l.served) })
	}
}

// liveState is live.json.
type liveState struct {
	Status  LiveStatus            `json:"status"`
	ETA     string                `json:"eta,omitempty"`
	Elapsed string                `json:"elapsed"`
	Done    bool                  `json:"done"`
	Final   bool                  `json:"final"` // a final report replaces the page
	Specs   map[string]*ChartSpec `json:"specs"`
}

// maxLivePoints bounds the points per live line; older ones are thinned.
const maxLivePoints = 4000

func (l *Live) json(w http.ResponseWriter, _ *http.Request) {
	l.mu.Lock()
	st := liveState{Status: l.status, Done: l.done, Final: l.final != nil,
		Elapsed: time.Since(l.start).Round(time.Second).String()}
	if l.status.ETA > 0 {
		st.ETA = l.status.ETA.Round(time.Second).String()
	}
	var thr, errs, act, vus []xy
	for _, r := range l.samples {
		thr = append(thr, xy{r.at, r.rate})
		errs = append(errs, xy{r.at, r.errRate})
		act = append(act, xy{r.at, float64(r.active)})
		vus = append(vus, xy{r.at, float64(r.vus)})
	}
	marks := l.marks
	l.mu.Unlock()
	var vms []vmark
	for _, m := range marks {
		vms = append(vms, vmark{x: m.X, label: m.Label})
	}
	const x = "seconds since the dashboard started"
	st.Specs = map[string]*ChartSpec{}
	if len(thr) > 0 {
		st.Specs["live-throughput"] = lineChart{xLabel: x, yLabel: "per second", marks: vms, series: []lineSeries{
			{label: "iterations/s", parts: [][]xy{lttb(thr, maxLivePoints)}, color: 0},
			{label: "errors/s", parts: [][]xy{lttb(errs, maxLivePoints)}, color: 5},
		}}.spec()
		st.Specs["live-vus"] = lineChart{xLabel: x, yLabel: "VUs", marks: vms, series: []lineSeries{
			{label: "VUs in an iteration", parts: [][]xy{lttb(act, maxLivePoints)}, color: 2},
			{label: "VUs allocated", parts: [][]xy{lttb(vus, maxLivePoints)}, color: 4},
		}}.spec()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(st) //nolint:errcheck // the client went away
}
