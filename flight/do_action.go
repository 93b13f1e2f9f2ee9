package flight

// DoAction and ListActions. Contract: every action takes a JSON body and
// returns one Result whose body is JSON (PROTOCOL.md §3); unknown fields in a
// body are INVALID_ARGUMENT. The actions are the rows of the table below, and
// ListActions lists exactly them. Each checks the caller's permission
// (authorize.go) once its body is decoded, before it touches the engine.

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/acl"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

type action struct {
	description string
	// run decodes the body, checks the caller's permission (authorize.go)
	// and runs the action.
	run func(s *Service, ctx context.Context, body []byte) (any, error)
}

var actions = map[string]action{
	"create-database": {"create a database: {\"database\", \"if_not_exists\"}", (*Service).createDatabase},
	"drop-database":   {"drop a database: {\"database\", \"if_exists\", \"cascade\"}", (*Service).dropDatabase},
	"list-databases":  {"list the databases: {\"max_results\", \"page_token\"} (optional); returns {\"databases\", \"next_page_token\"}", (*Service).listDatabases},
	"create-table":    {"create a table: a TableSpec plus \"if_not_exists\"; returns its TableInfo", (*Service).createTable},
	"drop-table":      {"drop a table and its data: {\"table\", \"if_exists\"}", (*Service).dropTable},
	"describe-table":  {"describe a table: {\"table\"}; returns its TableInfo", (*Service).describeTable},
	"list-tables":     {"list tables: {\"database\", \"max_results\", \"page_token\"} (optional); returns {\"tables\": [TableInfo], \"next_page_token\"}", (*Service).listTables},
	"alter-table":     {"change alterable options: {\"table\", \"set\", \"reset\", \"add_columns\"}", (*Service).alterTable},
	"list-offsets":    {"offsets per bucket: {\"table\", \"at\": \"earliest\"|\"latest\"|{\"timestamp\": ms}, \"buckets\"}", (*Service).listOffsets},
	"lake-snapshot":   {"the latest lake snapshot of a table: {\"table\"}; returns {\"snapshot_id\", \"offsets\", \"committed_at\"}", (*Service).lakeSnapshot},
	"tier-now":        {"run one tiering round of a lake-enabled table now: {\"table\"}; returns what lake-snapshot returns", (*Service).tierNow},
	"compact-lake":    {"compact a lake-enabled table's lake now: {\"table\"}; returns lake-snapshot's fields and {\"rewritten_files\", \"added_files\", \"removed_delete_files\", \"orphans_deleted\"}", (*Service).compactLake},
	"undo":            {"restore a primary-key table to per-bucket offsets: {\"table\", \"offsets\": {bucket: offset}}", (*Service).undo},
	"writer-state":    {"where an idempotent writer goes on: {\"table\", \"writer_id\"}; returns {\"next_sequence\"} (0: unknown or expired)", (*Service).writerState},
	"grant":           {"admins: grant operations: {\"principal\", \"database\" (\"*\": all), \"table\" (optional), \"operations\": [read|write|create|drop|alter|describe]}", (*Service).grant},
	"revoke":          {"admins: revoke operations: the body of grant", (*Service).revoke},
	"list-grants":     {"admins: list grants: {\"principal\", \"max_results\", \"page_token\"} (optional); returns {\"grants\": [grant], \"next_page_token\"}", (*Service).listGrants},

	// Partitioned tables (partitions.go).
	protocol.ActionCreatePartition: {"create a partition of a partitioned table: {\"table\", \"partition\": {key: value}, \"if_not_exists\"}; returns {\"partition_id\", \"partition_name\", \"spec\"}", (*Service).createPartition},
	protocol.ActionDropPartition:   {"drop a partition and its data: {\"table\", \"partition\": {key: value}, \"if_exists\"}", (*Service).dropPartition},
	protocol.ActionListPartitions:  {"list a partitioned table's partitions: {\"table\", \"partition\" (a partial spec, optional), \"max_results\", \"page_token\"}; returns {\"partitions\", \"next_page_token\"}", (*Service).listPartitions},

	// Undo recovery's producer offsets (producer_offsets.go).
	"register-producer-offsets": {"store a producer's starting offsets unless stored: {\"producer_id\", \"table\", \"offsets\": {bucket: offset}}; returns {\"result\": \"created\"|\"already_exists\"}", (*Service).registerProducerOffsets},
	"get-producer-offsets":      {"a producer's registered offsets: {\"producer_id\", \"table\"}; returns {\"offsets\"}, or {} if none", (*Service).getProducerOffsets},
	"delete-producer-offsets":   {"forget a producer's registered offsets: {\"producer_id\", \"table\"}", (*Service).deleteProducerOffsets},
}

func (s *Service) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	names := make([]string, 0, len(actions))
	for name := range actions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := stream.Send(&flight.ActionType{Type: name, Description: actions[name].description}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	act, ok := actions[a.Type]
	if !ok {
		return s.toStatus("DoAction", s.unknownAction(a.Type))
	}
	body := a.Body
	if len(body) == 0 {
		body = []byte("{}")
	}
	res, err := act.run(s, stream.Context(), body)
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
	return errs.New(errs.Invalid, "unknown action %q (ListActions lists them)", name)
}

