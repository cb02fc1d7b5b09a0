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
)

// OIDC: typed calls on a realm's OpenID Connect endpoints
// (/realms/{realm}/protocol/openid-connect/…). They are made for load: no
// call allocates more than the request, the response and what it returns,
// response bodies are read into pooled buffers and always drained and
// closed so that connections are reused, and a non-2xx answer is an
// *APIError (whose HTTPStatus method lets a load engine classify it).

// OAuthClient is the client a request is made for: public when Secret is
// empty, else confidential and authenticated with client_secret_post.
type OAuthClient struct {
	ID     string
	Secret string
}

// Scopes Keycloak treats specially.
const (
	// ScopeOpenID makes a token an OpenID Connect one: an id_token is
	// issued and userinfo accepts the access token.
	ScopeOpenID = "openid"
	// ScopeOfflineAccess asks for an offline token (a refresh token that
	// outlives the SSO session).
	ScopeOfflineAccess = "offline_access"
)

// maxBody bounds how much of a successful answer is read.
const maxBody = 4 << 20

// Introspection is the token introspection endpoint's answer.
type Introspection struct {
	Active    bool   `json:"active"`
	Subject   string `json:"sub,omitempty"`
	Username  string `json:"username,omitempty"`
	ClientID  string `json:"client_id,omitempty"`
	TokenType string `json:"token_type,omitempty"`
	Scope     string `json:"scope,omitempty"`
	Expires   int64  `json:"exp,omitempty"`
}

// UserInfo is the userinfo endpoint's answer.
type UserInfo struct {
	Subject           string `json:"sub"`
	PreferredUsername string `json:"preferred_username,omitempty"`
	Email             string `json:"email,omitempty"`
	Name              string `json:"name,omitempty"`
}

// JWKS is a realm's JSON Web Key Set (the key material is not kept).
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// JWK is one key of a JWKS.
type JWK struct {
	KeyID     string `json:"kid"`
	KeyType   string `json:"kty"`
	Algorithm string `json:"alg"`
	Use       string `json:"use"`
	Modulus   string `json:"n,omitempty"` // RSA: base64url, big-endian
}

// Discovery is the part of a realm's OpenID provider configuration
// (/.well-known/openid-configuration) kcbench uses.
type Discovery struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
	UserinfoEndpoint      string `json:"userinfo_endpoint"`
	EndSessionEndpoint    string `json:"end_session_endpoint"`
	JWKSURI               string `json:"jwks_uri"`
	RevocationEndpoint    string `json:"revocation_endpoint"`
}

// PasswordGrant logs username in with the resource owner password
// credentials grant (the client needs direct access grants). scope may be
// empty; with ScopeOpenID an id_token is issued too. Keycloak 26 answers a
// wrong password with 400 invalid_grant.
func (c *Client) PasswordGrant(ctx context.Context, realm string, cl OAuthClient, username, password, scope string) (*TokenResponse, error) {
	f := newForm("password", cl)
	f.add("username", username)
	f.add("password", password)
	f.addIf("scope", scope)
	return c.token(ctx, realm, "password grant", f)
}

// ClientCredentials gets a token for the client's service account.
func (c *Client) ClientCredentials(ctx context.Context, realm string, cl OAuthClient, scope string) (*TokenResponse, error) {
	f := newForm("client_credentials", cl)
	f.addIf("scope", scope)
	return c.token(ctx, realm, "client credentials grant", f)
}

// Refresh exchanges a refresh token (online or offline) for new tokens.
func (c *Client) Refresh(ctx context.Context, realm string, cl OAuthClient, refreshToken string) (*TokenResponse, error) {
	f := newForm("refresh_token", cl)
	f.add("refresh_token", refreshToken)
	return c.token(ctx, realm, "refresh token grant", f)
}

// ExchangeCode redeems an authorization code, proving possession of the
// PKCE code verifier when verifier is not empty.
func (c *Client) ExchangeCode(ctx context.Context, realm string, cl OAuthClient, code, redirectURI, verifier string) (*TokenResponse, error) {
	f := newForm("authorization_code", cl)
	f.add("code", code)
	f.add("redirect_uri", redirectURI)
	f.addIf("code_verifier", verifier)
	return c.token(ctx, realm, "authorization code grant", f)
}

