package kc

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// A brokered login, as a browser does it (Keycloak 26.0 to 26.7): the
// client's realm is asked for an authorization with kc_idp_hint, and
// redirects through its broker's login endpoint to the identity provider
// (here another realm), whose login form takes the credentials and
// redirects back to the realm's broker endpoint; Keycloak redeems the
// provider's code over the back channel and, for a user it has not linked
// yet, runs the first-broker-login flow (a user made from the provider's
// claims when none is missing), then redirects to the client with a code.

// maxBrokerHops bounds the redirects a step follows.
const maxBrokerHops = 8

// OpenBrokered opens realm's authorization endpoint for ar with
// kc_idp_hint=alias and follows the redirects to the identity provider's
// login form.
func (b *Browser) OpenBrokered(ctx context.Context, realm, alias string, ar AuthRequest) (*LoginPage, error) {
	u := ar.URL(b.c.base, realm) + "&kc_idp_hint=" + url.QueryEscape(alias)
	page, _, _, err := b.follow(ctx, u, ar, "brokered login page")
	if err == nil && page == nil {
		err = fmt.Errorf("brokered login page: realm %s redirected to the client without the identity provider's form (an SSO session?)", realm)
	}
	return page, err
}

// SubmitEmailForIdP types email into an identity-first login form (the
// username step Keycloak shows in a realm with organizations) and follows
// Keycloak's redirect, to the identity provider of the organization of
// the email's domain, to that provider's login form.
func (b *Browser) SubmitEmailForIdP(ctx context.Context, page *LoginPage, ar AuthRequest, email string) (*LoginPage, error) {
	const what = "identity-first login form"
	f := form{b: make([]byte, 0, 64)}
	f.add("username", email)
	loc, resp, err := b.submit(ctx, page, f, what)
	if err != nil {
		return nil, err
	}
	if resp != nil {
		next, err := readLoginPage(resp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return nil, fmt.Errorf("%s: Keycloak showed a form (message %q) instead of sending %s to an identity provider (is one linked to the organization of its domain, with redirect on email match?)", what, next.Message, email)
	}
	next, _, _, err := b.follow(ctx, loc, ar, "brokered login page")
	if err == nil && next == nil {
		err = fmt.Errorf("%s: redirected to the client without the identity provider's form (an SSO session?)", what)
	}
	return next, err
}

// SubmitIdPLogin posts username and password to the identity provider's
// login form and returns where it redirects (the realm's broker
// endpoint). Refused credentials give a *LoginError.
func (b *Browser) SubmitIdPLogin(ctx context.Context, page *LoginPage, username, password string) (string, error) {
	f := form{b: make([]byte, 0, 128)}
	f.add("username", username)
	f.add("password", password)
	loc, next, err := b.postForm(ctx, page, f, "identity provider's login form")
	if err != nil || next == nil {
		return loc, err
	}
	return "", &LoginError{Message: next.Message, Page: next}
}

// FinishBrokered follows the redirects from the realm's broker endpoint
// (SubmitIdPLogin's answer) to the client's redirect URI and returns the
// code; first says whether Keycloak ran its first-broker-login flow (the
// user was not linked yet). A page on the way (a form asking for profile
// data the provider did not give) is an error.
func (b *Browser) FinishBrokered(ctx context.Context, endpoint string, ar AuthRequest) (code string, first bool, err error) {
	page, code, visited, err := b.follow(ctx, endpoint, ar, "broker endpoint")
	for _, v := range visited {
		if strings.Contains(v, "/login-actions/first-broker-login") {
			first = true
		}
	}
	if err != nil {
		return "", first, err
	}
	if page != nil {
		return "", first, fmt.Errorf("broker endpoint: Keycloak showed a page (message %q) instead of redirecting to the client", page.Message)
	}
	return code, first, nil
}

// follow GETs u and follows redirects until a page (returned parsed) or a
// redirect to ar.RedirectURI (its code returned); visited are the URLs
// requested.
func (b *Browser) follow(ctx context.Context, u string, ar AuthRequest, what string) (page *LoginPage, code string, visited []string, err error) {
	for range maxBrokerHops {
		visited = append(visited, u)
		k := &oidcReq{method: http.MethodGet, what: what, redirect: true}
		resp, err := b.c.send(ctx, b.hc, k, u)
		if err != nil {
			return nil, "", visited, err
		}
		if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
			page, err := readLoginPage(resp)
			if err != nil {
				return nil, "", visited, fmt.Errorf("%s: %w", what, err)
			}
			return page, "", visited, nil
		}
		loc := resp.Header.Get("Location")
		closeBody(resp)
		if strings.HasPrefix(loc, ar.RedirectURI+"?") {
			code, err := codeFromRedirect(loc, ar)
			if err != nil {
				return nil, "", visited, fmt.Errorf("%s: %w", what, err)
			}
			return nil, code, visited, nil
		}
		if u, err = resolve(resp.Request.URL, loc); err != nil {
			return nil, "", visited, fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil, "", visited, fmt.Errorf("%s: more than %d redirects", what, maxBrokerHops)
}
