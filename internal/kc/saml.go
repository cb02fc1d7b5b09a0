package kc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/beevik/etree"
	"github.com/crewjam/saml"
	"golang.org/x/net/html"
)

// An SP-initiated SAML login with the POST binding, as a browser does it
// (Keycloak 26.0 to 26.7): the service provider's AuthnRequest is posted
// to the realm's SAML endpoint, which shows its login form; the
// credentials posted to the form are answered by a page whose form posts
// the signed SAMLResponse to the service provider's assertion consumer
// service. kcbench plays the service provider (github.com/crewjam/saml
// makes the request and checks the response: the signature against the
// realm's descriptor, the issuer, audience, destination, request id and
// times) and reads the response from that page instead of posting it,
// since nothing listens at the consumer URL.

// SAMLIdP is a realm as a SAML identity provider: its descriptor. It is
// safe for concurrent use.
type SAMLIdP struct {
	md  *saml.EntityDescriptor
	sso string // the realm's endpoint for the POST binding
}

// SAMLIdP reads realm's SAML descriptor.
func (c *Client) SAMLIdP(ctx context.Context, realm string) (*SAMLIdP, error) {
	k := &oidcReq{method: http.MethodGet, realm: realm, path: "/protocol/saml/descriptor", what: "SAML descriptor"}
	resp, err := c.send(ctx, c.hc, k, k.url(c.base))
	if err != nil {
		return nil, err
	}
	buf := getBuf()
	defer putBuf(buf)
	if err := readBody(resp, buf); err != nil {
		return nil, fmt.Errorf("%s: %w", k.op(), err)
	}
	md, err := parseDescriptor(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s of realm %s: %w", k.op(), realm, err)
	}
	p := &SAMLIdP{md: md}
	sp := saml.ServiceProvider{IDPMetadata: md}
	if p.sso = sp.GetSSOBindingLocation(saml.HTTPPostBinding); p.sso == "" {
		return nil, fmt.Errorf("%s of realm %s: no single sign-on service for the POST binding", k.op(), realm)
	}
	return p, nil
}

// SAMLServiceProvider is kcbench as the service provider of one SAML
// client of a realm. It is safe for concurrent use.
type SAMLServiceProvider struct {
	sp  saml.ServiceProvider
	sso string
}

// ServiceProvider is the service provider entityID (the SAML client's
// client id) of p whose assertion consumer service is acs.
func (p *SAMLIdP) ServiceProvider(entityID string, acs *url.URL) *SAMLServiceProvider {
	return &SAMLServiceProvider{sso: p.sso, sp: saml.ServiceProvider{EntityID: entityID, AcsURL: *acs, IDPMetadata: p.md,
		// No format asked for: Keycloak uses the client's (the username).
		AuthnNameIDFormat: saml.UnspecifiedNameIDFormat}}
}

// SAMLRequest is one AuthnRequest: its id, which the response must
// answer, and the form the browser posts.
type SAMLRequest struct {
	ID   string
	form form
}

// NewRequest makes an AuthnRequest asking for a response by the POST
// binding, posted by the POST binding (unsigned: the dataset's SAML
// clients do not ask for signed requests).
func (p *SAMLServiceProvider) NewRequest(relayState string) (*SAMLRequest, error) {
	req, err := p.sp.MakeAuthenticationRequest(p.sso, saml.HTTPPostBinding, saml.HTTPPostBinding)
	if err != nil {
		return nil, err
	}
	doc := etree.NewDocument()
	doc.SetRoot(req.Element())
	xml, err := doc.WriteToBytes()
	if err != nil {
		return nil, err
	}
	f := form{b: make([]byte, 0, 64+len(xml)*3/2)}
	f.add("SAMLRequest", base64.StdEncoding.EncodeToString(xml))
	f.add("RelayState", relayState)
	return &SAMLRequest{ID: req.ID, form: f}, nil
}

