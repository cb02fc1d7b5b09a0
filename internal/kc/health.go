package kc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// Ready asks the management interface's /health/ready once. It returns
// (true, nil) on 200, (false, nil) on any other HTTP answer (Keycloak answers
// 503 while it initializes) and (false, err) when nothing answers.
func Ready(ctx context.Context, hc *http.Client, managementURL string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, trimURL(managementURL)+"/health/ready", nil)
	if err != nil {
		return false, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, nil
}

// Info is what Check learns about a Target.
type Info struct {
	Version     string `json:"version"`
	JavaVersion string `json:"java_version"`
	Realms      int    `json:"realms"`
	// ManagementReady is nil when the management URL is unknown or
	// unreachable.
	ManagementReady *bool  `json:"management_ready,omitempty"`
	ManagementError string `json:"management_error,omitempty"`
}

// maxDiscovery bounds the discovery document Check reads (Keycloak's is
// a few KiB).
const maxDiscovery = 1 << 20

// Check verifies that a Target answers and that its admin credentials work,
// and reads its version. The errors say which of the two failed.
func Check(ctx context.Context, t Target, hc *http.Client) (*Info, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if hc == nil {
		hc = t.HTTPClient(30 * time.Second)
	}
	c := New(t.BaseURL, hc)
	// Reachability first, so that "unreachable" and "wrong password" read
	// differently.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/realms/master/.well-known/openid-configuration", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		if uerr := Untrusted(t.BaseURL, err); uerr != err {
			return nil, uerr
		}
		return nil, fmt.Errorf("target %s is unreachable: %w", t.BaseURL, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscovery+1))
	resp.Body.Close()
	const what = "GET /realms/master/.well-known/openid-configuration"
	var disc struct {
		Issuer string `json:"issuer"`
	}
	switch {
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("target %s does not look like Keycloak: %s answered HTTP %d", t.BaseURL, what, resp.StatusCode)
	case err != nil:
		return nil, fmt.Errorf("target %s: %s: reading the discovery document: %w", t.BaseURL, what, err)
	case len(body) > maxDiscovery:
		return nil, fmt.Errorf("target %s does not look like Keycloak: %s: the discovery document is larger than %d KiB", t.BaseURL, what, maxDiscovery>>10)
	case json.Unmarshal(body, &disc) != nil || disc.Issuer == "":
		return nil, fmt.Errorf("target %s does not look like Keycloak: %s: the discovery document is not JSON with an issuer", t.BaseURL, what)
	}
	adm := NewAdmin(c, t.Admin)
	si, err := adm.ServerInfo(ctx)
	if err != nil {
		return nil, err
	}
	realms, err := adm.Realms(ctx)
	if err != nil {
		return nil, err
	}
	info := &Info{Version: si.SystemInfo.Version, JavaVersion: si.SystemInfo.JavaVersion, Realms: len(realms)}
	if t.ManagementURL != "" {
		ready, err := Ready(ctx, hc, t.ManagementURL)
		if err != nil {
			info.ManagementError = err.Error()
		} else {
			info.ManagementReady = &ready
		}
	}
	return info, nil
}

// Bounds of kcbench status --wait.
const (
	DefaultStatusTimeout = 10 * time.Second
	MaxStatusTimeout     = 10 * time.Minute
)

// Status checks t within timeout (kcbench status --target) and prints
// what it learnt to w, as text or JSON.
func Status(ctx context.Context, w io.Writer, t Target, timeout time.Duration, asJSON bool) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	info, err := Check(cctx, t, nil)
	if cctx.Err() != nil && ctx.Err() == nil {
		return fmt.Errorf("%s did not answer within %v (--wait)", t.BaseURL, timeout)
	}
	if err != nil {
		return err
	}
	if asJSON {
		return cliutil.WriteJSON(w, map[string]any{"target": t.BaseURL, "management_url": t.ManagementURL, "info": info})
	}
	return info.WriteText(w, t.BaseURL, t.ManagementURL)
}
