package kc

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/h1"
)

// The login pages in testdata were captured from Keycloak 26.7.3 (GET
// …/auth for the web client of a kcbench realm; then a POST with a wrong
// password; the OTP pages: a user with OTP configured, after the password,
// then after a wrong code).
func TestParseLoginPage(t *testing.T) {
	cases := []struct {
		file, action, message string
		username, password    bool
		hidden                int
		otp                   bool
	}{
		{"testdata/login-page-26.7.3.html",
			"http://127.0.0.1:34433/realms/kcb-t00001/login-actions/authenticate?session_code=nw4Nh4CX7Mgl0w_zHQpt9IjEkO9x0-1oX2yfbNi1P6o&execution=002780a6-8a65-4f80-be70-1e3536ecd738&client_id=web&tab_id=Jusp9vpkvsc&client_data=eyJydSI6Imh0dHA6Ly8xMjcuMC4wLjE6OS9jYWxsYmFjayIsInJ0IjoiY29kZSIsInN0Ijoic3QxIn0",
			"", true, true, 1, false},
		{"testdata/login-page-invalid-26.7.3.html",
			"http://127.0.0.1:34433/realms/kcb-t00001/login-actions/authenticate?session_code=xLu0u1TLmqe42jmX658mOMHrT_mH1yFf6f-gJh41vcU&execution=002780a6-8a65-4f80-be70-1e3536ecd738&client_id=web&tab_id=Jusp9vpkvsc&client_data=eyJydSI6Imh0dHA6Ly8xMjcuMC4wLjE6OS9jYWxsYmFjayIsInJ0IjoiY29kZSIsInN0Ijoic3QxIn0",
			"Invalid username or password.", true, true, 1, false},
		// A realm with organizations: identity-first login.
		{"testdata/login-page-orgs-username-26.7.3.html",
			"http://127.0.0.1:34433/realms/kco-orgs/login-actions/authenticate?session_code=dqITLMzZr2xXqZwJmBoT3cxj-3PynaVJRpMvg2Bqi8w&execution=327f71f9-e7b0-4d84-b59f-2aec1c43f978&client_id=t00001-web&tab_id=oz0ODv-i2TQ&client_data=eyJydSI6Imh0dHA6Ly8xMjcuMC4wLjE6OS9jYWxsYmFjayIsInJ0IjoiY29kZSIsInN0Ijoic3QxIn0",
			"", true, false, 0, false},
		{"testdata/login-page-orgs-password-26.7.3.html",
			"http://127.0.0.1:34433/realms/kco-orgs/login-actions/authenticate?session_code=PzAvHFu5RQh84lxWap_oqFenTtpbnRA7MTnksmZY-5c&execution=eb126f26-01ed-4859-86ae-de88287efca2&client_id=t00001-web&tab_id=oz0ODv-i2TQ&client_data=eyJydSI6Imh0dHA6Ly8xMjcuMC4wLjE6OS9jYWxsYmFjayIsInJ0IjoiY29kZSIsInN0Ijoic3QxIn0",
			"", false, true, 1, false},
		{"testdata/otp-page-26.7.3.html",
			"https://127.0.0.1:34159/realms/kcb-t00001/login-actions/authenticate?session_code=R8Rm_qgJUjmiixG680AL1m4Vy79ftnhLEL1l1l-zLlI&execution=70af0af8-6834-4617-9148-81372a33b059&client_id=web&tab_id=hk8t9_S1sOE&client_data=eyJydSI6Imh0dHA6Ly8xMjcuMC4wLjE6OS9jYWxsYmFjayIsInJ0IjoiY29kZSIsInN0Ijoic3QxIn0",
			"", false, false, 1, true},
		{"testdata/otp-page-invalid-26.7.3.html",
			"https://127.0.0.1:34159/realms/kcb-t00001/login-actions/authenticate?session_code=c_kow5dCp27BwzvTDQSB7edzSDyRclcDTFyQjw1rcYo&execution=70af0af8-6834-4617-9148-81372a33b059&client_id=web&tab_id=hk8t9_S1sOE&client_data=eyJydSI6Imh0dHA6Ly8xMjcuMC4wLjE6OS9jYWxsYmFjayIsInJ0IjoiY29kZSIsInN0Ijoic3QxIn0",
			"Invalid authenticator code.", false, false, 1, true},
		{"testdata/register-page-26.7.3.html",
			"https://127.0.0.1:34159/realms/kcb-t00001/login-actions/registration?session_code=6Yuet8gKneDBIiuqKAyZrdYDimNmzFLz7shy2o9OIqk&execution=e59813f0-b84c-42d4-9f40-8a74bcb074a9&client_id=web&tab_id=Ka3Hs5AfrtY&client_data=eyJydSI6Imh0dHA6Ly8xMjcuMC4wLjE6OS9jYWxsYmFjayIsInJ0IjoiY29kZSIsInN0Ijoic3QxIn0",
			"", true, true, 0, false},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := os.Open(c.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := ParseLoginPage(f)
			if err != nil {
				t.Fatal(err)
			}
			if p.Action != c.action {
				t.Errorf("action\n got %s\nwant %s", p.Action, c.action)
			}
			if p.Message != c.message {
				t.Errorf("message %q, want %q", p.Message, c.message)
			}
			if p.Username != c.username || p.Password != c.password {
				t.Errorf("asks for username %v, password %v; want %v, %v", p.Username, p.Password, c.username, c.password)
			}
			hidden := FormField{Name: "credentialId"}
			if c.otp {
				hidden = FormField{Name: "selectedCredentialId", Value: "b96a27db-dd78-4691-9995-b0d4b7c26de9"}
			}
			if len(p.Hidden) != c.hidden || (c.hidden == 1 && p.Hidden[0] != hidden) {
				t.Errorf("hidden %+v, want %d (%s)", p.Hidden, c.hidden, hidden.Name)
			}
			if p.Register != strings.Contains(c.file, "register") {
				t.Errorf("the registration form: %v", p.Register)
			}
			if p.OTP != c.otp {
				t.Errorf("asks for a one-time code: %v, want %v", p.OTP, c.otp)
			}
		})
	}
}

