package dataset

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/kc"
)

func TestKeyPoolMakesKeepsAndHandsOutKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", KeyPoolFile)
	p, err := OpenKeyPool(path)
	if err != nil || p.Len() != 0 {
		t.Fatalf("new pool: %d keys, %v", p.Len(), err)
	}
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, f) }
	if err := p.Ensure(t.Context(), 3, logf); err != nil {
		t.Fatal(err)
	}
	if err := p.Ensure(t.Context(), 2, logf); err != nil || len(logged) != 2 {
		t.Fatalf("ensure fewer than held: %v, logged %q", err, logged)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("pool file: %v %v", fi, err)
	}
	again, err := OpenKeyPool(path)
	if err != nil || again.Len() != 3 {
		t.Fatalf("reopened: %d keys, %v", again.Len(), err)
	}
	seen := map[string]bool{}
	for i := range 3 {
		a, err := p.Key(i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := again.Key(i)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Equal(b) || a.N.BitLen() != rsaKeyBits {
			t.Errorf("key %d differs after reopening, or is not RSA-2048", i)
		}
		seen[a.N.String()] = true
	}
	if len(seen) != 3 {
		t.Errorf("%d distinct keys of 3", len(seen))
	}
	if _, err := p.Key(3); err == nil || !strings.Contains(err.Error(), "no key 3") {
		t.Errorf("key beyond the pool: %v", err)
	}
	// growing keeps the keys there
	if err := again.Ensure(t.Context(), 4, nil); err != nil {
		t.Fatal(err)
	}
	k0, _ := p.Key(0)
	if g, err := again.Key(0); err != nil || !g.Equal(k0) || again.Len() != 4 {
		t.Errorf("growing changed key 0 or holds %d: %v", again.Len(), err)
	}
}

func TestKeyPoolRejectsABrokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), KeyPoolFile)
	if err := os.WriteFile(path, []byte("not base64!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenKeyPool(path); err == nil || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("broken line: %v", err)
	}
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString([]byte("junk"))+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := OpenKeyPool(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Key(0); err == nil || !strings.Contains(err.Error(), "key 1") {
		t.Errorf("junk key: %v", err)
	}
}

func TestKeyProvidersTakeTheirKeysFromThePool(t *testing.T) {
	p, err := OpenKeyPool(filepath.Join(t.TempDir(), KeyPoolFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Ensure(t.Context(), TenantKeyIndex(3, 0), nil); err != nil {
		t.Fatal(err)
	}
	sd := &seeder{o: SeedOptions{Keys: p}}
	c, err := keyProviders("t2-realm", sd.tenantKeys(2))
	if err != nil {
		t.Fatal(err)
	}
	for j, k := range c[kc.KeyProviderType][:2] {
		der, _ := base64.StdEncoding.DecodeString(k.Config["privateKey"][0])
		key, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := p.Key(TenantKeyIndex(2, j))
		if !key.(*rsa.PrivateKey).Equal(want) {
			t.Errorf("%s: not the pool's key %d", k.ProviderID, TenantKeyIndex(2, j))
		}
		cd, _ := base64.StdEncoding.DecodeString(k.Config["certificate"][0])
		cert, err := x509.ParseCertificate(cd)
		if err != nil || cert.Subject.CommonName != "t2-realm" {
			t.Errorf("%s: certificate %v %v", k.ProviderID, cert, err)
		}
	}
	if TenantKeyIndex(1, 0) != 0 || TenantKeyIndex(1, 1) != 1 || TenantKeyIndex(2, 0) != 2 {
		t.Error("tenant key indexes overlap")
	}
}

// Len is the number of keys in the pool.
func (p *KeyPool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.der)
}
