// Package tiering copies tables into the lake (PROTOCOL.md §7.2). A round
// reads each bucket from its lake offset to the high watermark at the round's
// start and commits the rows, with the new offsets, as one lake snapshot.
// Log tables append their records; primary-key tables fold each key's
// changes in the round to its final row and retire the key's earlier rows
// with position deletes (the lake knows where each key's row lives), so the
// snapshot equals the table's rows as of the round's offsets. A partitioned
// table's round does so for every bucket of every partition, into the one
// snapshot. The lake's snapshot is the only record of progress, so a round
// that dies before its commit is simply done again.
package tiering

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/row"
)

// Batch is one stored batch of a bucket's log.
type Batch struct {
	Rec      arrow.RecordBatch // the table's columns; valid during the callback
	Offset   int64             // offset of the first row
	CommitMs int64             // commit timestamp, unix ms
	// ChangeTypes holds each row's change (Fluss's byte values) for
	// changelog batches, nil for appends.
	ChangeTypes []byte
}

// Change types as stored in changelog batches.
const (
	changeUpdateBefore byte = 2
	changeUpdateAfter  byte = 3
	changeDelete       byte = 4
)

// Source is the table a round reads.
type Source interface {
	Buckets() int
	// Retained returns a bucket's earliest retained offset and its high
	// watermark.
	Retained(bucket int) (earliest, hw int64)
	// Read passes the bucket's batches in [from, to) to fn, in order. A
	// batch may start before from; rows before from are the caller's to
	// skip.
	Read(ctx context.Context, bucket int, from, to int64, fn func(Batch) error) error
	// PrimaryKey lists the primary-key columns, none for a log table.
	PrimaryKey() []int
	// Snapshot passes a primary-key bucket's current rows to fn, as
	// batches without offsets, and returns the offset they are the state
	// at.
	Snapshot(ctx context.Context, bucket int, fn func(Batch) error) (at int64, err error)
}

// Result is what a round did.
type Result struct {
	Snapshot  *lake.Snapshot // the latest lake snapshot after the round; nil if there is none
	Committed bool           // whether the round committed a snapshot
	Stats     lake.CommitStats
	Rows      int64 // log rows read
	// Skipped counts offsets of a log table that retention removed before
	// they were tiered (while the lake was disabled): they are in neither.
	Skipped int64
	// Held counts the partitions a partitioned table's round could not read
	// (listed without a Source): their offsets stay as they were.
	Held     int
	Duration time.Duration
}

// Partition is one partition of a partitioned table, as a round reads it.
type Partition struct {
	ID   int64
	Name string
	// Source is nil for a partition that exists but cannot be read now
	// (its data is unavailable): the round leaves its offsets as they are,
	// so that it resumes from them once it can be read, and skips nothing.
	Source Source
}

// Round runs one tiering round of src into lt. Rounds of one table must not
// overlap; the caller serializes them.
func Round(ctx context.Context, lt *lake.Table, src Source, mem memory.Allocator) (Result, error) {
	return run(ctx, lt, []Partition{{Source: src}}, false, mem)
}

// RoundPartitions runs one tiering round of a partitioned table into lt:
// of each of parts (the partitions the table has), in the order given, into
// the one lake snapshot. A partition that the last snapshot has offsets of
// and parts lacks was dropped: its offsets leave the snapshot and its rows
// stay in the lake (PROTOCOL.md §7.7).
func RoundPartitions(ctx context.Context, lt *lake.Table, parts []Partition, mem memory.Allocator) (Result, error) {
	return run(ctx, lt, parts, true, mem)
}

