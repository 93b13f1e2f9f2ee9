package server

import (
	"log/slog"
	"testing"

	"github.com/fluxgate-io/fluxgate/auth"
)

// The lake catalog is served where Flight would listen without users: on a
// loopback --http, or anywhere with users or --insecure-no-auth.
func TestLakeCatalogServedAsFlightListens(t *testing.T) {
	users, err := auth.ParseUsers([]byte(`{"users": [{"name": "ann", "password_bcrypt": "$2a$10$abcdefghijklmnopqrstuu5Z0q3kZ2Ejd6pW8cS9vM2u5m2QeQk5W"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	authn, err := auth.New(users, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		http     string
		authn    *auth.Authenticator
		insecure bool
		served   bool
	}{
		{"127.0.0.1:8816", nil, false, true},
		{"[::1]:8816", nil, false, true},
		{"0.0.0.0:8816", nil, false, false},
		{"0.0.0.0:8816", authn, false, true},
		{"0.0.0.0:8816", nil, true, true},
	} {
		cfg := &Config{HTTP: c.http, InsecureNoAuth: c.insecure}
		if got := len(lakeCatalogRoutes(cfg, nil, c.authn, nil, log)) > 0; got != c.served {
			t.Errorf("--http %s, users %v, insecure %v: served %v, want %v", c.http, c.authn != nil, c.insecure, got, c.served)
		}
	}
}
