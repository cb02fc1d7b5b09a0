package observe

import (
	"context"
	"errors"
	"github.com/kcbench/kcbench/internal/results"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
)

// fakeSource observes one column with fill, failing on the calls listed
// in fail (0-based) and blocking until its deadline on those in hang.
type fakeSource struct {
	name       string
	fill       func(s *results.ObserveSample, call int)
	fail, hang map[int]bool
	gaps       []string

	calls  int
	closed atomic.Bool
}

func (f *fakeSource) Name() string { return f.name }

func (f *fakeSource) Sample(ctx context.Context) (results.ObserveSample, error) {
	call := f.calls
	f.calls++
	s := results.BlankObserveSample(time.Now())
	if f.hang[call] {
		<-ctx.Done()
		return s, ctx.Err()
	}
	if f.fail[call] {
		f.fill(&s, call) // a failing source's values must not be used
		return s, errors.New("boom")
	}
	f.fill(&s, call)
	return s, nil
}

func (f *fakeSource) Unavailable() []string { return f.gaps }
func (f *fakeSource) Close() error          { f.closed.Store(true); return nil }

func TestRecorderRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		kcs := &fakeSource{name: "kc", fill: func(s *results.ObserveSample, call int) {
			s.KCCPUPct = float64(call)
			s.KCRSSBytes = 1000
		}, fail: map[int]bool{2: true}, gaps: []string{"kc metric x: not exposed"}}
		pg := &fakeSource{name: "pg", fill: func(s *results.ObserveSample, call int) {
			s.PGCommits = 5
			s.KCRSSBytes = 1 // overlaps kc: the first source wins
		}, hang: map[int]bool{1: true}}
		down := &fakeSource{name: "down", fill: func(*results.ObserveSample, int) {}, fail: map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true}}

		rec := NewRecorder(time.Second, kcs, pg, down)
		rec.SetPhase("cold")
		stop := rec.Start(t.Context())
		time.Sleep(2500 * time.Millisecond) // rows at 0, 1, 2 s
		rec.SetPhase("warm")
		time.Sleep(2 * time.Second) // rows at 3, 4 s
		rows := stop()

		if len(rows) != 5 {
			t.Fatalf("%d rows, want 5", len(rows))
		}
		// pg hangs through the whole interval of the row at 1 s; the tick
		// at 2 s waits in the ticker and the row at 2 s is on time.
		wantT := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}
		for i, r := range rows {
			if got := r.T.Sub(start); got != wantT[i] {
				t.Errorf("row %d at %v, want %v", i, got, wantT[i])
			}
			wantPhase := "cold"
			if i >= 3 {
				wantPhase = "warm"
			}
			if r.Phase != wantPhase {
				t.Errorf("row %d phase %q, want %q", i, r.Phase, wantPhase)
			}
			if !math.IsNaN(r.HeapUsed) {
				t.Errorf("row %d: unobserved column set", i)
			}
		}
		// kc's values are dropped; the column pg also fills comes from pg.
		if r := rows[2]; !math.IsNaN(r.KCCPUPct) || r.KCRSSBytes != 1 || r.PGCommits != 5 {
			t.Errorf("row with kc failing: %+v", r)
		}
		if r := rows[1]; r.KCCPUPct != 1 || !math.IsNaN(r.PGCommits) {
			t.Errorf("row with pg hanging: %+v", r)
		}
		if r := rows[3]; r.KCCPUPct != 3 || r.KCRSSBytes != 1000 || r.PGCommits != 5 {
			t.Errorf("healthy row: %+v", r)
		}
		if !kcs.closed.Load() || !pg.closed.Load() {
			t.Error("sources not closed")
		}

		got := strings.Join(rec.Unavailable(), "\n")
		for _, want := range []string{
			"kc: 1 of 5 samples failed, last: boom",
			"pg: 1 of 5 samples failed, last: context deadline exceeded",
			"down: not observed, all 5 samples failed, last: boom",
			"kc metric x: not exposed",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("unavailable lacks %q:\n%s", want, got)
			}
		}
		if err := rec.Run(t.Context()); !errors.Is(err, ErrStarted) {
			t.Errorf("second Run: %v", err)
		}
	})
}