// Token exchange's identifiers (RFC 8693).
const (
	GrantTokenExchange   = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
)

// ExchangeToken exchanges subjectToken, an access token of realm, for an
// access token for audience (Keycloak's standard token exchange, 26.2 and
// later): the client must have it enabled (client attribute
// standard.token.exchange.enabled) and be in the subject token's audience,
// and audience must be one the user's roles or scopes make available.
func (c *Client) ExchangeToken(ctx context.Context, realm string, cl OAuthClient, subjectToken, audience string) (*TokenResponse, error) {
	f := newForm(GrantTokenExchange, cl)
	f.add("subject_token", subjectToken)
	f.add("subject_token_type", TokenTypeAccessToken)
	f.add("requested_token_type", TokenTypeAccessToken)
	f.addIf("audience", audience)
	return c.token(ctx, realm, "token exchange", f)
}

// GrantUMATicket is authorization services' grant (UMA 2.0): a requesting
// party token for the permissions a resource server's policies give.
const GrantUMATicket = "urn:ietf:params:oauth:grant-type:uma-ticket"

// UMAGrant asks, as the user of accessToken, for a requesting party token
// (RPT) from resource server audience (a client of realm with
// authorization services) holding permission ("resource#scope"). Keycloak
// answers 403 access_denied when the policies deny it, 400 for an unknown
// resource or resource server.
func (c *Client) UMAGrant(ctx context.Context, realm, accessToken, audience, permission string) (*TokenResponse, error) {
	f := form{b: make([]byte, 0, 160)}
	f.add("grant_type", GrantUMATicket)
	f.add("audience", audience)
	f.add("permission", permission)
	var tr TokenResponse
	if err := c.call(ctx, &oidcReq{method: http.MethodPost, realm: realm, endpoint: "token", what: "uma-ticket grant", body: f.b, bearer: accessToken}, &tr); err != nil {
		return nil, err
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("uma-ticket grant in realm %s: the answer holds no access token", realm)
	}
	return &tr, nil
}

