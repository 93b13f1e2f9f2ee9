package flight_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
)

// pkRows builds a batch of (k BIGINT, v DOUBLE, s STRING) rows; a nil field
// is NULL. cols names the columns present.
func pkRows(mem memory.Allocator, cols []string, rows ...[]any) arrow.RecordBatch {
	types := map[string]arrow.DataType{"k": arrow.PrimitiveTypes.Int64, "v": arrow.PrimitiveTypes.Float64, "s": arrow.BinaryTypes.String}
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c, Type: types[c], Nullable: c != "k"})
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			switch fb := b.Field(i).(type) {
			case *array.Int64Builder:
				fb.Append(int64(v.(int)))
			case *array.Float64Builder:
				if v == nil {
					fb.AppendNull()
				} else {
					fb.Append(v.(float64))
				}
			case *array.StringBuilder:
				if v == nil {
					fb.AppendNull()
				} else {
					fb.Append(v.(string))
				}
			}
		}
	}
	return b.NewRecordBatch()
}

func pkSpec(name string, opts map[string]string) client.TableSpec {
	return client.TableSpec{
		Table:      name,
		Columns:    []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "DOUBLE"}, {Name: "s", Type: "STRING"}},
		PrimaryKey: []string{"k"},
		Options:    opts,
	}
}

// writePK writes the batches through one stream, each acknowledged before
// the next, and releases them (log tables too).
func writePK(t *testing.T, ts *testServer, req client.WriteRequest, recs ...arrow.RecordBatch) []client.PutResult {
	t.Helper()
	w, err := ts.cl.NewWriter(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []client.PutResult
	for _, rec := range recs {
		res, err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dump renders every row of a scan as "col=value ..." lines, in read order.
func dump(t *testing.T, ts *testServer, req client.ScanRequest) []string {
	t.Helper()
	sc, err := ts.cl.Scan(ctxT(t), req, client.WithConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Release()
	var out []string
	for sc.Next() {
		rec := sc.RecordBatch()
		for i := range int(rec.NumRows()) {
			var parts []string
			for c, f := range rec.Schema().Fields() {
				if f.Name == "_commit_timestamp" {
					continue
				}
				col := rec.Column(c)
				v := "NULL"
				if col.IsValid(i) {
					v = col.ValueStr(i)
				}
				parts = append(parts, v)
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// Fluss's worked example (fluss.apache.org/docs/table-design/table-types/pk-table/):
// +I(1,2.0,apple), +I(1,4.0,banana), -D(1) give offsets
// 0 +I, 1 -U, 2 +U, 3 -D, and the plain name reads the state.
func TestPrimaryKeyChangelogWorkedExample(t *testing.T) {
	ts := start(t, engine.Options{})
	if _, err := ts.cl.CreateTable(ctxT(t), pkSpec("fruit", nil), false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{1, 2.0, "apple"}))
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "fruit"}), "1 2 apple")
	writePK(t, ts, client.WriteRequest{Table: "fruit"}, pkRows(ts.mem, all, []any{1, 4.0, "banana"}))
	writePK(t, ts, client.WriteRequest{Table: "fruit", Mode: client.ModeDelete}, pkRows(ts.mem, []string{"k"}, []any{1}))
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "fruit$changelog"}),
		"insert 0 1 2 apple",
		"update_before 1 1 2 apple",
		"update_after 2 1 4 banana",
		"delete 3 1 4 banana")
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "fruit"}))

	// A delete of a missing key changes nothing but still takes an offset.
	res := writePK(t, ts, client.WriteRequest{Table: "fruit", Mode: client.ModeDelete}, pkRows(ts.mem, []string{"k"}, []any{7}))
	if res[0].Buckets[0] != 5 {
		t.Fatalf("end offset after a no-op delete %d, want 5", res[0].Buckets[0])
	}
}

// The partial-update example of Fluss's primary-key table documentation
// (fluss.apache.org/docs/table-design/table-types/pk-table/), step by step,
// through the server.
func TestPartialUpdateWorkedExample(t *testing.T) {
	ts := start(t, engine.Options{})
	if _, err := ts.cl.CreateTable(ctxT(t), pkSpec("t", nil), false); err != nil {
		t.Fatal(err)
	}
	kv, ks := []string{"k", "v"}, []string{"k", "s"}
	up := func(cols []string, del bool, r []any) {
		req := client.WriteRequest{Table: "t", Columns: cols}
		if del {
			req.Mode = client.ModeDelete
		}
		writePK(t, ts, req, pkRows(ts.mem, cols, r))
	}
	up(kv, false, []any{1, 2.0})
	up(ks, false, []any{1, "t1"})
	up(kv, true, []any{1, nil})
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "t"}), "1 NULL t1")
	up(ks, true, []any{1, nil})
	up([]string{"k"}, false, []any{2})
	up([]string{"k"}, false, []any{2})
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "t$changelog"}),
		"insert 0 1 2 NULL",
		"update_before 1 1 2 NULL",
		"update_after 2 1 2 t1",
		"update_before 3 1 2 t1",
		"update_after 4 1 NULL t1",
		"delete 5 1 NULL t1",
		"insert 6 2 NULL NULL")
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "t"}), "2 NULL NULL")
}

