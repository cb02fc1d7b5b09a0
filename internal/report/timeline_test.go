package report

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseTimeline(t *testing.T) {
	const hdr = "start_s,end_s,phase,vus,active_vus,dropped,op,count,errors,rate_per_s,p50_ms,p95_ms,p99_ms,max_ms\n"
	row := func(start, end int, phase, op string) string {
		return strings.Join([]string{strconv.Itoa(start), strconv.Itoa(end), phase, "10", "5", "0", op, "100", "1", "100.000", "1.5", "3", "4", "9"}, ",") + "\n"
	}
	tests := []struct {
		name  string
		in    string
		segs  []int // rows per segment
		names []string
		err   string
	}{
		{"one workload", hdr + row(0, 1, "warmup", "iteration") + row(0, 1, "warmup", "token") + row(1, 2, "measure", "iteration"), []int{2}, nil, ""},
		{"repeated headers", hdr + row(0, 1, "measure", "iteration") + row(1, 2, "measure", "iteration") + hdr + row(0, 1, "measure", "iteration"), []int{2, 1}, nil, ""},
		{"offsets restart", hdr + row(0, 1, "measure", "iteration") + row(1, 2, "measure", "iteration") + row(0, 1, "measure", "iteration"), []int{2, 1}, nil, ""},
		{"empty workload between headers", hdr + row(0, 1, "measure", "iteration") + hdr + hdr + row(0, 1, "measure", "iteration"), []int{1, 1}, nil, ""},
		{"workload column",
			"workload," + hdr + "a," + row(0, 1, "measure", "iteration") + "b," + row(1, 2, "measure", "iteration") + "b," + row(2, 3, "measure", "iteration"),
			[]int{1, 2}, []string{"a", "b"}, ""},
		{"missing column", "start_s,end_s,op\n", nil, nil, `no "count" column`},
		{"bad number", hdr + strings.Replace(row(0, 1, "measure", "iteration"), "1.5", "x", 1), nil, nil, "line 2: p50_ms"},
		{"short line", hdr + "0,1,measure\n", nil, nil, "line 2: 3 fields"},
		{"empty", "", nil, nil, "empty timeline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, err := parseTimeline(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(segs) != len(tt.segs) {
				t.Fatalf("%d segments, want %d", len(segs), len(tt.segs))
			}
			for i, s := range segs {
				if len(s.rows) != tt.segs[i] {
					t.Errorf("segment %d: %d rows, want %d", i, len(s.rows), tt.segs[i])
				}
				if tt.names != nil && s.workload != tt.names[i] {
					t.Errorf("segment %d: workload %q, want %q", i, s.workload, tt.names[i])
				}
			}
			if r := segs[0].rows[0]; r.count != 100 || r.errors != 1 || r.p50 != 1.5 || r.p95 != 3 || r.p99 != 4 || r.end != 1 {
				t.Errorf("first row %+v", r)
			}
		})
	}
}

func TestLTTB(t *testing.T) {
	var pts []xy
	for i := range 1000 {
		y := math.Sin(float64(i) / 50)
		if i == 500 {
			y = 10 // a spike LTTB must keep
		}
		pts = append(pts, xy{float64(i), y})
	}
	got := lttb(pts, 100)
	if len(got) != 100 {
		t.Fatalf("%d points, want 100", len(got))
	}
	if got[0] != pts[0] || got[len(got)-1] != pts[len(pts)-1] {
		t.Error("end points not kept")
	}
	spike := false
	for i, q := range got {
		if q.y == 10 {
			spike = true
		}
		if i > 0 && q.x <= got[i-1].x {
			t.Fatalf("x not increasing at %d", i)
		}
	}
	if !spike {
		t.Error("spike lost")
	}
	if short := lttb(pts[:50], 100); len(short) != 50 {
		t.Errorf("short series changed: %d points", len(short))
	}
	if tiny := lttb(pts, 2); len(tiny) != len(pts) {
		t.Errorf("n < 3 changed the series")
	}
}
