package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// testUsers returns a users file with ann (admin, password "ann-pw"), bob
// (password "bob-pw") and the static token "svc-secret" named svc-etl.
func testUsers(t *testing.T, secret string) *Users {
	t.Helper()
	annHash, err := bcrypt.GenerateFromPassword([]byte("ann-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	bobHash, _ := bcrypt.GenerateFromPassword([]byte("bob-pw"), bcrypt.MinCost)
	raw, _ := json.Marshal(map[string]any{
		"users": []map[string]any{
			{"name": "ann", "password_bcrypt": string(annHash), "admin": true},
			{"name": "bob", "password_bcrypt": string(bobHash)},
		},
		"tokens":       []map[string]any{{"name": "svc-etl", "token_sha256": HashToken("svc-secret")}},
		"token_secret": secret,
	})
	u, err := ParseUsers(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestLoginAndVerify(t *testing.T) {
	clk := &clock{time.Unix(1_700_000_000, 0)}
	a, err := New(testUsers(t, ""), Options{TTL: time.Minute, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := a.Login("ann", "ann-pw")
	if err != nil {
		t.Fatal(err)
	}
	if parts := strings.Split(tok, "."); len(parts) != 3 || parts[0] != "v1" {
		t.Fatalf("token %q: want v1.<payload>.<mac>", tok)
	}
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil || c.Sub != "ann" || !c.Adm || c.Exp != clk.t.Unix()+60 {
		t.Fatalf("payload %s: %+v %v", payload, c, err)
	}
	p, err := a.Verify(tok)
	if err != nil || p != (Principal{Name: "ann", Admin: true}) {
		t.Fatalf("Verify = %+v, %v", p, err)
	}
	bobTok, _ := a.Login("bob", "bob-pw")
	if p, err := a.Verify(bobTok); err != nil || p != (Principal{Name: "bob"}) {
		t.Fatalf("Verify bob = %+v, %v", p, err)
	}

	// Expiry: valid until exp, not at or after it.
	clk.t = clk.t.Add(59 * time.Second)
	if _, err := a.Verify(tok); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	clk.t = clk.t.Add(time.Second)
	if _, err := a.Verify(tok); !errors.Is(err, ErrExpired) {
		t.Fatalf("at expiry: %v, want ErrExpired", err)
	}
}

func TestWrongPassword(t *testing.T) {
	a, _ := New(testUsers(t, ""), Options{})
	for _, c := range [][2]string{{"ann", "bob-pw"}, {"ann", ""}, {"nobody", "ann-pw"}, {"", ""}, {"svc-etl", "svc-secret"}} {
		if _, err := a.Login(c[0], c[1]); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("Login(%q, %q) = %v, want ErrBadCredentials", c[0], c[1], err)
		}
		if _, err := a.Validate(c[0], c[1]); status.Code(err) != codes.Unauthenticated {
			t.Errorf("Validate(%q, %q) = %v, want UNAUTHENTICATED", c[0], c[1], err)
		}
	}
}

func TestTamperedTokens(t *testing.T) {
	a, _ := New(testUsers(t, ""), Options{})
	tok, _ := a.Login("bob", "bob-pw")
	parts := strings.Split(tok, ".")
	// bob claims to be admin, or ann, with bob's MAC.
	forge := func(c claims) string {
		b, _ := json.Marshal(c)
		return "v1." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
	}
	otherSecret, _ := New(testUsers(t, ""), Options{}) // a different random secret
	fromOther, _ := otherSecret.Login("bob", "bob-pw")
	flipped := []byte(tok)
	flipped[len(flipped)-3] ^= 1
	for name, bad := range map[string]string{
		"empty":          "",
		"garbage":        "not-a-token",
		"admin claim":    forge(claims{Sub: "bob", Exp: time.Now().Add(time.Hour).Unix(), Adm: true}),
		"other user":     forge(claims{Sub: "ann", Exp: time.Now().Add(time.Hour).Unix()}),
		"flipped mac":    string(flipped),
		"no mac":         parts[0] + "." + parts[1],
		"v2":             "v2." + parts[1] + "." + parts[2],
		"other secret":   fromOther,
		"static hash":    HashToken("svc-secret"),
		"static + space": "svc-secret ",
	} {
		if _, err := a.Verify(bad); !errors.Is(err, ErrBadToken) {
			t.Errorf("%s: Verify = %v, want ErrBadToken", name, err)
		}
		if _, err := a.IsValid(bad); status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s: IsValid = %v, want UNAUTHENTICATED", name, err)
		}
	}
}

func TestStaticToken(t *testing.T) {
	a, _ := New(testUsers(t, ""), Options{})
	id, err := a.IsValid("svc-secret")
	if err != nil || id != (Principal{Name: "svc-etl"}) {
		t.Fatalf("IsValid(static) = %+v, %v", id, err)
	}
	ctx := context.Background()
	if _, ok := FromContext(ctx); ok {
		t.Fatal("FromContext of a bare context: ok")
	}
}

// TestSharedSecret: a token from one server is good on another with the same
// token_secret (replicas), and not on one with a different secret.
func TestSharedSecret(t *testing.T) {
	secret := NewSecret()
	a1, _ := New(testUsers(t, secret), Options{})
	a2, _ := New(testUsers(t, secret), Options{})
	a3, _ := New(testUsers(t, NewSecret()), Options{})
	tok, _ := a1.Login("ann", "ann-pw")
	if _, err := a2.Verify(tok); err != nil {
		t.Fatalf("same secret: %v", err)
	}
	if _, err := a3.Verify(tok); !errors.Is(err, ErrBadToken) {
		t.Fatalf("other secret: %v", err)
	}
}

// TestRemovedUser: a token of a user no longer in the file is refused, and
// admin comes from the file.
func TestRemovedUser(t *testing.T) {
	secret := NewSecret()
	a1, _ := New(testUsers(t, secret), Options{})
	tok, _ := a1.Login("ann", "ann-pw")
	hash, _ := HashPassword("x")
	u, err := ParseUsers([]byte(`{"users": [{"name": "carl", "password_bcrypt": "` + hash + `"}], "token_secret": "` + secret + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := New(u, Options{})
	if _, err := a2.Verify(tok); !errors.Is(err, ErrBadToken) {
		t.Fatalf("removed user: %v", err)
	}
	u, _ = ParseUsers([]byte(`{"users": [{"name": "ann", "password_bcrypt": "` + hash + `"}], "token_secret": "` + secret + `"}`))
	a3, _ := New(u, Options{})
	if p, err := a3.Verify(tok); err != nil || p.Admin {
		t.Fatalf("demoted user: %+v, %v", p, err)
	}
}

func TestParseUsersErrors(t *testing.T) {
	hash, _ := HashPassword("pw")
	for name, raw := range map[string]string{
		"not json":      `{`,
		"unknown key":   `{"users": [], "user": []}`,
		"empty":         `{"users": []}`,
		"no name":       `{"users": [{"password_bcrypt": "` + hash + `"}]}`,
		"twice":         `{"users": [{"name": "a", "password_bcrypt": "` + hash + `"}], "tokens": [{"name": "a", "token_sha256": "` + HashToken("t") + `"}]}`,
		"plain pw":      `{"users": [{"name": "a", "password_bcrypt": "secret"}]}`,
		"short hash":    `{"tokens": [{"name": "a", "token_sha256": "abcd"}]}`,
		"short secret":  `{"users": [{"name": "a", "password_bcrypt": "` + hash + `"}], "token_secret": "c2hvcnQ="}`,
		"secret base64": `{"users": [{"name": "a", "password_bcrypt": "` + hash + `"}], "token_secret": "!!"}`,
	} {
		if _, err := ParseUsers([]byte(raw)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := New(testUsers(t, ""), Options{TTL: time.Millisecond}); err == nil {
		t.Error("TTL 1ms: no error")
	}
}

func TestHashes(t *testing.T) {
	h, err := HashPassword("pw")
	if err != nil || bcrypt.CompareHashAndPassword([]byte(h), []byte("pw")) != nil {
		t.Fatalf("HashPassword: %q %v", h, err)
	}
	// echo -n abc | sha256sum
	if got := HashToken("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("HashToken = %s", got)
	}
	var _ flight.BasicAuthValidator = &Authenticator{}
}

// TestDummyHashCostsAsAPassword: the hash an unknown user is checked against
// is a valid bcrypt hash of the cost HashPassword uses, so that an unknown
// user takes as long to refuse as a wrong password.
func TestDummyHashCostsAsAPassword(t *testing.T) {
	cost, err := bcrypt.Cost(dummyHash)
	if err != nil || cost != bcrypt.DefaultCost {
		t.Fatalf("bcrypt.Cost(dummyHash) = %d, %v; want %d", cost, err, bcrypt.DefaultCost)
	}
	if err := bcrypt.CompareHashAndPassword(dummyHash, []byte("fluxgate-dummy")); err != nil {
		t.Fatalf("dummyHash is not the hash of fluxgate-dummy: %v", err)
	}
}
