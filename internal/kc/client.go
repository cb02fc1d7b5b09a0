package kc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Sentinel errors reachable through errors.Is on an *APIError.
var (
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrUnauthorized = errors.New("unauthorized")
	ErrForbidden    = errors.New("forbidden")
)

// APIError is a non-2xx answer from Keycloak.
type APIError struct {
	Op     string // what was attempted, e.g. "GET /admin/serverinfo"
	Status int
	Body   string // at most 512 bytes of the response body
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Is maps statuses to the sentinel errors.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrForbidden:
		return e.Status == http.StatusForbidden
	}
	return false
}

// Client talks to one Keycloak. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
}

// DefaultTimeout bounds a request of a Client made without an
// http.Client.
const DefaultTimeout = 60 * time.Second

// New returns a client for the Keycloak at baseURL. A nil hc means a client
// with DefaultTimeout that trusts the system's roots (see
// Target.HTTPClient for the target's CA).
func New(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: DefaultTimeout}
	}
	return &Client{base: trimURL(baseURL), hc: hc}
}

// NewFor returns a client for target t with DefaultTimeout, trusting t's
// CA.
func NewFor(t Target) *Client { return New(t.BaseURL, t.HTTPClient(DefaultTimeout)) }

// BaseURL returns the server's base URL.
func (c *Client) BaseURL() string { return c.base }

// TokenResponse is the token endpoint's answer.
type TokenResponse struct {
	AccessToken      string `json:"access_token"`
	ExpiresIn        int    `json:"expires_in"`
	RefreshToken     string `json:"refresh_token,omitempty"`
	RefreshExpiresIn int    `json:"refresh_expires_in"`
	IDToken          string `json:"id_token,omitempty"`
	TokenType        string `json:"token_type"`
	Scope            string `json:"scope,omitempty"`
	// IssuedTokenType is a token exchange's answer (RFC 8693).
	IssuedTokenType string `json:"issued_token_type,omitempty"`
}

// Token posts form to realm's token endpoint.
func (c *Client) Token(ctx context.Context, realm string, form url.Values) (*TokenResponse, error) {
	path := "/realms/" + url.PathEscape(realm) + "/protocol/openid-connect/token"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	var tr TokenResponse
	if err := c.do(req, "POST "+path, &tr); err != nil {
		return nil, err
	}
	return &tr, nil
}

// do sends req and decodes a JSON body into out (if non-nil).
func (c *Client) do(req *http.Request, op string, out any) error {
	return c.exchange(req, op, func(resp *http.Response) error {
		if out == nil {
			return nil
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("%s: decode: %w", op, err)
		}
		return nil
	})
}

// exchange sends req, turns a non-2xx answer into an *APIError and hands a
// 2xx one to read. The body is always drained and closed.
func (c *Client) exchange(req *http.Request, op string, read func(*http.Response) error) error {
	resp, err := c.hc.Do(req)
	if err != nil && retryable(req, err) {
		resp, err = c.hc.Do(req.Clone(req.Context()))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer func() {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return &APIError{Op: op, Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	return read(resp)
}

// retryable reports whether req is asked once more after err: a read
// (GET or HEAD) whose connection broke before an answer came, as when the
// server closes a connection the pool still held or resets it. net/http
// retries only on a connection it had used before; a TLS server closing
// a connection after a client cancelled streams on it is not covered.
func retryable(req *http.Request, err error) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead || req.Context().Err() != nil {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// Admin is an authenticated admin REST client. It fetches an admin token on
// first use and fetches a new one shortly before it expires (master realm
// admin tokens live 60 s by default).
type Admin struct {
	c     *Client
	creds Credentials

	mu      sync.Mutex
	token   string
	expires time.Time
	now     func() time.Time
}

// NewAdmin returns an admin client for c with creds.
func NewAdmin(c *Client, creds Credentials) *Admin {
	return &Admin{c: c, creds: creds, now: time.Now}
}

// refreshMargin is how long before expiry a token is replaced.
const refreshMargin = 15 * time.Second

// Token returns a valid admin access token.
func (a *Admin) Token(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != "" && a.now().Add(refreshMargin).Before(a.expires) {
		return a.token, nil
	}
	form := url.Values{}
	if a.creds.ClientID != "" {
		form.Set("grant_type", "client_credentials")
		form.Set("client_id", a.creds.ClientID)
		form.Set("client_secret", a.creds.ClientSecret.Reveal())
	} else {
		form.Set("grant_type", "password")
		form.Set("client_id", "admin-cli")
		form.Set("username", a.creds.Username)
		form.Set("password", a.creds.Password.Reveal())
	}
	start := a.now()
	tr, err := a.c.Token(ctx, "master", form)
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) && (apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusBadRequest) {
			return "", fmt.Errorf("admin login to %s failed (wrong admin user, password or client secret?): %w", a.c.base, err)
		}
		return "", fmt.Errorf("admin login to %s: %w", a.c.base, err)
	}
	a.token = tr.AccessToken
	a.expires = start.Add(time.Duration(tr.ExpiresIn) * time.Second)
	return a.token, nil
}

// Do sends an authenticated admin request and decodes a JSON answer into
// out. body may be nil; out may be nil.
func (a *Admin) Do(ctx context.Context, method, path string, body, out any) error {
	return a.send(ctx, method, path, body, func(resp *http.Response) error {
		if out == nil {
			return nil
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
		return nil
	})
}

// rawBody is a request body sent as it is, not encoded as JSON.
type rawBody string

// newJSONRequest builds a request with a JSON body (a rawBody as it is).
func newJSONRequest(ctx context.Context, method, url string, body any) (*http.Request, error) {
	var rd io.Reader
	if raw, ok := body.(rawBody); ok {
		rd = strings.NewReader(string(raw))
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode: %w", method, url, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// ServerInfo is the part of GET /admin/serverinfo kcbench uses.
type ServerInfo struct {
	SystemInfo struct {
		Version     string `json:"version"`
		JavaVersion string `json:"javaVersion"`
		JavaVendor  string `json:"javaVendor"`
		OSName      string `json:"osName"`
	} `json:"systemInfo"`
	MemoryInfo struct {
		Total int64 `json:"total"`
		Used  int64 `json:"used"`
	} `json:"memoryInfo"`
}

// ServerInfo reads the server's versions.
func (a *Admin) ServerInfo(ctx context.Context) (*ServerInfo, error) {
	var si ServerInfo
	if err := a.Do(ctx, http.MethodGet, "/admin/serverinfo", nil, &si); err != nil {
		return nil, err
	}
	return &si, nil
}

// Realm is the brief form of a realm.
type Realm struct {
	ID      string `json:"id"`
	Realm   string `json:"realm"`
	Enabled bool   `json:"enabled"`
}

// Realms lists all realms (brief representation).
func (a *Admin) Realms(ctx context.Context) ([]Realm, error) {
	var rs []Realm
	if err := a.Do(ctx, http.MethodGet, "/admin/realms?briefRepresentation=true", nil, &rs); err != nil {
		return nil, err
	}
	return rs, nil
}
