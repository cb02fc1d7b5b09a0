package stack

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Fault actions: what a timed event does to the stack during a run.
const (
	FaultKill       = "kill"        // SIGKILL to a node's processes
	FaultStop       = "stop"        // SIGTERM (graceful shutdown), SIGKILL after 30 s
	FaultStart      = "start"       // start a stopped node, wait until it is ready and in the cluster
	FaultRestart    = "restart"     // stop, then start
	FaultAddNode    = "add-node"    // a new node joins the cluster and the balancer
	FaultRemoveNode = "remove-node" // the last node leaves the balancer, then stops
	FaultDBRestart  = "db-restart"  // PostgreSQL stopped (fast) and started again
	FaultLatency    = "latency"     // change the injected latency: latency node-db=50ms
)

// faultActions lists the actions with whether they take node=N.
var faultActions = map[string]bool{
	FaultKill: true, FaultStop: true, FaultStart: true, FaultRestart: true,
	FaultAddNode: false, FaultRemoveNode: false, FaultDBRestart: false, FaultLatency: false,
}

// FaultActions names the actions in the order --help lists them.
const FaultActions = "kill, stop, start, restart (node=N), add-node, remove-node, db-restart, latency node-db=D|node-node=D"

// Fault is one timed action on the stack, e.g. "30s kill node=2".
type Fault struct {
	At     time.Duration // offset from the start of the run, warm-up included
	Action string
	Node   int // 1-based; 0: none given (a single node's stack means node 1)
	// Latency is a latency event's new latency on the links it names
	// (Links); the others keep theirs.
	Latency Latency
	Links   Links
}

// Links is a set of the links latency is injected on.
type Links struct{ NodeNode, NodeDB bool }

// names lists the links in the set, node-node first.
func (ls Links) names() []string {
	var ns []string
	if ls.NodeNode {
		ns = append(ns, "node-node")
	}
	if ls.NodeDB {
		ns = append(ns, "node-db")
	}
	return ns
}

