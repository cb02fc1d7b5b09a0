package stack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// startNodes launches the given nodes (1-based; nil: all) and waits until
// each is ready and, in a cluster, every node of the stack reports a view
// of all of them. When a cluster forms from nothing (its first boot, a
// restart of every node) the first node starts alone: on the first boot
// it creates the schema and the bootstrap admin, and nodes started at
// the same instant may each find no coordinator and stay clusters of one
// for minutes (Keycloak issue 41290). The others follow in parallel once it
// is ready. On failure the nodes it launched are stopped.
func (s *Stack) startNodes(ctx context.Context, first bool, which []int) (BootResult, error) {
	if which == nil {
		for i := range s.st.Nodes {
			which = append(which, i+1)
		}
	}
	start := time.Now()
	var launched []int
	fail := func(err error) (BootResult, error) {
		s.stopNodesList(launched)
		return BootResult{}, err
	}
	batches := [][]int{which}
	if len(which) > 1 && (first || s.noNodeRunning()) {
		batches = [][]int{which[:1], which[1:]}
	}
	for _, batch := range batches {
		for _, i := range batch {
			if err := s.launchNode(i, first); err != nil {
				return fail(err)
			}
			launched = append(launched, i)
		}
		errs := make([]error, len(batch))
		var wg sync.WaitGroup
		for k, i := range batch {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[k] = s.waitNode(ctx, i)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fail(err)
		}
	}
	if s.st.Topology.Clustered() {
		if err := s.waitClusterView(ctx, s.st.Options.ReadyTimeout); err != nil {
			return fail(err)
		}
	}
	if s.st.LB != nil && s.st.LB.Proc.Alive() {
		if err := s.waitBalancer(ctx, 30*time.Second); err != nil {
			return fail(err)
		}
	}
	cached := first && s.st.SchemaCached
	br := BootResult{FirstDB: first, SchemaCached: cached, At: time.Now().UTC()}
	for _, i := range which {
		ns := &s.st.Nodes[i-1]
		n := ns.Proc
		nb := NodeBoot{Node: i, Ready: n.ReadyAt.Sub(n.StartedAt)}
		if !n.ViewAt.IsZero() {
			nb.View = n.ViewAt.Sub(n.StartedAt)
		}
		nb.RSS, _ = RSS(n.JVM.PID)
		nb.CPU, _ = CPUTime(n.JVM.PID)
		end := n.ReadyAt
		if n.ViewAt.After(end) {
			end = n.ViewAt
		}
		if d := end.Sub(start); d > br.Duration {
			br.Duration = d
		}
		br.RSS += nb.RSS
		br.TreeRSS += TreeRSS(n.Script.PID)
		br.CPU += nb.CPU
		nbr := BootResult{Duration: nb.Ready, RSS: nb.RSS, TreeRSS: TreeRSS(n.Script.PID), CPU: nb.CPU, FirstDB: first, SchemaCached: cached, At: n.ReadyAt.UTC()}
		ns.LastBoot = &nbr
		br.Nodes = append(br.Nodes, nb)
	}
	if len(s.st.Nodes) == 1 {
		// One node: its own figures, from kc.sh's start.
		br = *s.st.Nodes[0].LastBoot
	}
	s.st.LastBoot = &br
	return br, s.save()
}

// noNodeRunning reports whether no node of the stack runs.
func (s *Stack) noNodeRunning() bool {
	for _, n := range s.st.Nodes {
		if n.Proc != nil {
			return false
		}
	}
	return true
}

