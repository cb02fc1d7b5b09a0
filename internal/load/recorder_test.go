package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kcbench/kcbench/internal/results"
)

func TestWarmup(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{iterate: busy(time.Millisecond)}
		rec := NewRecorder(WithWarmup(2500 * time.Millisecond))
		e := ConstantArrivalRate{Rate: 100, Duration: 10 * time.Second, PreAllocatedVUs: 1}
		s, err := e.Run(t.Context(), sc, rec)
		if err != nil {
			t.Fatal(err)
		}
		if s.Warmup != 2500*time.Millisecond || s.Duration != 7500*time.Millisecond {
			t.Errorf("warmup, duration = %v, %v; want 2.5s, 7.5s", s.Warmup, s.Duration)
		}
		if s.Iterations != 750 {
			t.Errorf("iterations = %d, want the 750 after the warm-up", s.Iterations)
		}
		// Rows: 0–1, 1–2, 2–2.5 (warm-up), 2.5–3, 3–4, … 9–10.
		var warm, all int64
		for _, r := range s.Timeline {
			all += r.Ops[0].Count
			if r.Warmup {
				warm += r.Ops[0].Count
			}
		}
		if warm != 250 || all != 1000 {
			t.Errorf("timeline: %d warm-up iterations of %d, want 250 of 1000", warm, all)
		}
		if r := s.Timeline[2]; !r.Warmup || r.Start != 2*time.Second || r.End != 2500*time.Millisecond {
			t.Errorf("row 2 = %v–%v warm-up %v, want 2s–2.5s warm-up", r.Start, r.End, r.Warmup)
		}
		if r := s.Timeline[3]; r.Warmup || r.End != 3*time.Second {
			t.Errorf("row 3 = %v–%v warm-up %v, want 2.5s–3s measured", r.Start, r.End, r.Warmup)
		}
	})
}

func TestErrorsAndOutOfRange(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sc := &fakeScenario{iterate: func(ctx context.Context, _ int, n int64, rec OpRecorder) error {
			rec.Record("token", time.Now(), nil)
			switch {
			case n%10 == 0:
				rec.Record("userinfo", time.Now(), CheckError{Check: "sub"})
				return CheckError{Check: "sub"}
			case n%5 == 0:
				rec.Record("userinfo", time.Now(), StatusError{Code: 401})
				return StatusError{Code: 401}
			case n == 7:
				rec.Record("slow", time.Now().Add(-2*time.Minute), nil)
			}
			rec.Record("userinfo", time.Now(), nil)
			return nil
		}}
		s, err := PerVUIterations{VUs: 1, Iterations: 100, MaxDuration: time.Minute}.Run(t.Context(), sc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := names(s.Ops); got != "iteration slow token userinfo" {
			t.Errorf("ops = %s, want iteration first then by name", got)
		}
		ui, _ := s.Op("userinfo")
		if ui.Count != 100 || ui.OK != 80 || ui.Errors != 20 || ui.ErrorClasses[ClassCheck] != 10 || ui.ErrorClasses["http_401"] != 10 {
			t.Errorf("userinfo = %+v", ui)
		}
		if it, _ := s.Op(results.IterationOp); it.Errors != 20 {
			t.Errorf("iteration errors = %d, want 20", it.Errors)
		}
		slow, _ := s.Op("slow")
		if slow.Count != 1 || slow.OutOfRange != 1 || !near(slow.Latency.Max, time.Minute) {
			t.Errorf("slow = %+v, want one out-of-range value recorded as 60s", slow)
		}
	})
}

func names(ops []results.OpStats) string {
	var b bytes.Buffer
	for i, o := range ops {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(o.Name)
	}
	return b.String()
}

func TestProgress(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var got []Progress
		rec := NewRecorder(WithProgress(func(p Progress) { got = append(got, p) }), WithWarmup(time.Second))
		sc := &fakeScenario{iterate: busy(5 * time.Millisecond)}
		s, err := ConstantArrivalRate{Rate: 50, Duration: 4500 * time.Millisecond, PreAllocatedVUs: 5}.Run(t.Context(), sc, rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 {
			t.Fatalf("%d progress reports, want 4: %+v", len(got), got)
		}
		for i, p := range got {
			if p.Elapsed != time.Duration(i+1)*time.Second || p.Warmup != (i == 0) || p.VUs != 5 || p.Dropped != 0 {
				t.Errorf("report %d = %+v", i, p)
			}
			if p.Iterations < int64(49*(i+1)) || p.Rate < 49 || p.Rate > 51 {
				t.Errorf("report %d = %+v, want about 50 iterations per second", i, p)
			}
		}
		if s.Timeline[len(s.Timeline)-1].End != 4500*time.Millisecond {
			t.Errorf("last row ends at %v, want 4.5s", s.Timeline[len(s.Timeline)-1].End)
		}
	})
}

