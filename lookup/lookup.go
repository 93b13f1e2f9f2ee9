// Package lookup answers batched lookups of primary-key tables (PROTOCOL.md
// §6): point lookups by the whole key and prefix lookups by the bucket key. It
// groups a batch's keys by bucket, reads each bucket's keys in key order from
// one consistent view of the state, and assembles the answer: `_key_index`
// and the requested columns, in ascending key index. Inserting missing keys
// is the caller's (the engine's write path); lookup only asks for it. kv owns
// the reads.
package lookup

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/bucketing"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/row"
)

// KeyIndexColumn is the first column of every answer: the row of the key in
// the request batch.
const KeyIndexColumn = "_key_index"

// Table is what a lookup needs to know of its table.
type Table struct {
	Name   string
	ID     int64
	Schema *arrow.Schema
	// Types returns the types of the table's columns as they are now: rows
	// written after columns were added have more of them than Schema.
	Types     func() []arrow.DataType
	PK        []int // primary-key columns, in key order
	BucketKey []int // bucket-key columns, in order; a prefix of PK less Fixed for prefix lookups
	Buckets   int
	// Fixed are the primary-key columns every row of the table shares (a
	// partition's keys): key batches carry them, stored keys leave them
	// out, so that a bucket-key prefix is a prefix of the stored key.
	Fixed []int
}

// Insert writes a row (the key's values, everything else nil) for each of the
// given keys, through the table's normal write path. Keys come in request
// order, so that auto-increment ids follow it.
type Insert func(ctx context.Context, keys []Missing) error

// Missing is a key a lookup did not find.
type Missing struct {
	Bucket int
	Row    row.Row
}

// Options select the kind of lookup.
type Options struct {
	Columns []int // answer columns (table column indexes); nil = all
	Prefix  bool
	// Insert, if set, makes a point lookup insert the keys it does not find.
	Insert Insert
	// Observe, if set, is told each answer's key and row counts (metrics).
	Observe func(Meta)
}

// Lookuper answers the key batches of one lookup stream. Not safe for
// concurrent use.
type Lookuper struct {
	store  *kv.Store
	t      Table
	opts   Options
	mem    memory.Allocator
	keyCol []int // table columns a key batch carries: PK, or bucket key and Fixed for prefix
	stored []int // the positions in keyCol of the columns the stored key holds
	schema *arrow.Schema

	// bound to the key batch schema
	in       *arrow.Schema
	inCols   []int // batch column of each keyCol
	assigner *bucketing.Assigner
}

// Meta is the app_metadata of an answer.
type Meta struct {
	Keys int `json:"keys"`
	Rows int `json:"rows"`
}

// New returns a lookuper of t.
func New(store *kv.Store, t Table, opts Options, mem memory.Allocator) *Lookuper {
	l := &Lookuper{store: store, t: t, opts: opts, mem: mem, keyCol: t.PK}
	if opts.Prefix {
		l.keyCol = append(slices.Clone(t.BucketKey), t.Fixed...)
	}
	for i, c := range l.keyCol {
		if !slices.Contains(t.Fixed, c) {
			l.stored = append(l.stored, i)
		}
	}
	if l.opts.Columns == nil {
		for c := range t.Schema.NumFields() {
			l.opts.Columns = append(l.opts.Columns, c)
		}
	}
	fields := []arrow.Field{{Name: KeyIndexColumn, Type: arrow.PrimitiveTypes.Int32}}
	for _, c := range l.opts.Columns {
		fields = append(fields, t.Schema.Field(c))
	}
	l.schema = arrow.NewSchema(fields, nil)
	return l
}

// Schema returns the schema of the answers.
func (l *Lookuper) Schema() *arrow.Schema { return l.schema }

