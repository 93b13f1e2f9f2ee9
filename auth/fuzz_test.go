package auth

import (
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"
)

// FuzzVerifyToken: a bearer token is what an unauthenticated caller sends.
// Verify never panics, and accepts only a token the server signed (or a
// static API token): no input made without the secret passes.
func FuzzVerifyToken(f *testing.F) {
	raw, _ := json.Marshal(map[string]any{
		"users":        []map[string]any{{"name": "ann", "password_bcrypt": "$2a$04$invalidinvalidinvalidinvalidinvalidinvalidinvalidinva", "admin": true}},
		"tokens":       []map[string]any{{"name": "svc-etl", "token_sha256": HashToken("svc-secret")}},
		"token_secret": base64.StdEncoding.EncodeToString([]byte("a secret of thirty-two bytes!!!!")),
	})
	users, err := ParseUsers(raw)
	if err != nil {
		f.Fatal(err)
	}
	// A fixed clock: every fuzzing process issues the same genuine token.
	now := time.Unix(1_800_000_000, 0)
	a, err := New(users, Options{Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	genuine := map[string]bool{"svc-secret": true, a.Issue(Principal{Name: "ann", Admin: true}): true}
	for tk := range genuine {
		f.Add(tk)
	}
	f.Add("v1.e30.AAAA")
	f.Add("v1..")
	f.Add("")
	f.Fuzz(func(t *testing.T, token string) {
		if _, err := a.Verify(token); err == nil && !genuine[token] {
			t.Fatalf("a token the server did not sign was accepted: %q", token)
		}
	})
}
