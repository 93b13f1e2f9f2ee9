// Package errs gives errors a kind (invalid, not found, ...) so that the front
// ends can map them to status codes in one place. It owns no I/O and no policy:
// a package returns errs.New(errs.InvalidArgument, ...) or wraps one with %w, and
// flight/ turns errs.KindOf(err) into a gRPC code.
package errs

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Kind classifies an error by what the caller can do about it.
type Kind int

// The kinds, one per row of PROTOCOL.md §1.
const (
	Internal           Kind = iota // a bug
	InvalidArgument                // malformed request, whatever the table
	NotFound                       // table, database, column not found
	AlreadyExists                  // create of something that exists
	FailedPrecondition             // well-formed, but this table's kind, options or state forbid it
	OutOfRange                     // offset outside the retained range
	DataLoss                       // data expired while a stream was open
	ResourceExhausted              // over a limit
	Unauthenticated                // missing or bad credentials
	PermissionDenied               // authenticated but not allowed
	Unimplemented                  // not implemented yet
	Unavailable                    // shutting down or transient; safe to retry
)

var kindNames = [...]string{
	Internal:           "internal",
	InvalidArgument:    "invalid argument",
	NotFound:           "not found",
	AlreadyExists:      "already exists",
	FailedPrecondition: "failed precondition",
	OutOfRange:         "out of range",
	DataLoss:           "data loss",
	ResourceExhausted:  "resource exhausted",
	Unauthenticated:    "unauthenticated",
	PermissionDenied:   "permission denied",
	Unimplemented:      "unimplemented",
	Unavailable:        "unavailable",
}

func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return kindNames[k]
}

// Error is an error with a kind. Wrap it with fmt.Errorf("context: %w", err)
// to add context; the kind survives.
type Error struct {
	Kind  Kind
	msg   string
	cause error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.cause }

// New returns an error of kind k with a formatted message. Like fmt.Errorf, a
// %w verb wraps a cause (whose own kind, if any, is shadowed by k).
func New(k Kind, format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: k, msg: err.Error(), cause: errors.Unwrap(err)}
}

// KindOf reports the kind of the outermost kinded error in err's chain, and
// Internal for errors without one.
func KindOf(err error) Kind {
	var ke *Error
	if errors.As(err, &ke) {
		return ke.Kind
	}
	return Internal
}

// Is reports whether err has kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// QuoteMax is how many bytes of a client's string an error message quotes.
const QuoteMax = 64

// Quote quotes s for an error message, cut to its first QuoteMax bytes (at a
// character boundary) and marked "..." when cut: an error echoes what the
// client sent, and must stay small whatever that was. Every message that
// names a client's string uses it, or Cut where a message shows it unquoted.
func Quote(s string) string {
	short, cut := shorten(s)
	if cut {
		return strconv.Quote(short) + "..."
	}
	return strconv.Quote(s)
}

// Cut is Quote without the quotes: for messages that show a value as it is
// (Fluss's partition messages).
func Cut(s string) string {
	short, cut := shorten(s)
	if cut {
		return short + "..."
	}
	return s
}

// shorten returns s's first QuoteMax bytes, ending at a character boundary,
// and whether that is less than s.
func shorten(s string) (string, bool) {
	if len(s) <= QuoteMax {
		return s, false
	}
	n := QuoteMax
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
