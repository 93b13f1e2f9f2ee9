package flight

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// stringVariants returns doc once for every string in it, each value and
// each object key in turn, with that string replaced by with.
func stringVariants(t *testing.T, doc string, with string) [][]byte {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	var out [][]byte
	for k := 0; ; k++ {
		n := 0
		changed := replaceString(v, k, &n, with)
		if n <= k {
			return out
		}
		b, err := json.Marshal(changed)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
}

// replaceString returns a copy of v with its k-th string replaced; n counts
// the strings met.
func replaceString(v any, k int, n *int, with string) any {
	switch v := v.(type) {
	case string:
		*n++
		if *n-1 == k {
			return with
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = replaceString(e, k, n, with)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			e := replaceString(v[key], k, n, with)
			*n++
			if *n-1 == k {
				key = with
			}
			out[key] = e
		}
		return out
	}
	return v
}

// Every error answers a client's string by quoting at most errs.QuoteMax
// bytes of it (PROTOCOL.md §2), whatever field, key, filter operand or
// lookup key it stands in, and in every action, command and ticket: so that
// no request, however large its strings, makes a large error message. Each
// string of a good request is replaced in turn by a long string that no
// rule allows: longer than any name, id, comment or option, shorter than the
// limit on any string (protocol.MaxStringBytes), so that it reaches the
// check of its field.
func TestErrorsQuoteClientStringsShort(t *testing.T) {
	const maxMessage = 1024 // a few quoted strings, names and expectations
	s := actionService(t)
	ctx := context.Background()
	check := func(what string, doc []byte, err error) {
		t.Helper()
		if err == nil {
			return
		}
		if errs.KindOf(err) == errs.Internal {
			t.Errorf("%s %.200s: unkinded error %v", what, doc, err)
		}
		if msg := err.Error(); len(msg) > maxMessage {
			t.Errorf("%s %.200s: a message of %d bytes: %.300s", what, doc, len(msg), msg)
		}
	}
	tickets := seedTickets(t, s)
	for _, with := range []string{strings.Repeat("%", 5000)} {
		for name, bodies := range actionSeeds {
			for _, body := range bodies {
				for _, v := range stringVariants(t, body, with) {
					_, err := handlers[name](s, ctx, v)
					check(name, v, err)
				}
			}
		}
		for _, cmd := range commandSeeds {
			for _, v := range stringVariants(t, cmd, with) {
				d := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: v}
				if bytes.HasPrefix(v, []byte(`{"write"`)) {
					req, err := writeRequest(d)
					if err == nil {
						_, err = s.eng.OpenWrite(req)
					}
					check("DoPut", v, err)
					continue
				}
				_, err := s.flightInfo(ctx, "GetFlightInfo", d)
				check("GetFlightInfo", v, err)
			}
		}
		for _, tk := range tickets {
			for _, v := range stringVariants(t, tk, with) {
				check("DoGet", v, redeemTicket(ctx, s, v))
			}
		}
	}
}

// redeemTicket runs a ticket as DoGet does, discarding what it reads.
func redeemTicket(ctx context.Context, s *Service, b []byte) error {
	tk, err := engine.ParseTicket(b)
	if err != nil {
		return err
	}
	if tk.View == protocol.ViewLookup {
		ans, _, err := s.eng.InlineLookup(ctx, tk)
		if err == nil {
			ans.Release()
		}
		return err
	}
	rs, err := s.eng.OpenRead(tk)
	if err != nil {
		return err
	}
	return rs.Run(ctx, func(arrow.RecordBatch, protocol.BatchMeta) error { return nil })
}
