package engine

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/internal/memtest"
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
	b := array.NewRecordBuilder(memtest.Shared, eventsSchema)
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
func writeEvents(t *testing.T, e *Engine, req protocol.WriteRequest, rec arrow.RecordBatch) (protocol.PutResult, error) {
	t.Helper()
	defer rec.Release()
	ws, err := e.OpenWrite(req)
	if err != nil {
		return protocol.PutResult{}, err
	}
	return ws.Write(context.Background(), rec)
}

// catalogPartition returns the catalog's definition of table and of its
// partition name.
func catalogPartition(t *testing.T, e *Engine, table, name string) (*catalog.TableInfo, *catalog.Partition) {
	t.Helper()
	info, err := e.cat.Table(protocol.TablePath{Database: "fluss", Table: table})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.cat.PartitionByName(info, name)
	if err != nil {
		t.Fatal(err)
	}
	return info, p
}

// partitionRows is the rows each bucket of a partition's log holds.
func partitionRows(t *testing.T, e *Engine, info *catalog.TableInfo, name string) int64 {
	t.Helper()
	p, err := e.cat.PartitionByName(info, name)
	if err != nil {
		t.Fatal(err)
	}
	pt, err := e.tables.ByID(p.PartitionID)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for b := range pt.Log.Buckets() {
		n += pt.Log.HighWatermark(b)
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
	if errs.KindOf(err) != errs.InvalidArgument || !contains(err.Error(), `"dt"`) {
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
	if errs.KindOf(err) != errs.ResourceExhausted || !contains(err.Error(), "max.partition.num") {
		t.Errorf("a third partition over the limit 2: %v", err)
	}
	_, err = writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows([]int64{4}, []string{"2026/12/04"}))
	if errs.KindOf(err) != errs.InvalidArgument || !contains(err.Error(), "The partition value 2026/12/04 is invalid") {
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
	if _, err := e.tables.ByID(parts[0].PartitionID); errs.KindOf(err) != errs.NotFound {
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

	// Dropping a database with cascade removes its partitioned tables' data.
	if err := e.CreateDatabase("db", false); err != nil {
		t.Fatal(err)
	}
	spec := eventsSpec()
	spec.Table = "db.events"
	if _, err := e.CreateTable(t.Context(), spec, false); err != nil {
		t.Fatal(err)
	}
	p, err := e.CreatePartition(t.Context(), "db.events", map[string]string{"dt": "1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.tableDir(p.PartitionID)); err != nil {
		t.Fatalf("a created partition's directory: %v", err)
	}
	if err := e.DropDatabase(t.Context(), "db", false, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.tableDir(p.PartitionID)); !os.IsNotExist(err) {
		t.Errorf("a dropped database's partition directory is still there: %v", err)
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
	if _, err := e.ListPartitions("events", nil); errs.KindOf(err) != errs.FailedPrecondition || !contains(err.Error(), "table fluss.events is not partitioned") {
		t.Errorf("list-partitions of a plain table: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// scanRows reads every ticket of a scan and returns the rows by partition
// ("" for a table that is not partitioned) as id → dt, checking that each
// batch's app_metadata names the partition of its ticket range.
func scanRows(t *testing.T, e *Engine, req protocol.ScanRequest) (*ScanPlan, map[string]map[int64]string) {
	t.Helper()
	plan, err := e.PlanScan(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[int64]string{}
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		err = rs.Run(t.Context(), func(rec arrow.RecordBatch, m protocol.BatchMeta) error {
			if got[m.Partition] == nil {
				got[m.Partition] = map[int64]string{}
			}
			ids := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
			days := rec.Column(rec.Schema().FieldIndices("dt")[0]).(*array.String)
			for i := range ids.Len() {
				got[m.Partition][ids.Value(i)] = days.Value(i)
				if days.Value(i) != m.Partition {
					t.Errorf("row %d of partition %s has dt %s", ids.Value(i), m.Partition, days.Value(i))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return plan, got
}

func TestPartitionedScan(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	days := []string{"20261201", "20261202", "20261203"}
	var ids []int64
	var dts []string
	for i := range 30 {
		ids, dts = append(ids, int64(i)), append(dts, days[i%3])
	}
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "events"}, eventRows(ids, dts)); err != nil {
		t.Fatal(err)
	}

	plan, got := scanRows(t, e, protocol.ScanRequest{Table: "events"})
	if len(plan.Tickets) != 6 || len(plan.Partitions) != 3 || plan.TotalRecords != 30 {
		t.Fatalf("plan of the whole table: %d tickets, partitions %v, %d records", len(plan.Tickets), plan.Partitions, plan.TotalRecords)
	}
	for i, d := range days {
		if len(got[d]) != 10 {
			t.Errorf("partition %s: %d rows, want 10", d, len(got[d]))
		}
		for id := range got[d] {
			if int(id)%3 != i {
				t.Errorf("row %d read from partition %s", id, d)
			}
		}
		if plan.Tickets[2*i].Partition != d || plan.Tickets[2*i].Bucket != 0 || plan.Tickets[2*i+1].Bucket != 1 {
			t.Errorf("ticket %d: partition %s bucket %d, want partitions in name order, then buckets", 2*i, plan.Tickets[2*i].Partition, plan.Tickets[2*i].Bucket)
		}
	}

	// A filter on the partition column plans only the matching partitions;
	// one on another column keeps them all.
	filter := func(f string) protocol.ScanRequest {
		return protocol.ScanRequest{Table: "events", Filter: []byte(f)}
	}
	for f, want := range map[string][]string{
		`{"eq": ["dt", "20261202"]}`:                        {"20261202"},
		`{"in": ["dt", ["20261201", "20261203"]]}`:          {"20261201", "20261203"},
		`{"not": {"eq": ["dt", "20261202"]}}`:               {"20261201", "20261203"},
		`{"gt": ["id", 20]}`:                                days,
		`{"and": [{"eq": ["dt", "x"]}, {"gt": ["id", 1]}]}`: nil,
	} {
		plan, got := scanRows(t, e, filter(f))
		var names []string
		for _, p := range plan.Partitions {
			names = append(names, p.PartitionName)
		}
		if !slices.Equal(names, want) || len(plan.Tickets) != 2*len(want) {
			t.Errorf("filter %s planned partitions %v (%d tickets), want %v", f, names, len(plan.Tickets), want)
		}
		for d := range got {
			if !slices.Contains(want, d) {
				t.Errorf("filter %s read partition %s", f, d)
			}
		}
	}

	// A subset by name; an unknown name is NOT_FOUND naming it.
	plan, got = scanRows(t, e, protocol.ScanRequest{Table: "events", Partitions: []string{"20261203"}, Buckets: []int{1}})
	if len(plan.Tickets) != 1 || len(got) > 1 || len(got["20261203"]) == 0 {
		t.Errorf("partitions [20261203] bucket 1: %d tickets, rows %v", len(plan.Tickets), got)
	}
	if _, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "events", Partitions: []string{"20261204"}}); errs.KindOf(err) != errs.NotFound || !contains(err.Error(), "20261204") {
		t.Errorf("unknown partition: %v", err)
	}

	// Offsets per partition: named ones start there, others at earliest.
	start := protocol.AtPartitionOffsets(protocol.PartitionOffsets{"20261201": {0: partitionHW(t, e, "20261201", 0), 1: partitionHW(t, e, "20261201", 1)}})
	_, got = scanRows(t, e, protocol.ScanRequest{Table: "events", Startup: start})
	if len(got["20261201"]) != 0 || len(got["20261202"]) != 10 {
		t.Errorf("startup at the end of 20261201: rows %d and %d", len(got["20261201"]), len(got["20261202"]))
	}
	if _, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "events", Startup: protocol.AtOffsets(map[int]int64{0: 0})}); errs.KindOf(err) != errs.InvalidArgument {
		t.Errorf("bucket offsets on a partitioned table: %v", err)
	}

	// A limit reads across partitions in one ticket.
	limit := int64(25)
	plan, got = scanRows(t, e, protocol.ScanRequest{Table: "events", Limit: &limit})
	n := 0
	for _, rows := range got {
		n += len(rows)
	}
	if len(plan.Tickets) != 1 || n != 25 || len(plan.Tickets[0].Then) != 5 {
		t.Errorf("limit 25: %d tickets, %d rows", len(plan.Tickets), n)
	}

	// The changelog view reads per partition too.
	plan, got = scanRows(t, e, protocol.ScanRequest{Table: "events$changelog"})
	if len(plan.Tickets) != 6 || len(got["20261202"]) != 10 || plan.Tickets[0].View != protocol.ViewChangelog {
		t.Errorf("changelog: %d tickets, %d rows of 20261202", len(plan.Tickets), len(got["20261202"]))
	}

	// A dropped partition's tickets are NOT_FOUND naming it.
	plan, _ = scanRows(t, e, protocol.ScanRequest{Table: "events", Partitions: []string{"20261201"}})
	if err := e.DropPartition(t.Context(), "events", map[string]string{"dt": "20261201"}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.OpenRead(plan.Tickets[0]); errs.KindOf(err) != errs.NotFound || !contains(err.Error(), "20261201") {
		t.Errorf("ticket of a dropped partition: %v", err)
	}
}

// partitionHW is a partition's bucket's high watermark.
func partitionHW(t *testing.T, e *Engine, name string, b int) int64 {
	t.Helper()
	info, _ := e.cat.Table(protocol.TablePath{Database: "fluss", Table: "events"})
	pt, _, err := e.tables.PartitionByName(info, name)
	if err != nil {
		t.Fatal(err)
	}
	return pt.Log.HighWatermark(b)
}

// createOrders creates "orders", a primary-key table partitioned by region.
func createOrders(t *testing.T, e *Engine) {
	t.Helper()
	if _, err := e.CreateTable(t.Context(), protocol.TableSpec{
		Table:         "orders",
		Columns:       []protocol.Column{{Name: "id", Type: "BIGINT"}, {Name: "region", Type: "STRING"}, {Name: "amount", Type: "BIGINT"}},
		PrimaryKey:    []string{"id", "region"},
		PartitionKeys: []string{"region"},
		Options:       map[string]string{"bucket.num": "2"},
	}, false); err != nil {
		t.Fatal(err)
	}
}

// idRegionKeys makes a key batch of the first two columns of schema, a
// BIGINT and a STRING.
func idRegionKeys(schema *arrow.Schema, ids []int64, regions []string) arrow.RecordBatch {
	b := array.NewRecordBuilder(memtest.Shared, arrow.NewSchema(schema.Fields()[:2], nil))
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(regions[i])
	}
	return b.NewRecordBatch()
}

var ordersSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "region", Type: arrow.BinaryTypes.String},
	{Name: "amount", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
}, nil)

func orderRows(ids []int64, regions []string, amounts []int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memtest.Shared, ordersSchema)
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append(regions[i])
		b.Field(2).(*array.Int64Builder).Append(amounts[i])
	}
	return b.NewRecordBatch()
}

// amounts reads a partitioned primary-key table's current rows as
// region/id → amount.
func amounts(t *testing.T, e *Engine) map[string]int64 {
	t.Helper()
	plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Run(t.Context(), func(rec arrow.RecordBatch, m protocol.BatchMeta) error {
			for i := range int(rec.NumRows()) {
				region := rec.Column(1).(*array.String).Value(i)
				if region != m.Partition {
					t.Errorf("row of region %s read from partition %s", region, m.Partition)
				}
				got[region+"/"+strconv.FormatInt(rec.Column(0).(*array.Int64).Value(i), 10)] = rec.Column(2).(*array.Int64).Value(i)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// A primary-key table partitioned by region: upserts, offsets, undo and
// producer offsets per partition.
func TestPartitionedPrimaryKeyTable(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{})
	defer e.Close()
	createOrders(t, e)
	seq := int64(0)
	upsert := func(ids []int64, regions []string, amts []int64) {
		t.Helper()
		defer func() { seq++ }()
		if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "orders", WriterID: "w", FirstSequence: seq}, orderRows(ids, regions, amts)); err != nil {
			t.Fatal(err)
		}
	}
	// The same id in two regions is two rows.
	upsert([]int64{1, 1, 2}, []string{"eu", "us", "eu"}, []int64{10, 20, 30})
	marks, err := e.ListOffsets(t.Context(), protocol.OffsetsRequest{Table: "orders"})
	if err != nil || marks.Offsets != nil || len(marks.PartitionOffsets) != 2 {
		t.Fatalf("list-offsets: %+v %v", marks, err)
	}
	upsert([]int64{1, 1}, []string{"eu", "us"}, []int64{11, 21})
	if got := amounts(t, e); got["eu/1"] != 11 || got["us/1"] != 21 || got["eu/2"] != 30 || len(got) != 3 {
		t.Fatalf("rows after the upserts: %v", got)
	}
	if ws, err := e.WriterState(t.Context(), protocol.WriterStateRequest{Table: "orders", WriterID: "w"}); err != nil || ws.NextSequence != 2 {
		t.Errorf("writer-state: %+v %v, want next sequence 2", ws, err)
	}
	// Sequence 2 has rows of us only; eu's log then skips it.
	upsert([]int64{3}, []string{"us"}, []int64{40})
	upsert([]int64{3}, []string{"eu"}, []int64{50})
	// A retry of sequence 3 is recognized, not applied again.
	if _, err := writeEvents(t, e, protocol.WriteRequest{Table: "orders", WriterID: "w", FirstSequence: 3}, orderRows([]int64{3}, []string{"eu"}, []int64{99})); err != nil {
		t.Fatal(err)
	}
	if got := amounts(t, e); got["eu/3"] != 50 || got["us/3"] != 40 {
		t.Errorf("sparse sequences and a retry: %v", got)
	}
	if ws, err := e.WriterState(t.Context(), protocol.WriterStateRequest{Table: "orders", WriterID: "w"}); err != nil || ws.NextSequence != 4 {
		t.Errorf("writer-state: %+v %v, want 4 (the max over partitions)", ws, err)
	}

	// Undo eu only, to the offsets before the second upsert.
	res, err := e.Undo(t.Context(), protocol.UndoRequest{Table: "orders",
		PartitionOffsets: protocol.RawPartitionKeys(protocol.PartitionOffsets{"eu": marks.PartitionOffsets["eu"]})})
	if err != nil || res.UndoneKeys != 2 || len(res.PartitionOffsets) != 1 {
		t.Fatalf("undo eu: %+v %v", res, err)
	}
	if got := amounts(t, e); got["eu/1"] != 10 || got["us/1"] != 21 || got["us/3"] != 40 {
		t.Errorf("after undoing eu: %v", got)
	}
	_, err = e.Undo(t.Context(), protocol.UndoRequest{Table: "orders", Offsets: map[string]int64{"0": 0}})
	if errs.KindOf(err) != errs.InvalidArgument {
		t.Errorf("undo with bucket offsets: %v", err)
	}
	_, err = e.Undo(t.Context(), protocol.UndoRequest{Table: "orders", PartitionOffsets: protocol.RawPartitionOffsets{"asia": {"0": 0}}})
	if errs.KindOf(err) != errs.NotFound || !contains(err.Error(), "region=asia") {
		t.Errorf("undo of a missing partition: %v", err)
	}

	// Producer offsets name the partitions.
	reg := protocol.ProducerOffsetsRequest{ProducerID: "p", Table: "orders", PartitionOffsets: protocol.RawPartitionKeys(marks.PartitionOffsets)}
	if r, err := e.RegisterProducerOffsets(t.Context(), reg); err != nil || r.Result != protocol.RegisterCreated {
		t.Fatalf("register: %+v %v", r, err)
	}
	got, err := e.GetProducerOffsets(t.Context(), protocol.ProducerOffsetsRequest{ProducerID: "p", Table: "orders"})
	if err != nil || got.Offsets != nil || len(got.PartitionOffsets) != 2 || got.PartitionOffsets["us"][0]+got.PartitionOffsets["us"][1] != 1 {
		t.Errorf("get: %+v %v", got, err)
	}

	// Lookups go to the key's partition; a missing partition has no row.
	lookupKeys := func(req protocol.LookupRequest, ids []int64, regions []string) map[int32]int64 {
		t.Helper()
		l, err := e.OpenLookup(req)
		if err != nil {
			t.Fatal(err)
		}
		keys := idRegionKeys(ordersSchema, ids, regions)
		defer keys.Release()
		ans, meta, err := l.Lookup(t.Context(), keys)
		if err != nil {
			t.Fatal(err)
		}
		defer ans.Release()
		got := map[int32]int64{}
		last := int32(-1)
		for i := range int(ans.NumRows()) {
			k := ans.Column(0).(*array.Int32).Value(i)
			if k <= last {
				t.Errorf("answer rows out of key order: %d after %d", k, last)
			}
			last = k
			got[k] = ans.Column(3).(*array.Int64).Value(i)
		}
		if meta.Keys != len(ids) || meta.Rows != len(got) {
			t.Errorf("lookup meta %+v", meta)
		}
		return got
	}
	got2 := lookupKeys(protocol.LookupRequest{Table: "orders"}, []int64{1, 1, 9, 3}, []string{"eu", "us", "asia", "us"})
	if len(got2) != 3 || got2[0] != 10 || got2[1] != 21 || got2[3] != 40 {
		t.Errorf("lookup: %v", got2)
	}
	if parts, _ := e.ListPartitions("orders", nil); len(parts) != 2 {
		t.Errorf("a lookup created a partition: %v", parts)
	}
	off := false
	got2 = lookupKeys(protocol.LookupRequest{Table: "orders", InsertIfNotExists: true, CreatePartitions: &off}, []int64{5}, []string{"asia"})
	if parts, _ := e.ListPartitions("orders", nil); len(got2) != 0 || len(parts) != 2 {
		t.Errorf("insert_if_not_exists without creating partitions: %v, partitions %v", got2, parts)
	}
	got2 = lookupKeys(protocol.LookupRequest{Table: "orders", InsertIfNotExists: true}, []int64{5, 1}, []string{"asia", "eu"})
	if parts, _ := e.ListPartitions("orders", map[string]string{"region": "asia"}); len(got2) != 2 || len(parts) != 1 {
		t.Errorf("insert_if_not_exists: %v, partitions %v", got2, parts)
	}
	if _, err := e.OpenLookup(protocol.LookupRequest{Table: "orders", Prefix: true}); err == nil {
		t.Error("prefix lookup of a partitioned table without a prefix index: no error")
	}
}

// Dropping a partition while a writer writes to it and a follower reads it:
// the writer's batches either land or fail NOT_FOUND, the follower ends
// NOT_FOUND, and the partition's data is gone.
func TestDropPartitionUnderLoad(t *testing.T) {
	e := openPartitioned(t, t.TempDir(), Options{FollowHeartbeat: 10 * time.Millisecond})
	defer e.Close()
	if _, err := e.CreateTable(t.Context(), eventsSpec(), false); err != nil {
		t.Fatal(err)
	}
	info, err := e.CreatePartition(t.Context(), "events", map[string]string{"dt": "1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	off := false
	ws, err := e.OpenWrite(protocol.WriteRequest{Table: "events", CreatePartitions: &off})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := e.PlanScan(t.Context(), protocol.ScanRequest{Table: "events", Stop: protocol.Unbounded})
	if err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, len(plan.Tickets))
	for _, tk := range plan.Tickets {
		rs, err := e.OpenRead(tk)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			readErr <- rs.Run(context.Background(), func(arrow.RecordBatch, protocol.BatchMeta) error { return nil })
		}()
	}
	writeErr := make(chan error, 1)
	written := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			rec := eventRows([]int64{int64(i)}, []string{"1"})
			_, err := ws.Write(context.Background(), rec)
			rec.Release()
			if i == 10 {
				close(written)
			}
			if err != nil {
				writeErr <- err
				return
			}
		}
	}()
	<-written
	if err := e.DropPartition(t.Context(), "events", map[string]string{"dt": "1"}, false); err != nil {
		t.Fatal(err)
	}
	if err := <-writeErr; errs.KindOf(err) != errs.NotFound {
		t.Errorf("the writer ended with %v, want NOT_FOUND", err)
	}
	for range plan.Tickets {
		if err := <-readErr; errs.KindOf(err) != errs.NotFound {
			t.Errorf("a follower ended with %v, want NOT_FOUND", err)
		}
	}
	if _, err := os.Stat(e.tableDir(info.PartitionID)); !os.IsNotExist(err) {
		t.Errorf("the dropped partition's directory: %v", err)
	}
}
