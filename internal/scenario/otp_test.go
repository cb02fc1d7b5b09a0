package scenario

import (
	"encoding/base32"
	"encoding/json"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/kcbench/kcbench/internal/dataset"
)

// The code kcbench computes is RFC 6238's (its SHA-1 test vector at T = 59 s,
// 94287082, read to 6 digits) from a secret whose bytes are the key, as
// Keycloak keeps it.
func TestTOTPCode(t *testing.T) {
	key := base32.StdEncoding.EncodeToString([]byte("12345678901234567890"))
	code, err := totp.GenerateCodeCustom(key, time.Unix(59, 0), totpOpts)
	if err != nil || code != "287082" {
		t.Fatalf("code %q, %v: want 287082", code, err)
	}
	s := dataset.Spec{Seed: 1}
	c := s.OTPCredential()
	var secret struct{ Value string }
	if err := json.Unmarshal([]byte(c.SecretData), &secret); err != nil || secret.Value != s.OTPSecret() || c.Type != "otp" {
		t.Fatalf("credential %+v (%v): want the spec's secret as the value", c, err)
	}
	var data struct {
		SubType   string
		Digits    int
		Period    int
		Algorithm string
	}
	if err := json.Unmarshal([]byte(c.CredentialData), &data); err != nil || data != (struct {
		SubType   string
		Digits    int
		Period    int
		Algorithm string
	}{"totp", 6, 30, "HmacSHA1"}) {
		t.Errorf("credential data %+v (%v): want what totpOpts computes", data, err)
	}
}
