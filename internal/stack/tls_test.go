package stack

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/kc"
)

func TestMakeTLSFiles(t *testing.T) {
	for _, key := range TLSKeys {
		t.Run(key, func(t *testing.T) {
			dir := t.TempDir()
			f, err := makeTLSFiles(dir, key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, "ca-key.pem")); err == nil {
				t.Error("the CA's key is kept")
			}
			for _, p := range []string{f.KeyFile, f.Combined} {
				fi, err := os.Stat(p)
				if err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: %v, mode %v, want 0600", p, err, fi.Mode().Perm())
				}
			}
			pair, err := tls.LoadX509KeyPair(f.Cert, f.KeyFile)
			if err != nil {
				t.Fatalf("certificate and key do not match: %v", err)
			}
			switch pair.PrivateKey.(type) {
			case *rsa.PrivateKey:
				if key != TLSKeyRSA2048 || pair.PrivateKey.(*rsa.PrivateKey).N.BitLen() != 2048 {
					t.Errorf("key %s: got an RSA key of %d bits", key, pair.PrivateKey.(*rsa.PrivateKey).N.BitLen())
				}
			case *ecdsa.PrivateKey:
				if key != TLSKeyECDSAP256 {
					t.Errorf("key %s: got ECDSA", key)
				}
			}
			pool, err := kc.LoadCAFile(f.CA)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(f.Cert)
			blk, _ := pem.Decode(b)
			cert, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			// Valid for every address a node or the balancer binds.
			for _, h := range []string{"127.0.0.1", "127.0.0.2", nodeHost(MaxNodes, MaxNodes), "localhost"} {
				if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: h}); err != nil {
					t.Errorf("%s: %v", h, err)
				}
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.99"}); err == nil {
				t.Error("valid for 127.0.0.99, which no node has")
			}
			b, _ = os.ReadFile(f.CA)
			blk, _ = pem.Decode(b)
			ca, err := x509.ParseCertificate(blk.Bytes)
			if err != nil || !ca.PermittedDNSDomainsCritical || len(ca.PermittedIPRanges) != 1 || ca.PermittedIPRanges[0].String() != "127.0.0.0/8" {
				t.Errorf("CA name constraints: %v %v %v", err, ca.PermittedDNSDomains, ca.PermittedIPRanges)
			}
			comb, _ := os.ReadFile(f.Combined)
			if !strings.Contains(string(comb), "BEGIN CERTIFICATE") || !strings.Contains(string(comb), "BEGIN PRIVATE KEY") {
				t.Errorf("combined file lacks the certificate or the key")
			}
		})
	}
}

func TestTLSStartArgs(t *testing.T) {
	certs := &tlsFiles{Cert: "/s/server.pem", KeyFile: "/s/server-key.pem"}
	o := KeycloakOptions{Version: "26.7.3"}
	n := NodeState{Index: 1, Host: "127.0.0.1", HTTPPort: 8443, MgmtPort: 9000, TLS: true}
	args := strings.Join(o.startArgs(dbConn{URL: "jdbc:postgresql://127.0.0.1:1/keycloak", User: "keycloak"}, n, certs), " ")
	for _, want := range []string{"--http-enabled=false", "--https-port=8443", "--https-certificate-file=/s/server.pem", "--https-certificate-key-file=/s/server-key.pem", "--http-host=127.0.0.1"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "--http-port=") || strings.Contains(args, "proxy-headers") {
		t.Errorf("TLS node args %q", args)
	}
	if n.URL() != "https://127.0.0.1:8443" || n.MgmtURL() != "https://127.0.0.1:9000" {
		t.Errorf("URLs %s %s", n.URL(), n.MgmtURL())
	}
	edge := NodeState{Index: 1, Host: "127.0.0.2", HTTPPort: 8080, MgmtPort: 9000, Edge: true}
	args = strings.Join(o.startArgs(dbConn{}, edge, certs), " ")
	if !strings.Contains(args, "--http-enabled=true") || !strings.Contains(args, "--proxy-headers=xforwarded") || strings.Contains(args, "https") {
		t.Errorf("edge node args %q", args)
	}
}