func run(ctx context.Context, lt *lake.Table, parts []Partition, partitioned bool, mem memory.Allocator) (Result, error) {
	start := time.Now()
	prev, err := lt.Current()
	if err != nil {
		return Result{}, err
	}
	// A span is what a round reads of a bucket: its log in [from, to), or,
	// for a primary-key bucket never tiered whose log no longer starts at 0,
	// its current rows (Fluss's snapshot split).
	type span struct {
		part     *Partition
		bucket   int
		from, to int64
		snapshot bool
	}
	tiered := func(p *Partition) map[int]int64 {
		switch {
		case prev == nil:
			return nil
		case partitioned:
			return prev.Partitions[p.ID].Buckets
		}
		return prev.Offsets
	}
	var spans []span
	var skipped int64
	var held int
	moved := map[*Partition]map[int]int64{}
	for i := range parts {
		p := &parts[i]
		if p.Source == nil {
			held++
			continue
		}
		src, done := p.Source, tiered(p)
		pk := len(src.PrimaryKey()) > 0
		moved[p] = map[int]int64{}
		for b := range src.Buckets() {
			earliest, hw := src.Retained(b)
			from, tiered := done[b]
			switch {
			case from > hw:
				return Result{}, fmt.Errorf("%sbucket %d: the lake holds offsets up to %d, beyond the log's high watermark %d", p.prefix(), b, from, hw)
			case tiered && from < earliest && pk:
				return Result{}, fmt.Errorf("%sbucket %d: the lake holds changes up to offset %d but the log now starts at %d (retention ran while the lake was disabled): the lake cannot be brought up to date from the changelog", p.prefix(), b, from, earliest)
			case !tiered && pk && earliest > 0:
				spans = append(spans, span{part: p, bucket: b, snapshot: true})
			case max(from, earliest) < hw:
				if tiered && from < earliest {
					skipped += earliest - from // gone from the log before it reached the lake
				}
				spans = append(spans, span{part: p, bucket: b, from: max(from, earliest), to: hw})
				moved[p][b] = hw
			}
		}
	}
	var forget []int64
	if partitioned && prev != nil {
		live := map[int64]bool{}
		for _, p := range parts {
			live[p.ID] = true
		}
		for id := range prev.Partitions {
			if !live[id] {
				forget = append(forget, id)
			}
		}
	}
	res := Result{Snapshot: prev, Skipped: skipped, Held: held}
	if len(spans) == 0 && len(forget) == 0 {
		res.Duration = time.Since(start)
		return res, nil
	}
	r := &rounder{lt: lt, mem: mem}
	c := lake.Commit{Forget: forget}
	if pk := len(spans) > 0 && len(spans[0].part.Source.PrimaryKey()) > 0; !pk {
		c.Data = func(yield func(arrow.RecordBatch, error) bool) {
			for _, s := range spans {
				if !r.appendBucket(ctx, s.part, s.bucket, s.from, s.to, yield) {
					return
				}
			}
		}
	} else {
		var data, deletes []arrow.RecordBatch
		defer func() {
			for _, rec := range slices.Concat(data, deletes) {
				rec.Release()
			}
		}()
		for _, s := range spans {
			var d, del []arrow.RecordBatch
			var err error
			if s.snapshot {
				d, moved[s.part][s.bucket], err = r.snapshotBucket(ctx, s.part, s.bucket)
			} else {
				d, del, err = r.foldBucket(ctx, s.part, s.bucket, s.from, s.to)
			}
			data, deletes = append(data, d...), append(deletes, del...)
			if err != nil {
				return Result{}, err
			}
		}
		// Data files are written by iceberg-go's WriteRecords, which releases
		// what it consumes; the lake only reads the deleted keys.
		c.Data, c.Deletes = each(data, true), each(deletes, false)
	}
	if partitioned {
		c.Partitions = map[int64]lake.PartitionOffsets{}
		for p, offsets := range moved {
			if len(offsets) > 0 {
				c.Partitions[p.ID] = lake.PartitionOffsets{Name: p.Name, Buckets: offsets}
			}
		}
	} else {
		c.Offsets = moved[&parts[0]]
	}
	snap, st, err := lt.Commit(ctx, c)
	if err == nil {
		err = r.err
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Snapshot: snap, Committed: true, Stats: st, Rows: r.rows, Skipped: skipped, Held: held, Duration: time.Since(start)}, nil
}

// prefix names a partition at the start of a message; "" for none.
func (p *Partition) prefix() string {
	if p.Name == "" {
		return ""
	}
	return "partition " + p.Name + ", "
}