func TestRecorderStopsCleanly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &fakeSource{name: "slow", fill: func(*results.ObserveSample, int) {}, hang: map[int]bool{0: true}}
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		rec := NewRecorder(0, slow) // DefaultInterval
		if err := rec.Run(ctx); err != nil {
			t.Fatal(err)
		}
		// The only row was cut short by the end: dropped, not a failure.
		if n := len(rec.Rows()); n != 0 {
			t.Errorf("%d rows, want 0", n)
		}
		if u := rec.Unavailable(); len(u) != 0 {
			t.Errorf("unavailable: %q", u)
		}
	})
}

func TestNewPicksSources(t *testing.T) {
	t.Parallel()
	names := func(r *Recorder) []string {
		var out []string
		for _, s := range r.sources {
			out = append(out, s.Name())
		}
		return out
	}
	local := New(Config{
		Target: kc.Target{BaseURL: "http://127.0.0.1:8080", ManagementURL: "http://127.0.0.1:9000", PID: 42},
		PGPID:  41, PGDSN: kc.Secret("postgres://keycloak:secret@127.0.0.1:5432/keycloak"),
	})
	if got := strings.Join(names(local), "|"); got != "keycloak process tree (/proc/42)|keycloak metrics (http://127.0.0.1:9000/metrics)|postgres process tree (/proc/41)|postgres statistics (pg_stat_database)" {
		t.Errorf("local sources: %s", got)
	}
	if u := local.Unavailable(); len(u) != 0 {
		t.Errorf("local unavailable: %q", u)
	}
	if m := local.sources[1].(*MetricsSource); m.CPU {
		t.Error("local target: CPU from metrics too")
	}

	ext := New(Config{Target: kc.Target{BaseURL: "https://sso.example.com", ManagementURL: "https://sso.example.com:9000"}})
	if len(ext.sources) != 1 || !ext.sources[0].(*MetricsSource).CPU {
		t.Errorf("external sources: %q", names(ext))
	}
	if u := ext.Unavailable(); len(u) != 3 || !strings.HasPrefix(u[0], "keycloak RSS") {
		t.Errorf("external unavailable: %q", u)
	}

	bare := New(Config{Target: kc.Target{BaseURL: "https://sso.example.com"}})
	if len(bare.sources) != 0 || len(bare.Unavailable()) != 4 {
		t.Errorf("bare: %q %q", names(bare), bare.Unavailable())
	}
	if strings.Contains(strings.Join(local.Unavailable(), ""), "secret") {
		t.Error("DSN password leaked")
	}
}

func TestPGSourceFailsCleanly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for _, dsn := range []string{
		"postgres://keycloak:s3cret@127.0.0.1:1/keycloak", // nothing listens on port 1
		"postgres://keycloak:s3cret@127.0.0.1:notaport/keycloak",
	} {
		p := NewPGSource(kc.Secret(dsn))
		s, err := p.Sample(ctx)
		if err == nil {
			t.Fatalf("%s: no error", dsn)
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(p.Name(), "s3cret") {
			t.Errorf("password in %q", err)
		}
		if !math.IsNaN(s.PGCommits) || !math.IsNaN(s.PGDBSizeBytes) {
			t.Errorf("values from a failed sample: %+v", s)
		}
		p.Close()
	}
}

// WaitSampleAfter returns once a sample after t is held, and false when
// none comes in time.
func TestWaitSampleAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := &fakeSource{name: "kc", fill: func(s *results.ObserveSample, call int) { s.KCCPUPct = 1 }}
		idle := NewRecorder(time.Second, src)
		if idle.WaitSampleAfter(t.Context(), time.Now(), 3*time.Second) {
			t.Error("a recorder that never ran: a sample came")
		}
		rec := NewRecorder(time.Second, src)
		stop := rec.Start(t.Context())
		defer stop()
		time.Sleep(1500 * time.Millisecond) // inside the bubble: virtual time
		t0 := time.Now()
		if !rec.WaitSampleAfter(t.Context(), t0, 3*time.Second) {
			t.Fatal("no sample after t0")
		}
		rows := rec.Rows()
		if last := rows[len(rows)-1].T; !last.After(t0) || last.Sub(t0) > time.Second {
			t.Errorf("the last sample at %v, t0 %v", last, t0)
		}
	})
}
