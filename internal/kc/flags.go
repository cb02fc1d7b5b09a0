package kc

import (
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/fileutil"
)

// TargetFlags make an external Keycloak a Target.
type TargetFlags struct {
	URL, MgmtURL, user, passwordFile, clientID, clientSecretFile string
	caFile                                                       string
	insecure                                                     bool
}

// RegisterFlags adds --target, --management-url and the admin credentials.
func (t *TargetFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&t.URL, "target", "", "an external Keycloak's base URL (instead of the local stack)")
	fs.StringVar(&t.MgmtURL, "management-url", "", "the external Keycloak's management URL (health, metrics)")
	fs.StringVar(&t.user, "admin-user", "admin", "admin user of the external Keycloak (master realm)")
	fs.StringVar(&t.passwordFile, "admin-password-file", "", "file holding the admin password")
	fs.StringVar(&t.clientID, "admin-client-id", "", "admin service-account client id (instead of user and password)")
	fs.StringVar(&t.clientSecretFile, "admin-client-secret-file", "", "file holding that client's secret")
	fs.StringVar(&t.caFile, "ca-file", "", "PEM file of the CA that signed an https --target's certificate (default: the system's roots)")
	fs.BoolVar(&t.insecure, "insecure-skip-verify", false, "trust any certificate of an https --target (measures TLS all the same; never checks who answers)")
}

// CheckUnused refuses the TLS flags without --target: a local stack's CA
// is trusted already.
func (t *TargetFlags) CheckUnused() error {
	if !t.Set() && (t.caFile != "" || t.insecure) {
		return cliutil.Usagef("--ca-file and --insecure-skip-verify go with --target (kcbench trusts its local stack's CA already)")
	}
	return nil
}

// tls sets tg's TLS trust from the flags and checks it.
func (t *TargetFlags) tls(tg *Target) error {
	tg.CAFile, tg.InsecureSkipVerify = t.caFile, t.insecure
	if t.caFile == "" && !t.insecure {
		return nil
	}
	if !strings.HasPrefix(t.URL, "https://") {
		return cliutil.Usagef("--ca-file and --insecure-skip-verify go with an https:// --target, not %q", t.URL)
	}
	if t.caFile != "" && t.insecure {
		return cliutil.Usagef("--ca-file and --insecure-skip-verify: give one (the second turns the first off)")
	}
	if t.caFile != "" {
		if _, err := LoadCAFile(t.caFile); err != nil {
			return cliutil.Usagef("--ca-file: %v", err)
		}
	}
	return nil
}

// Set tells whether --target was given.
func (t *TargetFlags) Set() bool { return t.URL != "" }

// Target is the external Keycloak with its admin credentials read from
// their files; problems are usage errors.
func (t *TargetFlags) Target() (Target, error) {
	tg := Target{BaseURL: t.URL, ManagementURL: t.MgmtURL}
	if err := t.tls(&tg); err != nil {
		return tg, err
	}
	switch {
	case t.clientID != "":
		if t.clientSecretFile == "" {
			return tg, cliutil.Usagef("--admin-client-id needs --admin-client-secret-file")
		}
		s, err := fileutil.ReadSecret(t.clientSecretFile)
		if err != nil {
			return tg, cliutil.Usagef("--admin-client-secret-file: %v", err)
		}
		tg.Admin = Credentials{ClientID: t.clientID, ClientSecret: Secret(s)}
	default:
		if t.passwordFile == "" {
			return tg, cliutil.Usagef("--target needs --admin-password-file (or --admin-client-id and --admin-client-secret-file)")
		}
		s, err := fileutil.ReadSecret(t.passwordFile)
		if err != nil {
			return tg, cliutil.Usagef("--admin-password-file: %v", err)
		}
		tg.Admin = Credentials{Username: t.user, Password: Secret(s)}
	}
	if err := tg.Validate(); err != nil {
		return tg, cliutil.Usage(err)
	}
	return tg, nil
}

// LoadTarget is the external Keycloak a load runs against: without admin
// credentials when none are given (only admin-api needs them).
func (t *TargetFlags) LoadTarget() (Target, error) {
	if t.passwordFile != "" || t.clientID != "" {
		return t.Target()
	}
	tg := Target{BaseURL: t.URL, ManagementURL: t.MgmtURL}
	if err := t.tls(&tg); err != nil {
		return tg, err
	}
	for _, u := range []string{tg.BaseURL, tg.ManagementURL} {
		if err := CheckURL(u); u != "" && err != nil {
			return tg, cliutil.Usage(err)
		}
	}
	return tg, nil
}

// CheckURL accepts absolute http and https URLs.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want an http:// or https:// URL", raw)
	}
	return nil
}
