package kc

import (
	"context"
	"encoding/pem"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckTLS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	ctx := context.Background()
	var ue *UntrustedError
	err := CheckTLS(ctx, Target{BaseURL: srv.URL})
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--ca-file") || !strings.Contains(err.Error(), "--insecure-skip-verify") {
		t.Fatalf("untrusted server: %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckTLS(ctx, Target{BaseURL: srv.URL, CAFile: ca}); err != nil {
		t.Errorf("with its CA: %v", err)
	}
	if err := CheckTLS(ctx, Target{BaseURL: srv.URL, InsecureSkipVerify: true}); err != nil {
		t.Errorf("insecure: %v", err)
	}
	// Its admin and management clients trust the CA too.
	resp, err := Target{CAFile: ca}.HTTPClient(0).Get(srv.URL)
	if err != nil {
		t.Fatalf("HTTPClient with the CA: %v", err)
	}
	resp.Body.Close()
	if _, err := (Target{}).HTTPClient(0).Get(srv.URL); err == nil {
		t.Error("HTTPClient without the CA trusted a self-signed server")
	}
	// Not TLS: nothing to check.
	if err := CheckTLS(ctx, Target{BaseURL: "http://127.0.0.1:1"}); err != nil {
		t.Errorf("http: %v", err)
	}
}

func TestCAFileErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o644)
	for _, c := range []struct{ path, want string }{
		{notPEM, "no PEM certificate"},
		{dir, "not a regular file"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		if _, err := LoadCAFile(c.path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
		if err := (Target{BaseURL: "https://x", CAFile: c.path, Admin: Credentials{ClientID: "c", ClientSecret: "s"}}).Validate(); err == nil {
			t.Errorf("Validate with CA file %s: no error", c.path)
		}
	}
}

func TestTargetTLSFlags(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, []byte("not a certificate"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--target", "http://127.0.0.1:8080", "--insecure-skip-verify"}, "https:// --target"},
		{[]string{"--target", "https://127.0.0.1:8443", "--ca-file", ca}, "no PEM certificate"},
		{[]string{"--ca-file", ca}, "go with --target"},
	} {
		var tf TargetFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		tf.RegisterFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := tf.CheckUnused()
		if err == nil && tf.Set() {
			_, err = tf.LoadTarget()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}
