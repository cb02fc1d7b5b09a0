// Package kc is kcbench's view of a Keycloak server: the Target every stage
// after the stack receives (base URL, management URL, admin credentials and,
// for a local stack, the server pid), and a thin typed client for its admin
// REST API, its OIDC endpoints and its management interface.
//
// kc works against any Keycloak 26.x and must never import internal/stack:
// a Target may as well describe a Keycloak that kcbench did not start.
package kc
