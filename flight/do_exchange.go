package flight

// DoExchange serves streaming lookups (PROTOCOL.md §6.1). Contract: the
// descriptor is CMD {"lookup": {"table", "columns", "prefix",
// "insert_if_not_exists"}}; the client writes record batches of keys (the
// primary-key columns, or the bucket-key columns for a prefix lookup) and the
// server answers each with a batch: `_key_index` (the key's row in the
// request) and the requested columns, in ascending `_key_index`, with
// app_metadata {"keys": n, "rows": m}, in slices under 4 MiB marked "more"
// but the last (lookup_answer.go). A lookup sees every write acknowledged
// before it was sent.

import (
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

func (s *Service) DoExchange(stream flight.FlightService_DoExchangeServer) error {
	done, err := s.limits.openStream(stream.Context(), "DoExchange")
	if err != nil {
		return s.toStatus("DoExchange", err)
	}
	defer done()
	return s.toStatus("DoExchange", s.doExchange(stream))
}

func (s *Service) doExchange(stream flight.FlightService_DoExchangeServer) error {
	// Lookups are not held against the write budget: a lookup client keeps
	// its stream open between bursts, and would hold it all the while.
	in, err := s.openIntake("DoExchange", stream, nil)
	if err != nil {
		return err
	}
	defer in.Release()
	req, err := lookupRequest(in.Descriptor())
	if err != nil {
		return err
	}
	tagTable(stream.Context(), req.Table)
	if err := s.authorizeTable(stream.Context(), "DoExchange", lookupOp(req.InsertIfNotExists), req.Table); err != nil {
		return err
	}
	if req.Keys != nil {
		return errs.New(errs.InvalidArgument, `DoExchange: "keys" belongs to inline lookups (GetFlightInfo); send key batches instead`)
	}
	l, err := s.eng.OpenLookup(req)
	if err != nil {
		return err
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(l.Schema()), ipc.WithAllocator(s.mem))
	defer w.Close()
	ctx := stream.Context()
	for in.Next() {
		ans, meta, err := l.Lookup(ctx, in.Batch())
		if err != nil {
			return err
		}
		err = s.sendLookupAnswer(w, ans, meta)
		ans.Release()
		if err != nil {
			return err
		}
	}
	return in.Err()
}

// lookupRequest reads the lookup a descriptor asks for.
func lookupRequest(d *flight.FlightDescriptor) (protocol.LookupRequest, error) {
	if d == nil || d.Type != flight.DescriptorCMD {
		return protocol.LookupRequest{}, errs.New(errs.InvalidArgument, `DoExchange: the descriptor must be a CMD {"lookup": ...}`)
	}
	c, err := parseCommand(d)
	if err != nil {
		return protocol.LookupRequest{}, err
	}
	if c.Lookup == nil {
		return protocol.LookupRequest{}, errs.New(errs.InvalidArgument, `DoExchange: the descriptor command must be {"lookup": ...}`)
	}
	return *c.Lookup, nil
}
