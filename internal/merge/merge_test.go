package merge

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/scenario"
)

// sampled is a scenario whose operation "op" takes a pseudo-random time
// and fails one time in ten; it keeps every latency it caused, in µs, as
// the engine records them. In a synctest bubble time only passes in its
// sleeps, so the engine records exactly these values.
type sampled struct {
	seed uint64
	mu   sync.Mutex
	raw  []int64
	errs int
}

func (s *sampled) Name() string { return "sampled" }

func (s *sampled) NewUser(_ context.Context, id int) (load.User, error) {
	return &sampledUser{s: s, r: rand.New(rand.NewPCG(s.seed, uint64(id)))}, nil
}

type sampledUser struct {
	s *sampled
	r *rand.Rand
}

var errOdd = errors.New("odd")

func (u *sampledUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	// 100 µs to 300 ms, skewed: most fast, a tail of slow ones.
	us := 100 + int64(u.r.ExpFloat64()*5000)
	us = min(us, 300_000)
	fail := u.r.IntN(10) == 0
	start := time.Now()
	if err := load.Sleep(ctx, time.Duration(us)*time.Microsecond); err != nil {
		return err
	}
	var err error
	if fail {
		err = errOdd
	}
	rec.Record("op", start, err)
	u.s.mu.Lock()
	u.s.raw = append(u.s.raw, us)
	if fail {
		u.s.errs++
	}
	u.s.mu.Unlock()
	return err
}

// runAgent runs agent i of n in the bubble and writes its folder; it
// reports errors with t.Error (it runs in its own goroutine).
func runAgent(t *testing.T, dir string, i, n int, warmup time.Duration, at time.Time) *sampled {
	t.Helper()
	return runAgentFor(t, dir, i, n, warmup+5*time.Second, at, warmup)
}

// runAgentFor is runAgent with the run's length (warm-up included).
func runAgentFor(t *testing.T, dir string, i, n int, total time.Duration, at time.Time, warmup ...time.Duration) *sampled {
	t.Helper()
	var wu time.Duration
	if len(warmup) > 0 {
		wu = warmup[0]
	}
	sc := &sampled{seed: uint64(i + 1)}
	rec := load.NewRecorder(load.WithWarmup(wu), load.WithStartAt(at))
	e := load.ConstantArrivalRate{Rate: 200, Duration: total, PreAllocatedVUs: 50, MaxVUs: 200, GracefulStop: time.Second}
	st, err := e.Run(t.Context(), sc, rec)
	if err != nil {
		t.Error(err)
		return sc
	}
	seg := load.Segment{Index: i, Count: n}
	res := &scenario.RunResult{Stats: st, Recorder: rec, Params: map[string]string{"segment": seg.String(), "agent_pid": "1", "target": "x"}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Error(err)
		return sc
	}
	if err := res.WriteDir(dir); err != nil {
		t.Error(err)
		return sc
	}
	return sc
}

