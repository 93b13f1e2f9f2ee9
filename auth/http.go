package auth

import (
	"errors"
	"net"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrNoCredentials is Request's error for a request without an
// Authorization header of a scheme it takes.
var ErrNoCredentials = errors.New("no credentials: send Authorization: Bearer <token> or Basic <user:password>")

// Request returns who sent an HTTP request (the served Iceberg catalog):
// "Authorization: Bearer <token>" takes the tokens Flight takes (signed by
// Handshake, or static API tokens), and "Basic" a user's password, checked
// behind the same throttle of failures per client address as Handshake.
// Errors are ErrNoCredentials, ErrBadCredentials, ErrBadToken, ErrExpired,
// or a gRPC RESOURCE_EXHAUSTED status from the throttle.
func (a *Authenticator) Request(r *http.Request) (Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(h, " ")
	switch {
	case strings.EqualFold(scheme, "bearer"):
		return a.Verify(strings.TrimSpace(cred))
	case strings.EqualFold(scheme, "basic"):
		user, password, ok := r.BasicAuth()
		if !ok {
			return Principal{}, ErrBadCredentials
		}
		return a.password(r, user, password)
	}
	return Principal{}, ErrNoCredentials
}

func (a *Authenticator) password(r *http.Request, user, password string) (Principal, error) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	end, err := a.throttle.Acquire(r.Context(), host)
	if err != nil {
		return Principal{}, err
	}
	tok, err := a.Login(user, password)
	end(err != nil)
	if err != nil {
		return Principal{}, err
	}
	return a.Verify(tok)
}

// Throttled reports whether err is the throttle's refusal of an address
// whose password checks keep failing.
func Throttled(err error) bool { return status.Code(err) == codes.ResourceExhausted }

// SetRetryAfter sets HTTP's Retry-After on h (for a 429) when err is the
// throttle's refusal, to the whole seconds until it lets a check through.
func SetRetryAfter(h http.Header, err error) {
	if d, ok := RetryAfter(err); ok {
		h.Set("Retry-After", retryAfterSeconds(d))
	}
}
