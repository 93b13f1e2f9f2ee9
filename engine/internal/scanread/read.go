package scanread

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/arrow/util"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/framestats"
	"github.com/fluxgate-io/fluxgate/logstore"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// MaxBatchBytes bounds the batches a scan sends, below gRPC's default 4 MiB
// client limit with room for the IPC metadata.
const MaxBatchBytes = 3 << 20

// Change types as stored in changelog frames (Fluss's byte values).
const (
	ChangeAppend       byte = 0
	ChangeInsert       byte = 1
	ChangeUpdateBefore byte = 2
	ChangeUpdateAfter  byte = 3
	ChangeDelete       byte = 4
)

var changeTypeNames = [...]string{
	ChangeAppend:       "insert",
	ChangeInsert:       "insert",
	ChangeUpdateBefore: "update_before",
	ChangeUpdateAfter:  "update_after",
	ChangeDelete:       "delete",
}

// Stream reads an opened ticket.
type Stream struct {
	env    *Env
	t      *table.Table
	sch    *table.Schema // the table's when the stream opened: it reads in that schema
	info   *catalog.TableInfo
	tk     protocol.Ticket
	ranges []protocol.TicketRange // the ticket's, in order
	plan   *viewplan.Plan
	outPos []int // position in plan.Need of each result column
	left   int64 // rows the limit still allows; -1 without a limit

	// encoded, when set, sends frames as the store holds them; msgCols
	// are the result columns of a frame's message, those with a name in
	// systemNames made for each frame.
	encoded     func(logstore.Message, protocol.BatchMeta) error
	msgCols     []logstore.MessageColumn
	systemNames []string

	// lakeOnly is the range being read when it is of a partition only in
	// the lake (lakepart.go); t and sch are nil then, info the table's.
	lakeOnly *protocol.TicketRange

	mem Memory // nil: frames are not held against a budget
}

// newStream returns the stream of a checked ticket, whose ranges are ranges, to
// be read from t in schema sch with plan; t and sch are nil when the first
// range is of a partition only in the lake, and info is then its
// partitioned table's.
func newStream(env *Env, t *table.Table, sch *table.Schema, info *catalog.TableInfo, tk protocol.Ticket, ranges []protocol.TicketRange, plan *viewplan.Plan) *Stream {
	rs := &Stream{env: env, t: t, sch: sch, info: info, tk: tk, ranges: ranges, plan: plan, outPos: plan.OutPositions(), left: -1}
	if t == nil {
		rs.lakeOnly = &ranges[0]
	}
	if tk.Limit != nil {
		rs.left = *tk.Limit
	}
	return rs
}

// Schema returns the schema of the batches the stream sends.
func (rs *Stream) Schema() *arrow.Schema { return rs.plan.Schema }

// Compression returns the IPC compression of the batches Run sends: the
// ticket's, or "" (uncompressed) when the ticket asks for batches as stored.
func (rs *Stream) Compression() string { return rs.tk.Compression }

// SendEncoded has the stream send the frames that the store holds
// compressed by Arrow buffer as they are, without decompressing them, when
// the ticket asks for the table's codec (ZSTD or LZ4 frames), or asks for
// nothing (batches as stored): whole frames of log and changelog reads whose rows all match
// the filter, if there is one (the changelog's system columns are made for
// each frame and sent uncompressed). Run's send gets the rest. send must
// not keep the message's bytes after it returns.
func (rs *Stream) SendEncoded(send func(EncodedBatch, protocol.BatchMeta) error) {
	asStored := rs.tk.Compression == "" && rs.info.Compression() != catalog.CompressionNone
	if rs.tk.Compression != rs.info.Compression() && !asStored {
		return
	}
	rs.msgCols, rs.systemNames = rs.plan.MessageColumns(len(rs.info.ArrowSchema().Fields()))
	if rs.msgCols != nil {
		rs.encoded = func(msg logstore.Message, m protocol.BatchMeta) error {
			return send(EncodedBatch{Meta: msg.Meta, Body: msg.Body, BodyLen: msg.BodyLen}, m)
		}
	}
}

// EncodedBatch is a batch as the store holds it, sent without decoding: an
// Arrow IPC record batch message's flatbuffer metadata and its body.
type EncodedBatch struct {
	Meta    []byte
	Body    [][]byte // the body, in pieces
	BodyLen int      // bytes of Body
}

