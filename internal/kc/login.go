package kc

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"
)

// The browser flow: authorization code with PKCE through Keycloak's real
// login form, as a browser does it. A Browser holds one user agent's
// cookies; it opens the authorization endpoint (OpenLogin), posts the
// credentials to the form's action (SubmitLogin) and reads the code from
// the redirect without following it, since nothing listens at the
// redirect URI. The code is then redeemed with Client.ExchangeCode.

// Browser is one user agent: a cookie jar over its Client's transport,
// which it shares with every other Browser. It is safe for concurrent use,
// though a user agent normally does one thing at a time.
type Browser struct {
	c   *Client
	hc  *http.Client
	jar *cookieJar
}

// NewBrowser returns a user agent with an empty cookie jar that does not
// follow redirects.
func (c *Client) NewBrowser() *Browser {
	j := &cookieJar{}
	hc := *c.hc
	hc.Jar = j
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Browser{c: c, hc: &hc, jar: j}
}

// ClearCookies forgets every cookie, ending the browser's SSO sessions on
// its side.
func (b *Browser) ClearCookies() { b.jar.clear() }

// AuthRequest is one authorization request: the client, where Keycloak
// redirects with the code, the scope, and the random state, nonce and PKCE
// code verifier that bind the answer to this request.
type AuthRequest struct {
	ClientID     string
	RedirectURI  string
	Scope        string
	State        string
	Nonce        string
	CodeVerifier string // the PKCE S256 challenge is derived from it
}

// NewAuthRequest returns an authorization request with fresh random state,
// nonce and code verifier.
func NewAuthRequest(clientID, redirectURI, scope string) AuthRequest {
	var b [32 + 12 + 12]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	enc := base64.RawURLEncoding
	return AuthRequest{
		ClientID: clientID, RedirectURI: redirectURI, Scope: scope,
		CodeVerifier: enc.EncodeToString(b[:32]), // 43 characters
		State:        enc.EncodeToString(b[32:44]),
		Nonce:        enc.EncodeToString(b[44:]),
	}
}

// CodeChallenge is the PKCE S256 challenge of the code verifier.
func (a AuthRequest) CodeChallenge() string {
	h := sha256.Sum256([]byte(a.CodeVerifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// URL is the authorization endpoint URL of realm for this request.
func (a AuthRequest) URL(baseURL, realm string) string { return a.endpointURL(baseURL, realm, "auth") }

// RegistrationURL is the registration page's URL of realm for this
// request: the authorization request, opened on the registration form.
func (a AuthRequest) RegistrationURL(baseURL, realm string) string {
	return a.endpointURL(baseURL, realm, "registrations")
}

func (a AuthRequest) endpointURL(baseURL, realm, endpoint string) string {
	q := url.Values{
		"client_id":     {a.ClientID},
		"response_type": {"code"},
		"redirect_uri":  {a.RedirectURI},
		"state":         {a.State},
		"nonce":         {a.Nonce},
	}
	if a.Scope != "" {
		q.Set("scope", a.Scope)
	}
	if a.CodeVerifier != "" {
		q.Set("code_challenge", a.CodeChallenge())
		q.Set("code_challenge_method", "S256")
	}
	return trimURL(baseURL) + "/realms/" + esc(realm) + "/protocol/openid-connect/" + endpoint + "?" + q.Encode()
}

// LoginPage is Keycloak's login page, or the code when the browser already
// had an SSO session and Keycloak redirected at once.
type LoginPage struct {
	// Action is the absolute URL the form posts to.
	Action string
	// Hidden are the form's hidden inputs, posted back as they are.
	Hidden []FormField
	// Username and Password say which credentials the form asks for: both
	// on the usual page; with organizations enabled, Keycloak asks for the
	// username first (identity-first login), then for the password. OTP
	// says the form asks for a one-time code (OTPFormID), Register that it
	// is the registration form (RegisterFormID).
	Username, Password, OTP, Register bool
	// Message is the page's feedback, such as "Invalid username or
	// password.", or "".
	Message string
	// Code is set, and the rest empty, when Keycloak redirected with a code
	// instead of showing the form.
	Code string
}

// FormField is one input of a form.
type FormField struct{ Name, Value string }

// LoginError is a login form that came back instead of a redirect: the
// credentials were refused. Keycloak answers it with HTTP 200, so it has
// no HTTP status; Page is the new form, which can be submitted again.
type LoginError struct {
	Message string
	Page    *LoginPage
}

func (e *LoginError) Error() string {
	if e.Message == "" {
		return "login form: credentials refused"
	}
	return "login form: " + e.Message
}

// OpenLogin opens the authorization endpoint of realm for ar and returns
// the login form (or the code, with an SSO session).
func (b *Browser) OpenLogin(ctx context.Context, realm string, ar AuthRequest) (*LoginPage, error) {
	k := &oidcReq{method: http.MethodGet, realm: realm, endpoint: "auth", what: "login page", redirect: true}
	resp, err := b.c.send(ctx, b.hc, k, ar.URL(b.c.base, realm))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusFound || resp.StatusCode == http.StatusSeeOther {
		loc := resp.Header.Get("Location")
		closeBody(resp)
		code, err := codeFromRedirect(loc, ar)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.op(), err)
		}
		return &LoginPage{Code: code}, nil
	}
	page, err := readLoginPage(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.op(), err)
	}
	return page, nil
}