func TestParseLoginPageErrors(t *testing.T) {
	for name, page := range map[string]string{
		"no form":      `<html><body><form id="other" action="/x"></form></body></html>`,
		"empty action": `<form id="kc-form-login" method="post"><input name="username"></form>`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParseLoginPage(strings.NewReader(page)); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func BenchmarkParseLoginPage(b *testing.B) {
	page, err := os.ReadFile("testdata/login-page-26.7.3.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseLoginPage(strings.NewReader(string(page))); err != nil {
			b.Fatal(err)
		}
	}
}

func TestForm(t *testing.T) {
	f := newForm("password", OAuthClient{ID: "backend", Secret: "s3cr&t"})
	f.add("username", "user 1")
	f.addIf("scope", "")
	got := string(f.b)
	want := "grant_type=password&client_id=backend&client_secret=s3cr%26t&username=user+1"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	v, err := url.ParseQuery(got)
	if err != nil || v.Get("client_secret") != "s3cr&t" || v.Get("username") != "user 1" {
		t.Fatalf("%v %v", v, err)
	}
}

func TestCookieJar(t *testing.T) {
	j := &cookieJar{}
	u, _ := url.Parse("http://127.0.0.1:8080/realms/r1/protocol/openid-connect/auth")
	j.SetCookies(u, []*http.Cookie{
		{Name: "AUTH_SESSION_ID", Value: "a", Path: "/realms/r1/", Secure: true},
		{Name: "KC_AUTH_SESSION_HASH", Value: "h", Quoted: true, Path: "/realms/r1/"},
		{Name: "NOPATH", Value: "n"},
	})
	names := func(u string) string {
		pu, _ := url.Parse(u)
		var n []string
		for _, c := range j.Cookies(pu) {
			n = append(n, c.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names("http://127.0.0.1:8080/realms/r1/login-actions/authenticate"); got != "AUTH_SESSION_ID,KC_AUTH_SESSION_HASH" {
		t.Errorf("login-actions: %s", got)
	}
	if got := names("http://127.0.0.1:8080/realms/r1/protocol/openid-connect/token"); got != "AUTH_SESSION_ID,KC_AUTH_SESSION_HASH,NOPATH" {
		t.Errorf("same folder: %s", got)
	}
	if got := names("http://127.0.0.1:8080/realms/r10/x"); got != "" {
		t.Errorf("other realm: %s", got)
	}
	// Keycloak deletes with Max-Age=0, which net/http reads as MaxAge -1.
	j.SetCookies(u, []*http.Cookie{{Name: "AUTH_SESSION_ID", Path: "/realms/r1/", MaxAge: -1}})
	if got := names("http://127.0.0.1:8080/realms/r1/x"); got != "KC_AUTH_SESSION_HASH" {
		t.Errorf("after deletion: %s", got)
	}
	j.clear()
	if got := names("http://127.0.0.1:8080/realms/r1/x"); got != "" {
		t.Errorf("after clear: %s", got)
	}
}

// fakeKeycloak serves the endpoints the OIDC calls use, enough to test
// the client's side of each protocol step.
func fakeKeycloak(t *testing.T) *httptest.Server {
	t.Helper()
	page, err := os.ReadFile("testdata/login-page-26.7.3.html")
	if err != nil {
		t.Fatal(err)
	}
	var codes atomic.Int64
	mux := http.NewServeMux()
	const p = "/realms/r1/protocol/openid-connect/"
	mux.HandleFunc("GET "+p+"auth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "pkce", http.StatusBadRequest)
			return
		}
		if c, err := r.Cookie("KEYCLOAK_IDENTITY"); err == nil && c.Value == "id" {
			http.Redirect(w, r, q.Get("redirect_uri")+"?state="+q.Get("state")+"&code=sso", http.StatusFound)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "AUTH_SESSION_ID", Value: "s1", Path: "/realms/r1/", Secure: true, HttpOnly: true})
		// The captured page posts to the capturing server; point it here.
		html := strings.ReplaceAll(string(page), "http://127.0.0.1:34433/realms/kcb-t00001/", "http://"+r.Host+"/realms/r1/")
		html = strings.ReplaceAll(html, "client_data=", "state="+q.Get("state")+"&amp;client_data=")
		io.WriteString(w, html)
	})
	mux.HandleFunc("POST /realms/r1/login-actions/authenticate", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("AUTH_SESSION_ID"); err != nil || c.Value != "s1" {
			http.Error(w, "Cookie not found", http.StatusBadRequest)
			return
		}
		r.ParseForm()
		if _, ok := r.PostForm["credentialId"]; !ok || r.PostForm.Get("password") != "pw" {
			page, _ := os.ReadFile("testdata/login-page-invalid-26.7.3.html")
			w.Write(page)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "KEYCLOAK_IDENTITY", Value: "id", Path: "/realms/r1/"})
		code := "c" + string(rune('0'+codes.Add(1)))
		http.Redirect(w, r, "http://127.0.0.1:9/callback?state="+r.URL.Query().Get("state")+"&code="+code, http.StatusFound)
	})
	mux.HandleFunc("POST "+p+"token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f := r.PostForm
		switch f.Get("grant_type") {
		case "password":
			if f.Get("password") != "pw" {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid user credentials"}`)
				return
			}
		case "authorization_code":
			if f.Get("code_verifier") == "" || f.Get("redirect_uri") == "" {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, `{"error":"invalid_grant"}`)
				return
			}
		}
		io.WriteString(w, `{"access_token":"at-`+f.Get("grant_type")+`","expires_in":300,"refresh_token":"rt","refresh_expires_in":1800,"token_type":"Bearer"}`)
	})
	mux.HandleFunc("POST "+p+"token/introspect", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		io.WriteString(w, `{"active":`+map[bool]string{true: "true", false: "false"}[r.PostForm.Get("token") == "good"]+`}`)
	})
	mux.HandleFunc("GET "+p+"userinfo", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer at" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		io.WriteString(w, `{"sub":"u1","preferred_username":"user"}`)
	})
	// Realm r2 has organizations: identity-first login, as Keycloak 26
	// shows it (captured pages).
	const p2 = "/realms/r2/protocol/openid-connect/"
	orgPage := func(file, host, state string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		html := strings.ReplaceAll(string(b), "http://127.0.0.1:34433/realms/kco-orgs/", "http://"+host+"/realms/r2/")
		return strings.ReplaceAll(html, "client_data=", "state="+state+"&amp;client_data=")
	}
	mux.HandleFunc("GET "+p2+"auth", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "AUTH_SESSION_ID", Value: "s2", Path: "/realms/r2/"})
		io.WriteString(w, orgPage("testdata/login-page-orgs-username-26.7.3.html", r.Host, r.URL.Query().Get("state")))
	})
	mux.HandleFunc("POST /realms/r2/login-actions/authenticate", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		switch {
		case r.PostForm.Has("password") && r.PostForm.Has("credentialId"):
			if r.PostForm.Get("password") != "pw" || r.PostForm.Has("username") {
				w.Write([]byte(orgPage("testdata/login-page-invalid-26.7.3.html", r.Host, "")))
				return
			}
			http.Redirect(w, r, "http://127.0.0.1:9/callback?state="+r.URL.Query().Get("state")+"&code=org-code", http.StatusFound)
		case r.PostForm.Get("username") == "user":
			io.WriteString(w, orgPage("testdata/login-page-orgs-password-26.7.3.html", r.Host, r.URL.Query().Get("state")))
		default:
			http.Error(w, "unexpected form", http.StatusBadRequest)
		}
	})
	mux.HandleFunc("POST "+p+"logout", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET "+p+"certs", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"keys":[{"kid":"k1","kty":"RSA","alg":"RS256","use":"sig","n":"xyz"}]}`)
	})
	mux.HandleFunc("GET /realms/r1/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"issuer":"http://`+r.Host+`/realms/r1","token_endpoint":"t"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestOIDCCalls(t *testing.T) {
	srv := fakeKeycloak(t)
	c := New(srv.URL, nil)
	ctx := context.Background()
	cl := OAuthClient{ID: "backend", Secret: "s"}

	tr, err := c.PasswordGrant(ctx, "r1", cl, "user", "pw", ScopeOpenID)
	if err != nil || tr.AccessToken != "at-password" || tr.ExpiresIn != 300 {
		t.Fatalf("password grant: %+v %v", tr, err)
	}
	_, err = c.PasswordGrant(ctx, "r1", cl, "user", "wrong", "")
	var ae *APIError
	if !errors.As(err, &ae) || ae.HTTPStatus() != 400 || ae.OAuthError() != "invalid_grant" {
		t.Fatalf("wrong password: %v", err)
	}
	if !strings.Contains(err.Error(), "POST /realms/r1/protocol/openid-connect/token (password grant)") {
		t.Errorf("error does not say what failed: %v", err)
	}
	if tr, err := c.ClientCredentials(ctx, "r1", cl, ""); err != nil || tr.AccessToken != "at-client_credentials" {
		t.Fatalf("client credentials: %+v %v", tr, err)
	}
	if tr, err := c.Refresh(ctx, "r1", cl, "rt"); err != nil || tr.RefreshToken != "rt" {
		t.Fatalf("refresh: %+v %v", tr, err)
	}
	if in, err := c.Introspect(ctx, "r1", cl, "good"); err != nil || !in.Active {
		t.Fatalf("introspect: %+v %v", in, err)
	}
	if ui, err := c.UserInfo(ctx, "r1", "at"); err != nil || ui.Subject != "u1" {
		t.Fatalf("userinfo: %+v %v", ui, err)
	}
	if _, err := c.UserInfo(ctx, "r1", "bad"); !errors.Is(err, ErrForbidden) {
		t.Fatalf("userinfo with a bad token: %v", err)
	}
	if err := c.Logout(ctx, "r1", cl, "rt"); err != nil {
		t.Fatalf("logout: %v", err)
	}
	if k, err := c.JWKS(ctx, "r1"); err != nil || len(k.Keys) != 1 || k.Keys[0].KeyID != "k1" {
		t.Fatalf("jwks: %+v %v", k, err)
	}
	buf, err := c.JWKSRaw(ctx, "r1", make([]byte, 0, 8))
	if err != nil || !strings.HasPrefix(string(buf), `{"keys":[`) {
		t.Fatalf("jwks raw: %q %v", buf, err)
	}
	if d, err := c.Discovery(ctx, "r1"); err != nil || d.Issuer != srv.URL+"/realms/r1" {
		t.Fatalf("discovery: %+v %v", d, err)
	}
	if _, err := c.JWKS(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown realm: %v", err)
	}
}

