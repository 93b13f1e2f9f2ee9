package conformance

// Primary-key tables for the pk-* scenarios: rows as Go values, batches built
// from them, snapshots and changelogs read back (with the offset rules of
// PROTOCOL.md §4.3 checked on the way), changelog replay, and comparisons
// that show the first differences.
//
// A row is a []any in table column order. Values are nil (NULL), int64 (every
// integer type), float64, string, bool or bin (BYTES), so that rows compare
// with ==.

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/client"
)

// bin is a BYTES value, kept as a string so that rows compare with ==.
type bin string

// The change types of a primary-key table's changelog (PROTOCOL.md §4.5).
const (
	ctInsert       = "insert"
	ctUpdateBefore = "update_before"
	ctUpdateAfter  = "update_after"
	ctDelete       = "delete"
)

// changeTypeCol is the system column of $changelog and of changelog writes.
const changeTypeCol = "_change_type"

// pkTable is a primary-key table of this run and its Arrow schema.
type pkTable struct {
	name   string
	spec   client.TableSpec
	schema *arrow.Schema
	key    []int // the primary-key columns
}

// createPK creates spec's table and returns it with what describe-table
// says about it.
func createPK(ctx context.Context, env *Env, spec client.TableSpec) (*pkTable, *client.TableInfo, error) {
	t, err := newPKTable(spec)
	if err != nil {
		return nil, nil, err
	}
	info, err := createTable(ctx, env, spec)
	if err != nil {
		return nil, nil, err
	}
	if info.Kind != client.TableKindPrimaryKey {
		return nil, nil, fmt.Errorf("create-table %s with primary key %v: TableInfo kind %q, want %q", spec.Table, spec.PrimaryKey, info.Kind, client.TableKindPrimaryKey)
	}
	return t, info, nil
}

func newPKTable(spec client.TableSpec) (*pkTable, error) {
	schema, err := spec.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", spec.Table, err)
	}
	t := &pkTable{name: spec.Table, spec: spec, schema: schema}
	for _, k := range spec.PrimaryKey {
		t.key = append(t.key, t.col(k))
	}
	return t, nil
}

// col is the index of a table column, -1 if there is none.
func (t *pkTable) col(name string) int {
	idx := t.schema.FieldIndices(name)
	if len(idx) != 1 {
		return -1
	}
	return idx[0]
}

// changelog is the table's $changelog view.
func (t *pkTable) changelog() string { return t.name + "$changelog" }

// fields returns the Arrow fields of a batch carrying cols (table columns
// or _change_type), as the table wants them.
func (t *pkTable) fields(cols []string) []arrow.Field {
	out := make([]arrow.Field, len(cols))
	for i, c := range cols {
		if c == changeTypeCol {
			out[i] = arrow.Field{Name: c, Type: arrow.BinaryTypes.String}
			continue
		}
		j := t.col(c)
		if j < 0 {
			panic(fmt.Sprintf("conformance: table %s has no column %q", t.name, c))
		}
		out[i] = t.schema.Field(j)
	}
	return out
}

// keyOf renders the primary key of a table row.
func (t *pkTable) keyOf(r []any) string {
	parts := make([]string, len(t.key))
	for i, c := range t.key {
		parts[i] = fmtValue(r[c])
	}
	return strings.Join(parts, ",")
}