// OpenRegistration opens the registration form of realm for ar. A realm
// with registration off answers HTTP 400 ("Registration not allowed").
func (b *Browser) OpenRegistration(ctx context.Context, realm string, ar AuthRequest) (*LoginPage, error) {
	k := &oidcReq{method: http.MethodGet, realm: realm, endpoint: "registrations", what: "registration page", redirect: true}
	resp, err := b.c.send(ctx, b.hc, k, ar.RegistrationURL(b.c.base, realm))
	if err != nil {
		return nil, err
	}
	page, err := readLoginPage(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.op(), err)
	}
	if !page.Register {
		return nil, fmt.Errorf("%s: no registration form (id %q) on the page", k.op(), RegisterFormID)
	}
	return page, nil
}

// Registration is what a new user fills in on the registration form.
type Registration struct{ Username, Email, FirstName, LastName, Password string }

// SubmitRegistration posts r to the registration form and returns the
// authorization code of the redirect that follows (the new user is logged
// in). A form that comes back (a username taken, a password refused by
// the policy) gives a *LoginError with its message.
func (b *Browser) SubmitRegistration(ctx context.Context, page *LoginPage, ar AuthRequest, r Registration) (string, error) {
	f := form{b: make([]byte, 0, 256)}
	f.add("username", r.Username)
	f.add("email", r.Email)
	f.add("firstName", r.FirstName)
	f.add("lastName", r.LastName)
	f.add("password", r.Password)
	f.add("password-confirm", r.Password)
	code, next, err := b.post(ctx, page, ar, f)
	if err != nil || code != "" {
		return code, err
	}
	return "", &LoginError{Message: next.Message, Page: next}
}

// SubmitLogin posts username and password to the login form and returns
// the authorization code from the redirect. When the form asks for the
// username only (identity-first login), the password form that follows is
// submitted too. Refused credentials give a *LoginError; credentials taken
// and a one-time code asked for next give a *NeedOTP.
func (b *Browser) SubmitLogin(ctx context.Context, page *LoginPage, ar AuthRequest, username, password string) (string, error) {
	if page.Code != "" {
		return page.Code, nil
	}
	for {
		code, next, err := b.post(ctx, page, ar, credentials(page, username, password))
		if err != nil || code != "" {
			return code, err
		}
		if err := nextLoginStep(page, next); err != nil {
			return "", err
		}
		page = next // identity-first: the username was taken, now the password
	}
}

// credentials is the form of username and password that page asks for.
func credentials(page *LoginPage, username, password string) form {
	f := form{b: make([]byte, 0, 128)}
	if page.Username || !page.Password {
		f.add("username", username)
	}
	if page.Password || !page.Username {
		f.add("password", password)
	}
	return f
}

