//go:build integration

package scenario

import (
	"context"
	"net/http"
	"testing"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// Resource servers made every way a seed makes them: in realms mode the
// second tenant cloned from the first (its role policy's role id
// remapped, else its users would be denied), in orgs mode through one
// admin call per entity. Both verify (their resources counted), every uma
// iteration gets an RPT for a resource of its tenant, and a resource the
// server lacks is an HTTP 400.
func TestUMA(t *testing.T) {
	f := setup(t)
	db, err := shared.Get(t).DSN()
	if err != nil {
		t.Fatal(err)
	}
	content := dataset.DefaultContent
	content.Users, content.UMAResources = 2, 3
	pol := dataset.Policy{Algorithm: "pbkdf2-sha256", Iterations: 1}
	for _, c := range []struct {
		mode  dataset.Mode
		strat dataset.Strategy
	}{{dataset.ModeRealms, dataset.Clone}, {dataset.ModeOrgs, dataset.Rest}} {
		t.Run(string(c.mode), func(t *testing.T) {
			spec := dataset.Spec{Mode: c.mode, Tenants: 2, Content: content, Policy: pol, Prefix: "kcu" + string(c.mode[0]), Seed: 1}
			res, err := dataset.Seed(context.Background(), f.admin, spec, dataset.SeedOptions{Strategy: c.strat, DB: db, Target: f.tg.BaseURL})
			if err != nil {
				t.Fatal(err)
			}
			v, err := dataset.Verify(context.Background(), f.admin, res.Manifest, nil)
			if err != nil || !v.OK() || v.Actual.UMAResources != 6 {
				t.Fatalf("verify: %+v, %v: want 6 resources (3 in each of 2 tenants)", v, err)
			}
			runCases(t, f.env(t, res.Manifest, 0), map[string]map[string]int{results.ScenarioUMA: {results.OpUMAGrant: 1}})

			realm, user := spec.RealmOf(2), spec.Username(2, 1)
			cl := kc.OAuthClient{ID: spec.BackendClient(2, 1), Secret: spec.ClientSecret(2, spec.BackendClient(2, 1))}
			tr, err := f.client.PasswordGrant(t.Context(), realm, cl, user, res.Manifest.Password, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.client.UMAGrant(t.Context(), realm, tr.AccessToken, spec.UMAClient(2), dataset.UMAResource(3)+"#"+dataset.UMAScope); err != nil {
				t.Errorf("tenant 2's third resource: %v", err)
			}
			_, err = f.client.UMAGrant(t.Context(), realm, tr.AccessToken, spec.UMAClient(2), dataset.UMAResource(4)+"#"+dataset.UMAScope)
			if !isStatus(err, http.StatusBadRequest) || load.Classify(err) != "http_400" {
				t.Errorf("a resource the server lacks: %v (class %s), want HTTP 400", err, load.Classify(err))
			}
		})
	}
}
