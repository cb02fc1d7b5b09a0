package dataset

import (
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/kcbench/kcbench/internal/kc"
)

// Policy is a realm's password hashing policy. The zero value is
// Keycloak's default (argon2id, m=7168 KiB, t=5, p=1 in 26.x).
type Policy struct {
	Algorithm  string // "", argon2, pbkdf2-sha512, pbkdf2-sha256, pbkdf2
	Iterations int    // 0: the algorithm's default
}

// pbkdf2Defaults are Keycloak 26's default iterations and key sizes (bytes).
var pbkdf2Defaults = map[string]struct {
	iterations, keyLen int
	h                  func() hash.Hash
}{
	"pbkdf2-sha512": {210_000, 64, sha512.New},
	"pbkdf2-sha256": {600_000, 32, sha256.New},
	"pbkdf2":        {1_300_000, 64, sha1.New},
}

// Argon2 parameters of Keycloak's default policy.
const (
	argon2Iterations = 5
	argon2MemoryKiB  = 7168
	argon2Threads    = 1
	argon2KeyLen     = 32
)

// ParsePolicy reads "default", "argon2", "pbkdf2-sha512:27500",
// "pbkdf2-sha256:1", "pbkdf2:1000" (algorithm[:iterations]).
func ParsePolicy(s string) (Policy, error) {
	if s == "" || s == "default" {
		return Policy{}, nil
	}
	alg, it, hasIt := strings.Cut(s, ":")
	p := Policy{Algorithm: alg}
	if _, ok := pbkdf2Defaults[alg]; !ok && alg != "argon2" {
		return Policy{}, fmt.Errorf("password policy %q: algorithm must be argon2, pbkdf2-sha512, pbkdf2-sha256 or pbkdf2 (or \"default\")", s)
	}
	if hasIt {
		n, err := strconv.Atoi(it)
		if err != nil || n < 1 || n > 10_000_000 {
			return Policy{}, fmt.Errorf("password policy %q: iterations must be a number from 1 to 10000000", s)
		}
		p.Iterations = n
	}
	return p, nil
}

// String is the form ParsePolicy reads.
func (p Policy) String() string {
	switch {
	case p.Algorithm == "":
		return "default"
	case p.Iterations > 0:
		return fmt.Sprintf("%s:%d", p.Algorithm, p.Iterations)
	}
	return p.Algorithm
}

// MarshalText and UnmarshalText let a Policy travel in JSON, YAML and flags.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Policy) UnmarshalText(b []byte) error {
	q, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Validate checks the policy.
func (p Policy) Validate() error {
	_, err := ParsePolicy(p.String())
	return err
}

// Keycloak is the realm's passwordPolicy string ("" for the default).
func (p Policy) Keycloak() string {
	if p.Algorithm == "" {
		return ""
	}
	s := "hashAlgorithm(" + p.Algorithm + ")"
	if p.Iterations > 0 {
		s += " and hashIterations(" + strconv.Itoa(p.Iterations) + ")"
	}
	return s
}

// CanPrehash reports whether kcbench can hash a password exactly as the
// server would for this policy, so that imported hashes are accepted
// without a re-hash on first login. Argon2 with explicit iterations is
// excluded: Keycloak ignores policy iterations when checking argon2 hashes.
func (p Policy) CanPrehash() bool {
	return p.Algorithm == "" || (p.Algorithm == "argon2" && p.Iterations == 0) || pbkdf2Defaults[p.Algorithm].h != nil
}

// Credential returns a password credential for password under the policy:
// pre-hashed when CanPrehash (salt must be 16 bytes), else the plain value
// for the server to hash.
func (p Policy) Credential(password string, salt []byte) kc.CredentialRep {
	if !p.CanPrehash() {
		return kc.CredentialRep{Type: "password", Value: password}
	}
	b64 := base64.StdEncoding.EncodeToString
	var credData any
	var key []byte
	if p.Algorithm == "" || p.Algorithm == "argon2" {
		key = argon2.IDKey([]byte(password), salt, argon2Iterations, argon2MemoryKiB, argon2Threads, argon2KeyLen)
		credData = map[string]any{
			"hashIterations": argon2Iterations,
			"algorithm":      "argon2",
			"additionalParameters": map[string][]string{
				"hashLength":  {strconv.Itoa(argon2KeyLen)},
				"memory":      {strconv.Itoa(argon2MemoryKiB)},
				"type":        {"id"},
				"version":     {"1.3"},
				"parallelism": {strconv.Itoa(argon2Threads)},
			},
		}
	} else {
		d := pbkdf2Defaults[p.Algorithm]
		it := p.Iterations
		if it == 0 {
			it = d.iterations
		}
		var err error
		key, err = pbkdf2.Key(d.h, password, salt, it, d.keyLen)
		if err != nil {
			return kc.CredentialRep{Type: "password", Value: password}
		}
		credData = map[string]any{"hashIterations": it, "algorithm": p.Algorithm, "additionalParameters": map[string]any{}}
	}
	cd, _ := json.Marshal(credData)
	sd, _ := json.Marshal(map[string]any{"value": b64(key), "salt": b64(salt), "additionalParameters": map[string]any{}})
	return kc.CredentialRep{Type: "password", SecretData: string(sd), CredentialData: string(cd)}
}
