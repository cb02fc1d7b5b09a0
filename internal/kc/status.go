package kc

import (
	"encoding/json"
	"strings"
)

// HTTPStatus returns the HTTP status Keycloak answered with, so that a load
// engine can classify the error by status without importing this package.
func (e *APIError) HTTPStatus() int { return e.Status }

// OAuthError returns the OAuth error code of the answer's body (such as
// "invalid_grant"), or "" when the body is not an OAuth error.
func (e *APIError) OAuthError() string {
	if !strings.HasPrefix(e.Body, "{") {
		return ""
	}
	var b struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(e.Body), &b) != nil {
		return ""
	}
	return b.Error
}
