package flight_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// wideRows is how many rows of widePad bytes the wide table holds: about 5
// MB, so that an answer with all of them takes two messages at least.
const (
	wideRows = 5_000
	widePad  = 1_000
)

// createWide makes table wide (c BIGINT, i BIGINT, s STRING), primary key
// (c, i), bucket key c (so a prefix index on c), with wideRows rows of c =
// 1, i = 0.., s widePad bytes.
func createWide(t *testing.T, ts *testServer) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, client.TableSpec{Table: "wide",
		Columns:    []client.Column{{Name: "c", Type: "BIGINT"}, {Name: "i", Type: "BIGINT"}, {Name: "s", Type: "STRING"}},
		PrimaryKey: []string{"c", "i"}, Options: map[string]string{"bucket.key": "c", "bucket.num": "2"}}, false); err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(ts.mem, arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.PrimitiveTypes.Int64},
		{Name: "i", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil))
	pad := strings.Repeat("p", widePad)
	for i := range wideRows {
		b.Field(0).(*array.Int64Builder).Append(1)
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		b.Field(2).(*array.StringBuilder).Append(pad)
	}
	rec := b.NewRecordBatch()
	b.Release()
	writePK(t, ts, client.WriteRequest{Table: "wide"}, rec)
}

// wideKeys is a key batch of the wide table: (1, i) for every row, and one
// key that has none.
func wideKeys(ts *testServer) arrow.RecordBatch {
	b := array.NewRecordBuilder(ts.mem, arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.PrimitiveTypes.Int64}, {Name: "i", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer b.Release()
	for i := range wideRows + 1 {
		b.Field(0).(*array.Int64Builder).Append(1)
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	return b.NewRecordBatch()
}

// sliced checks the messages of one lookup answer as a plain Flight client
// reads them: more than one (the answer is over 4 MiB, which gRPC's default
// client refuses in one message), each with the answer's keys and rows,
// "more" on all but the last, _key_index ascending throughout. each, if
// not nil, sees every message.
func sliced(t *testing.T, what string, rdr *flight.Reader, keys, rows int, each func(arrow.RecordBatch)) {
	t.Helper()
	got, last, messages := 0, int32(-1), 0
	for rdr.Next() {
		rec := rdr.RecordBatch()
		messages++
		var meta protocol.LookupMeta
		if err := json.Unmarshal(rdr.LatestAppMetadata(), &meta); err != nil {
			t.Fatalf("%s: message %d: app_metadata %s: %v", what, messages, rdr.LatestAppMetadata(), err)
		}
		if meta.Keys != keys || meta.Rows != rows {
			t.Errorf("%s: message %d says keys %d, rows %d; want %d, %d", what, messages, meta.Keys, meta.Rows, keys, rows)
		}
		got += int(rec.NumRows())
		if each != nil {
			each(rec)
		}
		if !meta.More {
			break
		}
		idx := rec.Column(0).(*array.Int32)
		for i := range idx.Len() {
			if idx.Value(i) < last {
				t.Fatalf("%s: _key_index %d after %d", what, idx.Value(i), last)
			}
			last = idx.Value(i)
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if messages < 2 || got != rows {
		t.Fatalf("%s: %d messages of %d rows in all; want several, of %d", what, messages, got, rows)
	}
}

// A lookup answer over 4 MiB comes in messages under it, for point, prefix
// and inline lookups, as a plain Flight client with gRPC's default limit
// reads them; the Go client joins them into one answer. Before, 1M keys
// came back as one 9.9 MB message that such clients refuse.
func TestLookupAnswersAreSliced(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	createWide(t, ts)
	keys := wideKeys(ts)
	defer keys.Release()
	prefix := prefixKey(ts)
	defer prefix.Release()
	fc := plainFlight(t, ts)

	for _, c := range []struct {
		what  string
		req   protocol.LookupRequest
		keys  arrow.RecordBatch
		nkeys int
	}{
		{"point", protocol.LookupRequest{Table: "wide"}, keys, wideRows + 1},
		{"prefix", protocol.LookupRequest{Table: "wide", Prefix: true}, prefix, 1},
	} {
		cmd, _ := json.Marshal(protocol.Command{Lookup: &c.req})
		stream, err := fc.DoExchange(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w := flight.NewRecordWriter(stream, ipc.WithSchema(c.keys.Schema()), ipc.WithAllocator(ts.mem))
		w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
		if err := w.Write(c.keys); err != nil {
			t.Fatal(err)
		}
		rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(ts.mem))
		if err != nil {
			t.Fatal(err)
		}
		sliced(t, c.what+" lookup, plain Flight client", rdr, c.nkeys, wideRows, nil)
		w.Close()
		stream.CloseSend()
		rdr.Release()

		l, err := ts.cl.Lookup(ctx, c.req)
		if err != nil {
			t.Fatal(err)
		}
		ans, meta, err := l.Lookup(c.keys)
		if err != nil {
			t.Fatalf("%s lookup, Go client: %v", c.what, err)
		}
		if ans.NumRows() != wideRows || meta.Rows != wideRows || meta.More {
			t.Errorf("%s lookup, Go client: %d rows, meta %+v; want one answer of %d", c.what, ans.NumRows(), meta, wideRows)
		}
		ans.Release()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// Inline: one prefix key, its rows through DoGet.
	inline := protocol.LookupRequest{Table: "wide", Prefix: true, Keys: []map[string]any{{"c": 1}}}
	cmd, _ := json.Marshal(protocol.Command{Lookup: &inline})
	info, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		t.Fatal(err)
	}
	get, err := fc.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(get, ipc.WithAllocator(ts.mem))
	if err != nil {
		t.Fatal(err)
	}
	sliced(t, "inline prefix lookup, plain Flight client", rdr, 1, wideRows, nil)
	rdr.Release()
	tbl, err := ts.cl.LookupInline(ctx, client.LookupRequest{Table: "wide", Prefix: true}, []map[string]any{{"c": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.NumRows() != wideRows {
		t.Errorf("inline prefix lookup, Go client: %d rows, want %d", tbl.NumRows(), wideRows)
	}
	tbl.Release()
}

// prefixKey is the prefix key batch c = 1 of the wide table.
func prefixKey(ts *testServer) arrow.RecordBatch {
	b := array.NewRecordBuilder(ts.mem, arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.PrimitiveTypes.Int64}}, nil))
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	return b.NewRecordBatch()
}

// Insert-if-not-exists of more new keys than one message holds inserts them
// and answers every id, to a plain Flight client as to the Go client:
// before, a client with gRPC's default limit refused the answer and never
// saw the ids of the keys it had inserted.
func TestInsertIfNotExistsAnswersEveryID(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, client.TableSpec{Table: "dict",
		Columns:    []client.Column{{Name: "uid", Type: "STRING"}, {Name: "id", Type: "BIGINT"}},
		PrimaryKey: []string{"uid"}, Options: map[string]string{"auto-increment.fields": "id"}}, false); err != nil {
		t.Fatal(err)
	}
	const n = 5_000
	uids := make([]string, n)
	for i := range uids {
		uids[i] = fmt.Sprintf("%01000d", i) // 5 MB of keys, answered with them
	}
	keys := stringKeys(ts, "uid", uids...)
	defer keys.Release()

	req := protocol.LookupRequest{Table: "dict", InsertIfNotExists: true}
	cmd, _ := json.Marshal(protocol.Command{Lookup: &req})
	stream, err := plainFlight(t, ts).DoExchange(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := flight.NewRecordWriter(stream, ipc.WithSchema(keys.Schema()), ipc.WithAllocator(ts.mem))
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err := w.Write(keys); err != nil {
		t.Fatal(err)
	}
	rdr, err := flight.NewRecordReader(stream, ipc.WithAllocator(ts.mem))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	sliced(t, "insert_if_not_exists, plain Flight client", rdr, n, n, func(rec arrow.RecordBatch) {
		ids := rec.Column(2).(*array.Int64)
		for i := range ids.Len() {
			if seen[ids.Value(i)] || ids.Value(i) < 1 || ids.Value(i) > n {
				t.Fatalf("id %d repeated or outside 1..%d", ids.Value(i), n)
			}
			seen[ids.Value(i)] = true
		}
	})
	w.Close()
	stream.CloseSend()
	rdr.Release()

	// The Go client, looking up the same keys again, gets the same ids.
	l, err := ts.cl.Lookup(ctx, client.LookupRequest{Table: "dict", InsertIfNotExists: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ans, meta, err := l.Lookup(keys)
	if err != nil {
		t.Fatal(err)
	}
	defer ans.Release()
	if ans.NumRows() != n || meta.Rows != n {
		t.Fatalf("%d rows, meta %+v; want %d", ans.NumRows(), meta, n)
	}
	ids := ans.Column(2).(*array.Int64)
	for i := range n {
		if !seen[ids.Value(i)] {
			t.Fatalf("row %d: id %d, which the first lookup did not answer", i, ids.Value(i))
		}
	}
}

// Inline lookup keys keep every digit: a BIGINT beyond 2^53 was decoded as a
// float64 and looked up as its neighbour.
func TestInlineKeysKeepBigIntegers(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, pkSpec("big", nil), false); err != nil {
		t.Fatal(err)
	}
	const k = 1<<53 + 1
	writePK(t, ts, client.WriteRequest{Table: "big"}, pkRows(ts.mem, []string{"k", "v", "s"}, []any{k, 1.5, "odd"}, []any{k - 1, 2.5, "even"}))
	tbl, err := ts.cl.LookupInline(ctx, client.LookupRequest{Table: "big", Columns: []string{"s"}}, []map[string]any{{"k": json.Number(fmt.Sprint(k))}})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 1 || tbl.Column(1).Data().Chunk(0).(*array.String).Value(0) != "odd" {
		t.Fatalf("inline lookup of %d: %d rows; want the row of %d", k, tbl.NumRows(), k)
	}
}

// An inline lookup is bounded: a command or ticket over 2 MiB, or a command
// whose ticket would be, is INVALID_ARGUMENT pointing to DoExchange.
func TestInlineLookupsAreBounded(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	info, err := ts.cl.CreateTable(ctx, client.TableSpec{Table: "big", Columns: []client.Column{{Name: "k", Type: "STRING"}}, PrimaryKey: []string{"k"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	// keys are n keys of 64 KiB strings, ten to the MiB.
	keys := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(`{"k":"`+strings.Repeat("k", 64<<10)+`"},`, n), ",")
	}
	fc := plainFlight(t, ts)
	// Under the limit as sent, by less than the table's id and view that
	// its ticket adds.
	justUnder := `{"lookup":{"table":"big","keys":[` + keys(31) + `, {"k":"` + strings.Repeat("k", protocol.MaxDocumentBytes-31*(64<<10+9)-60) + `"}]}}`
	if len(justUnder) > protocol.MaxDocumentBytes {
		t.Fatalf("the command is %d bytes, over the limit itself", len(justUnder))
	}
	for _, c := range []struct {
		what, cmd string
		parts     []string
	}{
		{"a 3 MiB command", `{"lookup":{"table":"big","keys":[` + keys(48) + `]}}`, []string{"bytes; the limit is"}},
		{"a command whose ticket is over 2 MiB", justUnder, []string{"inline lookup", "DoExchange"}},
	} {
		_, err := fc.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(c.cmd)})
		wantInvalid(t, c.what, err, c.parts...)
	}
	ticket := fmt.Sprintf(`{"v":1,"table_id":%d,"table":"fluss.big","view":"lookup","bucket":0,"start":0,"stop":null,"lookup":{"table":"big","keys":[%s]}}`,
		info.TableID, keys(48))
	wantInvalid(t, "a 3 MiB inline ticket", redeem(t, fc, ticket), "ticket", "bytes; the limit is")
}