// bind checks a key batch's schema: exactly the key columns, by name, with
// the table's types.
func (l *Lookuper) bind(in *arrow.Schema) error {
	if l.in != nil && l.in.Equal(in) {
		return nil
	}
	what := "primary-key"
	if l.opts.Prefix {
		what = "bucket-key"
		if len(l.t.Fixed) > 0 {
			what = "bucket-key and partition-key"
		}
	}
	names := make([]string, len(l.keyCol))
	for i, c := range l.keyCol {
		names[i] = l.t.Schema.Field(c).Name
	}
	cols := make([]int, len(l.keyCol))
	for i, c := range l.keyCol {
		f := l.t.Schema.Field(c)
		idx := in.FieldIndices(f.Name)
		if len(idx) != 1 {
			return errs.New(errs.InvalidArgument, "lookup of %s: the key batch must carry the %s columns %v; %s is missing", l.t.Name, what, names, errs.Quote(f.Name))
		}
		if got := in.Field(idx[0]).Type; !arrow.TypeEqual(got, f.Type) {
			return errs.New(errs.InvalidArgument, "lookup of %s: key column %s is %s, the table has %s", l.t.Name, errs.Quote(f.Name), got, f.Type)
		}
		cols[i] = idx[0]
	}
	if in.NumFields() != len(cols) {
		for _, f := range in.Fields() {
			if !slices.Contains(names, f.Name) {
				return errs.New(errs.InvalidArgument, "lookup of %s: the key batch has column %s, which is not one of the %s columns %v", l.t.Name, errs.Quote(f.Name), what, names)
			}
		}
	}
	var bk []int
	for _, c := range l.t.BucketKey {
		bk = append(bk, cols[slices.Index(l.keyCol, c)])
	}
	a, err := bucketing.NewAssigner(in, bk, l.t.Buckets)
	if err != nil {
		return err
	}
	l.in, l.inCols, l.assigner = in, cols, a
	return nil
}

// found is one row of an answer before it is decoded.
type found struct {
	key   int // index of the key in the request batch
	seq   int // order among the rows of one key (prefix lookups)
	value []byte
}

// Lookup answers one key batch.
func (l *Lookuper) Lookup(ctx context.Context, keys arrow.RecordBatch) (arrow.RecordBatch, Meta, error) {
	// Key columns in another layout of the table's types (large_string
	// from pandas and polars) are converted once, here.
	keys, err := row.ConformTypes(ctx, l.mem, keys, func(name string) (arrow.DataType, bool) {
		for _, c := range l.keyCol {
			if f := l.t.Schema.Field(c); f.Name == name {
				return f.Type, true
			}
		}
		return nil, false
	})
	if err != nil {
		return nil, Meta{}, fmt.Errorf("lookup of %s: %w", l.t.Name, err)
	}
	defer keys.Release()
	if err := l.bind(keys.Schema()); err != nil {
		return nil, Meta{}, err
	}
	n := int(keys.NumRows())
	for i, c := range l.inCols {
		if nulls := keys.Column(c).NullN(); nulls > 0 {
			return nil, Meta{}, errs.New(errs.InvalidArgument, "lookup of %s: key column %s has %d nulls", l.t.Name, errs.Quote(l.t.Schema.Field(l.keyCol[i]).Name), nulls)
		}
	}
	// Encode every key and group them by bucket, in key order.
	types := make([]arrow.DataType, len(l.stored))
	for i, k := range l.stored {
		types[i] = l.t.Schema.Field(l.keyCol[k]).Type
	}
	enc := make([][]byte, n)
	vals := make([]any, len(l.stored))
	byBucket := make([][]int, l.t.Buckets)
	for i, b := range l.assigner.Assign(keys, nil) {
		for j, k := range l.stored {
			vals[j] = row.Get(keys.Column(l.inCols[k]), i)
		}
		k, err := row.EncodeKey(nil, types, vals)
		if err != nil {
			return nil, Meta{}, fmt.Errorf("lookup of %s: %w", l.t.Name, err)
		}
		enc[i] = k
		byBucket[b] = append(byBucket[b], i)
	}
	for _, idx := range byBucket {
		sort.SliceStable(idx, func(a, b int) bool { return string(enc[idx[a]]) < string(enc[idx[b]]) })
	}

	rows, err := l.read(byBucket, enc, nil)
	if err != nil {
		return nil, Meta{}, err
	}
	if l.opts.Insert != nil {
		if rows, err = l.insertMissing(ctx, keys, byBucket, enc, rows); err != nil {
			return nil, Meta{}, err
		}
	}
	sort.Slice(rows, func(a, b int) bool {
		if rows[a].key != rows[b].key {
			return rows[a].key < rows[b].key
		}
		return rows[a].seq < rows[b].seq
	})
	rec, err := l.answer(rows)
	meta := Meta{Keys: n, Rows: len(rows)}
	if err == nil && l.opts.Observe != nil {
		l.opts.Observe(meta)
	}
	return rec, meta, err
}