func TestNodeTLS(t *testing.T) {
	for _, c := range []struct {
		plain     bool
		lb, lbTLS string
		tls, edge bool
	}{
		{plain: true, lb: LBNone},
		{lb: LBNone, tls: true},
		{lb: LBHAProxy, tls: true},
		{lb: LBHAProxy, lbTLS: LBTLSPassthrough, tls: true},
		{lb: LBHAProxy, lbTLS: LBTLSTerminate, edge: true},
		{lb: LBHAProxy, lbTLS: LBTLSReencrypt, tls: true, edge: true},
	} {
		tls, edge := nodeTLS(KeycloakOptions{PlainHTTP: c.plain}, Topology{LB: c.lb, LBTLS: c.lbTLS})
		if tls != c.tls || edge != c.edge {
			t.Errorf("%+v: tls %v edge %v", c, tls, edge)
		}
	}
}

func TestTLSConfigValidate(t *testing.T) {
	base := Config{Dirs: Dirs{Cache: "/c", State: "/s"}, Keycloak: KeycloakOptions{Version: "26.7.3"}}
	for _, c := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"lb-tls without tls", func(c *Config) {
			c.Keycloak.PlainHTTP = true
			c.Topology = Topology{Nodes: 2, LB: LBHAProxy, LBTLS: LBTLSTerminate}
		}, "--lb-tls needs TLS"},
		{"tls-key without tls", func(c *Config) { c.Keycloak.PlainHTTP, c.Keycloak.TLSKey = true, TLSKeyECDSAP256 }, "--tls-key needs TLS"},
		{"bad key", func(c *Config) { c.Keycloak.TLSKey = "dsa-1024" }, `tls key "dsa-1024"`},
		{"bad lb tls", func(c *Config) { c.Topology = Topology{Nodes: 2, LB: LBHAProxy, LBTLS: "edge"} }, `lb tls "edge"`},
		{"lb tls without lb", func(c *Config) { c.Topology = Topology{Nodes: 1, LB: LBNone, LBTLS: LBTLSTerminate} }, "needs a balancer"},
		{"sticky passthrough", func(c *Config) { c.Topology = Topology{Nodes: 2, LB: LBHAProxy, Sticky: true} }, "passthrough cannot see"},
	} {
		cfg := base
		c.mod(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	ok := base
	ok.Topology = Topology{Nodes: 2, LB: LBHAProxy, Sticky: true, LBTLS: LBTLSReencrypt}
	if err := ok.Validate(); err != nil {
		t.Errorf("sticky reencrypt: %v", err)
	}
}

func TestHAProxyTLSConfig(t *testing.T) {
	dir := t.TempDir()
	certs, err := makeTLSFiles(dir, TLSKeyECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{Config: filepath.Join(dir, "haproxy.cfg"), Port: 18080, StatsPort: 18081}
	for _, c := range []struct {
		mode      string
		nodeTLS   bool
		want, not []string
	}{
		{LBTLSPassthrough, true, []string{"mode tcp", "bind 127.0.0.1:18080\n", "check port 9000 check-ssl verify required ca-file " + certs.CA}, []string{"ssl crt", "X-Forwarded-Proto"}},
		{LBTLSTerminate, false, []string{"mode http", "bind 127.0.0.1:18080 ssl crt " + certs.Combined, "X-Forwarded-Proto https", "server node1 127.0.0.2:8080 check port 9000 inter"}, []string{"check-ssl", "mode tcp"}},
		{LBTLSReencrypt, true, []string{"mode http", "ssl crt " + certs.Combined, "127.0.0.2:8080 ssl verify required ca-file " + certs.CA, "check-ssl"}, []string{"mode tcp"}},
	} {
		nodes := []NodeState{{Index: 1, Host: "127.0.0.2", HTTPPort: 8080, MgmtPort: 9000, TLS: c.nodeTLS}, {Index: 2, Host: "127.0.0.3", HTTPPort: 8080, MgmtPort: 9000, TLS: c.nodeTLS}}
		if err := b.writeConfig(nodes, c.mode != LBTLSPassthrough, certs, c.mode); err != nil {
			t.Fatal(err)
		}
		cfg, _ := os.ReadFile(b.Config)
		for _, w := range c.want {
			if !strings.Contains(string(cfg), w) {
				t.Errorf("%s: config lacks %q:\n%s", c.mode, w, cfg)
			}
		}
		for _, w := range c.not {
			if strings.Contains(string(cfg), w) {
				t.Errorf("%s: config has %q:\n%s", c.mode, w, cfg)
			}
		}
		if bin, err := findHAProxy(""); err == nil {
			if out, err := exec.Command(bin, "-c", "-f", b.Config).CombinedOutput(); err != nil {
				t.Errorf("%s: haproxy -c: %v\n%s", c.mode, err, out)
			}
		}
	}
}
