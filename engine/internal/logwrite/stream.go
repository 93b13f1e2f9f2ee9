// Package logwrite is the write path of a table: a write stream validated
// against the table, its batches conformed, split by bucket, encoded (or kept
// as received) and appended to the log; a primary-key table's batches go
// through pkwrite, a partitioned table's to their partitions' streams.
package logwrite

import (
	"context"
	"errors"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/inflight"
	"github.com/fluxgate-io/fluxgate/engine/internal/pkwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/internal/ipcmsg"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// Stream applies the batches of one write stream to one table, in order.
// It is not safe for concurrent use.
type Stream struct {
	env  *Env
	t    *table.Table
	sch  *table.Schema // the schema the stream writes with: the table's when it opened
	info *catalog.TableInfo
	req  protocol.WriteRequest
	seq  int64          // sequence of the next batch
	rr   uint32         // next bucket for log tables without a bucket key
	pk   *pkwrite.Write // primary-key tables only
	// parts routes the batches of a partitioned table to its partitions'
	// streams; t is nil then.
	parts *partitionRoute
}

// openStream validates a write request against a table's schema and
// returns its stream. t is nil for the stream of a partitioned table, which
// routes to its partitions' streams.
func openStream(env *Env, t *table.Table, sch *table.Schema, req protocol.WriteRequest) (*Stream, error) {
	info := sch.Info
	path := info.Path()
	if req.FirstSequence < 0 {
		return nil, errs.New(errs.InvalidArgument, "first_sequence %d is negative", req.FirstSequence)
	}
	if req.FirstSequence > 0 && req.WriterID == "" {
		return nil, errs.New(errs.InvalidArgument, "first_sequence needs a writer_id")
	}
	if req.WriterID != "" {
		// Frames hold it and a longer one would not fit their header.
		if err := protocol.ValidateID("writer_id", req.WriterID); err != nil {
			return nil, err
		}
	}
	switch req.MergeMode {
	case "", "default", "overwrite":
	default:
		return nil, errs.New(errs.InvalidArgument, "merge_mode %s: want \"default\" or \"overwrite\"", errs.Quote(req.MergeMode))
	}
	switch req.Mode {
	case "", protocol.ModeAppend, protocol.ModeUpsert, protocol.ModeDelete, protocol.ModeChangelog:
	default:
		return nil, errs.New(errs.InvalidArgument, "mode %s: want append, upsert, delete or changelog", errs.Quote(req.Mode))
	}
	if info.IsPrimaryKey() {
		pk, err := pkwrite.Open(sch, req)
		if err != nil {
			return nil, err
		}
		return &Stream{env: env, t: t, sch: sch, info: info, req: req, seq: req.FirstSequence, pk: pk}, nil
	}
	switch {
	case req.Mode != "" && req.Mode != protocol.ModeAppend:
		return nil, errs.New(errs.FailedPrecondition, "table %s is a log table: it takes mode append, not %s", path, req.Mode)
	case len(req.Columns) > 0:
		return nil, errs.New(errs.FailedPrecondition, "table %s is a log table: partial writes (columns) need a primary key", path)
	case req.MergeMode == "overwrite":
		return nil, errs.New(errs.FailedPrecondition, "table %s is a log table: merge_mode overwrite needs a primary key", path)
	}
	req.Mode = protocol.ModeAppend
	w := &Stream{env: env, t: t, sch: sch, info: info, req: req, seq: req.FirstSequence}
	if t != nil {
		w.rr = t.RoundRobin.Add(1)
	}
	return w, nil
}

// Table returns the table the stream writes to.
func (w *Stream) Table() *catalog.TableInfo { return w.info }

// Write applies one batch atomically: when it returns without error every row
// is durable and visible; with an error none is.
func (w *Stream) Write(ctx context.Context, rec arrow.RecordBatch) (protocol.PutResult, error) {
	p, err := w.Submit(ctx, rec)
	if err != nil {
		return protocol.PutResult{}, err
	}
	return p.Wait()
}

// Pending is a submitted batch that is perhaps not durable yet.
type Pending struct {
	res   protocol.PutResult
	log   *logstore.Pending   // of a log table
	pk    *inflight.Txn       // of a primary-key table
	parts map[string]*Pending // of a partitioned table, by partition name
}

// Wait blocks until the batch is durable and visible.
func (p *Pending) Wait() (protocol.PutResult, error) {
	switch {
	case p.log != nil:
		out, err := p.log.Wait()
		p.res.Buckets = out.Ends
		return p.res, err
	case p.pk != nil:
		ends, err := p.pk.Wait()
		p.res.Buckets = ends
		return p.res, err
	case p.parts != nil:
		return p.waitPartitions()
	}
	return p.res, nil
}

// Submit validates and appends one batch without waiting for it to be
// durable, so that a stream can go on with its next batch meanwhile. Batches
// become durable in the order they were submitted; an error means nothing of
// this batch was applied.
func (w *Stream) Submit(ctx context.Context, rec arrow.RecordBatch) (*Pending, error) {
	return w.SubmitReceived(ctx, rec, nil)
}

// Received is a batch as a writer sent it, compressed.
type Received struct{ r *logstore.Received }

// NewReceived keeps a batch of schema that arrived compressed (its IPC
// metadata and body) as received. It returns nil when no column of it can
// be stored so (see logstore.NewReceived).
func NewReceived(schema *arrow.Schema, meta *ipcmsg.RecordBatch, body []byte) *Received {
	r := logstore.NewReceived(schema, meta, body)
	if r == nil {
		return nil
	}
	return &Received{r}
}

func (r *Received) stored() *logstore.Received {
	if r == nil {
		return nil
	}
	return r.r
}

// SubmitReceived is Submit of a batch that arrived compressed as recv: the
// columns a ZSTD log table can store as received are not compressed again.
func (w *Stream) SubmitReceived(ctx context.Context, rec arrow.RecordBatch, recv *Received) (*Pending, error) {
	seq := w.seq
	if w.req.WriterID != "" && seq == math.MaxInt64 {
		// Its next_sequence would wrap to a negative number.
		return nil, errs.New(errs.InvalidArgument, "writer %s: sequence %d leaves no next sequence (the last a batch may take is %d); go on under a new writer_id", errs.Quote(w.req.WriterID), seq, seq-1)
	}
	w.seq++
	if w.parts != nil {
		return w.submitPartitioned(ctx, rec, seq)
	}
	return w.submitAt(ctx, rec, recv, seq)
}

// submitAt is SubmitReceived of the batch with sequence seq.
func (w *Stream) submitAt(ctx context.Context, rec arrow.RecordBatch, recv *Received, seq int64) (*Pending, error) {
	sent := rec
	if w.t.Dropped.Load() {
		return nil, errs.New(errs.NotFound, "table %s was dropped", w.info.Path())
	}
	rec, err := w.intake(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if err := lakeRange(w.t.Current().Info, rec); err != nil {
		return nil, err
	}
	if w.pk != nil {
		return w.submitPK(ctx, rec, seq)
	}
	rec, err = conform(w.info, rec, w.env.Alloc)
	if err != nil {
		return nil, err
	}
	defer rec.Release()

	mem := w.env.Alloc
	parts, err := w.split(ctx, rec, mem)
	if err != nil {
		return nil, err
	}
	writer := logstore.Writer{}
	if w.req.WriterID != "" {
		writer = logstore.Writer{ID: w.req.WriterID, Seq: seq, Sparse: w.info.Partition() != nil}
	}
	enc, err := w.sch.GetEncoder(w.t.Codec, mem)
	if err != nil {
		releaseParts(parts)
		return nil, err
	}
	defer w.sch.PutEncoder(enc)
	var sentCols []int // of a batch stored whole: the sent column of each column
	if recv != nil && len(parts) == 1 && parts[0].rec == rec {
		sentCols = sameColumns(sent, rec)
	}
	batches := make([]logstore.Part, 0, len(parts))
	size := 0
	for _, p := range parts {
		meta := logstore.BatchMeta{SchemaID: w.info.SchemaID, WriterID: writer.ID, WriterSeq: -1, Stats: framestats.Compute(p.rec)}
		if writer.ID != "" {
			meta.WriterSeq = seq
		}
		b, err := enc.EncodeReceived(p.rec, meta, recv.stored(), sentCols)
		if err != nil {
			releaseParts(parts)
			logstore.ReleaseParts(batches)
			return nil, err
		}
		batches = append(batches, logstore.Part{Bucket: p.bucket, Batch: b})
		size += b.Size()
	}
	releaseParts(parts)
	pending, err := w.t.Log.AppendAsync(batches, writer)
	if err != nil {
		if w.t.Dropped.Load() {
			return nil, errs.New(errs.NotFound, "table %s was dropped", w.info.Path())
		}
		return nil, err
	}
	attr := w.env.Metrics.Table(w.info.Path().String())
	w.env.Metrics.Rows.Add(ctx, rec.NumRows(), attr)
	w.env.Metrics.Bytes.Add(ctx, int64(size), attr)
	return &Pending{res: protocol.PutResult{Sequence: seq, Rows: rec.NumRows()}, log: pending}, nil
}

// sameColumns returns, for each column of rec, the column of sent that it
// is (not converted on the way), or -1.
func sameColumns(sent, rec arrow.RecordBatch) []int {
	out := make([]int, rec.NumCols())
	for i, c := range rec.Columns() {
		out[i] = -1
		for j, s := range sent.Columns() {
			if s == c {
				out[i] = j
				break
			}
		}
	}
	return out
}

func releaseParts(parts []bucketRecord) {
	for _, p := range parts {
		p.rec.Release()
	}
}

type bucketRecord struct {
	bucket int
	rec    arrow.RecordBatch
}

// split divides rec by bucket: by the bucket key's hash, or whole to the
// stream's next bucket (round-robin) when the table has no bucket key.
func (w *Stream) split(ctx context.Context, rec arrow.RecordBatch, mem memory.Allocator) ([]bucketRecord, error) {
	if rec.NumRows() == 0 {
		return nil, nil
	}
	n := w.info.BucketCount()
	if w.t.Assigner == nil || n == 1 {
		b := 0
		if n > 1 {
			b = int(w.rr % uint32(n))
			w.rr++
		}
		rec.Retain()
		return []bucketRecord{{b, rec}}, nil
	}
	assigned := w.t.Assigner.Assign(rec, nil)
	rows := make([][]int32, n)
	for i, b := range assigned {
		rows[b] = append(rows[b], int32(i))
	}
	var parts []bucketRecord
	for b, idx := range rows {
		if len(idx) == 0 {
			continue
		}
		if len(idx) == len(assigned) {
			rec.Retain()
			return []bucketRecord{{b, rec}}, nil
		}
		sub, err := row.Take(ctx, rec, idx, mem)
		if err != nil {
			releaseParts(parts)
			return nil, err
		}
		parts = append(parts, bucketRecord{b, sub})
	}
	return parts, nil
}

// intake converts the columns of a written batch that carry a column's
// values in another Arrow layout (large_string for STRING, from pandas and
// polars) to the table's types, once, so that everything after sees the
// table's types. The caller releases the result.
func (w *Stream) intake(ctx context.Context, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	schema := w.info.ArrowSchema()
	return row.ConformTypes(ctx, w.env.Alloc, rec, func(name string) (arrow.DataType, bool) {
		if w.pk != nil && w.pk.Changelog() && name == colChangeType {
			return arrow.BinaryTypes.String, true
		}
		if c := w.info.ColumnIndex(name); c >= 0 {
			return schema.Field(c).Type, true
		}
		return nil, false
	})
}

// lakeRange refuses a batch holding a value the lake cannot hold
// (lake.CheckRange) when info's table is lake-enabled: tiering would stop at
// it (PROTOCOL.md §7.4).
func lakeRange(info *catalog.TableInfo, rec arrow.RecordBatch) error {
	if !info.DatalakeEnabled() {
		return nil
	}
	var re *lake.RangeError
	if err := lake.CheckRange(rec); errors.As(err, &re) {
		return errs.New(errs.InvalidArgument, "write to %s: row %d, %v; the table is lake-enabled (%s), so it takes only what its Iceberg table can hold",
			info.Path(), re.Row, re, catalog.OptDatalakeEnabled)
	}
	return nil
}

// conform checks a written batch against the table by column name and type
// (nullability flags of the stream are not compared, values are) and returns
// it with the table's schema and column order. A nullable column the batch
// lacks is NULL in every row, as in Fluss, so that a writer goes on after a
// column was added; the NULLs are made from mem.
func conform(info *catalog.TableInfo, rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, error) {
	schema := info.ArrowSchema()
	in := rec.Schema()
	path := info.Path()
	seen := make(map[string]int, in.NumFields())
	for i, f := range in.Fields() {
		if _, dup := seen[f.Name]; dup {
			return nil, errs.New(errs.InvalidArgument, "write to %s: column %s appears twice in the batch", path, errs.Quote(f.Name))
		}
		seen[f.Name] = i
		if schema.FieldIndices(f.Name) == nil {
			return nil, errs.New(errs.InvalidArgument, "write to %s: the batch has column %s, which the table does not have (columns: %s)", path, errs.Quote(f.Name), viewplan.ColumnNames(schema))
		}
	}
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		j, ok := seen[f.Name]
		if !ok && !f.Nullable {
			return nil, errs.New(errs.InvalidArgument, "write to %s: the batch lacks column %s, which is NOT NULL", path, errs.Quote(f.Name))
		}
		if !ok {
			nulls := array.MakeArrayOfNull(mem, f.Type, int(rec.NumRows()))
			defer nulls.Release() // the batch made below holds it
			cols[i] = nulls
			continue
		}
		col := rec.Column(j)
		if !arrow.TypeEqual(col.DataType(), f.Type) {
			return nil, errs.New(errs.InvalidArgument, "write to %s: column %s is %s in the batch, the table wants %s (%s)", path, errs.Quote(f.Name), col.DataType(), f.Type, info.Columns[i].Type)
		}
		if !f.Nullable && col.NullN() > 0 {
			return nil, errs.New(errs.InvalidArgument, "write to %s: column %s is NOT NULL but the batch has %d nulls in it", path, errs.Quote(f.Name), col.NullN())
		}
		cols[i] = col
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}