// Verify checks a SAMLResponse (decoded) to the request of id and
// returns the name id of its assertion's subject. Every way the response
// fails (no valid signature, another request's, expired, for another
// audience) is a *SAMLError.
func (p *SAMLServiceProvider) Verify(response []byte, id string) (string, error) {
	a, err := p.sp.ParseXMLResponse(response, []string{id}, p.sp.AcsURL)
	if err != nil {
		var ire *saml.InvalidResponseError
		if errors.As(err, &ire) && ire.PrivateErr != nil {
			err = ire.PrivateErr // its own message says only "Authentication failed"
		}
		return "", &SAMLError{Err: err}
	}
	if a.Subject == nil || a.Subject.NameID == nil {
		return "", &SAMLError{Err: errors.New("the assertion has no subject name id")}
	}
	return a.Subject.NameID.Value, nil
}

// SAMLError is a SAML response that the service provider refused.
type SAMLError struct{ Err error }

func (e *SAMLError) Error() string { return "SAML response refused: " + e.Err.Error() }
func (e *SAMLError) Unwrap() error { return e.Err }

// OpenSAML posts req to the realm's SAML endpoint and follows its
// redirect (Keycloak 26 answers the post with one to its login-actions
// endpoint) to the login form.
func (b *Browser) OpenSAML(ctx context.Context, p *SAMLServiceProvider, req *SAMLRequest) (*LoginPage, error) {
	const what = "SAML login page"
	loc, resp, err := b.submit(ctx, &LoginPage{Action: p.sso}, form{b: bytes.Clone(req.form.b)}, what)
	if err != nil {
		return nil, err
	}
	if resp != nil {
		page, err := readLoginPage(resp)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		return page, nil
	}
	page, _, _, err := b.follow(ctx, loc, AuthRequest{}, what)
	if err == nil && page == nil {
		err = fmt.Errorf("%s: Keycloak did not show its login form", what)
	}
	return page, err
}

// SubmitSAMLLogin posts username and password to the login form (both
// steps of an identity-first login) and returns the SAMLResponse of the
// page Keycloak answers with, decoded. Refused credentials give a
// *LoginError.
func (b *Browser) SubmitSAMLLogin(ctx context.Context, page *LoginPage, username, password string) ([]byte, error) {
	const what = "login form"
	buf := getBuf()
	defer putBuf(buf)
	for {
		loc, resp, err := b.submit(ctx, page, credentials(page, username, password), what)
		if err != nil {
			return nil, err
		}
		if resp == nil {
			return nil, fmt.Errorf("%s: redirected to %s instead of posting a SAML response", what, loc)
		}
		buf.Reset()
		if err := readBody(resp, buf); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if v, ok := samlResponseField(buf.Bytes()); ok {
			out, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("%s: SAMLResponse: %w", what, err)
			}
			return out, nil
		}
		next, err := parsePage(buf.Bytes(), resp.Request.URL)
		if err != nil {
			return nil, fmt.Errorf("%s answered %d with neither a SAML response nor a form: %w", what, resp.StatusCode, err)
		}
		if err := nextLoginStep(page, next); err != nil {
			return nil, err
		}
		page = next
	}
}

// samlResponseField finds the value of the input named SAMLResponse in
// an HTML page.
func samlResponseField(body []byte) (string, bool) {
	if !bytes.Contains(body, []byte("SAMLResponse")) {
		return "", false
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return "", false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			if string(name) != "input" {
				continue
			}
			if a := readAttrs(z, more); string(a.name) == "SAMLResponse" {
				return string(a.value), true
			}
		}
	}
}

// parseDescriptor reads an IdP's metadata: an EntityDescriptor (Keycloak
// 26), or the first of an EntitiesDescriptor.
func parseDescriptor(b []byte) (*saml.EntityDescriptor, error) {
	var md saml.EntityDescriptor
	err := xml.Unmarshal(b, &md)
	if err == nil && md.EntityID != "" {
		return &md, nil
	}
	var all saml.EntitiesDescriptor
	if err2 := xml.Unmarshal(b, &all); err2 == nil && len(all.EntityDescriptors) > 0 {
		return &all.EntityDescriptors[0], nil
	}
	if err == nil {
		err = errors.New("no entity descriptor")
	}
	return nil, err
}