func TestBrowserLogin(t *testing.T) {
	srv := fakeKeycloak(t)
	c := New(srv.URL, nil)
	ctx := context.Background()
	web := OAuthClient{ID: "web"}
	b := c.NewBrowser()

	ar := NewAuthRequest("web", "http://127.0.0.1:9/callback", ScopeOpenID)
	page, err := b.OpenLogin(ctx, "r1", ar)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(page.Action, srv.URL+"/realms/r1/login-actions/authenticate?") {
		t.Fatalf("action %s", page.Action)
	}
	_, err = b.SubmitLogin(ctx, page, ar, "user", "wrong")
	var le *LoginError
	if !errors.As(err, &le) || le.Message != "Invalid username or password." || le.Page == nil {
		t.Fatalf("wrong password: %v", err)
	}

	tr, err := b.Login(ctx, "r1", web, NewAuthRequest("web", "http://127.0.0.1:9/callback", ScopeOpenID), "user", "pw")
	if err != nil || tr.AccessToken != "at-authorization_code" {
		t.Fatalf("login: %+v %v", tr, err)
	}
	// The browser now has an SSO session: Keycloak redirects at once.
	ar = NewAuthRequest("web", "http://127.0.0.1:9/callback", ScopeOpenID)
	page, err = b.OpenLogin(ctx, "r1", ar)
	if err != nil || page.Code != "sso" {
		t.Fatalf("SSO: %+v %v", page, err)
	}
	b.ClearCookies()
	if page, err = b.OpenLogin(ctx, "r1", ar); err != nil || page.Code != "" || page.Action == "" {
		t.Fatalf("after clearing cookies: %+v %v", page, err)
	}
	// Without the session cookie the form is refused, as Keycloak does.
	b.ClearCookies()
	if _, err := b.SubmitLogin(ctx, page, ar, "user", "pw"); !isStatus(err, 400) {
		t.Fatalf("without cookies: %v", err)
	}
}