// read reads the keys of each bucket (only those in want, if set) from one
// consistent view.
func (l *Lookuper) read(byBucket [][]int, enc [][]byte, want map[int]bool) ([]found, error) {
	snap := l.store.Snapshot()
	defer snap.Close()
	var rows []found
	for b, idx := range byBucket {
		if want != nil {
			idx = slices.DeleteFunc(slices.Clone(idx), func(i int) bool { return !want[i] })
		}
		if len(idx) == 0 {
			continue
		}
		if l.opts.Prefix {
			for _, i := range idx {
				seq := 0
				err := snap.Prefix(l.t.ID, b, enc[i], func(_, v []byte) error {
					rows = append(rows, found{key: i, seq: seq, value: slices.Clone(v)})
					seq++
					return nil
				})
				if err != nil {
					return nil, err
				}
			}
			continue
		}
		pks := make([][]byte, len(idx))
		for j, i := range idx {
			pks[j] = enc[i]
		}
		err := snap.Get(l.t.ID, b, pks, func(j int, v []byte) error {
			rows = append(rows, found{key: idx[j], value: slices.Clone(v)})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// insertMissing inserts the keys that were not found and reads them back.
// Concurrent lookups of the same new key both try; the second insert is a
// write of the key columns only to an existing row, which changes nothing,
// so both read the same row and id.
func (l *Lookuper) insertMissing(ctx context.Context, keys arrow.RecordBatch, byBucket [][]int, enc [][]byte, rows []found) ([]found, error) {
	have := make(map[int]bool, len(rows))
	for _, r := range rows {
		have[r.key] = true
	}
	missing := map[int]bool{}
	bucketOf := make(map[int]int)
	for b, idx := range byBucket {
		for _, i := range idx {
			bucketOf[i] = b
		}
	}
	var keysToAdd []Missing
	inserted := map[string]bool{}
	for i := range int(keys.NumRows()) {
		if have[i] {
			continue
		}
		missing[i] = true
		if inserted[string(enc[i])] {
			continue // the same new key twice in one batch: inserted once
		}
		inserted[string(enc[i])] = true
		r := make(row.Row, l.t.Schema.NumFields())
		for j, c := range l.inCols {
			r[l.keyCol[j]] = row.Get(keys.Column(c), i)
		}
		keysToAdd = append(keysToAdd, Missing{Bucket: bucketOf[i], Row: r})
	}
	if len(missing) == 0 {
		return rows, nil
	}
	if err := l.opts.Insert(ctx, keysToAdd); err != nil {
		return nil, err
	}
	added, err := l.read(byBucket, enc, missing)
	if err != nil {
		return nil, err
	}
	if len(added) != len(missing) {
		return nil, fmt.Errorf("lookup of %s: %d keys inserted, %d read back", l.t.Name, len(missing), len(added))
	}
	return append(rows, added...), nil
}

// answer decodes the found rows into an answer batch.
func (l *Lookuper) answer(rows []found) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(l.mem, l.schema)
	defer b.Release()
	b.Reserve(len(rows))
	types := l.t.Types()
	to := make([]array.Builder, len(types))
	for i, c := range l.opts.Columns {
		to[c] = b.Field(i + 1)
	}
	ki := b.Field(0).(*array.Int32Builder)
	for _, r := range rows {
		ki.Append(int32(r.key))
		if err := row.DecodeTo(r.value, types, to); err != nil {
			return nil, fmt.Errorf("lookup of %s: %w", l.t.Name, err)
		}
	}
	return b.NewRecordBatch(), nil
}