// nextLoginStep says what the page next that Keycloak showed after page's
// credentials means: nil when it asks for the password after the
// username (identity-first login), a *NeedOTP when it asks for a
// one-time code, else a *LoginError (the credentials were refused).
func nextLoginStep(page, next *LoginPage) error {
	switch {
	case next.OTP && next.Message == "":
		return &NeedOTP{Page: next}
	case next.Message != "" || page.Password || !next.Password:
		return &LoginError{Message: next.Message, Page: next}
	}
	return nil
}

// NeedOTP is SubmitLogin's answer when Keycloak took the credentials and
// asks for a one-time code (the user has OTP configured): SubmitOTP posts
// it to Page.
type NeedOTP struct{ Page *LoginPage }

func (e *NeedOTP) Error() string {
	return "login form: the credentials were taken and a one-time code is asked for"
}

// SubmitOTP posts a one-time code to an OTP form and returns the
// authorization code from the redirect; a refused code gives a
// *LoginError.
func (b *Browser) SubmitOTP(ctx context.Context, page *LoginPage, ar AuthRequest, otp string) (string, error) {
	f := form{b: make([]byte, 0, 128)}
	f.add("otp", otp)
	code, next, err := b.post(ctx, page, ar, f)
	if err != nil || code != "" {
		return code, err
	}
	return "", &LoginError{Message: next.Message, Page: next}
}

// post submits f and page's hidden fields to page's action: the code when
// Keycloak redirects, or the page it shows instead.
func (b *Browser) post(ctx context.Context, page *LoginPage, ar AuthRequest, f form) (string, *LoginPage, error) {
	loc, next, err := b.postForm(ctx, page, f, "login form")
	if err != nil || next != nil {
		return "", next, err
	}
	code, err := codeFromRedirect(loc, ar)
	if err != nil {
		return "", nil, fmt.Errorf("login form: %w", err)
	}
	return code, nil, nil
}

// postForm submits f and page's hidden fields to page's action: where
// Keycloak redirects (absolute), or the page it shows instead.
func (b *Browser) postForm(ctx context.Context, page *LoginPage, f form, what string) (string, *LoginPage, error) {
	loc, resp, err := b.submit(ctx, page, f, what)
	if err != nil || resp == nil {
		return loc, nil, err
	}
	next, err := readLoginPage(resp)
	if err != nil {
		return "", nil, fmt.Errorf("%s answered %d without a redirect: %w", what, resp.StatusCode, err)
	}
	return "", next, nil
}

// submit posts f and page's hidden fields to page's action: where
// Keycloak redirects (absolute), or its answer, unread, when it does not
// redirect.
func (b *Browser) submit(ctx context.Context, page *LoginPage, f form, what string) (string, *http.Response, error) {
	for _, h := range page.Hidden {
		f.add(h.Name, h.Value)
	}
	k := &oidcReq{method: http.MethodPost, what: what, body: f.b, redirect: true}
	resp, err := b.c.send(ctx, b.hc, k, page.Action)
	if err != nil {
		return "", nil, err
	}
	if resp.StatusCode == http.StatusFound || resp.StatusCode == http.StatusSeeOther {
		loc := resp.Header.Get("Location")
		closeBody(resp)
		if loc == "" {
			return "", nil, fmt.Errorf("%s: redirect without a Location", what)
		}
		loc, err = resolve(resp.Request.URL, loc)
		return loc, nil, err
	}
	return "", resp, nil
}

// Login runs the whole browser flow for ar: the login page, the form and
// the code exchange.
func (b *Browser) Login(ctx context.Context, realm string, cl OAuthClient, ar AuthRequest, username, password string) (*TokenResponse, error) {
	page, err := b.OpenLogin(ctx, realm, ar)
	if err != nil {
		return nil, err
	}
	code, err := b.SubmitLogin(ctx, page, ar, username, password)
	if err != nil {
		return nil, err
	}
	return b.c.ExchangeCode(ctx, realm, cl, code, ar.RedirectURI, ar.CodeVerifier)
}

