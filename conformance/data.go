package conformance

// Tables, records and the reads and writes the scenarios share. Most
// scenarios use the "simple" table: id BIGINT NOT NULL, name STRING, score
// DOUBLE, whose rows are a function of their id so that a read can be checked
// row by row.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// simpleSpec is the simple table with n buckets, bucketed by id when keyed.
func simpleSpec(table string, buckets int, keyed bool) client.TableSpec {
	opts := map[string]string{"bucket.num": strconv.Itoa(buckets)}
	if keyed {
		opts["bucket.key"] = "id"
	}
	return client.TableSpec{
		Table: table,
		Columns: []client.Column{
			{Name: "id", Type: "BIGINT", Nullable: new(false)},
			{Name: "name", Type: "STRING"},
			{Name: "score", Type: "DOUBLE"},
		},
		Options: opts,
	}
}

var simpleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func simpleName(id int64) string   { return "name-" + strconv.FormatInt(id, 10) }
func simpleScore(id int64) float64 { return float64(id) * 0.5 }

// simpleBatch builds the simple table's rows for ids; every fifth name is
// null.
func simpleBatch(mem memory.Allocator, ids []int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, simpleSchema)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		if id%5 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(simpleName(id))
		}
		b.Field(2).(*array.Float64Builder).Append(simpleScore(id))
	}
	return b.NewRecordBatch()
}

// idRange returns from, from+1, ..., from+n-1.
func idRange(from, n int64) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = from + int64(i)
	}
	return ids
}

// createTable creates a table of this run and returns it as stored.
func createTable(ctx context.Context, env *Env, spec client.TableSpec) (*client.TableInfo, error) {
	info, err := env.Client.CreateTable(ctx, spec, false)
	if err != nil {
		return nil, fmt.Errorf("create-table: %w", err)
	}
	return info, nil
}

// writeIDs writes one simple batch per id list through one stream and
// returns their acknowledgements.
func writeIDs(ctx context.Context, env *Env, req client.WriteRequest, batches ...[]int64) ([]client.PutResult, error) {
	recs := make([]arrow.RecordBatch, len(batches))
	for i, ids := range batches {
		recs[i] = simpleBatch(env.Mem, ids)
	}
	defer releaseAll(recs)
	return writeRecords(ctx, env, req, recs...)
}

// writeRecords writes recs through one stream, each acknowledged before the
// next is sent.
func writeRecords(ctx context.Context, env *Env, req client.WriteRequest, recs ...arrow.RecordBatch) ([]client.PutResult, error) {
	w, err := env.Client.NewWriter(ctx, req)
	if err != nil {
		return nil, err
	}
	var out []client.PutResult
	for i, rec := range recs {
		res, err := w.Write(rec)
		if err != nil {
			w.Close()
			return out, fmt.Errorf("batch %d: %w", i, err)
		}
		out = append(out, res)
	}
	return out, w.Close()
}

// scanIDs runs a bounded scan and returns the id column per bucket, in offset
// order.
func scanIDs(ctx context.Context, env *Env, req client.ScanRequest) (map[int][]int64, error) {
	plan, err := env.Client.Plan(ctx, req)
	if err != nil {
		return nil, err
	}
	return planIDs(ctx, env, plan)
}

// planIDs reads a planned scan as scanIDs does.
func planIDs(ctx context.Context, env *Env, plan *client.ScanPlan) (map[int][]int64, error) {
	s := env.Client.ScanPlanned(ctx, plan)
	defer s.Release()
	out := map[int][]int64{}
	next := map[int]int64{}
	for s.Next() {
		rec, m := s.RecordBatch(), s.Meta()
		// Every row of a log table has its own offset, and each batch
		// starts where the previous one of its bucket said to resume.
		if prev, ok := next[m.Bucket]; ok && m.Start != prev {
			return nil, fmt.Errorf("bucket %d: a batch has app_metadata start %d, but the previous batch said next %d", m.Bucket, m.Start, prev)
		}
		if m.Next-m.Start != rec.NumRows() {
			return nil, fmt.Errorf("bucket %d: a batch of %d rows has app_metadata start %d, next %d; want next - start = rows on a log table", m.Bucket, rec.NumRows(), m.Start, m.Next)
		}
		next[m.Bucket] = m.Next
		if rec.NumRows() == 0 {
			continue
		}
		ids, err := int64Column(rec, "id")
		if err != nil {
			return nil, err
		}
		out[m.Bucket] = append(out[m.Bucket], ids...)
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// int64Column returns the values of a BIGINT column of rec.
func int64Column(rec arrow.RecordBatch, name string) ([]int64, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("the result has no column %q (schema %s)", name, rec.Schema())
	}
	col, ok := rec.Column(idx[0]).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("column %q is %s, want int64", name, rec.Column(idx[0]).DataType())
	}
	return slices.Clone(col.Int64Values()), nil
}

// readBuckets runs a bounded scan and returns each bucket's rows as one
// record; the caller releases them.
func readBuckets(ctx context.Context, env *Env, req client.ScanRequest) (map[int]arrow.RecordBatch, *arrow.Schema, error) {
	s, err := env.Client.Scan(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	defer s.Release()
	parts := map[int][]arrow.RecordBatch{}
	defer func() {
		for _, recs := range parts {
			releaseAll(recs)
		}
	}()
	for s.Next() {
		rec := s.RecordBatch()
		if rec.NumRows() == 0 {
			continue
		}
		rec.Retain()
		parts[s.Meta().Bucket] = append(parts[s.Meta().Bucket], rec)
	}
	if err := s.Err(); err != nil {
		return nil, nil, err
	}
	out := map[int]arrow.RecordBatch{}
	for b, recs := range parts {
		rec, err := concatRecords(s.Schema(), recs, env.Client.Allocator())
		if err != nil {
			releaseMap(out)
			return nil, nil, fmt.Errorf("bucket %d: %w", b, err)
		}
		out[b] = rec
	}
	return out, s.Schema(), nil
}

// concatRecords concatenates records of one schema into one.
func concatRecords(schema *arrow.Schema, recs []arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		col, err := array.Concatenate(parts, mem)
		if err != nil {
			return nil, fmt.Errorf("concatenate column %s: %w", schema.Field(i).Name, err)
		}
		cols[i] = col
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

func releaseAll[T interface{ Release() }](xs []T) {
	for _, x := range xs {
		x.Release()
	}
}

func releaseMap(m map[int]arrow.RecordBatch) {
	for _, r := range m {
		r.Release()
	}
}

// allIDs flattens per-bucket ids into one sorted list.
func allIDs(m map[int][]int64) []int64 {
	var out []int64
	for _, b := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[b]...)
	}
	slices.Sort(out)
	return out
}

// rowCount is the number of ids over all buckets.
func rowCount(m map[int][]int64) int {
	n := 0
	for _, ids := range m {
		n += len(ids)
	}
	return n
}

// endOffsets folds acknowledgements into each bucket's end offset.
func endOffsets(results ...client.PutResult) map[int]int64 {
	out := map[int]int64{}
	for _, r := range results {
		for b, end := range r.Buckets {
			out[b] = max(out[b], end)
		}
	}
	return out
}
