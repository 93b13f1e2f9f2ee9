package engine

import (
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/internal/memtest"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// A filter on a TIMESTAMP partition key plans only the partitions it may
// match and reads only theirs: as many log bytes as the scan naming the
// partition. The partitions differ by a microsecond, and one is before the
// epoch.
func TestPartitionPruningOnTimestampKey(t *testing.T) {
	e, err := Open(t.Context(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), protocol.TableSpec{
		Table:         "clicks",
		Columns:       []protocol.Column{{Name: "id", Type: "BIGINT"}, {Name: "at", Type: "TIMESTAMP(6)"}},
		PartitionKeys: []string{"at"},
		Options:       map[string]string{"bucket.num": "2", "bucket.key": "id"},
	}, false); err != nil {
		t.Fatal(err)
	}
	// Microseconds since the epoch, and the partitions they name.
	const noon, beforeEpoch = 1_764_590_400_123_456, -1
	parts := map[int64]string{
		noon:        "2025-12-01-12-00-00_123456",
		noon + 1:    "2025-12-01-12-00-00_123457",
		beforeEpoch: "1969-12-31-23-59-59_999999",
	}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memtest.Allocator(t), schema)
	defer b.Release()
	for i := range 30 {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp([]int64{noon, noon + 1, beforeEpoch}[i%3]))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	ws, err := e.OpenWrite(protocol.WriteRequest{Table: "clicks"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Write(t.Context(), rec); err != nil {
		t.Fatal(err)
	}

	// scan plans and reads a scan, returning its planned partitions, the
	// timestamps it read and the log bytes it read.
	scan := func(req protocol.ScanRequest) (planned []string, read []int64, logBytes int64) {
		t.Helper()
		before, err := e.LogBytesRead("clicks")
		if err != nil {
			t.Fatal(err)
		}
		plan, err := e.PlanScan(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range plan.Partitions {
			planned = append(planned, p.PartitionName)
		}
		for _, tk := range plan.Tickets {
			rs, err := e.OpenRead(tk)
			if err != nil {
				t.Fatal(err)
			}
			if err := rs.Run(t.Context(), func(rec arrow.RecordBatch, _ protocol.BatchMeta) error {
				at := rec.Column(rec.Schema().FieldIndices("at")[0]).(*array.Timestamp)
				for i := range at.Len() {
					read = append(read, int64(at.Value(i)))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		after, err := e.LogBytesRead("clicks")
		if err != nil {
			t.Fatal(err)
		}
		return planned, read, after - before
	}
	named := map[int64]int64{}
	for v, name := range parts {
		planned, read, n := scan(protocol.ScanRequest{Table: "clicks", Partitions: []string{name}})
		if !slices.Equal(planned, []string{name}) || len(read) != 10 || n == 0 {
			t.Fatalf("scan of partition %s: planned %v, read %d rows and %d log bytes", name, planned, len(read), n)
		}
		named[v] = n
	}

	for _, tt := range []struct {
		filter string
		want   int64
	}{
		{`{"eq": ["at", "2025-12-01T12:00:00.123456"]}`, noon},
		{`{"gt": ["at", "2025-12-01T12:00:00.123456"]}`, noon + 1},
		{`{"lt": ["at", "1970-01-01T00:00:00"]}`, beforeEpoch},
		{`{"and": [{"ge": ["at", "2025-12-01T00:00:00"]}, {"ne": ["at", "2025-12-01T12:00:00.123457"]}]}`, noon},
	} {
		planned, read, n := scan(protocol.ScanRequest{Table: "clicks", Filter: []byte(tt.filter)})
		if !slices.Equal(planned, []string{parts[tt.want]}) {
			t.Errorf("filter %s planned partitions %v, want [%s]", tt.filter, planned, parts[tt.want])
		}
		if len(read) != 10 || slices.ContainsFunc(read, func(v int64) bool { return v != tt.want }) {
			t.Errorf("filter %s read %v, want 10 rows of %d", tt.filter, read, tt.want)
		}
		if n != named[tt.want] {
			t.Errorf("filter %s read %d log bytes, the scan naming partition %s %d (the others pruned unread)", tt.filter, n, parts[tt.want], named[tt.want])
		}
	}
	if planned, read, n := scan(protocol.ScanRequest{Table: "clicks", Filter: []byte(`{"eq": ["at", "2025-12-01T12:00:00.123458"]}`)}); len(planned) != 0 || len(read) != 0 || n != 0 {
		t.Errorf("filter matching no partition: planned %v, read %d rows and %d log bytes", planned, len(read), n)
	}
}
