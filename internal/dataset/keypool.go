package dataset

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// KeyPool keeps RSA private keys in a file, so that seeding does not pay
// for key generation again. Two RSA pairs are most of what a tenant realm
// costs to make (about 0.1 s of CPU each in Go, on a 2-core EPYC): 1,000
// realms need 2,000 of them, several minutes of CPU. A pool makes them
// once per machine; every later seed reads them.
//
// Keys are handed out by index, and a dataset uses each index once (two
// per tenant number, see TenantKeyIndex), so that every realm of a stack
// has its own keys, as Keycloak would make them. Stacks on the same
// machine share the pool, and so the same keys: that is no concern for a
// benchmark. Each realm's certificate is made fresh for its name.
//
// The file holds one key per line, PKCS #8 DER in base64, mode 0600.
type KeyPool struct {
	path string
	mu   sync.Mutex
	der  [][]byte
}

// KeyPoolFile is the pool's file name in kcbench's cache folder.
const KeyPoolFile = "rsa-2048.keys"

// keysPerTenant: a realm's signing and encryption pairs.
const keysPerTenant = 2

// TenantKeyIndex is the pool index of tenant k's j-th RSA pair (k from 1).
func TenantKeyIndex(k, j int) int { return keysPerTenant*(k-1) + j }

// KeyPoolIn opens the pool in kcbench's cache folder cacheDir.
func KeyPoolIn(cacheDir string) (*KeyPool, error) {
	return OpenKeyPool(filepath.Join(cacheDir, "keys", KeyPoolFile))
}

// OpenKeyPool reads the pool at path; a missing file is an empty pool.
func OpenKeyPool(path string) (*KeyPool, error) {
	p := &KeyPool{path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("key pool: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		der, err := base64.StdEncoding.DecodeString(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("key pool %s, line %d: %w (delete the file: kcbench makes it again)", path, n, err)
		}
		p.der = append(p.der, der)
	}
	return p, nil
}

// Ensure makes the pool hold at least n keys: the missing ones are
// generated on every core and the file is rewritten (temp file, rename).
// logf, when set, says how many keys are made and how long it took.
func (p *KeyPool) Ensure(ctx context.Context, n int, logf func(string, ...any)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	missing := n - len(p.der)
	if missing <= 0 {
		return nil
	}
	if logf != nil {
		logf("seed: making %d RSA keys for the key pool %s (once per machine; later seeds reuse them)", missing, p.path)
	}
	t0 := time.Now()
	made := make([][]byte, missing)
	err := Parallel(ctx, missing, runtime.GOMAXPROCS(0), func(_ context.Context, i int) error {
		key, err := rsa.GenerateKey(rand.Reader, rsaKeyBits)
		if err != nil {
			return err
		}
		made[i], err = x509.MarshalPKCS8PrivateKey(key)
		return err
	})
	if err != nil {
		return fmt.Errorf("key pool: %w", err)
	}
	all := append(p.der, made...)
	var buf bytes.Buffer
	for _, der := range all {
		buf.WriteString(base64.StdEncoding.EncodeToString(der))
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return fmt.Errorf("key pool: %w", err)
	}
	if err := fileutil.WriteAtomic(p.path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("key pool: %w", err)
	}
	p.der = all
	if logf != nil {
		logf("seed: made %d RSA keys in %.1f s", missing, time.Since(t0).Seconds())
	}
	return nil
}

// Key returns key i, which Ensure must have made.
func (p *KeyPool) Key(i int) (*rsa.PrivateKey, error) {
	p.mu.Lock()
	if i < 0 || i >= len(p.der) {
		p.mu.Unlock()
		return nil, fmt.Errorf("key pool: no key %d (the pool holds %d)", i, len(p.der))
	}
	der := p.der[i]
	p.mu.Unlock()
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("key pool %s, key %d: %w (delete the file: kcbench makes it again)", p.path, i+1, err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok || rk.N.BitLen() != rsaKeyBits {
		return nil, fmt.Errorf("key pool %s, key %d: not an RSA-%d key (delete the file: kcbench makes it again)", p.path, i+1, rsaKeyBits)
	}
	return rk, nil
}
