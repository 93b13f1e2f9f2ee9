package engine

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// eventsSpec is a log table partitioned by day, 2 buckets per partition.
func eventsSpec() protocol.TableSpec {
	return protocol.TableSpec{
		Table:         "events",
		Columns:       []protocol.Column{{Name: "id", Type: "BIGINT"}, {Name: "dt", Type: "STRING"}},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"bucket.num": "2", "bucket.key": "id"},
	}
}

var eventsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "dt", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// eventRows makes a batch of (id, dt) rows.
func eventRows(ids []int64, days []string) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, eventsSchema)
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		if days[i] == "" {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(days[i])
		}
	}
	return b.NewRecordBatch()
}

func openPartitioned(t *testing.T, dir string, opts Options) *Engine {
	t.Helper()
	e, err := Open(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// writeEvents writes one batch and returns its result.
func writeEvents(t *testing.T, e *Engine, req protocol.WriteRequest, rec arrow.RecordBatch) (WriteResult, error) {
	t.Helper()
	defer rec.Release()
	ws, err := e.OpenWrite(req)
	if err != nil {
		return WriteResult{}, err
	}
	return ws.Write(context.Background(), rec)
}

// partitionRows is the rows each bucket of a partition's log holds.
func partitionRows(t *testing.T, e *Engine, info *catalog.TableInfo, name string) int64 {
	t.Helper()
	p, err := e.cat.PartitionByName(info, name)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := e.tableByID(p.PartitionID)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for b := range pt.log.Buckets() {
		n += pt.log.HighWatermark(b)
	}
	return n
}

func TestPartitionedWriteRoutesRows(t *testing.T) {
	dir := t.TempDir()
	e := openPartitioned(t, dir, Options{})
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	res, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"},
		eventRows([]int64{1, 2, 3, 4, 5, 6}, []string{"20261201", "20261202", "20261201", "20261203", "20261201", "20261202"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Buckets != nil || len(res.PartitionOffsets) != 3 {
		t.Fatalf("result %+v: want partition_offsets of 3 partitions and no buckets", res)
	}
	info, _ := e.cat.Table(protocol.TablePath{Database: "fluss", Table: "events"})
	for name, want := range map[string]int64{"20261201": 3, "20261202": 2, "20261203": 1} {
		var acked int64
		for _, end := range res.PartitionOffsets[name] {
			acked += end
		}
		if got := partitionRows(t, e, info, name); got != want || acked != want {
			t.Errorf("partition %s holds %d rows, acknowledged %d, want %d", name, got, acked, want)
		}
	}
	parts, err := e.ListPartitions("events", nil)
	if err != nil || len(parts) != 3 || parts[0].PartitionName != "20261201" || parts[2].PartitionName != "20261203" {
		t.Fatalf("list: %v %v", parts, err)
	}

	// A NULL partition value fails the batch, naming the column.
	_, err = writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{7}, []string{""}))
	if errs.KindOf(err) != errs.Invalid || !contains(err.Error(), `"dt"`) {
		t.Errorf("NULL partition value: %v", err)
	}

	// Restart: the partitions and their rows are kept.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openPartitioned(t, dir, Options{})
	defer e.Close()
	info, _ = e.cat.Table(protocol.TablePath{Database: "fluss", Table: "events"})
	if got := partitionRows(t, e, info, "20261202"); got != 2 {
		t.Errorf("after restart partition 20261202 holds %d rows, want 2", got)
	}
	if _, err := os.Stat(dir + "/quarantine"); !os.IsNotExist(err) {
		t.Errorf("restart quarantined partition data: %v", err)
	}
}

func TestPartitionDynamicCreation(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{MaxPartitions: 2})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	off := false
	_, err := writeEvents(t, e, protocol.WriteRequest{Table: "events", CreatePartitions: &off}, eventRows([]int64{1}, []string{"20261201"}))
	if errs.KindOf(err) != errs.NotFound || !contains(err.Error(), "partition dt=20261201 of table fluss.events does not exist") {
		t.Fatalf("write to a missing partition without creation: %v", err)
	}
	if parts, _ := e.ListPartitions("events", nil); len(parts) != 0 {
		t.Fatalf("a refused write created %v", parts)
	}
	if _, err := e.CreatePartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events", CreatePartitions: &off}, eventRows([]int64{1}, []string{"20261201"})); err != nil {
		t.Errorf("write to an existing partition without creation: %v", err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{2}, []string{"20261202"})); err != nil {
		t.Errorf("dynamic creation: %v", err)
	}
	_, err = writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{3}, []string{"20261203"}))
	if errs.KindOf(err) != errs.Exhausted || !contains(err.Error(), "max.partition.num") {
		t.Errorf("a third partition over the limit 2: %v", err)
	}
	_, err = writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{4}, []string{"2026/12/04"}))
	if errs.KindOf(err) != errs.Invalid || !contains(err.Error(), "The partition value 2026/12/04 is invalid") {
		t.Errorf("an invalid partition value: %v", err)
	}
}

func TestDropPartitionRemovesItsData(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{1, 2}, []string{"20261201", "20261202"})); err != nil {
		t.Fatal(err)
	}
	parts, _ := e.ListPartitions("events", map[string]string{"dt": "20261201"})
	if len(parts) != 1 {
		t.Fatalf("partial spec listing: %v", parts)
	}
	dir := e.tableDir(parts[0].PartitionID)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("partition log directory: %v", err)
	}
	if err := e.DropPartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the dropped partition's directory is still there: %v", err)
	}
	if err := e.DropPartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false); errs.KindOf(err) != errs.NotFound {
		t.Errorf("drop again: %v", err)
	}
	if err := e.DropPartition(t.Context(), "events", map[string]string{"dt": "20261201"}, true); err != nil {
		t.Errorf("drop if exists: %v", err)
	}
	if _, err := e.tableByID(parts[0].PartitionID); errs.KindOf(err) != errs.NotFound {
		t.Errorf("the dropped partition is still open: %v", err)
	}
	// Dropping the table removes the remaining partitions' data.
	rest, _ := e.ListPartitions("events", nil)
	if err := e.DropTable(t.Context(), "events", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.tableDir(rest[0].PartitionID)); !os.IsNotExist(err) {
		t.Errorf("a dropped table's partition directory is still there: %v", err)
	}
	if _, err := e.CreatePartition(t.Context(), "events", map[string]string{"dt": "1"}, false); errs.KindOf(err) != errs.NotFound {
		t.Errorf("create a partition of a dropped table: %v", err)
	}
}

func TestPartitionActionsOnPlainTable(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	spec := eventsSpec()
	spec.PartitionKeys = nil
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ListPartitions("events", nil); errs.KindOf(err) != errs.Precondition || !contains(err.Error(), "table fluss.events is not partitioned") {
		t.Errorf("list-partitions of a plain table: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
