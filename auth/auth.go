// Package auth is users, passwords and tokens: who a caller is; not what it
// may do (PROTOCOL.md §8).
//
// The users file is JSON:
//
//	{
//	  "users":  [{"name": "ann", "password_bcrypt": "$2a$10$...", "admin": true}],
//	  "tokens": [{"name": "svc-etl", "token_sha256": "<64 hex digits>"},
//	             {"name": "prometheus", "token_sha256": "<64 hex digits>", "metrics": true}],
//	  "token_secret": "<base64 of at least 32 random bytes>"
//	}
//
// "metrics": true lets a user or token read the HTTP listener's /metrics
// without being an admin (a scraper's token; Principal.MayReadMetrics).
//
// Passwords are stored as bcrypt hashes (`fluxgate auth hash-password`, or
// `htpasswd -bnBC 10 "" PASSWORD | tr -d ':\n'`); static API tokens, for
// services, as the hex SHA-256 of the token (`fluxgate auth hash-token`).
//
// Handshake with basic credentials returns a signed bearer token,
// "v1.<base64url(payload)>.<base64url(HMAC-SHA256(secret, "v1."+payload))>",
// whose payload is {"sub": name, "exp": unix seconds, "adm": admin}. Tokens are
// stateless: any server holding the same token_secret and users file accepts
// them until they expire. Without token_secret the secret is random at start,
// so tokens do not survive a restart and are not accepted by other replicas.
package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"golang.org/x/crypto/bcrypt"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultTTL is how long a token from Handshake is valid by default.
const DefaultTTL = time.Hour

// MinSecretBytes is the shortest token_secret accepted.
const MinSecretBytes = 32

// tokenVersion prefixes every signed token; a new format gets a new prefix.
const tokenVersion = "v1"

// Principal is who a caller is.
type Principal struct {
	Name  string
	Admin bool
	// Metrics: may read the server's /metrics (which names every table)
	// without being an admin.
	Metrics bool
}

// MayReadMetrics reports whether p may read /metrics: admins, and users or
// tokens with "metrics": true (a Prometheus scraper's).
func (p Principal) MayReadMetrics() bool { return p.Admin || p.Metrics }

// FromContext returns the principal the server's auth middleware put in ctx.
// ok is false when the server runs without users.
func FromContext(ctx context.Context) (p Principal, ok bool) {
	p, ok = flight.AuthFromContext(ctx).(Principal)
	return p, ok
}

// User is one entry of the users file's "users".
type User struct {
	Name           string `json:"name"`
	PasswordBcrypt string `json:"password_bcrypt"`
	Admin          bool   `json:"admin,omitempty"`
	Metrics        bool   `json:"metrics,omitempty"`
}

// Token is one entry of the users file's "tokens": a static API token.
type Token struct {
	Name        string `json:"name"`
	TokenSHA256 string `json:"token_sha256"`
	Admin       bool   `json:"admin,omitempty"`
	Metrics     bool   `json:"metrics,omitempty"`
}

// Users is the parsed users file.
type Users struct {
	Users       []User  `json:"users"`
	Tokens      []Token `json:"tokens,omitempty"`
	TokenSecret string  `json:"token_secret,omitempty"`

	byName map[string]User
	tokens []staticToken
	secret []byte // decoded TokenSecret; nil if not set
}

type staticToken struct {
	hash [sha256.Size]byte
	Principal
}

// LoadUsers reads and checks a users file.
func LoadUsers(path string) (*Users, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	u, err := ParseUsers(raw)
	if err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	return u, nil
}