// buildRecord builds a batch of rows, each holding the values of fields in
// order.
func buildRecord(mem memory.Allocator, fields []arrow.Field, rows [][]any) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, r := range rows {
		if len(r) != len(fields) {
			return nil, fmt.Errorf("conformance: row %d has %d values for %d columns", i, len(r), len(fields))
		}
		for j, v := range r {
			if err := appendValue(b.Field(j), v); err != nil {
				return nil, fmt.Errorf("conformance: row %d column %s: %w", i, fields[j].Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

func appendValue(b array.Builder, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch fb := b.(type) {
	case *array.Int64Builder:
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("value %v (%T) for an int64 column", v, v)
		}
		fb.Append(n)
	case *array.Int32Builder:
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("value %v (%T) for an int32 column", v, v)
		}
		fb.Append(int32(n))
	case *array.Float64Builder:
		f, ok := v.(float64)
		if !ok {
			return fmt.Errorf("value %v (%T) for a float64 column", v, v)
		}
		fb.Append(f)
	case *array.StringBuilder:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("value %v (%T) for a utf8 column", v, v)
		}
		fb.Append(s)
	case *array.BinaryBuilder:
		s, ok := v.(bin)
		if !ok {
			return fmt.Errorf("value %v (%T) for a binary column", v, v)
		}
		fb.Append([]byte(s))
	case *array.BooleanBuilder:
		x, ok := v.(bool)
		if !ok {
			return fmt.Errorf("value %v (%T) for a bool column", v, v)
		}
		fb.Append(x)
	default:
		return fmt.Errorf("no builder for %T", b)
	}
	return nil
}

// cell returns row i of arr as a Go value (see the package comment above).
func cell(arr arrow.Array, i int) any {
	if arr.IsNull(i) {
		return nil
	}
	switch a := arr.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int16:
		return int64(a.Value(i))
	case *array.Int8:
		return int64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return bin(a.Value(i))
	case *array.Boolean:
		return a.Value(i)
	case *array.Timestamp:
		return int64(a.Value(i))
	}
	return arr.ValueStr(i)
}

// pkBatch is one batch of a write: rows holding the values of the request's
// columns in order.
type pkBatch = [][]any

// writeRows writes each batch through one stream of req, every batch
// acknowledged before the next is sent. cols names the batch columns
// (_change_type among them for changelog writes).
func writeRows(ctx context.Context, env *Env, t *pkTable, req client.WriteRequest, cols []string, batches ...pkBatch) ([]client.PutResult, error) {
	recs := make([]arrow.RecordBatch, 0, len(batches))
	defer func() { releaseAll(recs) }()
	fields := t.fields(cols)
	for _, rows := range batches {
		rec, err := buildRecord(env.Mem, fields, rows)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return writeRecords(ctx, env, req, recs...)
}

// fmtValue renders a value as the failure messages show it.
func fmtValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return strconv.Quote(x)
	case bin:
		return fmt.Sprintf("0x%x", string(x))
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

func fmtRow(r []any) string {
	if r == nil {
		return "absent"
	}
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = fmtValue(v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// pkState is a table's rows by primary key.
type pkState map[string][]any

// readSnapshot reads a primary-key table by its plain name (a snapshot, as
// inserts) and returns its rows and each key's bucket. Every batch must carry
// app_metadata start = next (the snapshot's offset, PROTOCOL.md §4.3).
func readSnapshot(ctx context.Context, env *Env, t *pkTable) (pkState, map[string]int, error) {
	s, err := env.Client.Scan(ctx, client.ScanRequest{Table: t.name})
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", t.name, err)
	}
	defer s.Release()
	if err := sameColumns(s.Schema(), t.schema); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", t.name, err)
	}
	state, buckets := pkState{}, map[string]int{}
	at := map[int]int64{}
	for s.Next() {
		rec, m := s.RecordBatch(), s.Meta()
		if m.Start != m.Next {
			return nil, nil, fmt.Errorf("read %s: bucket %d: a snapshot batch of %d rows has app_metadata start %d, next %d; want both the snapshot's offset", t.name, m.Bucket, rec.NumRows(), m.Start, m.Next)
		}
		if prev, ok := at[m.Bucket]; ok && prev != m.Start {
			return nil, nil, fmt.Errorf("read %s: bucket %d: snapshot batches at offsets %d and %d; want one consistent snapshot per bucket", t.name, m.Bucket, prev, m.Start)
		}
		at[m.Bucket] = m.Start
		for i := range int(rec.NumRows()) {
			r := make([]any, rec.NumCols())
			for c := range r {
				r[c] = cell(rec.Column(c), i)
			}
			k := t.keyOf(r)
			if old, dup := state[k]; dup {
				return nil, nil, fmt.Errorf("read %s: key %s is in the snapshot twice: %s (bucket %d) and %s (bucket %d)", t.name, k, fmtRow(old), buckets[k], fmtRow(r), m.Bucket)
			}
			state[k], buckets[k] = r, m.Bucket
		}
	}
	if err := s.Err(); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", t.name, err)
	}
	return state, buckets, nil
}

