package conformance

// err-not-found, err-malformed-request and err-unknown-option: requests that
// PROTOCOL.md §1 answers with NOT_FOUND or INVALID_ARGUMENT, with a message
// that names what is wrong, and without changing anything.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

func errNotFound(ctx context.Context, env *Env) error {
	c := env.Client
	missing := env.Table("missing")
	noDB := "nodb_" + env.Prefix + "x"
	checks := []struct {
		what    string
		call    func() error
		culprit string
	}{
		{"describe-table of a missing table", func() error { _, err := c.DescribeTable(ctx, missing); return err }, missing},
		{"drop-table of a missing table", func() error { return c.DropTable(ctx, missing, false) }, missing},
		{"list-offsets of a missing table", func() error { _, err := c.ListOffsets(ctx, missing, client.Latest, nil); return err }, missing},
		{"scan of a missing table", func() error { _, err := c.Plan(ctx, client.ScanRequest{Table: missing}); return err }, missing},
		{"scan of a missing table's $changelog", func() error {
			_, err := c.Plan(ctx, client.ScanRequest{Table: missing + "$changelog"})
			return err
		}, missing},
		{"write to a missing table", func() error {
			_, err := writeIDs(ctx, env, client.WriteRequest{Table: missing}, idRange(0, 3))
			return err
		}, missing},
		{"describe-table in a missing database", func() error { _, err := c.DescribeTable(ctx, noDB+".t"); return err }, noDB},
		{"list-tables of a missing database", func() error { _, err := c.ListTables(ctx, noDB); return err }, noDB},
		{"create-table in a missing database", func() error {
			_, err := c.CreateTable(ctx, simpleSpec(noDB+".t", 1, false), false)
			return err
		}, noDB},
		{"drop-database of a missing database", func() error { return c.DropDatabase(ctx, noDB, false, false) }, noDB},
	}
	for _, ch := range checks {
		if err := wantCode(ch.what, ch.call(), codes.NotFound, ch.culprit); err != nil {
			return err
		}
	}

	table := env.Table("notfound")
	if _, err := createTable(ctx, env, simpleSpec(table, 1, false)); err != nil {
		return err
	}
	_, err := c.Plan(ctx, client.ScanRequest{Table: table, Columns: []string{"id", "no_such_column"}})
	return wantCode("scan projecting a missing column", err, codes.NotFound, "no_such_column")
}

func errMalformedRequest(ctx context.Context, env *Env) error {
	c := env.Client
	table := env.Table("malformed")
	if _, err := createTable(ctx, env, simpleSpec(table, 1, false)); err != nil {
		return err
	}
	if _, err := writeIDs(ctx, env, client.WriteRequest{Table: table}, idRange(0, 5)); err != nil {
		return err
	}
	tableJSON, _ := json.Marshal(table)
	actions := []struct {
		what, action, body, culprit string
	}{
		{"describe-table with truncated JSON", client.ActionDescribeTable, `{"table": `, client.ActionDescribeTable},
		{"describe-table with a JSON array body", client.ActionDescribeTable, `[1, 2]`, client.ActionDescribeTable},
		{"describe-table with trailing garbage", client.ActionDescribeTable, `{"table": ` + string(tableJSON) + `} x`, client.ActionDescribeTable},
		{"drop-table with a misspelt if_exists", client.ActionDropTable, `{"table": ` + string(tableJSON) + `, "if_exist": true}`, "if_exist"},
		{"list-offsets with an unknown field", client.ActionListOffsets, `{"table": ` + string(tableJSON) + `, "bucket": [0]}`, "bucket"},
		{"create-table with an unknown column field", client.ActionCreateTable,
			`{"table": "` + env.Table("malformed2") + `", "columns": [{"name": "id", "type": "INT", "nulable": false}]}`, "nulable"},
		{"create-table with an unknown type", client.ActionCreateTable,
			`{"table": "` + env.Table("malformed3") + `", "columns": [{"name": "id", "type": "INTEGRAL"}]}`, "INTEGRAL"},
	}
	for _, a := range actions {
		err := c.Action(ctx, a.action, []byte(a.body), nil)
		if err := wantCode(a.what+" ("+a.body+")", err, codes.InvalidArgument, a.culprit); err != nil {
			return err
		}
	}
	commands := []struct {
		what, cmd, culprit string
	}{
		{"scan command with a misspelt field", `{"scan": {"table": ` + string(tableJSON) + `, "colums": ["id"]}}`, "colums"},
		{"scan command with an unknown startup field", `{"scan": {"table": ` + string(tableJSON) + `, "startup": {"timestamps": 5}}}`, "timestamps"},
		{"scan command with an unknown startup mode", `{"scan": {"table": ` + string(tableJSON) + `, "startup": "beginning"}}`, "beginning"},
		{"command with an unknown kind", `{"scna": {"table": ` + string(tableJSON) + `}}`, "scna"},
		{"scan command that is not JSON", `{"scan": `, ""},
	}
	for _, cmd := range commands {
		_, err := c.PlanDescriptor(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(cmd.cmd)})
		if err := wantCode("GetFlightInfo with a "+cmd.what+" ("+cmd.cmd+")", err, codes.InvalidArgument, cmd.culprit); err != nil {
			return err
		}
	}
	rec := simpleBatch(env.Mem, idRange(100, 3))
	defer rec.Release()
	desc := &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"write": {"table": ` + string(tableJSON) + `, "writer": "w1"}}`)}
	_, err := rawPut(ctx, env, desc, rec)
	if err := wantCode("DoPut with a write command with an unknown field "+string(desc.Cmd), err, codes.InvalidArgument, "writer"); err != nil {
		return err
	}
	// A typo never silently changes behaviour: nothing was dropped or written.
	got, err := scanIDs(ctx, env, client.ScanRequest{Table: table})
	if err != nil {
		return fmt.Errorf("after the malformed requests: %w", err)
	}
	return equalInts("the table after the malformed requests", allIDs(got), idRange(0, 5))
}

func errUnknownOption(ctx context.Context, env *Env) error {
	c := env.Client
	cases := []struct {
		what    string
		options map[string]string
		culprit string
	}{
		{"an unknown option", map[string]string{"bucket.nmu": "2"}, "bucket.nmu"},
		{"a bad bucket.num", map[string]string{"bucket.num": "many"}, "bucket.num"},
		{"a bucket key that is not a column", map[string]string{"bucket.key": "no_such_column"}, "no_such_column"},
		{"a merge engine on a log table", map[string]string{"table.merge-engine": "first_row"}, "table.merge-engine"},
	}
	for i, tc := range cases {
		table := env.Table(fmt.Sprintf("badoption%d", i))
		spec := simpleSpec(table, 1, false)
		for k, v := range tc.options {
			spec.Options[k] = v
		}
		_, err := c.CreateTable(ctx, spec, false)
		if err := wantCode(fmt.Sprintf("create-table with %s %v", tc.what, tc.options), err, codes.InvalidArgument, tc.culprit); err != nil {
			return err
		}
		_, err = c.DescribeTable(ctx, table)
		if err := wantCode("describe-table of a table whose create-table was rejected", err, codes.NotFound, table); err != nil {
			return err
		}
	}
	table := env.Table("alteroption")
	if _, err := createTable(ctx, env, simpleSpec(table, 1, false)); err != nil {
		return err
	}
	_, err := c.AlterTable(ctx, client.AlterRequest{Table: table, Set: map[string]string{"table.log.tll": "1d"}})
	return wantCode("alter-table setting an unknown option", err, codes.InvalidArgument, "table.log.tll")
}
