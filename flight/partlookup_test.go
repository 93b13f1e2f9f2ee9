package flight_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/engine"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// TestPartitionedPrefixLookup prefix-looks-up a partitioned table with the Go
// client, as a delta join does: describe-table lists the prefix index, the
// keys are the bucket key and the partition key, every row of a prefix in
// its partition comes back, and a missing partition gives none.
func TestPartitionedPrefixLookup(t *testing.T) {
	ts := start(t, engine.Options{})
	ctx := ctxT(t)
	if _, err := ts.cl.CreateTable(ctx, client.TableSpec{Table: "purchases",
		Columns: []client.Column{{Name: "customer", Type: "BIGINT"}, {Name: "region", Type: "STRING"},
			{Name: "item", Type: "BIGINT"}, {Name: "qty", Type: "BIGINT"}},
		PrimaryKey: []string{"customer", "region", "item"}, PartitionKeys: []string{"region"},
		Options: map[string]string{"bucket.num": "2", "bucket.key": "customer"}}, false); err != nil {
		t.Fatal(err)
	}
	info, err := ts.cl.DescribeTable(ctx, "purchases")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(info.Indexes, func(ix protocol.Index) bool {
		return ix.Name == protocol.IndexPrefix && slices.Equal(ix.Columns, []string{"customer"})
	}) {
		t.Fatalf("describe-table indexes %v: want the prefix index on customer", info.Indexes)
	}

	w, err := ts.cl.NewWriter(ctx, client.WriteRequest{Table: "purchases"})
	if err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "customer", Type: arrow.PrimitiveTypes.Int64}, {Name: "region", Type: arrow.BinaryTypes.String},
		{Name: "item", Type: arrow.PrimitiveTypes.Int64}, {Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(ts.mem, schema)
	// Customer c has items 0..c-1 in eu and c items in us too.
	for c := int64(1); c <= 3; c++ {
		for i := range c {
			for _, region := range []string{"eu", "us"} {
				b.Field(0).(*array.Int64Builder).Append(c)
				b.Field(1).(*array.StringBuilder).Append(region)
				b.Field(2).(*array.Int64Builder).Append(i)
				b.Field(3).(*array.Int64Builder).Append(10*c + i)
			}
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	_, err = w.Write(rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	l, err := ts.cl.Lookup(ctx, client.LookupRequest{Table: "purchases", Prefix: true, Columns: []string{"region", "item", "qty"}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	kb := array.NewRecordBuilder(ts.mem, arrow.NewSchema(schema.Fields()[:2], nil))
	for i, c := range []int64{3, 1, 2} {
		kb.Field(0).(*array.Int64Builder).Append(c)
		kb.Field(1).(*array.StringBuilder).Append([]string{"us", "eu", "asia"}[i])
	}
	keys := kb.NewRecordBatch()
	kb.Release()
	defer keys.Release()
	ans, meta, err := l.Lookup(keys)
	if err != nil {
		t.Fatal(err)
	}
	defer ans.Release()
	var got []string
	for i := range int(ans.NumRows()) {
		got = append(got, fmt.Sprintf("%d:%s/%d=%d", ans.Column(0).(*array.Int32).Value(i), ans.Column(1).(*array.String).Value(i),
			ans.Column(2).(*array.Int64).Value(i), ans.Column(3).(*array.Int64).Value(i)))
	}
	want := []string{"0:us/0=30", "0:us/1=31", "0:us/2=32", "1:eu/0=10"}
	if !slices.Equal(got, want) || meta.Keys != 3 || meta.Rows != 4 {
		t.Errorf("prefix lookup: %v (meta %+v), want %v", got, meta, want)
	}
}
