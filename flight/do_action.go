package flight

// DoAction and ListActions. Contract: every action takes a JSON body and
// returns one Result whose body is JSON (PROTOCOL.md §3); unknown fields in a
// body are INVALID_ARGUMENT. The actions are the rows of the table below, and
// ListActions lists exactly them. Each checks the caller's permission
// (authorize.go) once its body is decoded, before it touches the engine.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// handler decodes an action's body, checks the caller's permission
// (authorize.go) and runs the action.
type handler func(s *Service, ctx context.Context, body []byte) (any, error)

// handlers has one handler per protocol.Actions row (TestEveryActionHasAHandler).
var handlers = map[string]handler{
	protocol.ActionCreateDatabase: (*Service).createDatabase,
	protocol.ActionDropDatabase:   (*Service).dropDatabase,
	protocol.ActionListDatabases:  (*Service).listDatabases,
	protocol.ActionCreateTable:    (*Service).createTable,
	protocol.ActionDropTable:      (*Service).dropTable,
	protocol.ActionDescribeTable:  (*Service).describeTable,
	protocol.ActionListTables:     (*Service).listTables,
	protocol.ActionAlterTable:     (*Service).alterTable,
	protocol.ActionListOffsets:    (*Service).listOffsets,
	protocol.ActionLakeSnapshot:   (*Service).lakeSnapshot,
	protocol.ActionTierNow:        (*Service).tierNow,
	protocol.ActionCompactLake:    (*Service).compactLake,
	protocol.ActionUndo:           (*Service).undo,
	protocol.ActionWriterState:    (*Service).writerState,
	protocol.ActionTableStats:     (*Service).tableStats,
	protocol.ActionGrant:          (*Service).grant,
	protocol.ActionRevoke:         (*Service).revoke,
	protocol.ActionListGrants:     (*Service).listGrants,

	// Partitioned tables (partitions.go).
	protocol.ActionCreatePartition: (*Service).createPartition,
	protocol.ActionDropPartition:   (*Service).dropPartition,
	protocol.ActionListPartitions:  (*Service).listPartitions,

	// Undo recovery's producer offsets (producer_offsets.go).
	protocol.ActionRegisterProducerOffsets: (*Service).registerProducerOffsets,
	protocol.ActionGetProducerOffsets:      (*Service).getProducerOffsets,
	protocol.ActionDeleteProducerOffsets:   (*Service).deleteProducerOffsets,
}

// sortedActions are protocol.Actions in name order, as ListActions lists them.
var sortedActions = slices.SortedFunc(slices.Values(protocol.Actions), func(a, b protocol.Action) int {
	return strings.Compare(a.Name, b.Name)
})

func (s *Service) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	for _, a := range sortedActions {
		if err := stream.Send(&flight.ActionType{Type: a.Name, Description: a.Description()}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	run, ok := handlers[a.Type]
	if !ok {
		return s.toStatus("DoAction", s.unknownAction(a.Type))
	}
	body := a.Body
	if len(body) == 0 {
		body = []byte("{}")
	}
	res, err := run(s, stream.Context(), body)
	if err != nil {
		return s.toStatus("DoAction", err)
	}
	out, err := json.Marshal(res)
	if err != nil {
		return s.toStatus("DoAction", err)
	}
	return stream.Send(&flight.Result{Body: out})
}

func (s *Service) unknownAction(name string) error {
	return errs.New(errs.InvalidArgument, "unknown action %q (ListActions lists them)", name)
}

func decode[T any](body []byte, action string) (T, error) {
	var v T
	err := protocol.DecodeJSON(body, action, &v)
	return v, err
}

func (s *Service) createDatabase(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.CreateDatabaseRequest](body, protocol.ActionCreateDatabase)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, protocol.ActionCreateDatabase, acl.Create, acl.Resource{Database: req.Database}); err != nil {
		return nil, err
	}
	if err := s.eng.CreateDatabase(req.Database, req.IfNotExists); err != nil {
		return nil, err
	}
	return protocol.DatabaseResult{Database: req.Database}, nil
}

func (s *Service) dropDatabase(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.DropDatabaseRequest](body, protocol.ActionDropDatabase)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, protocol.ActionDropDatabase, acl.Drop, acl.Resource{Database: req.Database}); err != nil {
		return nil, err
	}
	return protocol.Empty{}, s.eng.DropDatabase(ctx, req.Database, req.IfExists, req.Cascade)
}

func (s *Service) listDatabases(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.ListDatabasesRequest](body, protocol.ActionListDatabases)
	if err != nil {
		return nil, err
	}
	dbs := []string{}
	for _, db := range s.eng.ListDatabases() {
		if s.maysee(ctx, db) {
			dbs = append(dbs, db)
		}
	}
	p, err := pageOf(dbs, func(db string) string { return db }, req.PageRequest, protocol.ActionListDatabases)
	return listing{"databases", p}, err
}

// listing is the answer of a paged listing: {"<name>": [...], "next_page_token": "..."}.
type listing struct {
	name string
	page
}

func (l listing) MarshalJSON() ([]byte, error) {
	m := map[string]any{l.name: l.items}
	if l.next != "" {
		m["next_page_token"] = l.next
	}
	return json.Marshal(m)
}

func (s *Service) createTable(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.CreateTableRequest](body, protocol.ActionCreateTable)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeDatabaseOf(ctx, protocol.ActionCreateTable, acl.Create, req.Table); err != nil {
		return nil, err
	}
	return s.eng.CreateTable(ctx, req.TableSpec, req.IfNotExists)
}