// each yields recs, retained first for a consumer that releases them.
func each(recs []arrow.RecordBatch, retain bool) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, rec := range recs {
			if retain {
				rec.Retain()
			}
			if !yield(rec, nil) {
				return
			}
		}
	}
}

type rounder struct {
	lt   *lake.Table
	mem  memory.Allocator
	rows int64
	err  error // a read error the data iterator could not return
}

// appendBucket yields a log table bucket's rows in [from, to) as lake
// records.
func (r *rounder) appendBucket(ctx context.Context, p *Partition, bucket int, from, to int64, yield func(arrow.RecordBatch, error) bool) bool {
	stopped := false
	err := p.Source.Read(ctx, bucket, from, to, func(b Batch) error {
		rec, offsets, ts := trim(b, from, to)
		defer rec.Release()
		if rec.NumRows() == 0 {
			return nil
		}
		r.rows += rec.NumRows()
		out, err := r.record(ctx, p, bucket, rec, offsets, ts)
		if err != nil {
			return err
		}
		if !yield(out, nil) {
			stopped = true
			return errStopped
		}
		return nil
	})
	if err != nil && err != errStopped {
		r.err = err
		yield(nil, err)
		return false
	}
	return !stopped
}

var errStopped = errors.New("stopped")

// trim cuts a batch to the rows in [from, to) and lists their offsets and
// commit times.
func trim(b Batch, from, to int64) (arrow.RecordBatch, []int64, []int64) {
	n := int64(b.Rec.NumRows())
	lo, hi := max(from-b.Offset, 0), min(to-b.Offset, n)
	if hi < lo {
		hi = lo
	}
	rec := b.Rec.NewSlice(lo, hi)
	offsets, ts := make([]int64, hi-lo), make([]int64, hi-lo)
	for i := range offsets {
		offsets[i], ts[i] = b.Offset+lo+int64(i), b.CommitMs
	}
	return rec, offsets, ts
}

// snapshotBucket makes lake records of a primary-key bucket's current rows.
// They have no log record of their own: their offset and timestamp are -1,
// as in Fluss.
func (r *rounder) snapshotBucket(ctx context.Context, p *Partition, bucket int) (data []arrow.RecordBatch, at int64, err error) {
	at, err = p.Source.Snapshot(ctx, bucket, func(b Batch) error {
		n := int(b.Rec.NumRows())
		none := slices.Repeat([]int64{-1}, n)
		out, err := r.record(ctx, p, bucket, b.Rec, none, none)
		if err != nil {
			return err
		}
		r.rows += int64(n)
		data = append(data, out)
		return nil
	})
	return data, at, err
}

// latest is a key's state at the end of a round's changes.
type latest struct {
	batch, row int  // where its last change is
	live       bool // the last change left a row (insert or update_after)
	retire     bool // an earlier row of the key may be in the lake
}

