package stack

import (
	"strings"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	good := map[string]Fault{
		"30s kill node=2":      {At: 30 * time.Second, Action: FaultKill, Node: 2},
		" 1m30s  start node=1": {At: 90 * time.Second, Action: FaultStart, Node: 1},
		"0s stop":              {Action: FaultStop},
		"90s add-node":         {At: 90 * time.Second, Action: FaultAddNode},
		"2m remove-node":       {At: 2 * time.Minute, Action: FaultRemoveNode},
		"45s db-restart":       {At: 45 * time.Second, Action: FaultDBRestart},
		"10s restart node=4":   {At: 10 * time.Second, Action: FaultRestart, Node: 4},
		"60s latency node-db=50ms": {At: time.Minute, Action: FaultLatency,
			Latency: Latency{NodeDB: Delay{RTT: 50 * time.Millisecond}}, Links: Links{NodeDB: true}},
		"60s latency node-db=0s,node-node=5ms~1ms": {At: time.Minute, Action: FaultLatency,
			Latency: Latency{NodeNode: Delay{RTT: 5 * time.Millisecond, Jitter: time.Millisecond}}, Links: Links{NodeDB: true, NodeNode: true}},
	}
	for in, want := range good {
		f, err := ParseFault(in)
		if err != nil || f != want {
			t.Errorf("%q: %+v, %v; want %+v", in, f, err, want)
		}
		if back, err := ParseFault(f.String()); err != nil || back != f {
			t.Errorf("%q: String %q reads back as %+v, %v", in, f.String(), back, err)
		}
	}
	bad := map[string]string{
		"":                       "want \"AT ACTION",
		"kill":                   "want \"AT ACTION",
		"30 kill node=2":         "time \"30\"",
		"-5s kill node=2":        "time \"-5s\"",
		"30s explode node=2":     "unknown action \"explode\"",
		"30s kill node=0":        "node \"0\": want 1 to 4",
		"30s kill node=9":        "node \"9\"",
		"30s kill node=x":        "node \"x\"",
		"30s kill node=1 node=2": "node given twice",
		"30s kill pod=2":         "kill takes no argument \"pod=2\"",
		"30s add-node node=3":    "add-node takes no argument",
		"30s db-restart now":     "db-restart takes no argument",
	}
	for in, want := range bad {
		if _, err := ParseFault(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", in, err, want)
		}
	}
}

func TestCheckFaults(t *testing.T) {
	parse := func(ss ...string) []Fault {
		var fs []Fault
		for _, s := range ss {
			f, err := ParseFault(s)
			if err != nil {
				t.Fatal(err)
			}
			fs = append(fs, f)
		}
		return fs
	}
	cluster := Topology{Nodes: 3}
	ok := parse("60s start node=2", "30s kill node=2", "90s add-node", "100s kill node=4", "110s remove-node", "120s db-restart", "130s restart node=1")
	if err := CheckFaults(ok, cluster, 3*time.Minute); err != nil {
		t.Errorf("a valid timeline: %v", err)
	}
	single := parse("10s kill", "20s start")
	if err := CheckFaults(single, Topology{}, time.Minute); err != nil || single[0].Node != 1 || single[1].Node != 1 {
		t.Errorf("single node: %+v, %v", single, err)
	}
	bad := []struct {
		topo   Topology
		runLen time.Duration
		events []string
		want   string
	}{
		{cluster, time.Minute, []string{"60s kill node=2"}, "after the run's end (1m0s"},
		{cluster, time.Minute, []string{"10s kill"}, "which node? the stack has 3"},
		{cluster, time.Minute, []string{"10s kill node=4"}, "node 4 does not exist then (the stack has nodes 1 to 3)"},
		{cluster, time.Minute, []string{"10s start node=2"}, "node 2 is already running"},
		{cluster, time.Minute, []string{"10s kill node=2", "20s stop node=2"}, "node 2 is already down"},
		{cluster, time.Minute, []string{"10s remove-node", "20s kill node=3"}, "node 3 does not exist then"},
		{Topology{}, time.Minute, []string{"10s add-node"}, "single-node stack"},
		{Topology{Nodes: 2, LB: LBNone}, time.Minute, []string{"10s add-node"}, "needs the balancer"},
		{Topology{Nodes: 4}, time.Minute, []string{"10s add-node"}, "more than 4 nodes"},
		{Topology{}, time.Minute, []string{"10s remove-node"}, "last node cannot be removed"},
		{Topology{Nodes: 2, Latency: Latency{NodeDB: Delay{RTT: time.Millisecond}}}, time.Minute, []string{"10s latency node-node=5ms"}, "no proxy on the node-node link"},
		{Topology{Nodes: 2, Latency: Latency{NodeNode: Delay{RTT: time.Millisecond}}}, time.Minute, []string{"10s latency node-db=5ms"}, "no proxy on the node-db link"},
	}
	for _, c := range bad {
		err := CheckFaults(parse(c.events...), c.topo, c.runLen)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v on %+v: %v, want %q", c.events, c.topo, err, c.want)
		}
	}
}

func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"30s kill node=2", "90s add-node", "1m db-restart", "5s stop node=1 node=1", "x",
		"60s latency node-node=5ms~1ms,node-db=0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ft, err := ParseFault(s)
		if err != nil {
			return
		}
		back, err := ParseFault(ft.String())
		if err != nil || back != ft {
			t.Fatalf("%q: String %q reads back as %+v, %v", s, ft.String(), back, err)
		}
		if ft.At < 0 || ft.Node < 0 || ft.Node > MaxNodes {
			t.Fatalf("%q: %+v", s, ft)
		}
	})
}
