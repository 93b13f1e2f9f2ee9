package lookup

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/row"
)

// table (city STRING, id BIGINT, v STRING), PK (city, id), bucket key city,
// one bucket.
var testTable = Table{
	Name: "fluss.orders",
	ID:   9,
	Schema: arrow.NewSchema([]arrow.Field{
		{Name: "city", Type: arrow.BinaryTypes.String},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil),
	Types: func() []arrow.DataType {
		return []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}
	},
	PK:        []int{0, 1},
	BucketKey: []int{0},
	Buckets:   1,
}

func seed(t *testing.T, s *kv.Store, rows ...row.Row) {
	t.Helper()
	txn := s.NewTxn()
	for _, r := range rows {
		pk, err := row.EncodeKey(nil, testTable.Types()[:2], []any{r[0], r[1]})
		if err != nil {
			t.Fatal(err)
		}
		if err := txn.Set(kv.RowKey(nil, testTable.ID, 0, pk), row.Encode(nil, 1, testTable.Types(), r)); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
}

func keys(mem memory.Allocator, fields []arrow.Field, rows ...[]any) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			row.Append(b.Field(i), v)
		}
	}
	return b.NewRecordBatch()
}

func lines(rec arrow.RecordBatch) string {
	var out []string
	for i := range int(rec.NumRows()) {
		var cells []string
		for c := range int(rec.NumCols()) {
			cells = append(cells, rec.Column(c).ValueStr(i))
		}
		out = append(out, strings.Join(cells, " "))
	}
	return strings.Join(out, "; ")
}

func TestPointAndPrefix(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := kv.Open(t.TempDir(), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seed(t, s, row.Row{"oslo", int64(2), "b"}, row.Row{"oslo", int64(1), "a"}, row.Row{"rome", int64(1), "c"}, row.Row{"osl", int64(7), "x"})
	ctx := context.Background()

	point := New(s, testTable, Options{Columns: []int{2}}, mem)
	k := keys(mem, testTable.Schema.Fields()[:2], []any{"rome", int64(1)}, []any{"oslo", int64(9)}, []any{"oslo", int64(1)})
	defer k.Release()
	ans, meta, err := point.Lookup(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if got := lines(ans); got != "0 c; 2 a" || meta != (Meta{Keys: 3, Rows: 2}) {
		t.Fatalf("point lookup %q %+v", got, meta)
	}
	ans.Release()

	prefix := New(s, testTable, Options{Prefix: true}, mem)
	pk := keys(mem, testTable.Schema.Fields()[:1], []any{"oslo"}, []any{"paris"}, []any{"rome"})
	defer pk.Release()
	ans, meta, err = prefix.Lookup(ctx, pk)
	if err != nil {
		t.Fatal(err)
	}
	// "osl" must not match the prefix "oslo", nor "oslo" the key "osl".
	if got := lines(ans); got != "0 oslo 1 a; 0 oslo 2 b; 2 rome 1 c" || meta.Rows != 3 {
		t.Fatalf("prefix lookup %q", got)
	}
	ans.Release()
}

func TestKeyBatchErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := kv.Open(t.TempDir(), kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := New(s, testTable, Options{}, mem)
	f := testTable.Schema.Fields()
	for name, k := range map[string]arrow.RecordBatch{
		"missing":  keys(mem, f[:1], []any{"oslo"}),
		"extra":    keys(mem, f, []any{"oslo", int64(1), "x"}),
		"mistyped": keys(mem, []arrow.Field{f[0], {Name: "id", Type: arrow.PrimitiveTypes.Int32}}, []any{"oslo", int32(1)}),
		"null":     keys(mem, f[:2], []any{"oslo", nil}),
	} {
		_, _, err := l.Lookup(context.Background(), k)
		k.Release()
		if errs.KindOf(err) != errs.InvalidArgument {
			t.Errorf("%s key column: %v, want an invalid-argument error", name, err)
		}
	}
}
