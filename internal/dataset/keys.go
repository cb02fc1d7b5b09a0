package dataset

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
)

// Realm keys made by kcbench. A new realm without key providers gets
// Keycloak's defaults: two RSA key pairs (signing and encryption), an HMAC
// and an AES secret. Generating the two RSA pairs is about a third of the
// server's work for a tenant realm (JFR, Keycloak 26.7.3), and Java's key
// generation costs several times Go's. The fast strategy therefore hands
// Keycloak the same providers with the RSA pairs already made, as a realm
// export carries them: each realm still has its own keys. The secrets are
// cheap and left to Keycloak.

// rsaKeyBits is the size of Keycloak's default RSA keys.
const rsaKeyBits = 2048

// keyProviders returns the default key providers of realm, with RSA key
// pairs from keys (its j-th pair: fresh keys when keys is nil).
func keyProviders(realm string, keys func(j int) (*rsa.PrivateKey, error)) (map[string][]kc.ComponentRep, error) {
	sig, err := rsaComponent(realm, "rsa-generated", "RS256", keys, 0)
	if err != nil {
		return nil, err
	}
	enc, err := rsaComponent(realm, "rsa-enc-generated", "RSA-OAEP", keys, 1)
	if err != nil {
		return nil, err
	}
	return map[string][]kc.ComponentRep{kc.KeyProviderType: {
		sig, enc,
		{Name: "hmac-generated-hs512", ProviderID: "hmac-generated", Config: map[string][]string{"priority": {"100"}, "algorithm": {"HS512"}}},
		{Name: "aes-generated", ProviderID: "aes-generated", Config: map[string][]string{"priority": {"100"}}},
	}}, nil
}

// rsaComponent is a generated-RSA provider whose key pair is already
// there: Keycloak keeps a key of the configured size instead of making
// one. Keys are PKCS #8 and the certificate DER, both base64 without PEM
// armour, as Keycloak stores them; the certificate is self-signed for
// CN=<realm>, as Keycloak's own.
func rsaComponent(realm, provider, alg string, keys func(j int) (*rsa.PrivateKey, error), j int) (kc.ComponentRep, error) {
	key, err := newKey(keys, j)
	if err != nil {
		return kc.ComponentRep{}, err
	}
	priv, cert, err := rsaKeyPair(key, realm)
	if err != nil {
		return kc.ComponentRep{}, err
	}
	return kc.ComponentRep{Name: provider, ProviderID: provider, Config: map[string][]string{
		"priority":    {"100"},
		"keySize":     {"2048"},
		"algorithm":   {alg},
		"privateKey":  {priv},
		"certificate": {cert},
	}}, nil
}

// newKey is keys(j), or a fresh key when keys is nil.
func newKey(keys func(j int) (*rsa.PrivateKey, error), j int) (*rsa.PrivateKey, error) {
	if keys != nil {
		return keys(j)
	}
	return rsa.GenerateKey(rand.Reader, rsaKeyBits)
}

// rsaKeyPair stores key as a generated-RSA provider does: the PKCS #8
// private key and a self-signed certificate for CN=cn, both DER in base64
// without PEM armour.
func rsaKeyPair(key *rsa.PrivateKey, cn string) (privateKey, certificate string, err error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.AddDate(10, 0, 0),
	}
	cert, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	b64 := base64.StdEncoding.EncodeToString
	return b64(der), b64(cert), nil
}