// Introspect asks whether token is active. The introspecting client must
// be in the token's audience, or Keycloak 26 says it is not.
func (c *Client) Introspect(ctx context.Context, realm string, cl OAuthClient, token string) (*Introspection, error) {
	f := newForm("", cl)
	f.add("token", token)
	var in Introspection
	err := c.call(ctx, &oidcReq{method: http.MethodPost, realm: realm, endpoint: "token/introspect", what: "introspection", body: f.b}, &in)
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// UserInfo reads the claims of the access token's user. The token must
// have been issued with ScopeOpenID.
func (c *Client) UserInfo(ctx context.Context, realm, accessToken string) (*UserInfo, error) {
	var ui UserInfo
	if err := c.call(ctx, &oidcReq{method: http.MethodGet, realm: realm, endpoint: "userinfo", what: "userinfo", bearer: accessToken}, &ui); err != nil {
		return nil, err
	}
	return &ui, nil
}

// Logout ends the SSO session of refreshToken through the back channel.
// For a confidential client cl must carry its secret.
func (c *Client) Logout(ctx context.Context, realm string, cl OAuthClient, refreshToken string) error {
	f := newForm("", cl)
	f.add("refresh_token", refreshToken)
	return c.call(ctx, &oidcReq{method: http.MethodPost, realm: realm, endpoint: "logout", what: "logout", body: f.b}, nil)
}

// JWKS reads the realm's signing and encryption keys.
func (c *Client) JWKS(ctx context.Context, realm string) (*JWKS, error) {
	var k JWKS
	if err := c.call(ctx, &oidcReq{method: http.MethodGet, realm: realm, endpoint: "certs", what: "JWKS"}, &k); err != nil {
		return nil, err
	}
	return &k, nil
}

// JWKSRaw appends the realm's JWKS document to buf, undecoded: the cheap
// form of JWKS for load, where decoding would cost more than the request.
func (c *Client) JWKSRaw(ctx context.Context, realm string, buf []byte) ([]byte, error) {
	return c.callRaw(ctx, &oidcReq{method: http.MethodGet, realm: realm, endpoint: "certs", what: "JWKS"}, buf)
}

// Discovery reads the realm's OpenID provider configuration.
func (c *Client) Discovery(ctx context.Context, realm string) (*Discovery, error) {
	var d Discovery
	if err := c.call(ctx, &oidcReq{method: http.MethodGet, realm: realm, path: wellKnown, what: "discovery"}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// DiscoveryRaw appends the realm's OpenID provider configuration to buf,
// undecoded.
func (c *Client) DiscoveryRaw(ctx context.Context, realm string, buf []byte) ([]byte, error) {
	return c.callRaw(ctx, &oidcReq{method: http.MethodGet, realm: realm, path: wellKnown, what: "discovery"}, buf)
}

const wellKnown = "/.well-known/openid-configuration"

// token posts a token request.
func (c *Client) token(ctx context.Context, realm, what string, f form) (*TokenResponse, error) {
	var tr TokenResponse
	if err := c.call(ctx, &oidcReq{method: http.MethodPost, realm: realm, endpoint: "token", what: what, body: f.b}, &tr); err != nil {
		return nil, err
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("%s in realm %s: the answer holds no access token", what, realm)
	}
	return &tr, nil
}

// oidcReq is one request to a realm endpoint.
type oidcReq struct {
	method   string
	realm    string
	endpoint string // below /protocol/openid-connect/
	path     string // or this, below /realms/{realm}
	what     string // for errors, e.g. "password grant"
	body     []byte // form body of a POST
	bearer   string // access token to send, if any
	redirect bool   // a 3xx answer is a success (browser requests)
}

func (k *oidcReq) url(base string) string {
	if k.path != "" {
		return base + "/realms/" + esc(k.realm) + k.path
	}
	return base + "/realms/" + esc(k.realm) + "/protocol/openid-connect/" + k.endpoint
}

// request builds k's request to u.
func (k *oidcReq) request(ctx context.Context, u string) (*http.Request, error) {
	var body io.Reader
	if k.body != nil {
		body = bytes.NewReader(k.body)
	}
	req, err := http.NewRequestWithContext(ctx, k.method, u, body)
	if err != nil {
		return nil, err
	}
	if k.body != nil {
		req.Header["Content-Type"] = formContentType
	}
	if k.bearer != "" {
		req.Header["Authorization"] = []string{"Bearer " + k.bearer}
	}
	return req, nil
}

// exchanger is a transport that hands back an answer's status and body
// without an http.Response and its header map (h1.Transport): what
// callRaw needs, at a lower cost per request.
type exchanger interface {
	Exchange(req *http.Request, dst []byte, max int) (status int, body []byte, err error)
}

// op names the request in errors; built only when one occurs.
func (k *oidcReq) op() string {
	if k.realm == "" {
		return k.method + " " + k.what
	}
	return k.method + " " + k.url("") + " (" + k.what + ")"
}

// send sends k with hc to u and returns a 2xx response (or 3xx if
// k.redirect), whose body the caller must close with closeBody; any other
// answer is drained, closed and returned as an *APIError.
func (c *Client) send(ctx context.Context, hc *http.Client, k *oidcReq, u string) (*http.Response, error) {
	req, err := k.request(ctx, u)
	if err != nil {
		return nil, err
	}
	resp, err := do(hc, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.op(), err)
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode <= 299
	if k.redirect && resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		ok = true
	}
	if !ok {
		return nil, apiError(resp, k.op())
	}
	return resp, nil
}

var formContentType = []string{"application/x-www-form-urlencoded"}

// do sends req. A client without cookie jar, redirect policy or timeout
// adds nothing to its transport for these requests (Keycloak's API
// endpoints do not redirect), so the transport is called directly,
// without http.Client's per-request bookkeeping.
func do(hc *http.Client, req *http.Request) (*http.Response, error) {
	if plainClient(hc) {
		return hc.Transport.RoundTrip(req)
	}
	return hc.Do(req)
}

// plainClient reports whether hc adds nothing to its Transport (no jar,
// redirect policy or timeout), so that the transport may be called
// directly.
func plainClient(hc *http.Client) bool {
	return hc.Jar == nil && hc.CheckRedirect == nil && hc.Timeout == 0 && hc.Transport != nil
}

// apiError reads up to 512 bytes of a failed answer, then drains and
// closes it.
func apiError(resp *http.Response, op string) *APIError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	closeBody(resp)
	return &APIError{Op: op, Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
}

// closeBody drains and closes a response body so that its connection can
// be reused.
func closeBody(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
}

// call sends k and decodes a JSON answer into out (nil: discard it).
func (c *Client) call(ctx context.Context, k *oidcReq, out any) error {
	resp, err := c.send(ctx, c.hc, k, k.url(c.base))
	if err != nil {
		return err
	}
	if out == nil {
		closeBody(resp)
		return nil
	}
	buf := getBuf()
	defer putBuf(buf)
	_, err = buf.ReadFrom(io.LimitReader(resp.Body, maxBody+1))
	closeBody(resp)
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", k.op(), err)
	}
	if buf.Len() > maxBody {
		return fmt.Errorf("%s: answer body larger than %d MiB", k.op(), maxBody>>20)
	}
	if err := json.Unmarshal(buf.Bytes(), out); err != nil {
		return fmt.Errorf("%s: decode: %w", k.op(), err)
	}
	return nil
}

// callRaw sends k and appends the answer to dst.
func (c *Client) callRaw(ctx context.Context, k *oidcReq, dst []byte) ([]byte, error) {
	if ex, ok := c.hc.Transport.(exchanger); ok && plainClient(c.hc) && !k.redirect {
		req, err := k.request(ctx, k.url(c.base))
		if err != nil {
			return dst, err
		}
		n := len(dst)
		code, out, err := ex.Exchange(req, dst, maxBody)
		if err != nil && len(out)-n > maxBody {
			return out[:n], fmt.Errorf("%s: answer body larger than %d MiB", k.op(), maxBody>>20)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", k.op(), err)
		}
		if code < 200 || code > 299 {
			b := out[n:]
			return out[:n], &APIError{Op: k.op(), Status: code, Body: strings.TrimSpace(string(b[:min(len(b), 512)]))}
		}
		return out, nil
	}
	resp, err := c.send(ctx, c.hc, k, k.url(c.base))
	if err != nil {
		return dst, err
	}
	defer closeBody(resp)
	dst, err = appendAll(dst, resp.Body)
	if err != nil {
		return dst, fmt.Errorf("%s: reading the answer: %w", k.op(), err)
	}
	return dst, nil
}

// appendAll appends r to dst, up to maxBody bytes, growing dst as little
// as it can.
func appendAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if errors.Is(err, io.EOF) {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
		if len(dst) > maxBody {
			return dst, fmt.Errorf("answer body larger than %d MiB", maxBody>>20)
		}
	}
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuf() *bytes.Buffer { return bufPool.Get().(*bytes.Buffer) }

func putBuf(b *bytes.Buffer) {
	if b.Cap() > 256<<10 {
		return // let an outsized buffer go
	}
	b.Reset()
	bufPool.Put(b)
}

// form is an application/x-www-form-urlencoded body under construction.
type form struct{ b []byte }

// newForm starts a form with grant_type (unless empty) and the client's
// identity.
func newForm(grant string, cl OAuthClient) form {
	f := form{b: make([]byte, 0, 256)}
	f.addIf("grant_type", grant)
	f.add("client_id", cl.ID)
	f.addIf("client_secret", cl.Secret)
	return f
}

func (f *form) add(k, v string) {
	if len(f.b) > 0 {
		f.b = append(f.b, '&')
	}
	f.b = append(f.b, k...)
	f.b = append(f.b, '=')
	f.b = append(f.b, url.QueryEscape(v)...) // returns v itself when nothing needs escaping
}

func (f *form) addIf(k, v string) {
	if v != "" {
		f.add(k, v)
	}
}