// launchNode starts node i's kc.sh and records it.
func (s *Stack) launchNode(i int, first bool) error {
	ns := &s.st.Nodes[i-1]
	env := map[string]string{}
	dbPw, err := s.secret("db-password")
	if err != nil {
		return err
	}
	env["KC_DB_PASSWORD"] = dbPw
	if first && i == 1 {
		pw, err := s.secret("admin-password")
		if err != nil {
			return err
		}
		cs, err := s.secret("admin-client-secret")
		if err != nil {
			return err
		}
		env["KC_BOOTSTRAP_ADMIN_USERNAME"] = AdminUser
		env["KC_BOOTSTRAP_ADMIN_PASSWORD"] = pw
		env["KC_BOOTSTRAP_ADMIN_CLIENT_ID"] = AdminClientID
		env["KC_BOOTSTRAP_ADMIN_CLIENT_SECRET"] = cs
	}
	if h := s.st.Options.Heap; h != "" {
		env["JAVA_OPTS_KC_HEAP"] = "-Xms" + h + " -Xmx" + h
	}
	if !s.st.Topology.Latency.NodeDB.Zero() && s.links == nil {
		return fmt.Errorf("the stack's node-db latency proxy lives in the kcbench process that started it (up --foreground); start or restart nodes from there")
	}
	external, err := s.nodeLink(ns) // may move the node's JGroups port: first
	if ns.TLS && s.st.TLS == nil {
		return fmt.Errorf("node %d: set to serve HTTPS, but the stack has no certificate", i)
	}
	args := s.st.Options.startArgs(s.nodeDB(), *ns, s.st.TLS)
	if err != nil {
		return err
	}
	p := s.st.Options.jgroupsProperties(*ns, external)
	if p == "" && external != "" {
		args = append(args, "--cache-embedded-network-external-address="+external)
	}
	if opts := s.st.Options.javaOptsAppend(p); opts != "" {
		env["JAVA_OPTS_APPEND"] = opts
	}
	n, off, err := launchKeycloak(ns.Home, s.st.Java, args, env, ns.Log, s.st.Detached, ns.CPU)
	if err != nil {
		return err
	}
	ns.Proc, ns.LogOffset = n, off
	if err := s.save(); err != nil {
		n.stop(10 * time.Second)
		ns.Proc = nil
		return err
	}
	return nil
}

// waitNode finds node i's JVM and waits until it is ready. It is safe to
// run for several nodes at once: each touches only its own node.
func (s *Stack) waitNode(ctx context.Context, i int) error {
	ns := &s.st.Nodes[i-1]
	n := ns.Proc
	fail := func(reason error) error {
		if errors.Is(reason, errExited) {
			<-n.exited
			out := readFrom(ns.Log, ns.LogOffset)
			return &KeycloakError{Op: s.nodeOp(i, "kc.sh start"), Reason: exitDescription(n.err), Message: keycloakMessage(out), LogTail: lastLines(out, 20), LogPath: ns.Log}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out := readFrom(ns.Log, ns.LogOffset)
		return &KeycloakError{Op: s.nodeOp(i, "kc.sh start"), Reason: reason.Error(), Message: keycloakMessage(out), LogTail: lastLines(out, 20), LogPath: ns.Log}
	}
	if err := n.findJVM(ctx); err != nil {
		return fail(err)
	}
	if err := s.save(); err != nil {
		return fail(err)
	}
	if err := n.waitReady(ctx, s.httpClient(readyPollTimeout), ns.MgmtURL(), s.st.Options.ReadyTimeout); err != nil {
		return fail(err)
	}
	return nil
}

// nodeOp names an operation on node i ("kc.sh start" alone, "node 2:
// kc.sh start" in a cluster).
func (s *Stack) nodeOp(i int, op string) string {
	if len(s.st.Nodes) == 1 {
		return op
	}
	return fmt.Sprintf("node %d: %s", i, op)
}

// Restart stops every Keycloak node (PostgreSQL stays up), starts them
// again (the first alone, then the others in parallel) and measures the
// boot.
func (s *Stack) Restart(ctx context.Context) (BootResult, error) {
	if err := s.stopKeycloak(); err != nil {
		return BootResult{}, err
	}
	return s.startNodes(ctx, false, nil)
}

// RestartNode stops node i (1-based), starts it again and waits until it
// is ready and, in a cluster, back in every node's view. The result is
// that node's boot.
func (s *Stack) RestartNode(ctx context.Context, i int) (BootResult, error) {
	if i < 1 || i > len(s.st.Nodes) {
		return BootResult{}, fmt.Errorf("node %d: the stack has nodes 1 to %d", i, len(s.st.Nodes))
	}
	if err := s.stopNodesList([]int{i}); err != nil {
		return BootResult{}, err
	}
	last := s.st.LastBoot
	br, err := s.startNodes(ctx, false, []int{i})
	s.st.LastBoot = last
	if err != nil {
		return br, err
	}
	return br, s.save()
}

// stopKeycloak stops every node.
func (s *Stack) stopKeycloak() error {
	var all []int
	for i := range s.st.Nodes {
		all = append(all, i+1)
	}
	return s.stopNodesList(all)
}

// stopNodesList stops the given nodes (1-based) in parallel.
func (s *Stack) stopNodesList(which []int) error {
	errs := make([]error, len(which))
	var wg sync.WaitGroup
	for k, i := range which {
		n := s.st.Nodes[i-1].Proc
		if n == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := n.stop(30 * time.Second); err != nil {
				errs[k] = fmt.Errorf("stop %s: %w", s.nodeOp(i, "keycloak"), err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, i := range which {
		s.st.Nodes[i-1].Proc = nil
	}
	return s.save()
}
