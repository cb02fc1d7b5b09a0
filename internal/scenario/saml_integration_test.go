//go:build integration

package scenario

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"regexp"
	"testing"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// A dataset of 2 organizations with 2 SAML clients each, the second
// tenant cloned from the first: it verifies (the SAML clients counted);
// every saml-login iteration gets a response whose signature, issuer,
// audience and request check out and whose subject is the user (through
// the identity-first login of orgs mode). A response that does not check
// out (another request's, its subject changed, its signatures removed)
// and a wrong password are check errors.
func TestSAMLLogin(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	db, err := shared.Get(t).DSN()
	if err != nil {
		t.Fatal(err)
	}
	content := dataset.DefaultContent
	content.Users, content.SAMLClients = 3, 2
	spec := dataset.Spec{Mode: dataset.ModeOrgs, Tenants: 2, Content: content, Policy: dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}, Prefix: "ksa", Seed: 1}
	res, err := dataset.Seed(ctx, f.admin, spec, dataset.SeedOptions{Strategy: dataset.Clone, DB: db, Target: f.tg.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	v, err := dataset.Verify(ctx, f.admin, res.Manifest, nil)
	if err != nil || !v.OK() || v.Actual.Clients != 8 {
		t.Fatalf("verify: %+v, %v: want 8 clients (web, backend and 2 SAML clients in each of 2 tenants)", v.Actual, err)
	}
	env := f.env(t, res.Manifest, 0)
	runCases(t, env, map[string]map[string]int{
		results.ScenarioSAMLLogin: {results.OpSAMLPage: 1, results.OpSAMLLogin: 1},
	})

	// The SAML flow by hand, on the cloned tenant.
	acs, _ := url.Parse(dataset.SAMLConsumerURL)
	idp, err := f.client.SAMLIdP(ctx, spec.SharedRealm())
	if err != nil {
		t.Fatal(err)
	}
	sp := idp.ServiceProvider(spec.SAMLClient(2, 2), acs)
	user := spec.Username(2, 3)
	login := func(password string) (*kc.SAMLRequest, []byte, error) {
		req, err := sp.NewRequest("r")
		if err != nil {
			t.Fatal(err)
		}
		b := f.client.NewBrowser()
		page, err := b.OpenSAML(ctx, sp, req)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := b.SubmitSAMLLogin(ctx, page, user, password)
		return req, resp, err
	}
	req, resp, err := login(res.Manifest.Password)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkSAML(sp, resp, req.ID, user); err != nil {
		t.Fatalf("a good response: %v", err)
	}
	other, _, err := login(res.Manifest.Password)
	if err != nil {
		t.Fatal(err)
	}
	sig := regexp.MustCompile(`(?s)<(dsig|ds):Signature\b.*?</(dsig|ds):Signature>`)
	if !sig.Match(resp) {
		t.Fatalf("no signature element in the response:\n%s", resp)
	}
	for name, c := range map[string]struct {
		resp []byte
		id   string
	}{
		"another request's":      {resp, other.ID},
		"its subject changed":    {bytes.ReplaceAll(resp, []byte(">"+user+"<"), []byte(">"+spec.Username(2, 1)+"<")), req.ID},
		"its signatures removed": {sig.ReplaceAll(resp, nil), req.ID},
	} {
		err := checkSAML(sp, c.resp, c.id, user)
		var ce load.CheckError
		if !errors.As(err, &ce) || load.Classify(err) != load.ClassCheck {
			t.Errorf("a response %s: %v, want a check error", name, err)
		}
	}

	// A wrong password: the form comes back.
	_, _, err = login("wrong")
	var le *kc.LoginError
	if !errors.As(err, &le) {
		t.Errorf("a wrong password: %v, want the login form again", err)
	}
}
