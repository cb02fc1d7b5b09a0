package dataset

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"testing"

	"github.com/kcbench/kcbench/internal/kc"
)

func TestKeyProvidersAreKeycloaksDefaultsWithKeys(t *testing.T) {
	c, err := keyProviders("t1", nil)
	if err != nil {
		t.Fatal(err)
	}
	ks := c[kc.KeyProviderType]
	var names []string
	for _, k := range ks {
		names = append(names, k.ProviderID)
		if k.ProviderID != "rsa-generated" && k.ProviderID != "rsa-enc-generated" {
			continue
		}
		der, err := base64.StdEncoding.DecodeString(k.Config["privateKey"][0])
		if err != nil {
			t.Fatal(err)
		}
		key, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			t.Fatalf("%s: private key: %v", k.ProviderID, err)
		}
		rk := key.(*rsa.PrivateKey)
		if rk.N.BitLen() != rsaKeyBits || k.Config["keySize"][0] != "2048" {
			t.Errorf("%s: %d bits", k.ProviderID, rk.N.BitLen())
		}
		cd, _ := base64.StdEncoding.DecodeString(k.Config["certificate"][0])
		cert, err := x509.ParseCertificate(cd)
		if err != nil {
			t.Fatalf("%s: certificate: %v", k.ProviderID, err)
		}
		if !rk.PublicKey.Equal(cert.PublicKey) || cert.Subject.CommonName != "t1" {
			t.Errorf("%s: certificate of another key or subject %q", k.ProviderID, cert.Subject.CommonName)
		}
	}
	if len(names) != 4 {
		t.Errorf("providers %v", names)
	}
}
