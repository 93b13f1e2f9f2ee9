package conformance

// The events table of the partition-* scenarios: events(id, dt, note)
// partitioned by dt and bucketed by id, rows spread over days, and scans that
// return the ids by partition, checking that every batch names the partition
// of its rows.

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
)

// partDays are the partitions the log scenarios write, one per day.
var partDays = []string{"20261128", "20261129", "20261130", "20261201", "20261202", "20261203"}

// partFields are the columns of the events table, as written.
var partFields = []arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "dt", Type: arrow.BinaryTypes.String},
	{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
}

// partSpec is the events table: partitioned by dt, 2 buckets by id, with
// opts added.
func partSpec(table string, opts map[string]string) client.TableSpec {
	spec := client.TableSpec{
		Table: table,
		Columns: []client.Column{
			{Name: "id", Type: "BIGINT", Nullable: new(false)},
			{Name: "dt", Type: "STRING", Nullable: new(false)},
			{Name: "note", Type: "STRING"},
		},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"bucket.num": "2", "bucket.key": "id"},
	}
	maps.Copy(spec.Options, opts)
	return spec
}

// partRows are a partitioned table's ids by partition name.
type partRows map[string][]int64

// dayRows gives each of days n ids, day i's from i*1000, and interleaves
// them in one batch's order, so that a write must route every row.
func dayRows(days []string, n int) (partRows, [][]any) {
	want := partRows{}
	var rows [][]any
	for k := range n {
		for i, day := range days {
			id := int64(i*1000 + k)
			want[day] = append(want[day], id)
			rows = append(rows, []any{id, day, fmt.Sprintf("event %d of %s, padded to make a row of some size", id, day)})
		}
	}
	return want, rows
}

// writePartRows writes rows (of partFields) as one batch.
func writePartRows(ctx context.Context, env *Env, req client.WriteRequest, rows [][]any) (client.PutResult, error) {
	rec, err := buildRecord(env.Mem, partFields, rows)
	if err != nil {
		return client.PutResult{}, err
	}
	defer rec.Release()
	res, err := writeRecords(ctx, env, req, rec)
	if err != nil {
		return client.PutResult{}, err
	}
	return res[0], nil
}

// scanParts reads a planned scan of the events table and returns its ids by
// partition, sorted. Every batch must name its partition, and its rows must
// hold that partition's dt.
func scanParts(ctx context.Context, env *Env, plan *client.ScanPlan) (partRows, error) {
	s := env.Client.ScanPlanned(ctx, plan)
	defer s.Release()
	out := partRows{}
	for s.Next() {
		rec, m := s.RecordBatch(), s.Meta()
		if rec.NumRows() == 0 {
			continue
		}
		if err := checkPartBatch(rec, m); err != nil {
			return nil, err
		}
		ids, err := int64Column(rec, "id")
		if err != nil {
			return nil, err
		}
		out[m.Partition] = append(out[m.Partition], ids...)
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out, nil
}

// checkPartBatch checks that a batch's app_metadata names a partition and
// that its rows are that partition's.
func checkPartBatch(rec arrow.RecordBatch, m client.BatchMeta) error {
	if m.Partition == "" || m.PartitionID == 0 {
		return fmt.Errorf("bucket %d: a batch of a partitioned table has app_metadata partition %q, partition_id %d; want both set", m.Bucket, m.Partition, m.PartitionID)
	}
	idx := rec.Schema().FieldIndices("dt")
	if len(idx) != 1 {
		return nil // a projection without dt
	}
	dt, ok := rec.Column(idx[0]).(*array.String)
	if !ok {
		return fmt.Errorf("column dt is %s, want utf8", rec.Column(idx[0]).DataType())
	}
	for i := range dt.Len() {
		if dt.Value(i) != m.Partition {
			return fmt.Errorf("a batch of partition %s holds a row with dt %q", m.Partition, dt.Value(i))
		}
	}
	return nil
}

// planParts plans req and returns the plan and its partitions' names.
func planParts(ctx context.Context, env *Env, req client.ScanRequest) (*client.ScanPlan, []string, error) {
	plan, err := env.Client.Plan(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	var names []string
	for _, p := range plan.Meta.Partitions {
		names = append(names, p.PartitionName)
	}
	return plan, names, nil
}

func equalPartRows(what string, got, want partRows) error {
	names := map[string]bool{}
	for name := range got {
		names[name] = true
	}
	for name := range want {
		names[name] = true
	}
	for _, name := range keys(names) {
		if err := equalInts(fmt.Sprintf("%s, partition %s", what, name), got[name], want[name]); err != nil {
			return err
		}
	}
	return nil
}

func partitionNames(infos []client.PartitionInfo) []string {
	var out []string
	for _, p := range infos {
		out = append(out, p.PartitionName)
	}
	return out
}

func sortedParts(m partRows) partRows {
	out := partRows{}
	for k, ids := range m {
		out[k] = slices.Sorted(slices.Values(ids))
	}
	return out
}
