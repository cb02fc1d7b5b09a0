package kc

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// TokenClaims decodes the claims of a JWT into v, without checking its
// signature: for reading what Keycloak put in a token it just issued.
func TokenClaims(token string, v any) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("not a JWT (want three dot-separated parts)")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return fmt.Errorf("a JWT's claims: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("a JWT's claims: %w", err)
	}
	return nil
}

// SessionID is the user session a token belongs to (its claim sid).
func SessionID(token string) (string, error) {
	var c struct {
		SID string `json:"sid"`
	}
	if err := TokenClaims(token, &c); err != nil {
		return "", err
	}
	if c.SID == "" {
		return "", errors.New("the token names no session (no claim sid)")
	}
	return c.SID, nil
}