// message returns f's result columns as the store holds them, when the
// stream sends frames so and f's are compressed by buffer. f's rows must
// need no filtering.
func (rs *Stream) message(f *logstore.Frame) (logstore.Message, bool) {
	if rs.encoded == nil {
		return logstore.Message{}, false
	}
	cols := slices.Clone(rs.msgCols)
	for i, name := range rs.systemNames {
		if name != "" {
			cols[i].Made = systemColumn(f, name, rs.env.Alloc)
			defer cols[i].Made.Release() // the message has copies
		}
	}
	return f.Message(cols)
}

// Run reads the ticket's ranges in turn and passes each batch to send, which
// must not keep the record after it returns. Bounded ranges end at their stop
// offset; an unbounded one follows the log until ctx is done, sending an
// empty batch whenever it has been idle for the heartbeat interval.
func (rs *Stream) Run(ctx context.Context, send func(arrow.RecordBatch, protocol.BatchMeta) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rs.env.Metrics.Scans.Add(ctx, 1)
	defer rs.env.Metrics.Scans.Add(context.Background(), -1)
	go func() {
		select {
		case <-rs.env.Draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	send = tagPartition(rs, send)
	if rs.encoded != nil {
		rs.encoded = tagPartition(rs, rs.encoded)
	}
	for _, r := range rs.ranges {
		if rs.left == 0 {
			return nil
		}
		if err := rs.usePartition(r); err != nil {
			return err
		}
		if rs.tk.View == protocol.ViewSnapshot || rs.tk.Snapshot {
			at, err := rs.runSnapshot(ctx, r.Bucket, send)
			if err != nil || rs.tk.View == protocol.ViewSnapshot || (r.Stop != nil && at >= *r.Stop) {
				if err != nil {
					return err
				}
				continue
			}
			r.Start = at
		}
		if rs.tk.View == protocol.ViewLake || rs.tk.View == protocol.ViewUnion {
			if err := rs.runLake(ctx, r.Bucket, send); err != nil || rs.tk.View == protocol.ViewLake || rs.lakeOnly != nil {
				if err != nil {
					return err
				}
				continue
			}
		}
		if err := rs.runRange(ctx, r, send); err != nil {
			return err
		}
	}
	return nil
}

func (rs *Stream) runRange(ctx context.Context, r protocol.TicketRange, send func(arrow.RecordBatch, protocol.BatchMeta) error) error {
	reader, err := rs.t.Log.NewReader(r.Bucket, r.Start, rs.plan.Read)
	if err != nil {
		return err
	}
	defer reader.Close()
	if rs.plan.Filter != nil {
		reader.SkipIf(rs.ruledOut)
	}
	var mem *frameMemory
	if rs.mem != nil {
		mem = &frameMemory{ctx: ctx, mem: rs.mem}
		reader.Admit(mem.admit)
		defer func() { mem.release(mem.take()) }() // a frame whose read failed
	}
	lastSend := time.Now()
	// Changelog frames without rows are not sent; if the range ends with
	// some, an empty batch carries the final offset.
	sentNext := r.Start
	send = func(send func(arrow.RecordBatch, protocol.BatchMeta) error) func(arrow.RecordBatch, protocol.BatchMeta) error {
		return func(rec arrow.RecordBatch, m protocol.BatchMeta) error {
			sentNext, lastSend = m.Next, time.Now()
			return send(rec, m)
		}
	}(send)
	var encoded func(logstore.Message, protocol.BatchMeta) error
	if rs.encoded != nil {
		encoded = func(msg logstore.Message, m protocol.BatchMeta) error {
			sentNext, lastSend = m.Next, time.Now()
			return rs.encoded(msg, m)
		}
	}
	direct := directFrames{rs, reader, mem}
	var frames frameSource = direct
	if r.Stop != nil && *r.Stop <= reader.HighWatermark() && rs.t.Codec != logstore.CodecNone {
		// Every frame of the range is in the log already: decode ahead.
		ahead := readAhead(ctx, direct, *r.Stop)
		defer ahead.close()
		frames = ahead
	}
	offset := r.Start // where the frames handed out so far end
	for rs.left != 0 {
		if err := rs.check(ctx); err != nil {
			return err
		}
		limit := reader.HighWatermark()
		if r.Stop != nil {
			if offset >= *r.Stop {
				if sentNext < offset {
					return rs.sendEmpty(offset, reader.HighWatermark(), r.Bucket, send)
				}
				return nil
			}
			limit = min(limit, *r.Stop)
		}
		d, err := frames.next(limit)
		if err != nil {
			mem.release(d.held)
			return rs.readErr(err)
		}
		if d.f == nil {
			if err := rs.idle(ctx, reader, r.Bucket, send); err != nil {
				return err
			}
			continue
		}
		offset = d.f.NextOffset
		if d.f.Skipped {
			// A follower whose filter rules out everything still hears
			// where the log is.
			if time.Since(lastSend) >= rs.env.IdleHeartbeat {
				if err := rs.sendEmpty(offset, reader.HighWatermark(), r.Bucket, send); err != nil {
					return err
				}
			}
			continue
		}
		err = rs.sendFrame(ctx, d, r, send, encoded)
		if d.rec != nil {
			d.rec.Release()
		}
		mem.release(d.held)
		if err != nil {
			return err
		}
	}
	return nil
}

// check ends the stream when the client went away, the table was dropped or
// the server is closing.
func (rs *Stream) check(ctx context.Context) error {
	if rs.t != nil && rs.t.Dropped.Load() { // nil: a lake-only partition's range
		return rs.dropped()
	}
	if rs.env.draining() {
		return errs.New(errs.Unavailable, "the server is shutting down")
	}
	return ctx.Err()
}

func (rs *Stream) readErr(err error) error {
	if rs.t.Dropped.Load() {
		return rs.dropped()
	}
	return err
}

// dropped is the error of a stream whose table was dropped while it read:
// a partition dropped on its own is named as the partition, one dropped
// with its table (which leaves the catalog first) as the table.
func (rs *Stream) dropped() error {
	if p := rs.t.Current().Info.Partition(); p != nil {
		if _, err := rs.env.Tables.Catalog().TableByID(p.TableID); err == nil {
			return errs.New(errs.NotFound, "partition %s of table %s was dropped during the scan", p.PartitionName, rs.info.Path())
		}
	}
	return errs.New(errs.NotFound, "table %s was dropped during the scan", rs.info.Path())
}

// idle waits at the tail of an unbounded range for new data, sending an empty
// batch with the current offsets when none comes within the heartbeat.
func (rs *Stream) idle(ctx context.Context, reader *logstore.Reader, bucket int, send func(arrow.RecordBatch, protocol.BatchMeta) error) error {
	wctx, cancel := context.WithTimeout(ctx, rs.env.IdleHeartbeat)
	err := reader.Wait(wctx)
	cancel()
	if err == nil || ctx.Err() != nil {
		return rs.check(ctx)
	}
	return rs.sendEmpty(reader.Offset(), reader.HighWatermark(), bucket, send)
}

// sendEmpty sends a batch without rows at offset off.
func (rs *Stream) sendEmpty(off, hw int64, bucket int, send func(arrow.RecordBatch, protocol.BatchMeta) error) error {
	empty := emptyRecord(rs.plan.Schema, rs.env.Alloc)
	defer empty.Release()
	return send(empty, protocol.BatchMeta{Bucket: bucket, Start: off, Next: off, HighWatermark: hw})
}

// sendFrame trims a decoded frame to the ticket's range, filters its rows,
// applies the limit, and sends the result in slices under MaxBatchBytes.
// Each batch's start and next cover every offset since the previous batch,
// filtered rows included.
func (rs *Stream) sendFrame(ctx context.Context, d decodedFrame, r protocol.TicketRange, send func(arrow.RecordBatch, protocol.BatchMeta) error, encoded func(logstore.Message, protocol.BatchMeta) error) error {
	f, need := d.f, d.rec
	lo := max(d.from-f.BaseOffset, 0)
	hi := int64(f.Rows)
	if r.Stop != nil {
		hi = min(hi, *r.Stop-f.BaseOffset)
	}
	if hi <= lo {
		return nil // an empty changelog batch; the next one carries the offset on
	}
	if d.msg != nil {
		whole := lo == 0 && hi == int64(f.Rows) && (rs.left < 0 || hi <= rs.left)
		if whole && len(d.msg.Meta)+d.msg.BodyLen <= MaxBatchBytes {
			meta := protocol.BatchMeta{Bucket: r.Bucket, Start: f.BaseOffset, Next: f.NextOffset, HighWatermark: rs.t.Log.HighWatermark(r.Bucket)}
			if err := encoded(*d.msg, meta); err != nil {
				return err
			}
			rs.count(ctx, hi, int64(d.msg.RawBytes))
			return nil
		}
		rec, err := rs.build(f)
		if err != nil {
			return err
		}
		defer rec.Release()
		need = rec
	}
	sub := need.NewSlice(lo, hi)
	defer sub.Release()
	end := f.NextOffset
	if hi < int64(f.Rows) {
		end = f.BaseOffset + hi
	}
	// offset of row k of sub, after filtering
	offset := func(k int64) int64 { return f.BaseOffset + lo + k }
	if !d.unfiltered {
		kept, filtered, err := rs.filterRows(ctx, sub)
		if err != nil {
			return err
		}
		defer filtered.Release()
		sub = filtered
		offset = func(k int64) int64 { return f.BaseOffset + lo + kept[k] }
	}
	rows := sub.NumRows()
	if rs.left >= 0 && rows > rs.left {
		rows = rs.left
		end = offset(rows-1) + 1
	}
	if rows == 0 {
		return nil // all filtered out; a later batch or heartbeat carries the offset on
	}
	out := rs.project(sub)
	defer out.Release()
	// sent estimates the Arrow bytes of the rows sent, for the metric: out's
	// buffers are those of the whole decoded frame when out is a slice of it
	// (no filter), so scale them by the share of the frame's rows sent.
	bufRows := out.NumRows()
	if d.unfiltered {
		bufRows = int64(f.Rows)
	}
	sent := util.TotalRecordSize(out) * rows / max(bufRows, 1)
	meta := protocol.BatchMeta{Bucket: r.Bucket, Start: f.BaseOffset + lo, Next: end, HighWatermark: rs.t.Log.HighWatermark(r.Bucket)}
	return rs.sendRows(ctx, out, rows, meta, offset, sent, send)
}

// sendRows sends the first rows of out in slices under MaxBatchBytes and
// counts them against the limit. meta holds the bucket, the high watermark,
// the start of the first slice and the next of the last; offset(k) is the
// offset of row k, from which the slices between get theirs. sent is the
// Arrow bytes to count for the metric.
func (rs *Stream) sendRows(ctx context.Context, out arrow.RecordBatch, rows int64, meta protocol.BatchMeta, offset func(k int64) int64, sent int64, send func(arrow.RecordBatch, protocol.BatchMeta) error) error {
	step := rows
	if size := util.TotalRecordSize(out) * rows / max(out.NumRows(), 1); size > MaxBatchBytes {
		step = max(rows*MaxBatchBytes/size, 1)
	}
	start, end := meta.Start, meta.Next
	for i := int64(0); i < rows; i += step {
		j := min(i+step, rows)
		next := offset(j-1) + 1
		if j == rows {
			next = end
		}
		part := out.NewSlice(i, j)
		meta.Start, meta.Next = start, next
		err := send(part, meta)
		part.Release()
		if err != nil {
			return err
		}
		start = next
	}
	rs.count(ctx, rows, sent)
	return nil
}

// count counts rows sent against the limit and in the metrics, with bytes
// the Arrow bytes they hold.
func (rs *Stream) count(ctx context.Context, rows, bytes int64) {
	if rs.left > 0 {
		rs.left -= rows
	}
	rs.env.Metrics.Read(ctx, rs.info.Path().String(), rows, bytes)
}

// ruledOut reports whether a frame's statistics prove that no row of it
// matches the filter.
func (rs *Stream) ruledOut(stats []byte, rows int) bool {
	view := rs.viewStats(stats, rows)
	return view != nil && !rs.plan.Filter.MayMatch(int64(rows), view)
}

// unfiltered reports whether f's rows go out without filtering: there is no
// filter, or the frame's statistics prove that every row matches it.
func (rs *Stream) unfiltered(f *logstore.Frame) bool {
	if rs.plan.Filter == nil {
		return true
	}
	view := rs.viewStats(f.Stats, f.Rows)
	return view != nil && rs.plan.Filter.MatchesAll(int64(f.Rows), view)
}

// viewStats returns a frame's statistics as the filter sees the view's
// columns; nil if nothing is known.
func (rs *Stream) viewStats(stats []byte, rows int) []framestats.Column {
	return framestats.View(stats, rs.sch.Types, rows, rs.plan.System)
}

// filterRows keeps the rows of rec that match the filter, and returns their
// positions.
func (rs *Stream) filterRows(ctx context.Context, rec arrow.RecordBatch) ([]int64, arrow.RecordBatch, error) {
	mem := rs.env.Alloc
	mask, err := rs.plan.Filter.Filter(ctx, mem, func(v int) arrow.Array {
		return rec.Column(slices.Index(rs.plan.Need, v))
	}, int(rec.NumRows()))
	if err != nil {
		return nil, nil, err
	}
	defer mask.Release()
	var kept []int64
	for k := range mask.Len() {
		if mask.IsValid(k) && mask.Value(k) {
			kept = append(kept, int64(k))
		}
	}
	filtered, err := compute.FilterRecordBatch(compute.WithAllocator(ctx, mem), rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, nil, fmt.Errorf("filter rows: %w", err)
	}
	return kept, filtered, nil
}

// project picks the result columns out of a record of the need columns.
func (rs *Stream) project(rec arrow.RecordBatch) arrow.RecordBatch {
	cols := make([]arrow.Array, len(rs.outPos))
	for i, p := range rs.outPos {
		cols[i] = rec.Column(p)
	}
	return array.NewRecordBatch(rs.plan.Schema, cols, rec.NumRows())
}

// build turns a frame into a record of the need columns: the table columns
// read, and the view's system columns made up from the frame's offsets,
// commit time and change types.
func (rs *Stream) build(f *logstore.Frame) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(rs.plan.Need))
	if len(rs.plan.Read) == 0 {
		// System columns alone: the frame's header has all they need, and
		// its column bodies are not decoded (nor are they projected away).
		for i, v := range rs.plan.Need {
			cols[i] = systemColumn(f, rs.plan.View.Field(v).Name, rs.env.Alloc)
		}
		return rs.record(f, cols), nil
	}
	read, err := f.Record(rs.sch.Decoder, readSchema(rs.info.ArrowSchema(), rs.plan.Read))
	if err != nil {
		return nil, err
	}
	defer read.Release()
	for i, v := range rs.plan.Need {
		if v >= rs.plan.System {
			cols[i] = read.Column(slices.Index(rs.plan.Read, v-rs.plan.System))
			cols[i].Retain()
			continue
		}
		cols[i] = systemColumn(f, rs.plan.View.Field(v).Name, rs.env.Alloc)
	}
	return rs.record(f, cols), nil
}

