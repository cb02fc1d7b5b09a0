package load

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// httpScenario sends one GET per iteration and records it as "get".
type httpScenario struct {
	url    string
	client *http.Client
}

func (h *httpScenario) Name() string                               { return "http" }
func (h *httpScenario) NewUser(context.Context, int) (User, error) { return h, nil }

func (h *httpScenario) Iterate(ctx context.Context, rec OpRecorder) error {
	start := time.Now()
	err := get(ctx, h.client, h.url)
	rec.Record("get", start, err)
	return err
}

func get(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// Drain the body so that the connection is reused.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return StatusError{Code: resp.StatusCode}
	}
	return nil
}

func TestHTTPArrivalRate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	sc := &httpScenario{url: srv.URL, client: testClient(50, 5*time.Second)}
	e := ConstantArrivalRate{Rate: 200, Duration: 5 * time.Second, PreAllocatedVUs: 20, MaxVUs: 50, GracefulStop: 5 * time.Second}
	s, err := e.Run(t.Context(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := s.Op(results.IterationOp)
	g, _ := s.Op("get")
	t.Logf("%d iterations in %v, %.1f/s, latency p50 %v p99 %v, service p99 %v, %d VUs",
		s.Iterations, s.Duration, it.Rate, g.Latency.P50, g.Latency.P99, g.Service.P99, s.VUs)
	if math.Abs(float64(s.Iterations)-1000) > 20 || math.Abs(it.Rate-200) > 4 || s.Dropped != 0 || g.Errors != 0 {
		t.Errorf("iterations %d, rate %.2f/s, dropped %d, errors %d; want 1000±2%%, 200/s±2%%, 0, 0",
			s.Iterations, it.Rate, s.Dropped, g.Errors)
	}
	// The schedule is kept second by second, not only on average.
	for _, r := range s.Timeline {
		if r.End-r.Start == time.Second && r.End <= s.Duration {
			if c := r.Ops[0].Count; c < 180 || c > 220 {
				t.Errorf("row %v–%v: %d iterations, want 200±10%%", r.Start, r.End, c)
			}
		}
	}
}

// TestHTTPCoordinatedOmission stalls the server once for a second under
// 100 arrivals per second: the arrivals during the stall must show their
// wait, measured from their intended start.
func TestHTTPCoordinatedOmission(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		stalled bool
		begin   = time.Now()
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		if !stalled && time.Since(begin) >= time.Second {
			stalled = true
			time.Sleep(time.Second) // the stall under test; every other request queues behind it
		}
		mu.Unlock()
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rec := NewRecorder()
	sc := &httpScenario{url: srv.URL, client: testClient(300, 10*time.Second)}
	e := ConstantArrivalRate{Rate: 100, Duration: 3 * time.Second, PreAllocatedVUs: 20, MaxVUs: 300, GracefulStop: 5 * time.Second}
	s, err := e.Run(t.Context(), sc, rec)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := s.Op("get")
	slow := countAtLeast(rec, "get", 100*time.Millisecond)
	t.Logf("%d requests, %d ≥100ms, latency p50 %v p99 %v max %v, %d VUs", g.Count, slow, g.Latency.P50, g.Latency.P99, g.Latency.Max, s.VUs)
	if !stalled {
		t.Fatal("the server never stalled")
	}
	if g.Count < 290 || g.Errors != 0 || s.Dropped != 0 {
		t.Errorf("%d requests, %d errors, %d dropped; want 300, 0, 0", g.Count, g.Errors, s.Dropped)
	}
	if g.Latency.Max < time.Second {
		t.Errorf("max latency %v, want at least the 1s stall", g.Latency.Max)
	}
	// About 100 arrivals fall into the stall and wait from 0 to 1 s: about
	// 90 of them 100 ms or more.
	if slow < 60 || slow > 120 {
		t.Errorf("%d requests took ≥100ms, want about 90", slow)
	}
}

func TestHTTPCancel(t *testing.T) {
	t.Parallel()
	for _, e := range []Executor{
		ConstantVUs{VUs: 5, Duration: time.Minute, GracefulStop: time.Minute},
		ConstantArrivalRate{Rate: 50, Duration: time.Minute, PreAllocatedVUs: 5, MaxVUs: 100, GracefulStop: time.Minute},
	} {
		arrived := make(chan struct{}, 1000)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			<-r.Context().Done() // hang until the client gives up
		}))
		ctx, cancel := context.WithCancel(t.Context())
		sc := &httpScenario{url: srv.URL, client: testClient(100, time.Minute)}
		var (
			s        results.Stats
			err      error
			returned = make(chan struct{})
		)
		go func() {
			s, err = e.Run(ctx, sc, nil)
			close(returned)
		}()
		for range 5 {
			<-arrived
		}
		cancelled := time.Now()
		cancel()
		<-returned
		took := time.Since(cancelled)
		srv.Close()
		if !errors.Is(err, context.Canceled) || !s.Aborted {
			t.Errorf("%T: Run = %v, aborted %v; want a cancellation", e, err, s.Aborted)
		}
		if took > time.Second {
			t.Errorf("%T: Run returned %v after cancellation, want < 1s", e, took)
		}
		if s.Interrupted < 5 {
			t.Errorf("%T: %d interrupted iterations, want at least 5", e, s.Interrupted)
		}
	}
}

func TestHTTPErrorClasses(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			<-r.Context().Done()
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := testClient(2, 50*time.Millisecond)
	for _, tt := range []struct{ url, want string }{
		{closed, ClassConnRefused},
		{srv.URL + "/slow", ClassTimeout},
		{srv.URL + "/down", "http_503"},
		{srv.URL + "/", ""},
	} {
		if got := Classify(get(t.Context(), c, tt.url)); got != tt.want {
			t.Errorf("GET %s: class %q, want %q", tt.url, got, tt.want)
		}
	}
}

// testClient keeps conns idle connections per host, as a load run needs.
func testClient(conns int, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns}}
}
