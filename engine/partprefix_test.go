package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// purchasesSchema: the partition key region sits between the primary key's
// other columns, so only a partition's stored key (the physical primary key
// customer, item) has the bucket key customer as a byte prefix.
var purchasesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "customer", Type: arrow.PrimitiveTypes.Int64},
	{Name: "region", Type: arrow.BinaryTypes.String},
	{Name: "item", Type: arrow.PrimitiveTypes.Int64},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

// Prefix lookups of a partitioned table (Fluss §6.2): the keys are the bucket
// key and the partition keys, each key's rows come from its partition only,
// and a partition that does not exist has none.
func TestPartitionedPrefixLookup(t *testing.T) {
	dir := t.TempDir()
	e := openPartitioned(t, dir, Options{})
	if _, err := e.CreateTable(t.Context(), protocol.TableSpec{
		Table: "purchases",
		Columns: []protocol.Column{{Name: "customer", Type: "BIGINT"}, {Name: "region", Type: "STRING"},
			{Name: "item", Type: "BIGINT"}, {Name: "qty", Type: "BIGINT"}},
		PrimaryKey:    []string{"customer", "region", "item"},
		PartitionKeys: []string{"region"},
		Options:       map[string]string{"bucket.num": "3", "bucket.key": "customer"},
	}, false); err != nil {
		t.Fatal(err)
	}
	info, err := e.cat.Table(protocol.TablePath{Database: "fluss", Table: "purchases"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(info.Indexes, func(ix catalog.Index) bool {
		return ix.Name == catalog.IndexPrefix && slices.Equal(ix.Columns, []string{"customer"})
	}) {
		t.Fatalf("indexes %v: want the prefix index on customer", info.Indexes)
	}
	// Customers 1..4 buy items 1..c in eu and items 10..10+c-1 in us.
	b := array.NewRecordBuilder(memtest.Allocator(t), purchasesSchema)
	for c := int64(1); c <= 4; c++ {
		for i := range c {
			for _, r := range []struct {
				region string
				item   int64
			}{{"eu", 1 + i}, {"us", 10 + i}} {
				b.Field(0).(*array.Int64Builder).Append(c)
				b.Field(1).(*array.StringBuilder).Append(r.region)
				b.Field(2).(*array.Int64Builder).Append(r.item)
				b.Field(3).(*array.Int64Builder).Append(c * r.item)
			}
		}
	}
	rec := b.NewRecordBatch()
	b.Release()
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "purchases"}, rec); err != nil {
		t.Fatal(err)
	}

	prefix := func(e *Engine, customers []int64, regions []string) []string {
		t.Helper()
		l, err := e.OpenLookup(protocol.LookupRequest{Table: "purchases", Prefix: true})
		if err != nil {
			t.Fatal(err)
		}
		keys := idRegionKeys(purchasesSchema, customers, regions)
		defer keys.Release()
		ans, meta, err := l.Lookup(t.Context(), keys)
		if err != nil {
			t.Fatal(err)
		}
		defer ans.Release()
		var got []string
		for i := range int(ans.NumRows()) {
			got = append(got, fmt.Sprintf("%d:%d/%s/%d=%d", ans.Column(0).(*array.Int32).Value(i),
				ans.Column(1).(*array.Int64).Value(i), ans.Column(2).(*array.String).Value(i),
				ans.Column(3).(*array.Int64).Value(i), ans.Column(4).(*array.Int64).Value(i)))
		}
		if meta.Keys != len(customers) || meta.Rows != len(got) {
			t.Errorf("lookup meta %+v for %d rows", meta, len(got))
		}
		return got
	}
	// Rows come in key order, each key's in stored-key (item) order.
	want := []string{"0:3/eu/1=3", "0:3/eu/2=6", "0:3/eu/3=9", "1:2/us/10=20", "1:2/us/11=22", "3:1/us/10=10"}
	keysC, keysR := []int64{3, 2, 1, 1, 5}, []string{"eu", "us", "asia", "us", "eu"}
	if got := prefix(e, keysC, keysR); !slices.Equal(got, want) {
		t.Errorf("prefix lookup:\n got %v\nwant %v", got, want)
	}
	if parts, _ := e.ListPartitions("purchases", nil); len(parts) != 2 {
		t.Errorf("a prefix lookup created a partition: %v", parts)
	}

	// The stored keys are rebuilt as they were after a restart.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openPartitioned(t, dir, Options{})
	defer e.Close()
	if got := prefix(e, keysC, keysR); !slices.Equal(got, want) {
		t.Errorf("prefix lookup after a restart:\n got %v\nwant %v", got, want)
	}
}
