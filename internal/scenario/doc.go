// Package scenario holds kcbench's Keycloak workloads: each file is one
// load.Scenario (what one virtual user does) built on the typed OIDC and
// admin calls of package kc. ByName builds a scenario from an Env; List
// describes them all.
//
// Users and clients come from a Pool: the tenants of a seeded dataset
// (dataset.Manifest), picked uniformly or with a zipf skew, and users
// picked uniformly within a tenant; or one realm, client and user given
// by hand.
//
// Scenarios record each request as a named operation (the Op constants),
// so that a threshold or a CPU-per-operation figure can name it. Setup
// that a VU needs before its first iteration (the token an introspection
// VU introspects) happens in NewUser and is not recorded; the refresh
// scenario's sessions are a pool shared by its VUs, logged in before the
// run's clock starts (Run prepares it) and not recorded either.
//
// Run is a whole workload run from a Config (as `kcbench load` and
// experiment files give it): pool, scenario, executor, thresholds, and the
// server's CPU time per successful operation over the measured window.
//
// Imports: kc, dataset, load, h1 (the requests' transport) and observe
// (the server's CPU time). It must not import stack or anything later in
// the pipeline.
package scenario