// codeFromRedirect reads the code from the redirect to ar.RedirectURI,
// checking the state. An OAuth error in the redirect becomes an *APIError
// with the redirect's status, 302.
func codeFromRedirect(location string, ar AuthRequest) (string, error) {
	if location == "" {
		return "", fmt.Errorf("redirect without a Location")
	}
	u, err := url.Parse(location)
	if err != nil {
		return "", fmt.Errorf("redirect to %q: %w", location, err)
	}
	q := u.Query()
	if e := q.Get("error"); e != "" {
		return "", &APIError{Op: "authorization redirect", Status: http.StatusFound, Body: e + ": " + q.Get("error_description")}
	}
	if got := q.Get("state"); got != ar.State {
		return "", fmt.Errorf("redirect state %q does not match the request's", got)
	}
	code := q.Get("code")
	if code == "" {
		return "", fmt.Errorf("redirect to %s without a code", u.Redacted())
	}
	return code, nil
}

// readLoginPage parses a login page response and closes it.
func readLoginPage(resp *http.Response) (*LoginPage, error) {
	buf := getBuf()
	defer putBuf(buf)
	if err := readBody(resp, buf); err != nil {
		return nil, err
	}
	return parsePage(buf.Bytes(), resp.Request.URL)
}

// readBody reads resp's body (at most maxBody) into buf and closes it.
func readBody(resp *http.Response, buf *bytes.Buffer) error {
	_, err := buf.ReadFrom(io.LimitReader(resp.Body, maxBody))
	closeBody(resp)
	return err
}

// parsePage parses a login page read from base.
func parsePage(body []byte, base *url.URL) (*LoginPage, error) {
	page, err := ParseLoginPage(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if page.Action, err = resolve(base, page.Action); err != nil {
		return nil, err
	}
	return page, nil
}

func resolve(base *url.URL, ref string) (string, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("form action %q: %w", ref, err)
	}
	if u.IsAbs() || base == nil {
		return ref, nil
	}
	return base.ResolveReference(u).String(), nil
}

// LoginFormID is the id of Keycloak's username and password form, and
// OTPFormID the one-time code's.
const (
	LoginFormID    = "kc-form-login"
	OTPFormID      = "kc-otp-login-form"
	RegisterFormID = "kc-register-form"
)

// ParseLoginPage reads Keycloak's login page: the action, hidden inputs
// and credential fields of the form with id LoginFormID, and the feedback message (the text of
// the span of class kc-feedback-text, in the v2 and v1 themes), if any. The tokenizer
// unescapes attribute values, so &amp; in the action reads as &.
func ParseLoginPage(r io.Reader) (*LoginPage, error) {
	z := html.NewTokenizer(r)
	var (
		page     LoginPage
		found    bool
		inForm   bool
		feedback int // depth inside a feedback element, 0 when outside
		msg      strings.Builder
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if z.Err() != io.EOF {
				return nil, z.Err()
			}
			if !found {
				return nil, fmt.Errorf("no form with id %q, %q or %q on the page", LoginFormID, OTPFormID, RegisterFormID)
			}
			page.Message = strings.Join(strings.Fields(msg.String()), " ")
			return &page, nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name) // no allocation: compared, not kept
			var a tagAttrs
			if tag == "form" || tag == "input" || tag == "span" { // the only tags read: attributes cost allocations
				a = readAttrs(z, hasAttr)
			}
			switch {
			case feedback > 0:
				if tt == html.StartTagToken && !voidElement(tag) {
					feedback++
				}
			case tag == "form" && (string(a.id) == LoginFormID || string(a.id) == OTPFormID || string(a.id) == RegisterFormID):
				found, inForm = true, true
				page.Register = string(a.id) == RegisterFormID
				page.Action = string(a.action)
				if page.Action == "" {
					return nil, fmt.Errorf("form %q has no action", LoginFormID)
				}
			case inForm && tag == "input" && bytes.EqualFold(a.typ, []byte("hidden")) && len(a.name) > 0:
				page.Hidden = append(page.Hidden, FormField{Name: string(a.name), Value: string(a.value)})
			case inForm && tag == "input" && string(a.name) == "username":
				page.Username = true
			case inForm && tag == "input" && string(a.name) == "password":
				page.Password = true
			case inForm && tag == "input" && string(a.name) == "otp":
				page.OTP = true
			case tt == html.StartTagToken && hasClass(a.class, "kc-feedback-text"):
				feedback = 1
				if msg.Len() > 0 {
					msg.WriteByte(' ')
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch {
			case feedback > 0:
				feedback--
			case string(name) == "form" && inForm:
				inForm = false
			}
		case html.TextToken:
			if feedback > 0 {
				msg.Write(z.Text())
			}
		}
	}
}