func decode[T any](body []byte, action string) (T, error) {
	var v T
	err := protocol.DecodeJSON(body, action, &v)
	return v, err
}

func (s *Service) createDatabase(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.CreateDatabaseRequest](body, "create-database")
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, "create-database", acl.Create, acl.Resource{Database: req.Database}); err != nil {
		return nil, err
	}
	if err := s.eng.CreateDatabase(req.Database, req.IfNotExists); err != nil {
		return nil, err
	}
	return protocol.DatabaseResult{Database: req.Database}, nil
}

func (s *Service) dropDatabase(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.DropDatabaseRequest](body, "drop-database")
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, "drop-database", acl.Drop, acl.Resource{Database: req.Database}); err != nil {
		return nil, err
	}
	return protocol.Empty{}, s.eng.DropDatabase(ctx, req.Database, req.IfExists, req.Cascade)
}

func (s *Service) listDatabases(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.ListDatabasesRequest](body, "list-databases")
	if err != nil {
		return nil, err
	}
	dbs := []string{}
	for _, db := range s.eng.ListDatabases() {
		if s.maysee(ctx, db) {
			dbs = append(dbs, db)
		}
	}
	p, err := pageOf(dbs, func(db string) string { return db }, req.PageRequest, "list-databases")
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
	req, err := decode[protocol.CreateTableRequest](body, "create-table")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeDatabaseOf(ctx, "create-table", acl.Create, req.Table); err != nil {
		return nil, err
	}
	return s.eng.CreateTable(ctx, req.TableSpec, req.IfNotExists)
}

func (s *Service) dropTable(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.DropTableRequest](body, "drop-table")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "drop-table", acl.Drop, req.Table); err != nil {
		return nil, err
	}
	return protocol.Empty{}, s.eng.DropTable(ctx, req.Table, req.IfExists)
}

func (s *Service) describeTable(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableRequest](body, "describe-table")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "describe-table", acl.Describe, req.Table); err != nil {
		return nil, err
	}
	t, err := s.eng.DescribeTable(req.Table)
	if err != nil {
		return nil, err
	}
	return t.Info, nil
}

func (s *Service) listTables(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.ListTablesRequest](body, "list-tables")
	if err != nil {
		return nil, err
	}
	if err := s.authorizeDatabaseListing(ctx, "list-tables", req.Database); err != nil {
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
	p, err := pageOf(tables, key, req.PageRequest, "list-tables")
	return listing{"tables", p}, err
}

func (s *Service) alterTable(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.AlterTableRequest](body, "alter-table")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "alter-table", acl.Alter, req.Table); err != nil {
		return nil, err
	}
	return s.eng.AlterTable(ctx, req.Table, req.Set, req.Reset, req.AddColumns)
}

func (s *Service) listOffsets(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.OffsetsRequest](body, "list-offsets")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "list-offsets", acl.Describe, req.Table); err != nil {
		return nil, err
	}
	return s.eng.ListOffsets(ctx, req)
}

func (s *Service) undo(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.UndoRequest](body, "undo")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "undo", acl.Write, req.Table); err != nil {
		return nil, err
	}
	return s.eng.Undo(ctx, req)
}

// writerState needs write: only a writer of the table has use for it.
func (s *Service) writerState(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.WriterStateRequest](body, "writer-state")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "writer-state", acl.Write, req.Table); err != nil {
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
	req, err := decode[protocol.TableRequest](body, "lake-snapshot")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "lake-snapshot", acl.Describe, req.Table); err != nil {
		return nil, err
	}
	return lakeResult(s.eng.LakeSnapshot(ctx, req.Table))
}

// tierNow needs write: it writes the table's rows into the lake.
func (s *Service) tierNow(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableRequest](body, "tier-now")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "tier-now", acl.Write, req.Table); err != nil {
		return nil, err
	}
	return lakeResult(s.eng.TierNow(ctx, req.Table))
}

// compactLake needs write: it rewrites the table's lake files.
func (s *Service) compactLake(ctx context.Context, body []byte) (any, error) {
	req, err := decode[protocol.TableRequest](body, "compact-lake")
	if err != nil {
		return nil, err
	}
	tagTable(ctx, req.Table)
	if err := s.authorizeTable(ctx, "compact-lake", acl.Write, req.Table); err != nil {
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
	g, err := s.grantBody(ctx, body, "grant")
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
	g, err := s.grantBody(ctx, body, "revoke")
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
	if err := s.authorizeAdmin(ctx, "list-grants", "list-grants"); err != nil {
		return nil, err
	}
	req, err := decode[protocol.ListGrantsRequest](body, "list-grants")
	if err != nil {
		return nil, err
	}
	key := func(g acl.Grant) string { return g.Principal + "\x00" + g.Database + "\x00" + g.Table }
	p, err := pageOf(s.acl.List(req.Principal), key, req.PageRequest, "list-grants")
	return listing{"grants", p}, err
}