// TestMergeExact: three agents' folders merge into one whose counts are
// the sums and whose percentiles, of the whole run and of every measured
// second, are those of the union of the agents' raw samples, exactly at
// the histograms' precision.
func TestMergeExact(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		at := time.Now().Add(1234 * time.Millisecond) // not on a whole second: the logs keep the ms
		var dirs []string
		union := hdr.New(1, 60_000_000, 3)
		var count, errs int64
		scs := make([]*sampled, 3)
		var wg sync.WaitGroup
		for i := range 3 {
			dir := filepath.Join(root, "agent", string(rune('0'+i)))
			dirs = append(dirs, dir)
			wg.Go(func() { scs[i] = runAgent(t, dir, i, 3, 0, at) })
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		for _, sc := range scs {
			for _, v := range sc.raw {
				union.RecordValue(v)
			}
			count += int64(len(sc.raw))
			errs += int64(sc.errs)
		}
		res, err := Read(dirs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(root, "merged")
		if err := res.WriteDir(out); err != nil {
			t.Fatal(err)
		}
		// Read back as report, compare and gate do.
		pt, err := results.ReadPoint(out)
		if err != nil || len(pt.Summary.Workloads) != 1 {
			t.Fatalf("%v (%+v)", err, pt)
		}
		st := pt.Summary.Workloads[0].Stats
		op, ok := st.Op("op")
		if !ok {
			t.Fatal("no op in the merged summary")
		}
		if op.Count != count || op.Errors != errs || op.OK != count-errs || st.Iterations != count {
			t.Errorf("count, errors, ok, iterations = %d, %d, %d, %d; want %d, %d, %d, %d", op.Count, op.Errors, op.OK, st.Iterations, count, errs, count-errs, count)
		}
		want := load.Dist(union)
		if op.Latency != want {
			t.Errorf("merged latency %+v\nunion of the raw samples %+v", op.Latency, want)
		}
		if op.Latency.P50 != time.Duration(union.ValueAtQuantile(50))*time.Microsecond ||
			op.Latency.P99 != time.Duration(union.ValueAtQuantile(99))*time.Microsecond {
			t.Errorf("p50, p99 = %v, %v; union %d µs, %d µs", op.Latency.P50, op.Latency.P99, union.ValueAtQuantile(50), union.ValueAtQuantile(99))
		}
		// 3 agents at 200/s for 5 s, started together.
		if op.Rate < 590 || op.Rate > 610 || st.Duration != 5*time.Second {
			t.Errorf("rate %.1f/s over %v, want 600/s over 5s", op.Rate, st.Duration)
		}
		// The merged HDR log reads back to the same histogram.
		hs, err := readHlog(filepath.Join(out, "op.hlog"))
		if err != nil {
			t.Fatal(err)
		}
		back := hdr.New(1, 60_000_000, 3)
		for _, h := range hs {
			back.Merge(h)
		}
		if !back.Equals(union) {
			t.Errorf("merged op.hlog holds %d samples, p99 %d µs; union %d, %d µs", back.TotalCount(), back.ValueAtQuantile(99), union.TotalCount(), union.ValueAtQuantile(99))
		}
		// Timeline: rows summed on wall time, read back from timeline.csv.
		f, err := os.Open(filepath.Join(out, results.TimelineFile))
		if err != nil {
			t.Fatal(err)
		}
		tl, err := results.ReadTimelineCSV(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var rows int64
		for _, r := range tl {
			if !r.Warmup {
				rows += r.Ops[0].Count
			}
		}
		if rows != count {
			t.Errorf("timeline rows hold %d iterations, want %d", rows, count)
		}
		if res.Params["agents"] != "3" || res.Params["segments"] != "0/3,1/3,2/3" || res.Params["target"] != "x" || res.Params["segment"] != "" {
			t.Errorf("params %v", res.Params)
		}
		// The merged folder merges again (idempotent on one input).
		again, err := Read([]string{out}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if o, _ := again.Stats.Op("op"); o.Latency != op.Latency || o.Count != op.Count {
			t.Errorf("merging the merged folder: %+v, want %+v", o, op)
		}
	})
}

// TestMergeRowPercentiles: each measured second's percentiles in the
// merged timeline are those of the union of that second's samples.
func TestMergeRowPercentiles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		at := time.Now().Add(time.Second)
		var dirs []string
		var wg sync.WaitGroup
		for i := range 2 {
			dir := filepath.Join(root, string(rune('a'+i)))
			dirs = append(dirs, dir)
			wg.Go(func() { runAgent(t, dir, i, 2, time.Second, at) })
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		res, err := Read(dirs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The union of each second, from the agents' own logs.
		per := map[int64]*hdr.Histogram{}
		for _, d := range dirs {
			hs, err := readHlog(filepath.Join(d, "op.hlog"))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hs {
				k := (h.StartTimeMs() - res.Stats.Start.UnixMilli() + 500) / 1000
				if per[k] == nil {
					per[k] = hdr.New(1, 60_000_000, 3)
				}
				per[k].Merge(h)
			}
		}
		var measured int
		for _, r := range res.Stats.Timeline {
			if r.Warmup {
				continue
			}
			h := per[int64(r.Start.Round(time.Second)/time.Second)]
			i := 1 // "op"
			if h == nil || r.Ops[i].Op != "op" {
				t.Fatalf("row %v: no union histogram or op %q", r.Start, r.Ops[i].Op)
			}
			measured++
			if got, want := r.Ops[i].P99, time.Duration(h.ValueAtQuantile(99))*time.Microsecond; got != want || r.Ops[i].Count != h.TotalCount() {
				t.Errorf("row %v: p99 %v, count %d; union %v, %d", r.Start, got, r.Ops[i].Count, want, h.TotalCount())
			}
		}
		if measured < 5 {
			t.Errorf("%d measured rows, want 5 or more", measured)
		}
		if res.Stats.Warmup != time.Second || !res.Stats.Timeline[0].Warmup {
			t.Errorf("warm-up %v, first row %+v", res.Stats.Warmup, res.Stats.Timeline[0])
		}
	})
}

func TestMergeRejects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		root := t.TempDir()
		at := time.Now().Add(time.Second)
		a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
		runAgent(t, a, 0, 2, 0, at)
		runAgent(t, b, 0, 2, 0, at) // the same segment again
		if _, err := Read([]string{a, b}, Options{}); err == nil || !strings.Contains(err.Error(), "count twice") {
			t.Errorf("the same segment twice: %v", err)
		}
		// One agent of two: only on purpose, and then said.
		if _, err := Read([]string{a}, Options{}); err == nil || !strings.Contains(err.Error(), "segment(s) 1/2 missing") || !strings.Contains(err.Error(), "--partial") {
			t.Errorf("one segment of two: %v", err)
		}
		res, err := Read([]string{a}, Options{Partial: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Params["partial"] != "true" || res.Params["missing_segments"] != "1/2" || len(res.Notes) == 0 {
			t.Errorf("a partial merge's params %v, notes %v", res.Params, res.Notes)
		}
		if err := res.WriteDir(a); err == nil {
			t.Error("writing over an agent's folder: no error")
		}
		if _, err := Read([]string{filepath.Join(root, "none")}, Options{}); err == nil {
			t.Error("a missing folder: no error")
		}
		if _, err := Read(nil, Options{}); err == nil {
			t.Error("no folders: no error")
		}
	})
}