func sameColumns(got, want *arrow.Schema) error {
	if got == nil || got.NumFields() != want.NumFields() {
		return fmt.Errorf("result schema %v, want the table's columns %v", got, want)
	}
	for i, f := range want.Fields() {
		if g := got.Field(i); g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			return fmt.Errorf("result column %d is %s %s, want %s %s", i, g.Name, g.Type, f.Name, f.Type)
		}
	}
	return nil
}

// change is one row of a $changelog read.
type change struct {
	kind     string
	offset   int64
	row      []any // table columns
	snapshot bool  // part of the snapshot of a "full" read
}

func (c change) String() string {
	return fmt.Sprintf("%d %s %s", c.offset, c.kind, fmtRow(c.row))
}

// changelog is what a $changelog read returned, per bucket in offset order,
// and where each bucket's read ended (the last app_metadata next).
type changelog struct {
	table   *pkTable
	buckets map[int][]change
	next    map[int]int64

	cols     []int // the result column of each table column
	kindCol  int
	offCol   int
	snapshot map[int]int64 // the snapshot offset of each bucket that sent one
}

func newChangelog(t *pkTable, schema *arrow.Schema) (*changelog, error) {
	cl := &changelog{table: t, buckets: map[int][]change{}, next: map[int]int64{}, snapshot: map[int]int64{}}
	find := func(name string, typ arrow.DataType) (int, error) {
		idx := schema.FieldIndices(name)
		if len(idx) != 1 {
			return 0, fmt.Errorf("read %s: the result has no column %q (schema %s)", t.changelog(), name, schema)
		}
		if typ != nil && !arrow.TypeEqual(schema.Field(idx[0]).Type, typ) {
			return 0, fmt.Errorf("read %s: column %q is %s, want %s", t.changelog(), name, schema.Field(idx[0]).Type, typ)
		}
		return idx[0], nil
	}
	var err error
	if cl.kindCol, err = find(changeTypeCol, arrow.BinaryTypes.String); err != nil {
		return nil, err
	}
	if cl.offCol, err = find("_log_offset", arrow.PrimitiveTypes.Int64); err != nil {
		return nil, err
	}
	for _, f := range t.schema.Fields() {
		c, err := find(f.Name, f.Type)
		if err != nil {
			return nil, err
		}
		cl.cols = append(cl.cols, c)
	}
	return cl, nil
}

// add takes one batch of the read, checking its offsets: a snapshot batch
// (start = next, PROTOCOL.md §4.3) holds inserts at the snapshot's offset and
// comes before the bucket's changes; change rows have increasing offsets
// within [start, next) of their batch, and batches do not go back.
func (cl *changelog) add(rec arrow.RecordBatch, m client.BatchMeta) error {
	name, b := cl.table.changelog(), m.Bucket
	if m.Next < m.Start {
		return fmt.Errorf("read %s: bucket %d: a batch has app_metadata start %d > next %d", name, b, m.Start, m.Next)
	}
	if prev, ok := cl.next[b]; ok && m.Start < prev {
		return fmt.Errorf("read %s: bucket %d: a batch has app_metadata start %d, but the previous batch said next %d", name, b, m.Start, prev)
	}
	cl.next[b] = m.Next
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	isSnapshot := m.Start == m.Next
	if isSnapshot {
		if at, ok := cl.snapshot[b]; ok && at != m.Start {
			return fmt.Errorf("read %s: bucket %d: snapshot batches at offsets %d and %d", name, b, at, m.Start)
		}
		if rows := cl.buckets[b]; len(rows) > 0 && !rows[len(rows)-1].snapshot {
			return fmt.Errorf("read %s: bucket %d: a snapshot batch (start = next = %d) after change rows", name, b, m.Start)
		}
		cl.snapshot[b] = m.Start
	}
	kinds, ok := rec.Column(cl.kindCol).(*array.String)
	if !ok {
		return fmt.Errorf("read %s: %s is %s", name, changeTypeCol, rec.Column(cl.kindCol).DataType())
	}
	offs := rec.Column(cl.offCol).(*array.Int64)
	for i := range n {
		if kinds.IsNull(i) || offs.IsNull(i) {
			return fmt.Errorf("read %s: bucket %d: row %d of a batch has a null _change_type or _log_offset", name, b, i)
		}
		c := change{kind: kinds.Value(i), offset: offs.Value(i), row: make([]any, len(cl.cols)), snapshot: isSnapshot}
		for j, col := range cl.cols {
			c.row[j] = cell(rec.Column(col), i)
		}
		switch c.kind {
		case ctInsert, ctUpdateBefore, ctUpdateAfter, ctDelete:
		default:
			return fmt.Errorf("read %s: bucket %d offset %d: _change_type %q", name, b, c.offset, c.kind)
		}
		if isSnapshot {
			if c.kind != ctInsert || c.offset != m.Start {
				return fmt.Errorf("read %s: bucket %d: snapshot row %s; want insert rows with _log_offset %d, the snapshot's offset", name, b, c, m.Start)
			}
		} else {
			if c.offset < m.Start || c.offset >= m.Next {
				return fmt.Errorf("read %s: bucket %d: row %s lies outside its batch's app_metadata [start %d, next %d)", name, b, c, m.Start, m.Next)
			}
			if rows := cl.buckets[b]; len(rows) > 0 {
				last := rows[len(rows)-1]
				if (!last.snapshot && c.offset <= last.offset) || (last.snapshot && c.offset < last.offset) {
					return fmt.Errorf("read %s: bucket %d: row %s follows row %s; want increasing offsets (from the snapshot's offset on)", name, b, c, last)
				}
			}
		}
		cl.buckets[b] = append(cl.buckets[b], c)
	}
	return nil
}