// record makes the need-columns record of a frame's columns, taking them over.
func (rs *Stream) record(f *logstore.Frame, cols []arrow.Array) arrow.RecordBatch {
	rec := array.NewRecordBatch(rs.plan.NeedSchema(), cols, int64(f.Rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// systemColumn makes the changelog system column name of a frame's rows.
func systemColumn(f *logstore.Frame, name string, mem memory.Allocator) arrow.Array {
	switch name {
	case viewplan.ColChangeType:
		return changeTypes(f, mem)
	case viewplan.ColLogOffset:
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for k := range f.Rows {
			b.Append(f.BaseOffset + int64(k))
		}
		return b.NewArray()
	case viewplan.ColCommitTimestamp:
		b := array.NewTimestampBuilder(mem, viewplan.ChangelogFields[2].Type.(*arrow.TimestampType))
		defer b.Release()
		for range f.Rows {
			b.Append(arrow.Timestamp(f.CommitTs))
		}
		return b.NewArray()
	}
	panic("scanread: no system column " + name)
}

func changeTypes(f *logstore.Frame, mem memory.Allocator) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for k := range f.Rows {
		ct := ChangeAppend
		if f.ChangeTypes != nil {
			ct = f.ChangeTypes[k]
		}
		if int(ct) < len(changeTypeNames) {
			b.Append(changeTypeNames[ct])
		} else {
			b.Append(fmt.Sprintf("unknown(%d)", ct))
		}
	}
	return b.NewArray()
}

func readSchema(table *arrow.Schema, cols []int) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = table.Field(c)
	}
	return arrow.NewSchema(fields, nil)
}

func emptyRecord(schema *arrow.Schema, mem memory.Allocator) arrow.RecordBatch {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
	}
	rec := array.NewRecordBatch(schema, cols, 0)
	for _, c := range cols {
		c.Release()
	}
	return rec
}