// Folders that are not one split run's agents are refused by what they
// say of themselves: a whole run, another agent count, another start.
func TestMergeRefusesAnotherRun(t *testing.T) {
	ag := func(dir string, params map[string]string) *Agent {
		return &Agent{Dir: dir, Params: params, Stats: results.Stats{Scenario: "s", Executor: "e", Ops: []results.OpStats{{Name: results.IterationOp}}}}
	}
	for _, c := range []struct {
		name string
		as   []*Agent
		want string
	}{
		{"whole run", []*Agent{ag("a", map[string]string{"segment": "0/2"}), ag("w", map[string]string{})}, "w is a whole run"},
		{"agent count", []*Agent{ag("a", map[string]string{"segment": "0/2"}), ag("b", map[string]string{"segment": "1/3"})}, "b is segment 1/3, another folder one of 2 agents"},
		{"start", []*Agent{ag("a", map[string]string{"segment": "0/2", "start_at": "2026-01-01T00:00:00Z"}),
			ag("b", map[string]string{"segment": "1/2", "start_at": "2026-01-02T00:00:00Z"})}, "b started at"},
		{"bad segment", []*Agent{ag("a", map[string]string{"segment": "0/2"}), ag("b", map[string]string{"segment": "2/2"})}, "b: segment 2/2"},
	} {
		if _, err := Merge(c.as, Options{Partial: true}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestMergeEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ag := func(start time.Time, seg string, ev ...results.Event) *Agent {
		return &Agent{Dir: seg, Params: map[string]string{"segment": seg},
			Stats: results.Stats{Scenario: "s", Executor: "e", Start: start, Ops: []results.OpStats{{Name: results.IterationOp}}, Events: ev},
			hists: map[string][2][]*hdr.Histogram{}}
	}
	kill := results.Event{At: 2 * time.Second, Action: "kill", Args: "node=2"}
	late := kill
	late.At -= 300 * time.Millisecond // agent 1 started 300 ms later: the same instant
	res, err := Merge([]*Agent{ag(t0, "0/2", kill), ag(t0.Add(300*time.Millisecond), "1/2", late, results.Event{At: time.Second, Action: "start"})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stats.Events) != 2 || res.Stats.Events[1] != kill || res.Stats.Events[0].At != 1300*time.Millisecond {
		t.Errorf("events %+v", res.Stats.Events)
	}
	if len(res.Notes) != 1 {
		t.Errorf("notes %q: want one on the agents' start spread", res.Notes)
	}
}
