//go:build integration

package scenario

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
	"github.com/kcbench/kcbench/internal/stack"
)

// token-exchange on the line under test: from 26.2 on, every iteration
// exchanges a token for one whose only audience is account, and an
// audience the user cannot reach is an HTTP 400; before 26.2 the setup
// check refuses the workload, naming the line it needs.
func TestTokenExchange(t *testing.T) {
	f := setup(t)
	version := shared.Get(t).State().Options.Version
	v, err := stack.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	env := f.env(t, f.realms, 0)
	if v.Minor < 2 {
		sc, err := ByName(results.ScenarioTokenExchange, env)
		if err != nil {
			t.Fatal(err)
		}
		err = Prove(t.Context(), sc, version)
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "26.2 or later") {
			t.Fatalf("Keycloak %s: %v, want a setup error naming 26.2", version, err)
		}
		t.Logf("Keycloak %s: %v", version, err)
		return
	}
	runCases(t, env, map[string]map[string]int{results.ScenarioTokenExchange: {results.OpTokenExchange: 1}})
	runCases(t, f.env(t, f.orgs, 0), map[string]map[string]int{results.ScenarioTokenExchange: {results.OpTokenExchange: 1}})

	spec := f.realms.Spec
	realm, user := spec.RealmOf(1), spec.Username(1, 1)
	cl := kc.OAuthClient{ID: spec.BackendClient(1, 1), Secret: spec.ClientSecret(1, spec.BackendClient(1, 1))}
	sub, err := f.client.PasswordGrant(t.Context(), realm, cl, user, f.realms.Password, "")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := f.client.ExchangeToken(t.Context(), realm, cl, sub.AccessToken, exchangeAudience)
	if err != nil {
		t.Fatal(err)
	}
	if aud := audience(t, tr.AccessToken); aud != exchangeAudience {
		t.Errorf("exchanged token's audience %q, want %q alone", aud, exchangeAudience)
	}
	_, err = f.client.ExchangeToken(t.Context(), realm, cl, sub.AccessToken, spec.WebClient(1))
	if !isStatus(err, http.StatusBadRequest) || load.Classify(err) != "http_400" {
		t.Errorf("an audience the user has no roles of: %v (class %s), want HTTP 400", err, load.Classify(err))
	}
}

// audience is a JWT's aud claim as JSON text without quotes (a string) or
// the JSON array.
func audience(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		Aud json.RawMessage `json:"aud"`
	}
	if err := json.Unmarshal(b, &claims); err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(claims.Aud), `"`)
}