// foldBucket folds a primary-key bucket's changes in [from, to) to one
// final row per changed key, and the keys whose earlier lake rows must go.
func (r *rounder) foldBucket(ctx context.Context, p *Partition, bucket int, from, to int64) (data, deletes []arrow.RecordBatch, err error) {
	src := p.Source
	key := src.PrimaryKey()
	type kept struct {
		rec         arrow.RecordBatch
		offsets, ts []int64
	}
	var batches []kept
	defer func() {
		for _, k := range batches {
			k.rec.Release()
		}
	}()
	state := map[string]latest{}
	var types []arrow.DataType
	var keyBuf []byte
	vals := make([]any, len(key))
	err = src.Read(ctx, bucket, from, to, func(b Batch) error {
		rec, offsets, ts := trim(b, from, to)
		lo := max(from-b.Offset, 0)
		if rec.NumRows() == 0 {
			rec.Release()
			return nil
		}
		if types == nil {
			for _, k := range key {
				types = append(types, rec.Column(k).DataType())
			}
		}
		bi := len(batches)
		batches = append(batches, kept{rec, offsets, ts})
		r.rows += rec.NumRows()
		for i := range int(rec.NumRows()) {
			for j, k := range key {
				vals[j] = row.Get(rec.Column(k), i)
			}
			var err error
			if keyBuf, err = row.EncodeKey(keyBuf[:0], types, vals); err != nil {
				return err
			}
			ct := byte(0)
			if b.ChangeTypes != nil {
				ct = b.ChangeTypes[lo+int64(i)]
			}
			old, seen := state[string(keyBuf)]
			next := latest{batch: bi, row: i, retire: seen && old.retire}
			switch ct {
			case changeUpdateBefore, changeDelete:
				next.retire = true
			case changeUpdateAfter:
				next.live, next.retire = true, true
			default: // insert
				next.live = true
			}
			state[string(keyBuf)] = next
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	keepRows := make([][]int64, len(batches))
	retireRows := make([][]int64, len(batches))
	for _, s := range state {
		if s.live {
			keepRows[s.batch] = append(keepRows[s.batch], int64(s.row))
		}
		if s.retire {
			retireRows[s.batch] = append(retireRows[s.batch], int64(s.row))
		}
	}
	defer func() {
		if err != nil {
			for _, rec := range slices.Concat(data, deletes) {
				rec.Release()
			}
			data, deletes = nil, nil
		}
	}()
	for i, k := range batches {
		if rows := keepRows[i]; len(rows) > 0 {
			sub, err := r.take(ctx, k.rec, rows)
			if err != nil {
				return data, deletes, err
			}
			offs, times := make([]int64, len(rows)), make([]int64, len(rows))
			for j, row := range rows {
				offs[j], times[j] = k.offsets[row], k.ts[row]
			}
			out, err := r.record(ctx, p, bucket, sub, offs, times)
			sub.Release()
			if err != nil {
				return data, deletes, err
			}
			data = append(data, out)
		}
		if rows := retireRows[i]; len(rows) > 0 {
			sub, err := r.take(ctx, k.rec, rows)
			if err != nil {
				return data, deletes, err
			}
			keys, err := r.lt.KeyRecord(ctx, r.mem, sub)
			sub.Release()
			if err != nil {
				return data, deletes, err
			}
			deletes = append(deletes, keys)
		}
	}
	return data, deletes, nil
}

// take picks some rows of rec, in offset order (it sorts rows).
func (r *rounder) take(ctx context.Context, rec arrow.RecordBatch, rows []int64) (arrow.RecordBatch, error) {
	slices.Sort(rows) // offset order within the batch
	ib := array.NewInt64Builder(r.mem)
	ib.AppendValues(rows, nil)
	idx := ib.NewArray()
	ib.Release()
	defer idx.Release()
	cols := array.RecordToStructArray(rec) // holds rec's columns until released
	defer cols.Release()
	taken, err := compute.TakeArray(compute.WithAllocator(ctx, r.mem), cols, idx)
	if err != nil {
		return nil, fmt.Errorf("pick rows: %w", err)
	}
	defer taken.Release()
	return array.RecordFromStructArray(taken.(*array.Struct), rec.Schema()), nil
}

// record makes the lake record of rows of p's bucket. A value the lake
// cannot hold stops the round, naming its log record: FAILED_PRECONDITION,
// for the round cannot go on until the row is no longer to be tiered
// (PROTOCOL.md §7.4).
func (r *rounder) record(ctx context.Context, p *Partition, bucket int, rec arrow.RecordBatch, offsets, commitMs []int64) (arrow.RecordBatch, error) {
	out, err := r.lt.DataRecord(ctx, r.mem, rec, bucket, offsets, commitMs)
	var re *lake.RangeError
	if !errors.As(err, &re) {
		return out, err
	}
	where := fmt.Sprintf("offset %d", offsets[re.Row])
	if offsets[re.Row] < 0 {
		where = "a row of its state"
	}
	return nil, errs.New(errs.FailedPrecondition, "%sbucket %d, %s, %v; the table's rounds stop at this record (PROTOCOL.md §7.4 says what to do)", p.prefix(), bucket, where, re)
}