// tagAttrs are the attributes of interest of one tag. They point into the
// tokenizer's buffer and are valid until its next call to Next.
type tagAttrs struct{ id, action, typ, name, value, class []byte }

func readAttrs(z *html.Tokenizer, more bool) tagAttrs {
	var a tagAttrs
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "id":
			a.id = v
		case "action":
			a.action = v
		case "type":
			a.typ = v
		case "name":
			a.name = v
		case "value":
			a.value = v
		case "class":
			a.class = v
		}
	}
	return a
}

// hasClass reports whether the space-separated class list holds c.
func hasClass(classes []byte, c string) bool {
	for len(classes) > 0 {
		i := bytes.IndexAny(classes, " \t\n\r\f")
		word := classes
		if i >= 0 {
			word, classes = classes[:i], classes[i+1:]
		} else {
			classes = nil
		}
		if string(word) == c {
			return true
		}
	}
	return false
}

func voidElement(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr":
		return true
	}
	return false
}

// cookieJar is a Browser's cookies. A Browser talks to one Keycloak, so
// the jar ignores domains; it honours paths and deletions, and it sends
// Secure cookies over plain HTTP, as browsers do for loopback addresses
// (Keycloak marks its cookies Secure even without TLS).
type cookieJar struct {
	mu      sync.Mutex
	cookies []*http.Cookie
}

var _ http.CookieJar = (*cookieJar)(nil)

// SetCookies implements http.CookieJar.
func (j *cookieJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	now := time.Now()
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range cookies {
		p := c.Path
		if p == "" || p[0] != '/' {
			p = defaultPath(u.Path)
		}
		j.cookies = removeCookie(j.cookies, c.Name, p)
		if c.MaxAge < 0 || (!c.Expires.IsZero() && c.Expires.Before(now)) {
			continue // a deletion
		}
		j.cookies = append(j.cookies, &http.Cookie{Name: c.Name, Value: c.Value, Quoted: c.Quoted, Path: p})
	}
}

// Cookies implements http.CookieJar.
func (j *cookieJar) Cookies(u *url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []*http.Cookie
	for _, c := range j.cookies {
		if pathMatch(u.Path, c.Path) {
			out = append(out, c)
		}
	}
	return out
}

func (j *cookieJar) clear() {
	j.mu.Lock()
	j.cookies = j.cookies[:0]
	j.mu.Unlock()
}

func removeCookie(cs []*http.Cookie, name, path string) []*http.Cookie {
	for i, c := range cs {
		if c.Name == name && c.Path == path {
			return append(cs[:i], cs[i+1:]...)
		}
	}
	return cs
}

// defaultPath is RFC 6265's default cookie path of a request path.
func defaultPath(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// pathMatch is RFC 6265's path-match.
func pathMatch(reqPath, cookiePath string) bool {
	if reqPath == "" {
		reqPath = "/"
	}
	if !strings.HasPrefix(reqPath, cookiePath) {
		return false
	}
	return len(reqPath) == len(cookiePath) || strings.HasSuffix(cookiePath, "/") || reqPath[len(cookiePath)] == '/'
}