// ParseUsers parses and checks the JSON of a users file. Unknown keys, empty
// or repeated names (users and tokens share one namespace), unparsable bcrypt
// hashes, token hashes that are not 64 hex digits and a token_secret shorter
// than MinSecretBytes are errors.
func ParseUsers(raw []byte) (*Users, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	u := &Users{}
	if err := dec.Decode(u); err != nil {
		return nil, err
	}
	if len(u.Users) == 0 && len(u.Tokens) == 0 {
		return nil, errors.New("no users and no tokens")
	}
	seen := map[string]bool{}
	named := func(kind, name string) error {
		if name == "" {
			return fmt.Errorf("a %s without a name", kind)
		}
		if seen[name] {
			return fmt.Errorf("%s %q: the name is used twice", kind, name)
		}
		seen[name] = true
		return nil
	}
	u.byName = make(map[string]User, len(u.Users))
	for _, usr := range u.Users {
		if err := named("user", usr.Name); err != nil {
			return nil, err
		}
		if _, err := bcrypt.Cost([]byte(usr.PasswordBcrypt)); err != nil {
			return nil, fmt.Errorf("user %q: password_bcrypt: %w", usr.Name, err)
		}
		u.byName[usr.Name] = usr
	}
	for _, tok := range u.Tokens {
		if err := named("token", tok.Name); err != nil {
			return nil, err
		}
		h, err := hex.DecodeString(tok.TokenSHA256)
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("token %q: token_sha256: want 64 hex digits (fluxgate auth hash-token)", tok.Name)
		}
		st := staticToken{Principal: Principal{Name: tok.Name, Admin: tok.Admin, Metrics: tok.Metrics}}
		copy(st.hash[:], h)
		u.tokens = append(u.tokens, st)
	}
	if u.TokenSecret != "" {
		s, err := base64.StdEncoding.DecodeString(u.TokenSecret)
		if err != nil {
			return nil, fmt.Errorf("token_secret: %w", err)
		}
		if len(s) < MinSecretBytes {
			return nil, fmt.Errorf("token_secret: %d bytes, want at least %d (fluxgate auth new-secret)", len(s), MinSecretBytes)
		}
		u.secret = s
	}
	return u, nil
}

// HasSecret reports whether the file sets token_secret.
func (u *Users) HasSecret() bool { return u.secret != nil }

// HashPassword returns the bcrypt hash of password at bcrypt's default cost.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	return string(h), err
}

