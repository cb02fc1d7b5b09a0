package kc

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/fileutil"
)

// TargetFlags make an external Keycloak a Target.
type TargetFlags struct {
	URL, MgmtURL, user, passwordFile, clientID, clientSecretFile string
	moreMgmtURLs                                                 []string
	caFile                                                       string
	insecure                                                     bool
}

// RegisterFlags adds --target, --management-url and the admin credentials.
func (t *TargetFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(urlFlag{&t.URL}, "target", "an external Keycloak's base `URL`, http:// or https:// (instead of the local stack)")
	fs.Var(&mgmtURLsFlag{first: &t.MgmtURL, more: &t.moreMgmtURLs}, "management-url", "the external Keycloak's management `URL` (health, metrics); repeatable, once per pod: server CPU is summed over them (a warning when the cluster has more nodes)")
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

// External is the external target with its admin credentials when
// --target is given (ext true), after CheckUnused.
func (t *TargetFlags) External() (tg Target, ext bool, err error) {
	if err := t.CheckUnused(); err != nil || !t.Set() {
		return Target{}, false, err
	}
	tg, err = t.Target()
	return tg, true, err
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
	tg := Target{BaseURL: t.URL, ManagementURL: t.MgmtURL, MoreManagementURLs: t.moreMgmtURLs}
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
	tg := Target{BaseURL: t.URL, ManagementURL: t.MgmtURL, MoreManagementURLs: t.moreMgmtURLs}
	if err := t.tls(&tg); err != nil {
		return tg, err
	}
	for _, u := range append([]string{tg.BaseURL}, tg.ManagementURLs()...) {
		if err := CheckURL(u); u != "" && err != nil {
			return tg, cliutil.Usage(err)
		}
	}
	return tg, nil
}

// urlFlag is a URL flag checked when it is given: an empty value (an
// unset shell variable) is an error, never the local stack.
type urlFlag struct{ p *string }

func (f urlFlag) String() string {
	if f.p == nil {
		return ""
	}
	return *f.p
}

func (f urlFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty (an unset variable?): give a URL, or leave the flag out for the local stack")
	}
	if err := CheckURL(v); err != nil {
		return err
	}
	*f.p = v
	return nil
}

// mgmtURLsFlag is --management-url, given once per pod: the first URL,
// then the others; each checked as urlFlag checks one, and none twice.
type mgmtURLsFlag struct {
	first *string
	more  *[]string
}

func (f *mgmtURLsFlag) String() string {
	if f.first == nil {
		return ""
	}
	return strings.Join(append([]string{*f.first}, *f.more...), ",")
}

func (f *mgmtURLsFlag) Set(v string) error {
	if err := (urlFlag{new(string)}).Set(v); err != nil {
		return err
	}
	if v == *f.first || slices.Contains(*f.more, v) {
		return fmt.Errorf("%q given twice: one URL per pod", v)
	}
	if *f.first == "" {
		*f.first = v
	} else {
		*f.more = append(*f.more, v)
	}
	return nil
}

// Repeatable says the flag is given once per pod.
func (f *mgmtURLsFlag) Repeatable() {}

// CheckURL accepts absolute http and https URLs of a host and an optional
// path: kcbench appends its paths to them, so a query, a fragment or user
// info (credentials go in files) is refused rather than glued into every
// request.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return fmt.Errorf("%q: want an http:// or https:// URL (%v)", raw, ue.Err)
	}
	if err != nil {
		return err
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: scheme %q: want an http:// or https:// URL", raw, u.Scheme)
	case u.Host == "" || u.Opaque != "":
		return fmt.Errorf("%q: no host: want an http:// or https:// URL", raw)
	case u.User != nil:
		return fmt.Errorf("%q: user info in the URL: give credentials in files (--admin-password-file)", raw)
	case u.RawQuery != "" || u.ForceQuery:
		return fmt.Errorf("%q: a query (?…) cannot be part of a base URL", raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%q: a fragment (#…) cannot be part of a base URL", raw)
	}
	return nil
}
