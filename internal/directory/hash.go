package directory

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"

	"golang.org/x/crypto/argon2"
)

// Scheme is how the directory stores a password. Keycloak's LDAP provider
// checks a password with a simple bind as the user, so the directory must
// be able to verify it: slapd verifies {ARGON2} (with its argon2 module),
// {SSHA} and cleartext.
type Scheme string

// Schemes.
const (
	// Argon2 is {ARGON2}$argon2id$v=19$m=…,t=…,p=…$salt$hash, checked by
	// slapd's argon2 module (Debian's slapd ships it): with Keycloak's
	// default parameters a bind costs what a Keycloak login hashes.
	Argon2 Scheme = "argon2"
	// SSHA is {SSHA}: one salted SHA-1, which every directory server checks.
	SSHA Scheme = "ssha"
	// Cleartext stores the password as is.
	Cleartext Scheme = "cleartext"
)

// Argon2Params are argon2id's cost parameters.
type Argon2Params struct {
	Iterations uint32
	MemoryKiB  uint32
	Threads    uint8
	KeyLen     uint32
}

// KeycloakArgon2 is Keycloak 26's default password policy (argon2id,
// m=7168 KiB, t=5, p=1, 32 bytes).
var KeycloakArgon2 = Argon2Params{Iterations: 5, MemoryKiB: 7168, Threads: 1, KeyLen: 32}

// Hash returns password's userPassword value in scheme s, salted with salt
// (unused for cleartext). Argon2 uses p.
func Hash(s Scheme, p Argon2Params, password string, salt []byte) (string, error) {
	switch s {
	case Argon2:
		e := base64.RawStdEncoding
		k := argon2.IDKey([]byte(password), salt, p.Iterations, p.MemoryKiB, p.Threads, p.KeyLen)
		return fmt.Sprintf("{ARGON2}$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.MemoryKiB, p.Iterations, p.Threads,
			e.EncodeToString(salt), e.EncodeToString(k)), nil
	case SSHA:
		h := sha1.New()
		h.Write([]byte(password))
		h.Write(salt)
		return "{SSHA}" + base64.StdEncoding.EncodeToString(append(h.Sum(nil), salt...)), nil
	case Cleartext:
		return password, nil
	}
	return "", fmt.Errorf("password scheme %q: want argon2, ssha or cleartext", s)
}
