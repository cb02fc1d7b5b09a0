package stack

import (
	"cmp"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// TLS key types of a stack's certificates.
const (
	// TLSKeyRSA2048 is the common issuers' default key.
	TLSKeyRSA2048   = "rsa-2048"
	TLSKeyECDSAP256 = "ecdsa-p256"
)

// TLSKeys are the key types --tls-key accepts, the default first.
var TLSKeys = []string{TLSKeyRSA2048, TLSKeyECDSAP256}

// Balancer TLS modes (--lb-tls).
const (
	// LBTLSPassthrough forwards the TLS stream to a node, which ends it:
	// the sizing guide's setting.
	LBTLSPassthrough = "passthrough"
	// LBTLSTerminate ends TLS at the balancer and talks plain HTTP to
	// the nodes (edge).
	LBTLSTerminate = "terminate"
	// LBTLSReencrypt ends TLS at the balancer and opens TLS again to the
	// nodes.
	LBTLSReencrypt = "reencrypt"
)

// LBTLSModes are the modes --lb-tls accepts, the default first.
var LBTLSModes = []string{LBTLSPassthrough, LBTLSTerminate, LBTLSReencrypt}

// certValidity is how long a stack's certificates are valid: a stack
// lives hours to days.
const certValidity = 365 * 24 * time.Hour

// tlsFiles are a stack's certificate files, in its folder: a CA made for
// the stack and a server certificate it signed, valid for every address
// a node or the balancer may have.
type tlsFiles struct {
	// Key is the key type (TLSKeyRSA2048 or TLSKeyECDSAP256).
	Key string `json:"key"`
	// CA is the CA certificate (PEM) that clients trust.
	CA string `json:"ca"`
	// Cert and KeyFile are the server certificate and its key (0600).
	Cert    string `json:"cert"`
	KeyFile string `json:"key_file"`
	// Combined holds the certificate and then its key in one file (0600),
	// as HAProxy's crt wants it.
	Combined string `json:"combined"`
}

// certHosts are the names and addresses the server certificate is valid
// for: localhost, 127.0.0.1 (a single node and the balancer) and every
// cluster node's address (127.0.0.2 …).
func certHosts() []string {
	hosts := []string{"localhost", "127.0.0.1"}
	for i := 1; i <= MaxNodes; i++ {
		hosts = append(hosts, nodeHost(i, MaxNodes))
	}
	return hosts
}

// makeTLSFiles makes a CA and a server certificate of key type key in
// dir. Key files are 0600; the CA's key is not kept (the certificate
// covers every address a node may have), and the CA may sign for
// loopback names and addresses only.
func makeTLSFiles(dir, key string) (*tlsFiles, error) {
	caKey, err := newKey(key)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kcbench stack CA " + filepath.Base(dir)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
		// It signs for loopback only, so that trusting it (curl, a
		// browser) trusts nothing else.
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         []string{"localhost"},
		PermittedIPRanges:           []*net.IPNet{{IP: net.IPv4(127, 0, 0, 0).To4(), Mask: net.CIDRMask(8, 32)}},
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("tls: CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	srvKey, err := newKey(key)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if key == TLSKeyRSA2048 {
		srvTmpl.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	for _, h := range certHosts() {
		if ip := net.ParseIP(h); ip != nil {
			srvTmpl.IPAddresses = append(srvTmpl.IPAddresses, ip)
		} else {
			srvTmpl.DNSNames = append(srvTmpl.DNSNames, h)
		}
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, srvKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("tls: server certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return nil, err
	}
	f := &tlsFiles{
		Key:      key,
		CA:       filepath.Join(dir, "ca.pem"),
		Cert:     filepath.Join(dir, "server.pem"),
		KeyFile:  filepath.Join(dir, "server-key.pem"),
		Combined: filepath.Join(dir, "server-combined.pem"),
	}
	certPEM := pemBlock("CERTIFICATE", srvDER)
	keyPEM := pemBlock("PRIVATE KEY", keyDER)
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{f.CA, pemBlock("CERTIFICATE", caDER), 0o644},
		{f.Cert, certPEM, 0o644},
		{f.KeyFile, keyPEM, 0o600},
		{f.Combined, append(append([]byte(nil), certPEM...), keyPEM...), 0o600},
	} {
		if err := fileutil.WriteAtomic(w.path, w.data, w.mode); err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
	}
	return f, nil
}

func newKey(key string) (crypto.Signer, error) {
	switch key {
	case TLSKeyRSA2048, "":
		return rsa.GenerateKey(rand.Reader, 2048)
	case TLSKeyECDSAP256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	return nil, fmt.Errorf("tls key %q: want %s", key, strings.Join(TLSKeys, " or "))
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// ValidateTLS checks what the TLS settings ask of the rest of a
// stack's config; its messages name the flags (Config.Validate, and
// commands that take the stack's flags).
func ValidateTLS(o KeycloakOptions, t Topology) error {
	var errs []error
	if o.PlainHTTP && t.LBTLS != "" {
		errs = append(errs, errors.New("--lb-tls needs TLS: drop it or --tls=false"))
	}
	if !o.PlainHTTP && t.Sticky && t.LB != LBNone && cmp.Or(t.LBTLS, LBTLSPassthrough) == LBTLSPassthrough {
		errs = append(errs, errors.New("--lb-sticky reads a cookie, which a balancer in TLS passthrough cannot see: give --lb-tls terminate or reencrypt, or --tls=false"))
	}
	return errors.Join(errs...)
}

// nodeTLS says how a node of a stack with options o and topology t
// serves: HTTPS itself unless the stack is plain or its balancer ends
// TLS (then it reads X-Forwarded-* headers: edge).
func nodeTLS(o KeycloakOptions, t Topology) (tls, edge bool) {
	if o.PlainHTTP {
		return false, false
	}
	if t.LB == LBHAProxy && t.LBTLS == LBTLSTerminate {
		return false, true
	}
	return true, t.LB == LBHAProxy && t.LBTLS == LBTLSReencrypt
}
