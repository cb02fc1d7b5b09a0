package stack

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// addNode lays out node N+1 like the others (its own address, ports,
// folder and log, the same CPU limit), puts it in the balancer's config
// (HAProxy reloaded), starts it, and waits until it is ready, in every
// running node's cluster view and up in the balancer.
func (s *Stack) addNode(ctx context.Context) error {
	if s.st.LB == nil || !s.st.Topology.Clustered() {
		return errors.New("add-node needs a cluster behind the balancer (--nodes 2 or more, --lb haproxy)")
	}
	i := len(s.st.Nodes) + 1
	if i > MaxNodes {
		return fmt.Errorf("the stack has %d nodes already (at most %d)", i-1, MaxNodes)
	}
	ns, err := newNode(s.st.Dir, i, i, s.st.Options, s.st.Topology)
	if err != nil {
		return err
	}
	if s.st.TLS == nil { // a stack started plain, or by a kcbench without TLS
		ns.TLS, ns.Edge = false, false
	}
	if err := copyTree(s.st.BuildHome, ns.Home, true); err != nil {
		return fmt.Errorf("keycloak home: %w", err)
	}
	if l := s.st.Nodes[0].CPU; l != nil {
		nl, err := newCPULimit(l.Method, stackGroupName(s.st.Dir, s.st.Name), i, s.st.Topology.NodeCPUs)
		if err != nil {
			return fmt.Errorf("node %d: CPU limit: %w", i, err)
		}
		ns.CPU = &nl
	}
	s.st.Nodes = append(s.st.Nodes, ns)
	s.st.Topology.Nodes = i
	// The balancer learns of the node first: its health check keeps the
	// node out of rotation until /health/ready answers, so traffic starts
	// the moment the node is ready, as behind a real balancer.
	if err := s.reloadBalancer(ctx); err != nil {
		s.dropLastNode()
		return errors.Join(err, s.reloadBalancer(ctx))
	}
	last := s.st.LastBoot
	_, err = s.startNodes(ctx, false, []int{i})
	s.st.LastBoot = last
	if err != nil {
		s.dropLastNode()
		return errors.Join(err, s.reloadBalancer(ctx))
	}
	s.watchNode(i, true)
	return s.save()
}

// removeNode takes the last node out of the balancer (config rewritten,
// HAProxy reloaded), then stops it gracefully and forgets it.
func (s *Stack) removeNode(ctx context.Context) error {
	i := len(s.st.Nodes)
	if i <= 1 {
		return errors.New("the stack's last node cannot be removed")
	}
	s.watchNode(i, false)
	last := s.st.Nodes[i-1]
	s.st.Nodes = s.st.Nodes[:i-1]
	s.st.Topology.Nodes = i - 1
	var errs []error
	if s.st.LB != nil {
		errs = append(errs, s.reloadBalancer(ctx))
	}
	if n := last.Proc; n != nil {
		if err := n.stop(30 * time.Second); err != nil {
			errs = append(errs, fmt.Errorf("stop node %d: %w", i, err))
		}
	}
	if last.CPU != nil {
		errs = append(errs, last.CPU.release())
	}
	errs = append(errs, s.save())
	return errors.Join(errs...)
}

// dropLastNode forgets a node that failed to join.
func (s *Stack) dropLastNode() {
	i := len(s.st.Nodes)
	if l := s.st.Nodes[i-1].CPU; l != nil {
		l.release()
	}
	s.st.Nodes = s.st.Nodes[:i-1]
	s.st.Topology.Nodes = i - 1
	s.save()
}

// reloadBalancer rewrites HAProxy's config for the current nodes and
// replaces the running HAProxy with a new one on the same ports (-sf: the
// old one stops accepting, finishes its requests and exits), then waits
// until the new one sees every running node up.
func (s *Stack) reloadBalancer(ctx context.Context) error {
	b := s.st.LB
	if err := b.writeConfig(s.st.Nodes, s.st.Topology.Sticky, s.st.TLS, s.st.Topology.LBTLS); err != nil {
		return err
	}
	old, oldExited := b.Proc, b.exited
	if err := b.start(ctx, s.st.Detached, "-sf", strconv.Itoa(old.PID)); err != nil {
		b.Proc, b.exited = old, oldExited
		return fmt.Errorf("reload haproxy: %w", err)
	}
	b.Prev = old
	if err := s.save(); err != nil {
		return err
	}
	return s.waitBalancer(ctx, 30*time.Second)
}
