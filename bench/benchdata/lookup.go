package benchdata

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/client"
)

// The lookup workloads send LookupBatch keys a request, LookupWindow
// requests in flight.
const (
	LookupBatch  = 1000
	LookupWindow = 4
)

// KeyBatch is keys as a batch of schema, whose one column is BIGINT.
func KeyBatch(schema *arrow.Schema, keys []int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues(keys, nil)
	return b.NewRecordBatch()
}

// PipelineLookups sends batches over l, LookupWindow of them in flight, and
// checks that every key has one row. It returns the keys answered and the
// Arrow size of the answers.
func PipelineLookups(l *client.Lookuper, batches []arrow.RecordBatch) (keys, bytes int64, err error) {
	recv := func() error {
		ans, meta, err := l.Recv()
		if err != nil {
			return err
		}
		defer ans.Release()
		if meta.Rows != meta.Keys {
			return fmt.Errorf("%d rows for %d keys", meta.Rows, meta.Keys)
		}
		keys += int64(meta.Keys)
		bytes += util.TotalRecordSize(ans)
		return nil
	}
	for _, b := range batches {
		if l.Pending() >= LookupWindow {
			if err := recv(); err != nil {
				return keys, bytes, err
			}
		}
		if err := l.Send(b); err != nil {
			return keys, bytes, err
		}
	}
	for l.Pending() > 0 {
		if err := recv(); err != nil {
			return keys, bytes, err
		}
	}
	return keys, bytes, nil
}

// KVTable is the primary-key table of the point-get workloads, in buckets
// buckets: k BIGINT, the key, and v STRING, its KeyValue.
func KVTable(name string, buckets int) client.TableSpec {
	return client.TableSpec{
		Table: name, PrimaryKey: []string{"k"},
		Columns: []client.Column{{Name: "k", Type: "BIGINT"}, {Name: "v", Type: "STRING"}},
		Options: map[string]string{"bucket.num": fmt.Sprint(buckets)},
	}
}

// KVBatch is the rows of keys from..to-1 of a KVTable of schema, each with
// its KeyValue.
func KVBatch(schema *arrow.Schema, from, to int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for k := from; k < to; k++ {
		b.Field(0).(*array.Int64Builder).Append(int64(k))
		b.Field(1).(*array.StringBuilder).Append(KeyValue(int64(k)))
	}
	return b.NewRecordBatch()
}