// readChangelog runs a bounded read of the table's $changelog.
func readChangelog(ctx context.Context, env *Env, t *pkTable, startup client.Position) (*changelog, error) {
	s, err := env.Client.Scan(ctx, client.ScanRequest{Table: t.changelog(), Startup: startup})
	if err != nil {
		return nil, fmt.Errorf("read %s (startup %s): %w", t.changelog(), startup, err)
	}
	defer s.Release()
	cl, err := newChangelog(t, s.Schema())
	if err != nil {
		return nil, err
	}
	for s.Next() {
		if err := cl.add(s.RecordBatch(), s.Meta()); err != nil {
			return nil, fmt.Errorf("startup %s: %w", startup, err)
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("read %s (startup %s): %w", t.changelog(), startup, err)
	}
	return cl, nil
}

// endsAt checks that the read ended, in every bucket, at the offsets given
// (the high watermarks of an idle table): its last batch's app_metadata next
// is the end offset, even when the last writes changed nothing (PROTOCOL.md
// §4.3). A bucket that was never written may send nothing.
func (cl *changelog) endsAt(what string, ends map[int]int64) error {
	for _, b := range sortedKeys(ends) {
		got, ok := cl.next[b]
		if !ok && ends[b] == 0 {
			continue // an empty bucket: nothing to read, nothing to send
		}
		if !ok || got != ends[b] {
			return fmt.Errorf("%s: bucket %d: the read ended at app_metadata next %d (sent: %v), want the bucket's end offset %d", what, b, got, ok, ends[b])
		}
	}
	return nil
}

// replay applies the changelog to an empty table: insert and update_after
// upsert their row, delete deletes, update_before is skipped. With full set
// (a FULL changelog image, PROTOCOL.md §5.1), every row must also agree with
// the state it applies to: an insert is of an absent key, an update_before
// carries the current row and is followed at the next offset by the key's
// update_after, and a delete carries the current row.
func (cl *changelog) replay(full bool) (pkState, error) {
	t := cl.table
	state := pkState{}
	bucketOf := map[string]int{}
	for _, b := range slices.Sorted(maps.Keys(cl.buckets)) {
		rows := cl.buckets[b]
		for i, c := range rows {
			k := t.keyOf(c.row)
			if ob, ok := bucketOf[k]; ok && ob != b {
				return nil, fmt.Errorf("$changelog: key %s appears in buckets %d and %d", k, ob, b)
			}
			bucketOf[k] = b
			cur, present := state[k]
			where := fmt.Sprintf("$changelog bucket %d, row %s", b, c)
			if full {
				switch c.kind {
				case ctInsert:
					if present {
						return nil, fmt.Errorf("%s: insert of key %s, which is present as %s", where, k, fmtRow(cur))
					}
				case ctUpdateBefore, ctDelete:
					if !present || !slices.Equal(cur, c.row) {
						return nil, fmt.Errorf("%s: want the key's current row %s", where, fmtRow(cur))
					}
					if c.kind == ctUpdateBefore {
						if i+1 >= len(rows) || rows[i+1].kind != ctUpdateAfter || t.keyOf(rows[i+1].row) != k || rows[i+1].offset != c.offset+1 {
							next := "nothing"
							if i+1 < len(rows) {
								next = rows[i+1].String()
							}
							return nil, fmt.Errorf("%s is followed by %s; want the key's update_after at offset %d", where, next, c.offset+1)
						}
					}
				case ctUpdateAfter:
					if i == 0 || rows[i-1].kind != ctUpdateBefore || t.keyOf(rows[i-1].row) != k {
						return nil, fmt.Errorf("%s: an update_after without the key's update_before right before it (FULL changelog image)", where)
					}
				}
			}
			switch c.kind {
			case ctInsert, ctUpdateAfter:
				state[k] = c.row
			case ctDelete:
				delete(state, k)
			}
		}
	}
	return state, nil
}

// kinds counts the changelog's rows by change type.
func (cl *changelog) kinds() map[string]int {
	out := map[string]int{}
	for _, rows := range cl.buckets {
		for _, c := range rows {
			out[c.kind]++
		}
	}
	return out
}

// equalStates checks two tables' rows for equality, showing up to five
// differences.
func equalStates(what string, got, want pkState) error {
	var diffs []string
	for _, k := range sortedStateKeys(got, want) {
		g, w := got[k], want[k]
		if !slices.Equal(g, w) {
			diffs = append(diffs, fmt.Sprintf("key %s: got %s, want %s", k, fmtRow(g), fmtRow(w)))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	more := ""
	if len(diffs) > 5 {
		more = fmt.Sprintf("; and %d more", len(diffs)-5)
		diffs = diffs[:5]
	}
	return fmt.Errorf("%s: %d rows, want %d; %d keys differ: %s%s", what, len(got), len(want), len(diffs), strings.Join(diffs, "; "), more)
}

// sortedStateKeys returns the keys of the states, numeric keys in numeric
// order.
func sortedStateKeys(states ...pkState) []string {
	seen := map[string]bool{}
	for _, s := range states {
		for k := range s {
			seen[k] = true
		}
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b string) int {
		x, errA := strconv.ParseInt(a, 10, 64)
		y, errB := strconv.ParseInt(b, 10, 64)
		if errA == nil && errB == nil {
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b)
	})
}

// equalLines checks two lists of rendered rows, showing the first
// difference.
func equalLines(what string, got, want []string) error {
	if slices.Equal(got, want) {
		return nil
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Errorf("%s: first difference at row %d: got %q, want %q\n got: %s\nwant: %s", what, i, got[i], want[i], strings.Join(got, " | "), strings.Join(want, " | "))
		}
	}
	return fmt.Errorf("%s: %d rows, want %d\n got: %s\nwant: %s", what, len(got), len(want), strings.Join(got, " | "), strings.Join(want, " | "))
}

// lines renders changes as equalLines compares them.
func lines(changes []change) []string {
	out := make([]string, len(changes))
	for i, c := range changes {
		out[i] = c.String()
	}
	return out
}

// checkConsistent reads the table's snapshot and its $changelog from the
// earliest offset and checks that the changelog replays to the snapshot,
// that the read ends at the table's end offsets, and, when want is not nil,
// that the snapshot is want. It returns the changelog read.
func checkConsistent(ctx context.Context, env *Env, t *pkTable, fullImage bool, want pkState, when string) (*changelog, error) {
	ends, err := env.Client.ListOffsets(ctx, t.name, client.Latest, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", when, err)
	}
	snap, _, err := readSnapshot(ctx, env, t)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", when, err)
	}
	if want != nil {
		if err := equalStates(fmt.Sprintf("%s: the snapshot of %s (vs the expected rows)", when, t.name), snap, want); err != nil {
			return nil, err
		}
	}
	cl, err := readChangelog(ctx, env, t, client.Position{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", when, err)
	}
	if err := cl.endsAt(when+": "+t.changelog()+" from earliest", ends); err != nil {
		return nil, err
	}
	replayed, err := cl.replay(fullImage)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", when, err)
	}
	if err := equalStates(fmt.Sprintf("%s: %s replayed from earliest (vs the snapshot)", when, t.changelog()), replayed, snap); err != nil {
		return nil, err
	}
	return cl, nil
}