// HashToken returns the hex SHA-256 of a static API token, as the users file
// stores it.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// NewSecret returns a random token_secret, base64.
func NewSecret() string {
	b := make([]byte, MinSecretBytes)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// Options configure an Authenticator. The zero value means the defaults.
type Options struct {
	TTL time.Duration    // lifetime of tokens from Handshake; default DefaultTTL
	Now func() time.Time // clock; default time.Now
	// After is the timer of handshakes waiting for the throttle; default
	// time.After. Tests give it a clock of theirs, with Now.
	After func(time.Duration) <-chan time.Time
	// Throttle limits failed handshakes per client address (Middleware).
	Throttle ThrottleOptions
}

// Authenticator checks passwords and tokens. It implements
// flight.BasicAuthValidator; a server serves its Middleware, which is
// arrow-go's basic auth behind the throttle of failed handshakes per client
// address. IsValid's identity (flight.AuthFromContext, FromContext) is a
// Principal. Errors are gRPC UNAUTHENTICATED.
type Authenticator struct {
	users    *Users
	secret   []byte
	ttl      time.Duration
	now      func() time.Time
	throttle *Throttle
}

var _ flight.BasicAuthValidator = (*Authenticator)(nil)

// dummyHash is compared against when the user is unknown, so that an unknown
// user costs as long as a wrong password. It is a constant (bcrypt of
// "fluxgate-dummy" at bcrypt.DefaultCost): computed at init, it cost every
// start of the binary, each CLI command included, 0.1 s.
var dummyHash = []byte("$2a$10$rDguujFHjqV/Vnsu8BKMVu9NX08Ry6XPZN0lyHKMe0MXbowrxdL9y")

// New returns an Authenticator for users. Without token_secret in users the
// signing secret is random (see the package comment).
func New(users *Users, opts Options) (*Authenticator, error) {
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.TTL < time.Second {
		return nil, fmt.Errorf("token TTL %v: want at least 1s", opts.TTL)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	secret := users.secret
	if secret == nil {
		secret = make([]byte, MinSecretBytes)
		if _, err := rand.Read(secret); err != nil {
			return nil, err
		}
	}
	return &Authenticator{users: users, secret: secret, ttl: opts.TTL, now: opts.Now,
		throttle: NewThrottle(opts.Throttle, opts.Now, opts.After)}, nil
}

// Errors of Login and Verify (wrapped in gRPC status by Validate and IsValid).
var (
	ErrBadCredentials = errors.New("unknown user or wrong password")
	ErrExpired        = errors.New("token expired")
	ErrBadToken       = errors.New("invalid token")
)

func unauthenticated(err error) error { return status.Error(codes.Unauthenticated, err.Error()) }

// Validate checks a user's password and returns a signed bearer token.
func (a *Authenticator) Validate(user, password string) (string, error) {
	tok, err := a.Login(user, password)
	if err != nil {
		return "", unauthenticated(err)
	}
	return tok, nil
}

// IsValid checks a bearer token, signed or static, and returns its Principal.
func (a *Authenticator) IsValid(token string) (any, error) {
	p, err := a.Verify(token)
	if err != nil {
		return nil, unauthenticated(err)
	}
	return p, nil
}

// Login checks a user's password and returns a signed token.
func (a *Authenticator) Login(user, password string) (string, error) {
	usr, ok := a.users.byName[user]
	if !ok {
		bcrypt.CompareHashAndPassword(dummyHash, []byte(password))
		return "", ErrBadCredentials
	}
	if bcrypt.CompareHashAndPassword([]byte(usr.PasswordBcrypt), []byte(password)) != nil {
		return "", ErrBadCredentials
	}
	return a.Issue(Principal{Name: usr.Name, Admin: usr.Admin}), nil
}

type claims struct {
	Sub string `json:"sub"`
	Exp int64  `json:"exp"`
	Adm bool   `json:"adm,omitempty"`
}

// Issue returns a signed token for p that expires after the TTL.
func (a *Authenticator) Issue(p Principal) string {
	payload, _ := json.Marshal(claims{Sub: p.Name, Exp: a.now().Add(a.ttl).Unix(), Adm: p.Admin})
	signed := tokenVersion + "." + base64.RawURLEncoding.EncodeToString(payload)
	return signed + "." + base64.RawURLEncoding.EncodeToString(a.mac(signed))
}

func (a *Authenticator) mac(signed string) []byte {
	m := hmac.New(sha256.New, a.secret)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Verify checks a token: a static API token from the users file, or a signed
// token with a good MAC, not expired, whose user is still in the users file
// (a user's admin flag is the file's, so removing it takes effect at once).
func (a *Authenticator) Verify(token string) (Principal, error) {
	if p, ok := a.static(token); ok {
		return p, nil
	}
	signed, mac64, ok := cutLast(token)
	if !ok || !strings.HasPrefix(signed, tokenVersion+".") {
		return Principal{}, ErrBadToken
	}
	mac, err := base64.RawURLEncoding.DecodeString(mac64)
	if err != nil || !hmac.Equal(mac, a.mac(signed)) {
		return Principal{}, ErrBadToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(signed, tokenVersion+"."))
	if err != nil {
		return Principal{}, ErrBadToken
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Principal{}, ErrBadToken
	}
	if a.now().Unix() >= c.Exp {
		return Principal{}, ErrExpired
	}
	usr, ok := a.users.byName[c.Sub]
	if !ok {
		return Principal{}, fmt.Errorf("%w: user %q is no longer configured", ErrBadToken, c.Sub)
	}
	return Principal{Name: usr.Name, Admin: c.Adm && usr.Admin, Metrics: usr.Metrics}, nil
}

// static compares token's hash with every static token in constant time.
func (a *Authenticator) static(token string) (Principal, bool) {
	h := sha256.Sum256([]byte(token))
	var found Principal
	ok := false
	for _, st := range a.users.tokens {
		if subtle.ConstantTimeCompare(h[:], st.hash[:]) == 1 {
			found, ok = st.Principal, true
		}
	}
	return found, ok
}

func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}