func TestRecorderServesOneRun(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder()
		e := PerVUIterations{VUs: 1, Iterations: 1, MaxDuration: time.Second}
		if _, err := e.Run(t.Context(), &fakeScenario{}, rec); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(t.Context(), &fakeScenario{}, rec); !errors.Is(err, errRecorderUsed) {
			t.Errorf("second Run = %v, want errRecorderUsed", err)
		}
	})
}

func TestWriteHlog(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder(WithWarmup(time.Second))
		sc := &fakeScenario{iterate: busy(20 * time.Millisecond)}
		s, err := ConstantArrivalRate{Rate: 100, Duration: 3 * time.Second, PreAllocatedVUs: 3, GracefulStop: time.Second}.Run(t.Context(), sc, rec)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.Ops(); len(got) != 2 || got[0] != results.IterationOp || got[1] != "op" {
			t.Errorf("Ops() = %v", got)
		}
		for _, series := range []Series{SeriesLatency, SeriesService} {
			var buf bytes.Buffer
			if err := rec.WriteHlog(&buf, "op", series); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(buf.Bytes(), []byte("series="+series.String())) {
				t.Errorf("%s log lacks its comment:\n%s", series, buf.String())
			}
			r := hdr.NewHistogramLogReader(&buf)
			total, intervals := int64(0), 0
			for {
				h, err := r.NextIntervalHistogram()
				if err != nil {
					t.Fatal(err)
				}
				if h == nil {
					break
				}
				intervals++
				total += h.TotalCount()
				if h.Max() < 19_000 || h.Max() > 21_000 {
					t.Errorf("interval max = %dµs, want about 20ms", h.Max())
				}
			}
			op, _ := s.Op("op")
			if total != op.Count || intervals != 3 {
				t.Errorf("%s log: %d values in %d intervals, want %d in 3 (warm-up left out)", series, total, intervals, op.Count)
			}
		}
		if err := rec.WriteHlog(io.Discard, "nope", SeriesLatency); !errors.Is(err, ErrUnknownOp) {
			t.Errorf("WriteHlog(nope) = %v, want ErrUnknownOp", err)
		}
	})
}

func TestRecordDoesNotAllocate(t *testing.T) {
	rec := NewRecorder()
	v := rec.newVU(context.Background())
	start := time.Now()
	v.Record("token", start, nil) // first use registers the operation
	var r OpRecorder = v
	allocs := testing.AllocsPerRun(1000, func() {
		r.Record("token", start, nil)
		v.startIteration(0)
		v.endIteration(start, start, nil)
		v.mu.Lock()
		v.buf = v.buf[:0]
		v.mu.Unlock()
	})
	if allocs != 0 {
		t.Errorf("recording a success allocates %v times", allocs)
	}
}

func TestInterval(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rec := NewRecorder()
		rec.interval = 250 * time.Millisecond
		s, err := ConstantArrivalRate{Rate: 40, Duration: time.Second, PreAllocatedVUs: 1, GracefulStop: time.Second}.Run(t.Context(), &fakeScenario{iterate: busy(time.Millisecond)}, rec)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Timeline) != 4 {
			t.Fatalf("%d rows, want 4", len(s.Timeline))
		}
		for i, r := range s.Timeline {
			if r.End != time.Duration(i+1)*250*time.Millisecond || r.Ops[0].Count != 10 {
				t.Errorf("row %d = %v–%v with %d iterations, want 250ms rows of 10", i, r.Start, r.End, r.Ops[0].Count)
			}
		}
	})
}

// The first message of each error class is kept, and refused connections
// are counted in the progress.
func TestErrorExamplesAndConnectErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		sc := &fakeScenario{iterate: func(ctx context.Context, _ int, n int64, rec OpRecorder) error {
			var err error
			switch {
			case n%2 == 0:
				err = refused
			case n%3 == 0:
				err = fmt.Errorf("GET /x (%d): %w", n, StatusError{Code: 404})
			}
			start := time.Now()
			Sleep(ctx, 10*time.Millisecond)
			rec.Record("op", start, err)
			return err
		}}
		var last Progress
		rec := NewRecorder(WithProgress(func(p Progress) { last = p }))
		s, err := ConstantVUs{VUs: 1, Duration: 2 * time.Second}.Run(t.Context(), sc, rec)
		if err != nil {
			t.Fatal(err)
		}
		if want := (map[string]string{ClassConnRefused: refused.Error(), "http_404": "GET /x (3): unexpected HTTP status 404 Not Found"}); !maps.Equal(s.ErrorExamples, want) {
			t.Errorf("examples = %q, want %q", s.ErrorExamples, want)
		}
		if last.ConnectErrors < 90 || last.ConnectErrors > last.Iterations/2+1 {
			t.Errorf("progress %+v: want half the iterations refused", last)
		}
		var b bytes.Buffer
		WriteSummary(&b, s)
		if !strings.Contains(b.String(), "  http_404: GET /x (3): unexpected HTTP status 404 Not Found\n") {
			t.Errorf("summary lacks the example:\n%s", b.String())
		}
	})
}
