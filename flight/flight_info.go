package flight

// GetFlightInfo, GetSchema, PollFlightInfo and ListFlights.
//
// Contract: a PATH descriptor [database, table] (a table may carry $changelog)
// or a CMD {"scan": ScanRequest} is planned into one endpoint per bucket (one
// in all for a limited scan) whose tickets are JSON and fix the offsets;
// app_metadata is {"table_id", "schema_id", "buckets", "lake_snapshot_id"}.
// GetSchema returns the same schema without planning data. ListFlights lists
// one FlightInfo per table the caller may describe (criteria: an optional
// database name), without endpoints; each is bounded by the catalog's limit on
// a table definition (catalog.MaxDefinitionBytes). A planned FlightInfo over
// maxInfoBytes is INVALID_ARGUMENT rather than an answer no client accepts.

import (
	"context"
	"encoding/json"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// maxInfoBytes bounds a FlightInfo's schema and tickets, as pageBytes does a
// listing's page, and an inline lookup's ticket, which holds its keys: as
// large as any document a client may send (protocol.MaxDocumentBytes).
const maxInfoBytes = protocol.MaxDocumentBytes

func (s *Service) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	info, err := s.flightInfo(ctx, "GetFlightInfo", d)
	return info, s.toStatus("GetFlightInfo", err)
}

func (s *Service) flightInfo(ctx context.Context, rpc string, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	req, lreq, err := s.authorizedRead(ctx, rpc, d)
	if err != nil {
		return nil, err
	}
	if lreq != nil {
		return s.lookupInfo(d, *lreq)
	}
	plan, err := s.eng.PlanScan(ctx, *req)
	if err != nil {
		return nil, err
	}
	info := &flight.FlightInfo{
		Schema:           flight.SerializeSchema(plan.Schema, s.mem),
		FlightDescriptor: d,
		TotalRecords:     plan.TotalRecords,
		TotalBytes:       -1,
	}
	size := len(info.Schema)
	for _, tk := range plan.Tickets {
		b, err := json.Marshal(tk)
		if err != nil {
			return nil, err
		}
		size += len(b)
		info.Endpoint = append(info.Endpoint, &flight.FlightEndpoint{Ticket: &flight.Ticket{Ticket: b}})
	}
	// Every ticket repeats the filter: a large filter over many buckets
	// would make an answer no client accepts.
	if size > maxInfoBytes {
		return nil, errs.New(errs.InvalidArgument, "%s: the scan's %d endpoints take %d bytes, over the %d a FlightInfo may; read fewer buckets at a time or send a smaller filter",
			rpc, len(plan.Tickets), size, maxInfoBytes)
	}
	info.AppMetadata, err = json.Marshal(protocol.PlanMeta{
		TableID: plan.TableID, SchemaID: plan.SchemaID, Buckets: plan.Buckets, LakeSnapshotID: plan.LakeSnapshotID, Partitions: plan.Partitions,
	})
	return info, err
}

func (s *Service) GetSchema(ctx context.Context, d *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	req, lreq, err := s.authorizedRead(ctx, "GetSchema", d)
	if err != nil {
		return nil, s.toStatus("GetSchema", err)
	}
	var sc *arrow.Schema
	if lreq != nil {
		sc, _, err = s.eng.PlanInlineLookup(*lreq)
	} else {
		sc, err = s.eng.ScanSchema(*req)
	}
	if err != nil {
		return nil, s.toStatus("GetSchema", err)
	}
	return &flight.SchemaResult{Schema: flight.SerializeSchema(sc, s.mem)}, nil
}

// authorizedRead reads what a descriptor asks for and checks that the caller
// may: read for a scan or a lookup, write for a lookup that inserts missing
// keys.
func (s *Service) authorizedRead(ctx context.Context, rpc string, d *flight.FlightDescriptor) (*protocol.ScanRequest, *protocol.LookupRequest, error) {
	req, lreq, err := readRequest(d)
	if err != nil {
		return nil, nil, err
	}
	if lreq != nil {
		tagTable(ctx, lreq.Table)
		err = s.authorizeTable(ctx, rpc, lookupOp(lreq.InsertIfNotExists), lreq.Table)
	} else {
		tagTable(ctx, req.Table)
		err = s.authorizeTable(ctx, rpc, acl.Read, req.Table)
	}
	return req, lreq, err
}

// PollFlightInfo plans at once, so the answer is always complete.
func (s *Service) PollFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.PollInfo, error) {
	info, err := s.flightInfo(ctx, "PollFlightInfo", d)
	if err != nil {
		return nil, s.toStatus("PollFlightInfo", err)
	}
	progress := 1.0
	return &flight.PollInfo{Info: info, Progress: &progress}, nil
}

func (s *Service) ListFlights(c *flight.Criteria, stream flight.FlightService_ListFlightsServer) error {
	var database string
	if c != nil {
		database = string(c.Expression)
	}
	if err := s.authorizeDatabaseListing(stream.Context(), "ListFlights", database); err != nil {
		return s.toStatus("ListFlights", err)
	}
	infos, err := s.eng.ListTables(database)
	if err != nil {
		return s.toStatus("ListFlights", err)
	}
	for _, t := range infos {
		if !s.may(stream.Context(), acl.Describe, t.Path.Database, t.Path.Table) {
			continue
		}
		if err := stream.Send(s.tableFlight(t)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) tableFlight(t engine.TableEntry) *flight.FlightInfo {
	meta, _ := json.Marshal(t.Meta)
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(t.Schema, s.mem),
		FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{t.Path.Database, t.Path.Table}},
		TotalRecords:     -1,
		TotalBytes:       -1,
		AppMetadata:      meta,
	}
}

// lookupInfo plans an inline lookup: one endpoint whose ticket runs it.
func (s *Service) lookupInfo(d *flight.FlightDescriptor, req protocol.LookupRequest) (*flight.FlightInfo, error) {
	sc, tk, err := s.eng.PlanInlineLookup(req)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(tk)
	if err != nil {
		return nil, err
	}
	// The ticket holds the keys; DoGet takes no larger one (a ticket is a
	// client document, protocol.MaxDocumentBytes).
	if len(b) > maxInfoBytes {
		return nil, errs.New(errs.InvalidArgument, "inline lookup of %s: its ticket would take %d bytes with its %d keys, over the %d an inline lookup may; send this many keys as batches through DoExchange",
			req.Table, len(b), len(req.Keys), maxInfoBytes)
	}
	t, err := s.eng.DescribeTable(req.Table)
	if err != nil {
		return nil, err
	}
	meta, _ := json.Marshal(t.Meta)
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(sc, s.mem),
		FlightDescriptor: d,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: b}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
		AppMetadata:      meta,
	}, nil
}
