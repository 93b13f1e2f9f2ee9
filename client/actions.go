package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/fluxgate-io/fluxgate/protocol"
)

// The actions of PROTOCOL.md §3.
const (
	ActionCreateDatabase = protocol.ActionCreateDatabase
	ActionDropDatabase   = protocol.ActionDropDatabase
	ActionListDatabases  = protocol.ActionListDatabases
	ActionCreateTable    = protocol.ActionCreateTable
	ActionDropTable      = protocol.ActionDropTable
	ActionDescribeTable  = protocol.ActionDescribeTable
	ActionListTables     = protocol.ActionListTables
	ActionAlterTable     = protocol.ActionAlterTable
	ActionListOffsets    = protocol.ActionListOffsets
	ActionLakeSnapshot   = protocol.ActionLakeSnapshot
	ActionTierNow        = protocol.ActionTierNow
	ActionCompactLake    = protocol.ActionCompactLake
	ActionUndo           = protocol.ActionUndo
	ActionWriterState    = protocol.ActionWriterState
	ActionListGrants     = protocol.ActionListGrants
)

// Action runs the action name with body marshalled as JSON (nil sends {};
// []byte and json.RawMessage are sent as they are) and decodes the JSON
// result into result, unless result is nil. An error from the server keeps
// its gRPC status.
func (c *Client) Action(ctx context.Context, name string, body, result any) error {
	var payload []byte
	switch b := body.(type) {
	case nil:
		payload = []byte("{}")
	case []byte:
		payload = b
	case json.RawMessage:
		payload = b
	default:
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("%s: encode body: %w", name, err)
		}
	}
	stream, err := c.fc.DoAction(ctx, &flight.Action{Type: name, Body: payload})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	first, err := stream.Recv()
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err == nil {
		// One result per action; drain to see the call's final status.
		if err := flight.ReadUntilEOF(stream); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if result == nil {
		return nil
	}
	if first == nil || len(bytes.TrimSpace(first.Body)) == 0 {
		return fmt.Errorf("%s: the server returned no result", name)
	}
	if raw, ok := result.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], first.Body...)
		return nil
	}
	if err := json.Unmarshal(first.Body, result); err != nil {
		return fmt.Errorf("%s: decode result %q: %w", name, truncate(first.Body), err)
	}
	return nil
}

// ListActions lists the actions the server offers.
func (c *Client) ListActions(ctx context.Context) ([]*flight.ActionType, error) {
	stream, err := c.fc.ListActions(ctx, &flight.Empty{})
	if err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	var out []*flight.ActionType
	for {
		a, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list actions: %w", err)
		}
		out = append(out, a)
	}
}

// CreateDatabase creates a database; with ifNotExists an existing one is fine.
func (c *Client) CreateDatabase(ctx context.Context, name string, ifNotExists bool) error {
	body := protocol.CreateDatabaseRequest{Database: name, IfNotExists: ifNotExists}
	return c.Action(ctx, ActionCreateDatabase, body, nil)
}

// DropDatabase drops a database; cascade drops its tables too.
func (c *Client) DropDatabase(ctx context.Context, name string, ifExists, cascade bool) error {
	body := protocol.DropDatabaseRequest{Database: name, IfExists: ifExists, Cascade: cascade}
	return c.Action(ctx, ActionDropDatabase, body, nil)
}

// ListDatabases returns the names of all databases, following every page.
func (c *Client) ListDatabases(ctx context.Context) ([]string, error) {
	var out []string
	err := c.ListPages(ctx, ActionListDatabases, nil, "databases", func(item json.RawMessage) error {
		var db string
		if err := json.Unmarshal(item, &db); err != nil {
			return err
		}
		out = append(out, db)
		return nil
	})
	return out, err
}

// ListPages runs a paged listing action (list-databases, list-tables,
// list-grants; PROTOCOL.md §3) and calls each with every item of the list
// field, page after page, until the server returns no next_page_token. body
// holds the action's other fields (nil: none).
func (c *Client) ListPages(ctx context.Context, name string, body map[string]any, field string, each func(json.RawMessage) error) error {
	req := map[string]any{}
	for k, v := range body {
		req[k] = v
	}
	for {
		var res map[string]json.RawMessage
		if err := c.Action(ctx, name, req, &res); err != nil {
			return err
		}
		var items []json.RawMessage
		if err := json.Unmarshal(res[field], &items); err != nil {
			return fmt.Errorf("%s: decode %q: %w", name, field, err)
		}
		for _, it := range items {
			if err := each(it); err != nil {
				return fmt.Errorf("%s: decode an item of %q: %w", name, field, err)
			}
		}
		var next string
		if raw, ok := res["next_page_token"]; ok {
			if err := json.Unmarshal(raw, &next); err != nil {
				return fmt.Errorf("%s: decode next_page_token: %w", name, err)
			}
		}
		if next == "" {
			return nil
		}
		req["page_token"] = next
	}
}

