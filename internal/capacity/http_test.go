package capacity

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

// getScenario sends one GET per iteration, recorded as "get".
type getScenario struct {
	url    string
	client *http.Client
}

var _ load.Scenario = (*getScenario)(nil)

func (g *getScenario) Name() string                                    { return "get" }
func (g *getScenario) NewUser(context.Context, int) (load.User, error) { return g, nil }

func (g *getScenario) Iterate(ctx context.Context, rec load.OpRecorder) error {
	start := time.Now()
	err := func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.url, nil)
		if err != nil {
			return err
		}
		resp, err := g.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body) // so that the connection is reused
		if resp.StatusCode != http.StatusOK {
			return statusError(resp.StatusCode)
		}
		return nil
	}()
	rec.Record("get", start, err)
	return err
}

// httpSteps runs each step as a constant-arrival-rate run of GETs to url.
func httpSteps(url string, maxVUs int) StepFunc { return httpStepsEnding(url, maxVUs, nil) }

// httpStepsEnding is httpSteps whose steps end early as early says
// (Options.EarlyEnd; nil: never).
func httpStepsEnding(url string, maxVUs int, early func(float64, time.Duration) func(load.Interval) string) StepFunc {
	sc := &getScenario{url: url, client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConns: maxVUs, MaxIdleConnsPerHost: maxVUs}}}
	return func(ctx context.Context, st Step) (StepResult, error) {
		rate, d := st.Rate, st.Duration
		e := load.ConstantArrivalRate{Rate: rate, Duration: d, PreAllocatedVUs: min(maxVUs, 20), MaxVUs: maxVUs, GracefulStop: time.Second}
		rec := load.NewRecorder()
		if early != nil && st.Judged() {
			rec = load.NewRecorder(load.WithEarlyEnd(early(rate, d)))
		}
		s, err := e.Run(ctx, sc, rec)
		return StepResult{Stats: s}, err
	}
}

// queue serves one request per 1/rate seconds, in arrival order: below
// that rate a request is answered at once, above it requests queue and
// their latency grows by (asked−rate)/rate seconds per second of load.
type queue struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

func (q *queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.mu.Lock()
	t := time.Now()
	if q.next.After(t) {
		t = q.next
	}
	q.next = t.Add(q.interval)
	q.mu.Unlock()
	select {
	case <-time.After(time.Until(t)):
	case <-r.Context().Done():
		return
	}
	io.WriteString(w, "ok")
}

func TestHTTPFailingServerNeverPasses(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	// Fast failures meet the latency SLO; no error SLO is given.
	o := Options{SLOs: mustSLOs(t, "p99<500ms"), Start: 100, Step: 100, StepDuration: time.Second, Warmup: -1, Pause: -1}
	r, err := Search(t.Context(), httpSteps(srv.URL, 50), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Found || r.MaxRate != 0 || len(r.Steps) != 1 {
		t.Fatalf("found %v at %g after %d steps", r.Found, r.MaxRate, len(r.Steps))
	}
	s := r.Steps[0]
	if s.Errors == 0 || s.OK != 0 || !strings.Contains(strings.Join(s.Failures, ";"), "every iteration failed") {
		t.Errorf("step %+v", s)
	}
	if !strings.Contains(r.Conclusion, "even the starting rate 100/s failed") {
		t.Errorf("conclusion %q", r.Conclusion)
	}
}

func TestHTTPDroppedIterationsFail(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(50 * time.Millisecond)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	// 4 VUs of 50 ms serve 80/s at most: at 100/s about a fifth of the
	// arrivals find no free VU. Latency stays far within the SLO.
	o := Options{SLOs: mustSLOs(t, "p99<2s,errors<1%"), Start: 100, Step: 100, StepDuration: time.Second,
		Warmup: -1, Pause: -1, MinOK: 10}
	r, err := Search(t.Context(), httpSteps(srv.URL, 4), o)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Steps[0]
	if r.Found || s.Pass || s.Dropped == 0 || !strings.Contains(strings.Join(s.Failures, ";"), "dropped") {
		t.Errorf("found %v, step %+v", r.Found, s)
	}
	for _, slo := range s.SLOs {
		if !slo.Pass {
			t.Errorf("SLO %v failed; the test wants the drops alone to fail the step", slo)
		}
	}
}

// statusError is an unexpected HTTP status; load.Classify counts it as
// "http_<code>".
type statusError int

func (e statusError) Error() string   { return "HTTP " + strconv.Itoa(int(e)) }
func (e statusError) HTTPStatus() int { return int(e) }