func (s *Service) dropTable(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.DropTableRequest](body, protocol.ActionDropTable)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionDropTable, acl.Drop, req.Table); err != nil {
		return nil, err
	}
	return protocol.Empty{}, s.eng.DropTable(ctx, req.Table, req.IfExists)
}

func (s *Service) describeTable(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableRequest](body, protocol.ActionDescribeTable)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionDescribeTable, acl.Describe, req.Table); err != nil {
		return nil, err
	}
	t, err := s.eng.DescribeTable(req.Table)
	if err != nil {
		return nil, err
	}
	return t.Info, nil
}

func (s *Service) listTables(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.ListTablesRequest](body, protocol.ActionListTables)
	if err != nil {
		return nil, err
	}
	if err := s.authorizeDatabaseListing(ctx, protocol.ActionListTables, req.Database); err != nil {
		return nil, err
	}
	all, err := s.eng.ListTables(req.Database)
	if err != nil {
		return nil, err
	}
	tables := []*protocol.TableInfo{}
	keys := map[*protocol.TableInfo]string{} // by database, then table
	for _, t := range all {
		if s.may(ctx, acl.Describe, t.Path.Database, t.Path.Table) {
			tables = append(tables, t.Info)
			keys[t.Info] = t.Path.Database + "\x00" + t.Path.Table
		}
	}
	key := func(t *protocol.TableInfo) string { return keys[t] }
	p, err := pageOf(tables, key, req.PageRequest, protocol.ActionListTables)
	return listing{"tables", p}, err
}

func (s *Service) alterTable(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.AlterTableRequest](body, protocol.ActionAlterTable)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionAlterTable, acl.Alter, req.Table); err != nil {
		return nil, err
	}
	return s.eng.AlterTable(ctx, req.Table, req.Set, req.Reset, req.AddColumns)
}

func (s *Service) listOffsets(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.OffsetsRequest](body, protocol.ActionListOffsets)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionListOffsets, acl.Describe, req.Table); err != nil {
		return nil, err
	}
	return s.eng.ListOffsets(ctx, req)
}

func (s *Service) undo(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.UndoRequest](body, protocol.ActionUndo)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionUndo, acl.Write, req.Table); err != nil {
		return nil, err
	}
	return s.eng.Undo(ctx, req)
}

// writerState needs write: only a writer of the table has use for it.
func (s *Service) writerState(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.WriterStateRequest](body, protocol.ActionWriterState)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionWriterState, acl.Write, req.Table); err != nil {
		return nil, err
	}
	return s.eng.WriterState(ctx, req)
}

func lakeResult(snap protocol.LakeSnapshot, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return snap, nil
}

func (s *Service) lakeSnapshot(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableRequest](body, protocol.ActionLakeSnapshot)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionLakeSnapshot, acl.Describe, req.Table); err != nil {
		return nil, err
	}
	return lakeResult(s.eng.LakeSnapshot(ctx, req.Table))
}

// tierNow needs write: it writes the table's rows into the lake.
func (s *Service) tierNow(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableRequest](body, protocol.ActionTierNow)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionTierNow, acl.Write, req.Table); err != nil {
		return nil, err
	}
	return lakeResult(s.eng.TierNow(ctx, req.Table))
}

// compactLake needs write: it rewrites the table's lake files.
func (s *Service) compactLake(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableRequest](body, protocol.ActionCompactLake)
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, protocol.ActionCompactLake, acl.Write, req.Table); err != nil {
		return nil, err
	}
	st, err := s.eng.CompactLake(ctx, req.Table)
	if err != nil {
		return nil, err
	}
	return st, nil
}

func (s *Service) grantBody(ctx context.Context, body []byte, action string) (acl.Grant, error) {
	if err := s.authorizeAdmin(ctx, action, action); err != nil {
		return acl.Grant{}, err
	}
	req, err := decode[protocol.Grant](body, action)
	if err != nil {
		return acl.Grant{}, err
	}
	g := acl.Grant{Principal: req.Principal, Resource: acl.Resource{Database: req.Database, Table: req.Table}}
	for _, name := range req.Operations {
		op, err := acl.ParseOperation(name)
		if err != nil {
			return acl.Grant{}, err
		}
		g.Operations = append(g.Operations, op)
	}
	return g, nil
}

func (s *Service) grant(ctx context.Context, body []byte) (any, error) {
	g, err := s.grantBody(ctx, body, protocol.ActionGrant)
	if err != nil {
		return nil, err
	}
	if err := s.acl.Grant(g); err != nil {
		return nil, err
	}
	s.log.Info("granted", "principal", g.Principal, "resource", g.Resource.String(), "operations", g.Operations)
	return protocol.Empty{}, nil
}

func (s *Service) revoke(ctx context.Context, body []byte) (any, error) {
	g, err := s.grantBody(ctx, body, protocol.ActionRevoke)
	if err != nil {
		return nil, err
	}
	if err := s.acl.Revoke(g); err != nil {
		return nil, err
	}
	s.log.Info("revoked", "principal", g.Principal, "resource", g.Resource.String(), "operations", g.Operations)
	return protocol.Empty{}, nil
}

func (s *Service) listGrants(ctx context.Context, body []byte) (any, error) {
	if err := s.authorizeAdmin(ctx, protocol.ActionListGrants, protocol.ActionListGrants); err != nil {
		return nil, err
	}
	req, err := decode[protocol.ListGrantsRequest](body, protocol.ActionListGrants)
	if err != nil {
		return nil, err
	}
	key := func(g acl.Grant) string { return g.Principal + "\x00" + g.Database + "\x00" + g.Table }
	p, err := pageOf(s.acl.List(req.Principal), key, req.PageRequest, protocol.ActionListGrants)
	return listing{"grants", p}, err
}