func TestBrowserLoginIdentityFirst(t *testing.T) {
	srv := fakeKeycloak(t)
	b := New(srv.URL, nil).NewBrowser()
	ar := NewAuthRequest("web", "http://127.0.0.1:9/callback", ScopeOpenID)
	page, err := b.OpenLogin(context.Background(), "r2", ar)
	if err != nil {
		t.Fatal(err)
	}
	if !page.Username || page.Password {
		t.Fatalf("first page asks for username %v, password %v", page.Username, page.Password)
	}
	code, err := b.SubmitLogin(context.Background(), page, ar, "user", "pw")
	if err != nil || code != "org-code" {
		t.Fatalf("%q %v", code, err)
	}
	page, _ = b.OpenLogin(context.Background(), "r2", ar)
	var le *LoginError
	if _, err := b.SubmitLogin(context.Background(), page, ar, "user", "wrong"); !errors.As(err, &le) {
		t.Fatalf("wrong password: %v", err)
	}
}

func isStatus(err error, code int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == code
}

func TestAuthRequest(t *testing.T) {
	a := NewAuthRequest("web", "http://127.0.0.1:9/callback", "openid")
	b := NewAuthRequest("web", "http://127.0.0.1:9/callback", "openid")
	if len(a.CodeVerifier) != 43 || a.CodeVerifier == b.CodeVerifier || a.State == b.State {
		t.Fatalf("verifiers %q %q, states %q %q", a.CodeVerifier, b.CodeVerifier, a.State, b.State)
	}
	// RFC 7636 appendix B.
	rfc := AuthRequest{CodeVerifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}
	if got := rfc.CodeChallenge(); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatalf("challenge %s", got)
	}
	u, err := url.Parse(a.URL("http://kc/", "my realm"))
	if err != nil {
		t.Fatal(err)
	}
	if u.EscapedPath() != "/realms/my%20realm/protocol/openid-connect/auth" {
		t.Errorf("path %s", u.EscapedPath())
	}
	q := u.Query()
	if q.Get("response_type") != "code" || q.Get("code_challenge") != a.CodeChallenge() || q.Get("scope") != "openid" {
		t.Errorf("query %v", q)
	}
}