// Fluss's undo recovery (FIP-21; fluss-flink's sink/undo): an aggregation
// sink checkpoints offsets, writes more, fails
// over; undo restores the checkpoint state and appears in the changelog.
func TestUndoWorkedExample(t *testing.T) {
	ts := start(t, engine.Options{})
	spec := client.TableSpec{
		Table:      "cnt",
		Columns:    []client.Column{{Name: "k", Type: "STRING"}, {Name: "n", Type: "BIGINT"}},
		PrimaryKey: []string{"k"},
		Options:    map[string]string{"table.merge-engine": "aggregation", "fields.n.agg": "sum"},
	}
	if _, err := ts.cl.CreateTable(ctxT(t), spec, false); err != nil {
		t.Fatal(err)
	}
	sc := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.BinaryTypes.String}, {Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	batch := func(k string, n int64) arrow.RecordBatch {
		b := array.NewRecordBuilder(ts.mem, sc)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).Append(k)
		b.Field(1).(*array.Int64Builder).Append(n)
		return b.NewRecordBatch()
	}
	w := func(k string, n int64) client.PutResult {
		return writePK(t, ts, client.WriteRequest{Table: "cnt"}, batch(k, n))[0]
	}
	w("A", 2)
	checkpoint := w("A", 3).Buckets // A=5: the sink's checkpoint
	w("A", 3)
	w("B", 1)
	w("A", 1)
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "cnt"}), "A 9", "B 1")

	var res struct {
		UndoneKeys int64            `json:"undone_keys"`
		Offsets    map[string]int64 `json:"offsets"`
	}
	body := map[string]any{"table": "cnt", "offsets": map[string]int64{"0": checkpoint[0]}}
	if err := ts.cl.Action(ctxT(t), "undo", body, &res); err != nil {
		t.Fatal(err)
	}
	if res.UndoneKeys != 2 {
		t.Fatalf("undone keys %d, want 2", res.UndoneKeys)
	}
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "cnt"}), "A 5")
	// The sink replays from its checkpoint: each input counts once.
	w("A", 3)
	w("B", 1)
	w("A", 1)
	wantLines(t, dump(t, ts, client.ScanRequest{Table: "cnt"}), "A 9", "B 1")
	log := dump(t, ts, client.ScanRequest{Table: "cnt$changelog", Startup: client.AtOffsets(map[int]int64{0: res.Offsets["0"] - 3})})
	wantLines(t, log[:3],
		fmt.Sprintf("update_before %d A 9", res.Offsets["0"]-3),
		fmt.Sprintf("update_after %d A 5", res.Offsets["0"]-2),
		fmt.Sprintf("delete %d B 1", res.Offsets["0"]-1))
}

func TestPrimaryKeyReadModes(t *testing.T) {
	ts := start(t, engine.Options{})
	if _, err := ts.cl.CreateTable(ctxT(t), pkSpec("t", map[string]string{"bucket.num": "2"}), false); err != nil {
		t.Fatal(err)
	}
	all := []string{"k", "v", "s"}
	writePK(t, ts, client.WriteRequest{Table: "t"}, pkRows(ts.mem, all, []any{1, 1.0, "a"}, []any{2, 2.0, "b"}, []any{3, 3.0, "c"}))
	writePK(t, ts, client.WriteRequest{Table: "t"}, pkRows(ts.mem, all, []any{2, 20.0, "bb"}))

	_, err := ts.cl.Plan(ctxT(t), client.ScanRequest{Table: "t", Startup: client.Earliest})
	wantCode(t, err, codes.FailedPrecondition)
	_, err = ts.cl.Plan(ctxT(t), client.ScanRequest{Table: "t", Stop: client.Unbounded})
	wantCode(t, err, codes.FailedPrecondition)
	w, err := ts.cl.NewWriter(ctxT(t), client.WriteRequest{Table: "t", Mode: client.ModeAppend})
	if err == nil {
		rec := pkRows(ts.mem, all, []any{9, 9.0, "z"})
		_, err = w.Write(rec)
		rec.Release()
		w.Close()
	}
	wantCode(t, err, codes.FailedPrecondition)

	// full on $changelog: the current rows as inserts, then the changes after.
	got := dump(t, ts, client.ScanRequest{Table: "t$changelog", Startup: client.Full, Columns: []string{"_change_type", "k", "s"}})
	if len(got) != 3 {
		t.Fatalf("full changelog read %v, want the 3 current rows", got)
	}
	for _, l := range got {
		if !strings.HasPrefix(l, "insert ") {
			t.Fatalf("snapshot row %q is not an insert", l)
		}
	}
	if got := dump(t, ts, client.ScanRequest{Table: "t", Columns: []string{"s", "k"}}); len(got) != 3 {
		t.Fatalf("projected snapshot %v", got)
	}
}
