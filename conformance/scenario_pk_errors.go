package conformance

// pk-bad-input: writes, reads, definitions and undos of primary-key tables
// that PROTOCOL.md §1 refuses, each with its exact code and a message naming
// the culprit, and none leaving anything of the refused request behind.

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
)

func pkBadInput(ctx context.Context, env *Env) error {
	cols := []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "v", Type: "STRING"}, {Name: "n", Type: "BIGINT"}}
	pkSpecOf := func(name string, opts map[string]string) client.TableSpec {
		o := map[string]string{"bucket.num": "2"}
		for k, v := range opts {
			o[k] = v
		}
		return client.TableSpec{Table: env.Table(name), Columns: cols, PrimaryKey: []string{"id"}, Options: o}
	}
	t, _, err := createPK(ctx, env, pkSpecOf("bad_input", nil))
	if err != nil {
		return err
	}
	all := []string{"id", "v", "n"}
	seed := pkBatch{{int64(1), "a", int64(1)}, {int64(2), "b", int64(2)}, {int64(3), "c", int64(3)}}
	if _, err := writeRows(ctx, env, t, client.WriteRequest{Table: t.name}, all, seed); err != nil {
		return err
	}
	want := pkState{}
	for _, r := range seed {
		want[t.keyOf(r)] = r
	}

	// Writes refused whole: nothing of their batch may be applied.
	nullableID := arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	writes := []struct {
		what    string
		req     client.WriteRequest
		fields  []arrow.Field
		rows    pkBatch
		code    codes.Code
		culprit string
	}{
		{"an upsert whose batch has a null primary key (among valid rows)", client.WriteRequest{Table: t.name},
			[]arrow.Field{nullableID, t.schema.Field(1), t.schema.Field(2)},
			pkBatch{{int64(10), "x", int64(0)}, {nil, "y", int64(0)}, {int64(1), "z", int64(0)}}, codes.InvalidArgument, "id"},
		{"a delete whose batch has a null primary key", client.WriteRequest{Table: t.name, Mode: client.ModeDelete},
			[]arrow.Field{nullableID}, pkBatch{{int64(1)}, {nil}}, codes.InvalidArgument, "id"},
		{"an upsert whose batch lacks the primary-key column", client.WriteRequest{Table: t.name},
			t.fields([]string{"v", "n"}), pkBatch{{"x", int64(0)}}, codes.InvalidArgument, "id"},
		{"a delete whose batch lacks the primary-key column", client.WriteRequest{Table: t.name, Mode: client.ModeDelete},
			t.fields([]string{"v"}), pkBatch{{"a"}}, codes.InvalidArgument, "id"},
		{"a partial update of columns [v, n], without the key", client.WriteRequest{Table: t.name, Columns: []string{"v", "n"}},
			t.fields([]string{"v", "n"}), pkBatch{{"x", int64(0)}}, codes.InvalidArgument, "id"},
		{"mode append to a primary-key table", client.WriteRequest{Table: t.name, Mode: client.ModeAppend},
			t.fields(all), pkBatch{{int64(10), "x", int64(0)}}, codes.FailedPrecondition, t.name},
	}
	for _, w := range writes {
		rec, err := buildRecord(env.Mem, w.fields, w.rows)
		if err != nil {
			return err
		}
		_, err = writeRecords(ctx, env, w.req, rec)
		rec.Release()
		if err := wantCode(fmt.Sprintf("%s (%s, rows %v)", w.what, t.name, w.rows), err, w.code, w.culprit); err != nil {
			return err
		}
	}
	if _, err := checkConsistent(ctx, env, t, true, want, "after the refused writes"); err != nil {
		return err
	}

	// Reads of the plain name that are not a snapshot.
	reads := []struct {
		what string
		req  client.ScanRequest
	}{
		{"a plain-name read of a primary-key table with startup earliest", client.ScanRequest{Table: t.name, Startup: client.Earliest}},
		{"a plain-name read of a primary-key table with startup latest", client.ScanRequest{Table: t.name, Startup: client.Latest}},
		{"a plain-name read of a primary-key table with stop none", client.ScanRequest{Table: t.name, Stop: client.Unbounded}},
	}
	for _, r := range reads {
		_, err := env.Client.Plan(ctx, r.req)
		if err := wantCode(fmt.Sprintf("%s (%s)", r.what, t.name), err, codes.FailedPrecondition, t.name); err != nil {
			return err
		}
	}

	// Partial updates on first_row and versioned tables.
	for _, engine := range []struct{ name, table string }{{"first_row", "bad_first_row"}, {"versioned", "bad_versioned"}} {
		opts := map[string]string{"table.merge-engine": engine.name}
		if engine.name == "versioned" {
			opts["table.merge-engine.versioned.ver-column"] = "n"
		}
		et, _, err := createPK(ctx, env, pkSpecOf(engine.table, opts))
		if err != nil {
			return err
		}
		_, err = writeRows(ctx, env, et, client.WriteRequest{Table: et.name, Columns: []string{"id", "v"}}, []string{"id", "v"}, pkBatch{{int64(1), "x"}})
		if err := wantCode(fmt.Sprintf("a partial update of columns [id, v] to %s (merge engine %s)", et.name, engine.name), err, codes.FailedPrecondition, engine.name); err != nil {
			return err
		}
		if _, err := checkConsistent(ctx, env, et, true, pkState{}, "after the refused partial update"); err != nil {
			return err
		}
	}

	// Deletes on a table that disables them: the whole batch is refused,
	// also the upserts of a changelog batch.
	dt, _, err := createPK(ctx, env, pkSpecOf("bad_delete_disabled", map[string]string{"table.delete.behavior": "disable"}))
	if err != nil {
		return err
	}
	if _, err := writeRows(ctx, env, dt, client.WriteRequest{Table: dt.name}, all, seed); err != nil {
		return err
	}
	before, err := env.Client.ListOffsets(ctx, dt.name, client.Latest, nil)
	if err != nil {
		return err
	}
	_, err = writeRows(ctx, env, dt, client.WriteRequest{Table: dt.name, Mode: client.ModeDelete}, []string{"id"}, pkBatch{{int64(1)}, {int64(2)}, {int64(3)}})
	if err := wantCode(fmt.Sprintf("a delete batch to %s (table.delete.behavior = disable)", dt.name), err, codes.FailedPrecondition, dt.name); err != nil {
		return err
	}
	_, err = writeRows(ctx, env, dt, client.WriteRequest{Table: dt.name, Mode: client.ModeChangelog}, []string{changeTypeCol, "id", "v", "n"},
		pkBatch{{ctInsert, int64(7), "new", int64(7)}, {ctUpdateAfter, int64(1), "changed", int64(9)}, {ctDelete, int64(2), nil, nil}, {ctInsert, int64(8), "new", int64(8)}})
	if err := wantCode(fmt.Sprintf("a changelog batch with upserts and a delete to %s (table.delete.behavior = disable)", dt.name), err, codes.FailedPrecondition, dt.name); err != nil {
		return err
	}
	if _, err := checkConsistent(ctx, env, dt, true, want, "after the refused deletes"); err != nil {
		return err
	}
	after, err := env.Client.ListOffsets(ctx, dt.name, client.Latest, nil)
	if err != nil {
		return err
	}
	if err := equalOffsets(fmt.Sprintf("list-offsets latest of %s after the refused deletes (vs before them)", dt.name), after, before); err != nil {
		return err
	}

	// Definitions refused at create-table; the table must not exist after.
	creates := []struct {
		what    string
		spec    client.TableSpec
		culprit string
	}{
		{"a versioned table whose version column is STRING", client.TableSpec{
			Table: env.Table("bad_version_type"), PrimaryKey: []string{"id"},
			Columns: []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "ver", Type: "STRING"}},
			Options: map[string]string{"table.merge-engine": "versioned", "table.merge-engine.versioned.ver-column": "ver"},
		}, "ver"},
		{"an aggregation table with sum on a STRING column", client.TableSpec{
			Table: env.Table("bad_sum_type"), PrimaryKey: []string{"id"},
			Columns: []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "label", Type: "STRING"}},
			Options: map[string]string{"table.merge-engine": "aggregation", "fields.label.agg": "sum"},
		}, "label"},
		{"an aggregation table with table.changelog.image = wal", client.TableSpec{
			Table: env.Table("bad_agg_wal"), PrimaryKey: []string{"id"},
			Columns: []client.Column{{Name: "id", Type: "BIGINT"}, {Name: "n", Type: "BIGINT"}},
			Options: map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum", "table.changelog.image": "wal"},
		}, "table.changelog.image"},
	}
	for _, c := range creates {
		_, err := env.Client.CreateTable(ctx, c.spec, false)
		if err := wantCode("create-table of "+c.what, err, codes.InvalidArgument, c.culprit); err != nil {
			return err
		}
		_, err = env.Client.DescribeTable(ctx, c.spec.Table)
		if err := wantCode("describe-table after the refused create-table of "+c.what, err, codes.NotFound, c.spec.Table); err != nil {
			return err
		}
	}

	// Undo: only of a primary-key table, and only of buckets it has.
	log := env.Table("bad_undo_log")
	if _, err := createTable(ctx, env, simpleSpec(log, 1, false)); err != nil {
		return err
	}
	_, err = env.Client.Undo(ctx, log, map[int]int64{0: 0})
	if err := wantCode(fmt.Sprintf("undo of the log table %s", log), err, codes.FailedPrecondition, log); err != nil {
		return err
	}
	_, err = env.Client.Undo(ctx, t.name, map[int]int64{0: 0, 2: 0})
	if err := wantCode(fmt.Sprintf("undo of %s (2 buckets) naming bucket 2", t.name), err, codes.InvalidArgument, "bucket 2"); err != nil {
		return err
	}
	_, err = checkConsistent(ctx, env, t, true, want, "after the refused undo")
	return err
}