// ParseFault reads "AT ACTION [node=N]": AT a Go duration ≥ 0 ("30s",
// "1m30s"), ACTION one of FaultActions. Anything else is an error naming
// the problem.
func ParseFault(s string) (Fault, error) {
	var f Fault
	fields := strings.Fields(s)
	if len(fields) < 2 {
		return f, fmt.Errorf("event %q: want \"AT ACTION [node=N]\", e.g. \"30s kill node=2\"", s)
	}
	at, err := time.ParseDuration(fields[0])
	if err != nil || at < 0 {
		return f, fmt.Errorf("event %q: time %q: want a duration ≥ 0 such as 30s or 1m30s", s, fields[0])
	}
	f.At, f.Action = at, fields[1]
	takesNode, ok := faultActions[f.Action]
	if !ok {
		return f, fmt.Errorf("event %q: unknown action %q (want one of %s)", s, f.Action, FaultActions)
	}
	if f.Action == FaultLatency {
		if len(fields) != 3 {
			return f, fmt.Errorf("event %q: want \"AT latency node-db=D\", e.g. \"60s latency node-db=50ms\"", s)
		}
		if f.Latency, err = ParseLatency(fields[2]); err != nil {
			return f, fmt.Errorf("event %q: %w", s, err)
		}
		for _, part := range strings.Split(fields[2], ",") {
			switch k, _, _ := strings.Cut(strings.TrimSpace(part), "="); k {
			case "node-node":
				f.Links.NodeNode = true
			case "node-db":
				f.Links.NodeDB = true
			}
		}
		return f, nil
	}
	for _, a := range fields[2:] {
		k, v, _ := strings.Cut(a, "=")
		if k != "node" || !takesNode {
			return f, fmt.Errorf("event %q: %s takes no argument %q", s, f.Action, a)
		}
		if f.Node != 0 {
			return f, fmt.Errorf("event %q: node given twice", s)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxNodes {
			return f, fmt.Errorf("event %q: node %q: want 1 to %d", s, v, MaxNodes)
		}
		f.Node = n
	}
	return f, nil
}

// Args is the event's arguments as written ("node=2"; "" for none).
func (f Fault) Args() string {
	if f.Action == FaultLatency {
		var parts []string
		for _, k := range f.Links.names() {
			parts = append(parts, k+"="+f.Latency.link(k).String())
		}
		return strings.Join(parts, ",")
	}
	if f.Node == 0 {
		return ""
	}
	return "node=" + strconv.Itoa(f.Node)
}

// String is the event as ParseFault reads it.
func (f Fault) String() string {
	s := f.At.String() + " " + f.Action
	if a := f.Args(); a != "" {
		s += " " + a
	}
	return s
}

// CheckFaults checks a run's events against a stack of nodes nodes with
// the given balancer (LBHAProxy or LBNone) and a run of runLen (warm-up
// included; 0: unknown): every event inside the run, every node named
// there at that time and in a state the action applies to. It fills in
// node 1 where a single-node stack leaves it implicit. All problems are
// reported at once.
func CheckFaults(fs []Fault, t Topology, runLen time.Duration) error {
	t.defaults()
	var errs []error
	up := map[int]bool{}
	for i := 1; i <= t.Nodes; i++ {
		up[i] = true
	}
	n := t.Nodes
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	// Events run in time order (stable for equal times).
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && fs[order[j]].At < fs[order[j-1]].At; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for _, k := range order {
		f := &fs[k]
		bad := func(format string, a ...any) {
			errs = append(errs, fmt.Errorf("event %q: %s", f.String(), fmt.Sprintf(format, a...)))
		}
		if runLen > 0 && f.At >= runLen {
			bad("at %s, after the run's end (%s, warm-up included)", f.At, runLen)
			continue
		}
		if faultActions[f.Action] {
			if f.Node == 0 {
				if n != 1 {
					bad("which node? the stack has %d (add node=N)", n)
					continue
				}
				f.Node = 1
			}
			if f.Node > n {
				bad("node %d does not exist then (the stack has nodes 1 to %d)", f.Node, n)
				continue
			}
		}
		switch f.Action {
		case FaultKill, FaultStop:
			if !up[f.Node] {
				bad("node %d is already down then", f.Node)
			}
			up[f.Node] = false
		case FaultStart:
			if up[f.Node] {
				bad("node %d is already running then", f.Node)
			}
			up[f.Node] = true
		case FaultRestart:
			up[f.Node] = true
		case FaultAddNode:
			switch {
			case !t.Clustered():
				bad("a single-node stack runs without a cluster cache; start it with --nodes 2 or more")
			case t.LB != LBHAProxy:
				bad("a new node needs the balancer (--lb %s) to receive traffic", LBHAProxy)
			case n >= MaxNodes:
				bad("the stack would have more than %d nodes", MaxNodes)
			default:
				n++
				up[n] = true
			}
		case FaultLatency:
			for _, k := range f.Links.names() {
				if t.Latency.link(k).Zero() {
					bad("the stack has no proxy on the %s link: start it with --latency %s=… (a changed latency needs one from the start)", k, k)
				}
			}
		case FaultRemoveNode:
			if n <= 1 {
				bad("the stack's last node cannot be removed")
			} else {
				delete(up, n)
				n--
			}
		}
	}
	return errors.Join(errs...)
}

// ApplyFault performs f on the stack: it returns when the action is done
// (a started node ready and, in a cluster, in every running node's view
// and up in the balancer). Events of one run must go through one Stack,
// the one whose Watch watches the run.
func (s *Stack) ApplyFault(ctx context.Context, f Fault) error {
	i := f.Node
	if i == 0 && faultActions[f.Action] {
		i = 1
	}
	if faultActions[f.Action] && (i < 1 || i > len(s.st.Nodes)) {
		return fmt.Errorf("node %d: the stack has nodes 1 to %d", i, len(s.st.Nodes))
	}
	switch f.Action {
	case FaultKill:
		s.watchNode(i, false)
		ns := &s.st.Nodes[i-1]
		if ns.Proc == nil {
			return fmt.Errorf("node %d is not running", i)
		}
		p := ns.Proc.JVM
		if p.PID == 0 {
			p = ns.Proc.Script
		}
		// The JVM alone, like a container's main process killed: kc.sh
		// follows it out.
		if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
			return fmt.Errorf("kill node %d (pid %d): %w", i, p.PID, err)
		}
		return s.stopNodesList([]int{i}) // reaps kc.sh, records the node as stopped
	case FaultStop:
		s.watchNode(i, false)
		return s.stopNodesList([]int{i})
	case FaultStart:
		if s.st.Nodes[i-1].Proc != nil {
			return fmt.Errorf("node %d is already running", i)
		}
		if _, err := s.startNodes(ctx, false, []int{i}); err != nil {
			return err
		}
		s.watchNode(i, true)
		return nil
	case FaultRestart:
		s.watchNode(i, false)
		last := s.st.LastBoot
		_, err := s.RestartNode(ctx, i)
		s.st.LastBoot = last
		if err != nil {
			return err
		}
		s.watchNode(i, true)
		return nil
	case FaultAddNode:
		return s.addNode(ctx)
	case FaultRemoveNode:
		return s.removeNode(ctx)
	case FaultDBRestart:
		return s.restartDB(ctx)
	case FaultLatency:
		l := s.st.Topology.Latency
		for _, k := range f.Links.names() {
			l.setLink(k, f.Latency.link(k))
		}
		return s.SetLatency(l)
	}
	return fmt.Errorf("unknown action %q", f.Action)
}

// restartDB stops PostgreSQL (fast shutdown: open connections are cut)
// or MariaDB and starts it again; Keycloak's pool reconnects by itself.
func (s *Stack) restartDB(ctx context.Context) error {
	if m := s.st.MariaDB; m != nil {
		if err := m.stop(); err != nil {
			return fmt.Errorf("stop mariadb: %w", err)
		}
		m.Proc = Proc{}
		if err := startMariaDB(ctx, m, "", s.st.Detached); err != nil {
			s.save()
			return fmt.Errorf("start mariadb: %w", err)
		}
		return s.save()
	}
	pg := s.st.PG
	if pg == nil {
		return errors.New("the stack's database is external: kcbench does not restart it")
	}
	if err := pg.stop(); err != nil {
		return fmt.Errorf("stop postgres: %w", err)
	}
	pg.Proc = Proc{}
	if err := startPG(ctx, pg, s.st.Detached); err != nil {
		s.save()
		return fmt.Errorf("start postgres: %w", err)
	}
	return s.save()
}

// RestoreTopology brings the stack back to nodes nodes after a run's
// fault events: nodes added beyond it are removed, stopped ones started.
func (s *Stack) RestoreTopology(ctx context.Context, nodes int) error {
	if nodes < 1 {
		nodes = 1
	}
	for len(s.st.Nodes) > nodes {
		if err := s.removeNode(ctx); err != nil {
			return err
		}
	}
	var down []int
	for _, n := range s.st.Nodes {
		if n.Proc == nil {
			down = append(down, n.Index)
		}
	}
	if len(down) == 0 {
		return nil
	}
	last := s.st.LastBoot
	_, err := s.startNodes(ctx, false, down)
	s.st.LastBoot = last
	for _, i := range down {
		s.watchNode(i, err == nil)
	}
	if err != nil {
		return err
	}
	return s.save()
}