// CreateTable creates a table and returns it as stored. With ifNotExists, an
// existing table is returned as it is.
func (c *Client) CreateTable(ctx context.Context, spec TableSpec, ifNotExists bool) (*TableInfo, error) {
	body := protocol.CreateTableRequest{TableSpec: spec, IfNotExists: ifNotExists}
	var info TableInfo
	if err := c.Action(ctx, ActionCreateTable, body, &info); err != nil {
		return nil, fmt.Errorf("table %s: %w", spec.Table, err)
	}
	return &info, nil
}

// DropTable drops a table.
func (c *Client) DropTable(ctx context.Context, name string, ifExists bool) error {
	body := protocol.DropTableRequest{Table: name, IfExists: ifExists}
	if err := c.Action(ctx, ActionDropTable, body, nil); err != nil {
		return fmt.Errorf("table %s: %w", name, err)
	}
	return nil
}

// DescribeTable returns a table's definition.
func (c *Client) DescribeTable(ctx context.Context, name string) (*TableInfo, error) {
	var info TableInfo
	if err := c.Action(ctx, ActionDescribeTable, protocol.TableRequest{Table: name}, &info); err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	return &info, nil
}

// ListTables lists the tables of a database, or of every database when
// database is empty, following every page.
func (c *Client) ListTables(ctx context.Context, database string) ([]TableInfo, error) {
	body := map[string]any{}
	if database != "" {
		body["database"] = database
	}
	var out []TableInfo
	err := c.ListPages(ctx, ActionListTables, body, "tables", func(item json.RawMessage) error {
		var t TableInfo
		if err := json.Unmarshal(item, &t); err != nil {
			return err
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// AlterTable changes a table's options or adds columns, and returns it as
// stored afterwards.
func (c *Client) AlterTable(ctx context.Context, req AlterRequest) (*TableInfo, error) {
	var info TableInfo
	if err := c.Action(ctx, ActionAlterTable, req, &info); err != nil {
		return nil, fmt.Errorf("table %s: %w", req.Table, err)
	}
	return &info, nil
}

// ListOffsets returns, per bucket, the offset at a position: Earliest, Latest
// or AtTimestamp. Nil buckets means all of them.
func (c *Client) ListOffsets(ctx context.Context, table string, at Position, buckets []int) (map[int]int64, error) {
	if at.IsZero() {
		at = Latest
	}
	atJSON, err := json.Marshal(at)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	body := protocol.OffsetsRequest{Table: table, At: atJSON, Buckets: buckets}
	var res protocol.OffsetsResult
	if err := c.Action(ctx, ActionListOffsets, body, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return res.Offsets, nil
}

// LakeSnapshot returns the table's latest lake snapshot (NOT_FOUND before the
// first lake commit).
func (c *Client) LakeSnapshot(ctx context.Context, table string) (*LakeSnapshot, error) {
	var res LakeSnapshot
	if err := c.Action(ctx, ActionLakeSnapshot, protocol.TableRequest{Table: table}, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return &res, nil
}

// TierNow runs one tiering round of the table and returns the lake snapshot
// after it.
func (c *Client) TierNow(ctx context.Context, table string) (*LakeSnapshot, error) {
	var res LakeSnapshot
	if err := c.Action(ctx, ActionTierNow, protocol.TableRequest{Table: table}, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return &res, nil
}

// CompactLake compacts the table's lake now (PROTOCOL.md §7.5).
func (c *Client) CompactLake(ctx context.Context, table string) (*LakeCompaction, error) {
	var res LakeCompaction
	if err := c.Action(ctx, ActionCompactLake, protocol.TableRequest{Table: table}, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return &res, nil
}

// Undo brings buckets of a primary-key table back to their state at the
// given offsets (PROTOCOL.md §5.4); buckets not named are left as they are.
func (c *Client) Undo(ctx context.Context, table string, offsets map[int]int64) (*UndoResult, error) {
	body := protocol.UndoRequest{Table: table, Offsets: protocol.BucketKeys(offsets)}
	var res UndoResult
	if err := c.Action(ctx, ActionUndo, body, &res); err != nil {
		return nil, fmt.Errorf("table %s: %w", table, err)
	}
	return &res, nil
}

// WriterState returns the sequence the idempotent writer's next batch takes
// (PROTOCOL.md §5.3): one past its last applied batch, or 0 when the table
// knows no state of it (never written, or expired). A writer that replays its
// batches in a fixed order skips the first that many.
func (c *Client) WriterState(ctx context.Context, table, writerID string) (int64, error) {
	body := protocol.WriterStateRequest{Table: table, WriterID: writerID}
	var res protocol.WriterState
	if err := c.Action(ctx, ActionWriterState, body, &res); err != nil {
		return 0, fmt.Errorf("table %s, writer %s: %w", table, writerID, err)
	}
	return res.NextSequence, nil
}
