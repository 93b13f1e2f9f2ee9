package flight

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fluxgate-io/fluxgate/errs"
)

// No status carries a message longer than maxMessageBytes (and the note of
// the cut): gRPC sends it in a header that clients take only so much of.
func TestStatusMessagesAreBounded(t *testing.T) {
	s := &Service{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	long := strings.Repeat("é", 1<<20)
	for _, c := range []struct {
		err  error
		code codes.Code
	}{
		{errs.New(errs.NotFound, "column x does not exist (columns: %s)", long), codes.NotFound},
		{errors.New(long), codes.Internal},
	} {
		st := status.Convert(s.toStatus("DoGet", c.err))
		if st.Code() != c.code || len(st.Message()) > maxMessageBytes+64 || !utf8.ValidString(st.Message()) {
			t.Errorf("%.40v: %v, a message of %d bytes", c.err, st.Code(), len(st.Message()))
		}
	}
	if msg := status.Convert(s.toStatus("DoGet", errs.New(errs.InvalidArgument, "short"))).Message(); msg != "short" {
		t.Errorf("a short message became %q", msg)
	}
}
