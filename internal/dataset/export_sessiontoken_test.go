package dataset

import (
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kcbench/kcbench/internal/kc"
)

// Test helpers, exported to the package's external (integration) tests:
// a refresh token for a session kcbench wrote, signed as Keycloak signs
// its own, proves Keycloak accepts the session.

// SessionToken is a refresh token for a user session in the database, as
// Keycloak would have issued it: what a client that had made the session
// would hold.
type SessionToken struct {
	Realm, SessionID, UserID string
	// ClientID is the client (its clientId) the session's client session
	// is of; the token is that client's.
	ClientID string
	Offline  bool
	Token    string
}

// MintSessionToken signs a refresh token for session sid of realm with
// the realm's HMAC key, read from Keycloak's database (db): so that a
// seeded session, which no client ever held a token of, can be refreshed.
// baseURL is the server's, as its tokens name it (their issuer).
func MintSessionToken(ctx context.Context, db kc.Secret, baseURL, realm, sid string) (*SessionToken, error) {
	conn, err := pgx.Connect(ctx, string(db))
	if err != nil {
		return nil, fmt.Errorf("connect to Keycloak's database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	st := &SessionToken{Realm: realm, SessionID: sid}
	var flag, scope string
	var idle int
	err = conn.QueryRow(ctx, `SELECT u.user_id, u.offline_flag, c.client_id, coalesce(cs.data::json->'notes'->>'scope', 'openid'), r.sso_idle_timeout
		FROM offline_user_session u
		JOIN offline_client_session cs ON cs.user_session_id = u.user_session_id AND cs.offline_flag = u.offline_flag
		JOIN client c ON c.id = cs.client_id
		JOIN realm r ON r.id = u.realm_id
		WHERE r.name = $1 AND u.user_session_id = $2 LIMIT 1`, realm, sid).Scan(&st.UserID, &flag, &st.ClientID, &scope, &idle)
	if err != nil {
		return nil, fmt.Errorf("session %s of %s: %w", sid, realm, err)
	}
	kid, key, err := realmHMACKey(ctx, conn, realm)
	if err != nil {
		return nil, err
	}
	st.Offline = flag == "1"
	iss := strings.TrimSuffix(baseURL, "/") + "/realms/" + realm
	now := time.Now().Unix()
	claims := map[string]any{"iat": now, "jti": newUUID(), "iss": iss, "aud": iss, "sub": st.UserID, "typ": "Refresh",
		"azp": st.ClientID, "sid": sid, "scope": scope}
	if st.Offline {
		claims["typ"] = "Offline"
	} else {
		claims["exp"] = now + int64(max(idle, 60))
	}
	st.Token, err = signHS512(kid, key, claims)
	return st, err
}

// realmHMACKey is the realm's active HS512 key (the hmac-generated
// provider's of the highest priority): its id and secret.
func realmHMACKey(ctx context.Context, conn *pgx.Conn, realm string) (kid string, key []byte, err error) {
	var secret string
	err = conn.QueryRow(ctx, `SELECT k.value, s.value FROM component c
		JOIN realm r ON r.id = c.realm_id
		JOIN component_config k ON k.component_id = c.id AND k.name = 'kid'
		JOIN component_config s ON s.component_id = c.id AND s.name = 'secret'
		LEFT JOIN component_config a ON a.component_id = c.id AND a.name = 'algorithm'
		LEFT JOIN component_config p ON p.component_id = c.id AND p.name = 'priority'
		WHERE r.name = $1 AND c.provider_id = 'hmac-generated' AND coalesce(a.value, 'HS512') = 'HS512'
		ORDER BY coalesce(p.value, '0')::bigint DESC LIMIT 1`, realm).Scan(&kid, &secret)
	if err != nil {
		return "", nil, fmt.Errorf("the HS512 key of realm %s: %w", realm, err)
	}
	key, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(secret, "="))
	if err != nil {
		return "", nil, fmt.Errorf("the HS512 key of realm %s: %w", realm, err)
	}
	return kid, key, nil
}

// signHS512 is a JWT of claims signed with key (HMAC-SHA512).
func signHS512(kid string, key []byte, claims map[string]any) (string, error) {
	h, err := json.Marshal(map[string]string{"alg": "HS512", "typ": "JWT", "kid": kid})
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	mac := hmac.New(sha512.New, key)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil)), nil
}
