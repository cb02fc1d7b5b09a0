// Package dataset owns kcbench's test data: the tenant model (one realm per
// tenant, or one organization per tenant inside a shared realm, with the
// same content either way), presets for sizing runs, the password policy,
// seeding strategies (fast and rest), incremental growth and resumption,
// verification, the realm-file pivot, and the manifest that tells the load
// stage which users and clients exist.
//
// dataset works on a kc.Target through the kc admin client; it must not
// import stack (snapshots and server CPU are the caller's business), load,
// scenario or anything later in the pipeline.
package dataset