func TestCodeFromRedirect(t *testing.T) {
	ar := AuthRequest{State: "st"}
	if c, err := codeFromRedirect("http://127.0.0.1:9/callback?state=st&session_state=x&code=abc", ar); err != nil || c != "abc" {
		t.Fatalf("%q %v", c, err)
	}
	if _, err := codeFromRedirect("http://127.0.0.1:9/callback?state=other&code=abc", ar); err == nil {
		t.Fatal("state mismatch accepted")
	}
	_, err := codeFromRedirect("http://127.0.0.1:9/callback?error=invalid_request&error_description=Missing+parameter:+code_challenge_method&state=st", ar)
	if !isStatus(err, http.StatusFound) || !strings.Contains(err.Error(), "code_challenge_method") {
		t.Fatalf("error redirect: %v", err)
	}
	if _, err := codeFromRedirect("", ar); err == nil {
		t.Fatal("empty location accepted")
	}
}

func BenchmarkJWKSRaw(b *testing.B) {
	body := strings.Repeat("k", 2900)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"keys":[`+body+`]}`)
	}))
	defer srv.Close()
	for name, hc := range map[string]*http.Client{
		"h1":       &http.Client{Transport: &h1.Transport{Timeout: time.Minute, MaxIdlePerHost: 4}},
		"net-http": {Transport: &http.Transport{MaxIdleConnsPerHost: 4}},
	} {
		b.Run(name, func(b *testing.B) {
			c := New(srv.URL, hc)
			buf := make([]byte, 0, 8<<10)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.JWKSRaw(context.Background(), "r1", buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The raw calls take h1's Exchange path (no http.Response) and mean the
// same: the body appended, a failed status an *APIError.
func TestRawCallsThroughExchange(t *testing.T) {
	srv := fakeKeycloak(t)
	c := New(srv.URL, &http.Client{Transport: &h1.Transport{Timeout: 10 * time.Second, MaxIdlePerHost: 2}})
	ctx := context.Background()
	buf, err := c.JWKSRaw(ctx, "r1", []byte("prefix"))
	if err != nil || !strings.HasPrefix(string(buf), `prefix{"keys":[`) {
		t.Fatalf("jwks raw: %q %v", buf, err)
	}
	buf, err = c.JWKSRaw(ctx, "nope", []byte("prefix"))
	var apiErr *APIError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &apiErr) || string(buf) != "prefix" {
		t.Fatalf("unknown realm: %q %v", buf, err)
	}
	if buf, err = c.DiscoveryRaw(ctx, "r1", nil); err != nil || !strings.Contains(string(buf), `"issuer"`) {
		t.Fatalf("discovery raw: %q %v", buf, err)
	}
}

// An answer over maxBody is named the same on the Exchange path.
func TestRawCallTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(maxBody+1))
		w.Write(make([]byte, maxBody+1))
	}))
	defer srv.Close()
	c := New(srv.URL, &http.Client{Transport: &h1.Transport{Timeout: 10 * time.Second, MaxIdlePerHost: 1}})
	buf, err := c.JWKSRaw(context.Background(), "r1", []byte("p"))
	if err == nil || !strings.Contains(err.Error(), "answer body larger than 4 MiB") || string(buf) != "p" {
		t.Fatalf("%d bytes, %v", len(buf), err)
	}
}
