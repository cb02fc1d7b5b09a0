package scenario

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/kcbench/kcbench/internal/h1"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// DefaultConnPolicy is the connection policy of workload name when none
// is given: a new connection (and TLS handshake) per grant for client
// credentials, as the sizing guide measures it ("each client runs only a
// single request"); kept-alive connections shared by the VUs for the
// others.
func DefaultConnPolicy(name string) string {
	if name == results.ScenarioClientCredentials {
		return results.ConnPerIteration
	}
	return results.ConnReuse
}

// CheckConnPolicy checks a --conn-policy value ("" is the default).
func CheckConnPolicy(p string) error {
	if p == "" || slices.Contains(results.ConnPolicies, p) {
		return nil
	}
	return fmt.Errorf("connection policy %q: want %s", p, strings.Join(results.ConnPolicies, ", "))
}

// handshake times are recorded in microseconds, up to a minute.
const (
	handshakeMaxUs  = 60_000_000
	handshakeDigits = 3
)

// connPolicy runs a scenario's VUs under a connection policy: each VU
// has an h1.Scope (its own connections unless the policy is reuse), and
// under per-iteration its connections are closed after every iteration.
// It counts the iterations and the TLS handshakes they make.
type connPolicy struct {
	load.Scenario
	policy string

	iterations atomic.Int64
	handshakes atomic.Int64
	resumed    atomic.Int64
	failed     atomic.Int64
	mu         sync.Mutex
	times      *hdrhistogram.Histogram
	scopes     []*h1.Scope // the private ones, closed by closeAll
}

func newConnPolicy(sc load.Scenario, policy string) *connPolicy {
	return &connPolicy{Scenario: sc, policy: policy, times: hdrhistogram.New(1, handshakeMaxUs, handshakeDigits)}
}

func (p *connPolicy) NewUser(ctx context.Context, id int) (load.User, error) {
	u, err := p.Scenario.NewUser(ctx, id)
	if err != nil {
		return nil, err
	}
	s := &h1.Scope{Private: p.policy != results.ConnReuse, OnHandshake: p.onHandshake}
	if s.Private {
		p.mu.Lock()
		p.scopes = append(p.scopes, s)
		p.mu.Unlock()
	}
	return &connUser{User: u, p: p, scope: s, perIteration: p.policy == results.ConnPerIteration}, nil
}

func (p *connPolicy) onHandshake(start time.Time, resumed bool, err error) {
	p.handshakes.Add(1)
	switch {
	case err != nil:
		p.failed.Add(1)
		return
	case resumed:
		p.resumed.Add(1)
	}
	us := time.Since(start).Microseconds()
	p.mu.Lock()
	p.times.RecordValue(min(max(us, 1), handshakeMaxUs))
	p.mu.Unlock()
}

// closeAll closes the VUs' own idle connections (the run has ended).
func (p *connPolicy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.scopes {
		s.CloseIdle()
	}
}

// result is what the VUs' iterations did, with the TLS version and
// cipher of tr's latest handshake.
func (p *connPolicy) result(tr *h1.Transport, tls bool) *results.Connections {
	c := &results.Connections{Policy: p.policy, TLS: tls, Resumption: tr != nil && tr.Resume,
		Iterations: p.iterations.Load(), Handshakes: p.handshakes.Load(), Resumed: p.resumed.Load(), Failed: p.failed.Load()}
	if tr != nil {
		st := tr.TLSStats()
		c.Version, c.Cipher = st.VersionName(), st.CipherSuiteName()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.times.TotalCount() > 0 {
		ms := func(us int64) float64 { return float64(us) / 1000 }
		c.HandshakeMs = results.HandshakeMs{Mean: p.times.Mean() / 1000, P50: ms(p.times.ValueAtQuantile(50)),
			P99: ms(p.times.ValueAtQuantile(99)), Max: ms(p.times.Max())}
	}
	return c
}

type connUser struct {
	load.User
	p            *connPolicy
	scope        *h1.Scope
	perIteration bool
}

func (u *connUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	u.p.iterations.Add(1)
	err := u.User.Iterate(h1.WithScope(ctx, u.scope), rec)
	if u.perIteration {
		u.scope.CloseIdle()
	}
	return err
}

// ConnParams are the result params of how a run of c against tg
// connects: tls (on or off), conn_policy and tls_resumption.
func ConnParams(tg kc.Target, c Config) map[string]string {
	p := map[string]string{}
	results.Connections{Policy: c.Policy(), TLS: strings.HasPrefix(tg.BaseURL, "https://"), Resumption: c.TLSResumption}.RecordParams(p)
	return p
}

// h1Transport is hc's transport when it is the load engine's own.
func h1Transport(hc *http.Client) *h1.Transport {
	t, _ := hc.Transport.(*h1.Transport)
	return t
}
