package results

import (
	"cmp"
	"fmt"
	"io"
	"strings"
)

// Connection policies: how a run's virtual users use connections, named
// after k6's options.
const (
	// ConnReuse shares kept-alive connections among the VUs.
	ConnReuse = "reuse"
	// ConnPerVU gives each VU connections of its own, kept for the run.
	ConnPerVU = "per-vu"
	// ConnPerIteration opens new connections for every iteration (and
	// with TLS a handshake): a client that runs a single request, the
	// sizing guide's client-credentials setting (k6: noVUConnectionReuse).
	ConnPerIteration = "per-iteration"
)

// ConnPolicies are the policies, the default of most workloads first.
var ConnPolicies = []string{ConnReuse, ConnPerVU, ConnPerIteration}

// Connections is how a run's clients connected to the server: the policy,
// TLS, and the connections and handshakes the iterations made (the VUs'
// set-up, such as the logins before a refresh run, not counted).
type Connections struct {
	Policy string `json:"policy"`
	TLS    bool   `json:"tls"`
	// Version and Cipher are the TLS version and cipher suite the
	// handshakes agreed on (the last one's).
	Version string `json:"tls_version,omitempty"`
	Cipher  string `json:"tls_cipher,omitempty"`
	// Resumption: the client offered to resume TLS sessions.
	Resumption bool `json:"tls_resumption"`
	// Iterations counts every iteration the VUs ran (warm-up, failed and
	// interrupted ones included), Handshakes the TLS handshakes they made
	// (Resumed of them resumed a session, Failed failed).
	Iterations int64 `json:"iterations"`
	Handshakes int64 `json:"tls_handshakes"`
	Resumed    int64 `json:"tls_resumed"`
	Failed     int64 `json:"tls_failed"`
	// HandshakeMs are the handshakes' client-side times: mean, p50, p99
	// and max in milliseconds (zero without handshakes).
	HandshakeMs HandshakeMs `json:"tls_handshake_ms,omitzero"`
}

// HandshakeMs summarizes handshake times in milliseconds.
type HandshakeMs struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// PerIteration is the handshakes per iteration (0 without iterations).
func (c Connections) PerIteration() float64 {
	if c.Iterations == 0 {
		return 0
	}
	return float64(c.Handshakes) / float64(c.Iterations)
}

// Describe is the connections in one line, e.g. "per-iteration over TLS
// 1.3 (TLS_AES_128_GCM_SHA256), no resumption: 1.00 handshakes per
// iteration, p50 1.2 ms, p99 3.4 ms".
func (c Connections) Describe() string {
	var b strings.Builder
	b.WriteString(c.Policy)
	if !c.TLS {
		b.WriteString(" over plain HTTP")
		return b.String()
	}
	fmt.Fprintf(&b, " over %s", cmp.Or(c.Version, "TLS"))
	if c.Cipher != "" {
		fmt.Fprintf(&b, " (%s)", c.Cipher)
	}
	if c.Resumption {
		b.WriteString(", resumption on")
	} else {
		b.WriteString(", no resumption")
	}
	fmt.Fprintf(&b, ": %.2f handshakes per iteration", c.PerIteration())
	if c.Resumed > 0 {
		fmt.Fprintf(&b, " (%d of %d resumed)", c.Resumed, c.Handshakes)
	}
	if c.Failed > 0 {
		fmt.Fprintf(&b, ", %d failed", c.Failed)
	}
	if c.Handshakes > 0 {
		fmt.Fprintf(&b, ", handshake p50 %.2f ms, p99 %.2f ms", c.HandshakeMs.P50, c.HandshakeMs.P99)
	}
	return b.String()
}

// Result params of a run's connections.
const (
	ParamTLS           = "tls"
	ParamConnPolicy    = "conn_policy"
	ParamTLSVersion    = "tls_version"
	ParamTLSResumption = "tls_resumption"
)

// RecordParams adds the connections' conditions to a result's params:
// tls (on or off), conn_policy, and with TLS tls_version and
// tls_resumption.
func (c Connections) RecordParams(p map[string]string) {
	p[ParamTLS], p[ParamConnPolicy] = OnOff(c.TLS), c.Policy
	if c.TLS {
		if c.Version != "" {
			p[ParamTLSVersion] = c.Version
		}
		p[ParamTLSResumption] = OnOff(c.Resumption)
	}
}

// OnOff is a boolean param's value: "on" or "off".
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// WriteConnections writes the "connections:" line of a run's summary.
func WriteConnections(w io.Writer, c *Connections) error {
	if c == nil {
		return nil
	}
	_, err := fmt.Fprintf(w, "connections:  %s\n", c.Describe())
	return err
}
