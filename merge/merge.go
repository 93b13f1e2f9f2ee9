// Package merge decides, for one primary-key table, what a write does to a
// key: the stored row after it and the changelog rows it emits — the default
// last-row engine, first_row, versioned, aggregation with all of Fluss's
// functions, partial updates and deletes, FULL or WAL changelog images,
// OVERWRITE merge mode, auto-increment assignment — and computes undo. Pure
// functions of (stored row, input); the kv store drives them.
//
// It owns no I/O, no encoding and no id allocation: the caller reads the stored
// row, hands in the written one, and stores and logs what comes back. The rules
// are Fluss's (its KvTablet, RowMerger implementations and documentation); where
// fluxgate decides differently, the code says so.
package merge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/row"
)

// Kind is a changelog row's change type, with the byte values Fluss uses and
// the log stores.
type Kind byte

// The change types of a primary-key table's changelog.
const (
	Insert       Kind = 1 // +I
	UpdateBefore Kind = 2 // -U
	UpdateAfter  Kind = 3 // +U
	Delete       Kind = 4 // -D
)

func (k Kind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return fmt.Sprintf("kind(%d)", byte(k))
}

// Change is one changelog row.
type Change struct {
	Kind Kind
	Row  row.Row
}

// Merger holds what a table's definition says about merging, resolved once
// per table and schema. It is immutable and safe for concurrent use; the
// Writes it makes are not.
type Merger struct {
	table    string
	engine   engine
	deletes  string // the table's table.delete.behavior
	wal      bool
	names    []string
	types    []arrow.DataType
	nullable []bool
	isPK     []bool
	pk       []int
	ver      int // versioned: the version column, else -1
	autoInc  int // the auto-increment column, else -1
	aggs     []*aggregator
}

type engine byte

const (
	lastRow engine = iota
	firstRow
	versioned
	aggregation
)

var engineNames = [...]string{lastRow: "default", firstRow: catalog.MergeFirstRow, versioned: catalog.MergeVersioned, aggregation: catalog.MergeAggregation}

// New resolves the merge rules of a primary-key table.
func New(info *catalog.TableInfo) (*Merger, error) {
	if !info.IsPrimaryKey() {
		return nil, errs.New(errs.Internal, "merge: table %s has no primary key", info.Table)
	}
	schema := info.ArrowSchema()
	n := schema.NumFields()
	m := &Merger{
		table:    info.Path().String(),
		deletes:  info.DeleteBehavior(),
		wal:      info.ChangelogImage() == catalog.ChangelogWAL,
		names:    make([]string, n),
		types:    make([]arrow.DataType, n),
		nullable: make([]bool, n),
		isPK:     make([]bool, n),
		pk:       info.PrimaryKeyIndexes(),
		ver:      -1,
		autoInc:  -1,
	}
	for i, f := range schema.Fields() {
		m.names[i], m.types[i], m.nullable[i] = f.Name, f.Type, f.Nullable
	}
	for _, c := range m.pk {
		m.isPK[c] = true
	}
	switch e := info.MergeEngine(); e {
	case "":
		m.engine = lastRow
	case catalog.MergeFirstRow:
		m.engine = firstRow
	case catalog.MergeVersioned:
		m.engine = versioned
	case catalog.MergeAggregation:
		m.engine = aggregation
	default:
		return nil, errs.New(errs.Internal, "merge: table %s: unknown merge engine %q", m.table, e)
	}
	switch m.deletes {
	case catalog.DeleteAllow, catalog.DeleteIgnore, catalog.DeleteDisable:
	case "":
		// A definition stored before the default was stamped: Fluss's defaults.
		m.deletes = catalog.DeleteAllow
		if m.engine != lastRow {
			m.deletes = catalog.DeleteIgnore
		}
	default:
		return nil, errs.New(errs.Internal, "merge: table %s: unknown %s %q", m.table, catalog.OptDeleteBehavior, m.deletes)
	}
	if col := info.AutoIncrementColumn(); col != "" {
		if m.autoInc = info.ColumnIndex(col); m.autoInc < 0 {
			return nil, errs.New(errs.Internal, "merge: table %s: auto-increment column %q does not exist", m.table, col)
		}
		if id := m.types[m.autoInc].ID(); id != arrow.INT32 && id != arrow.INT64 {
			return nil, errs.New(errs.Internal, "merge: table %s: auto-increment column %q has type %s", m.table, col, m.types[m.autoInc])
		}
	}
	if m.engine == versioned {
		col := info.VersionColumn()
		if m.ver = info.ColumnIndex(col); m.ver < 0 {
			return nil, errs.New(errs.Internal, "merge: table %s: version column %q does not exist", m.table, col)
		}
		if id := m.types[m.ver].ID(); id != arrow.INT32 && id != arrow.INT64 && id != arrow.TIMESTAMP {
			return nil, errs.New(errs.Internal, "merge: table %s: version column %q has type %s", m.table, col, m.types[m.ver])
		}
	}
	if m.engine == aggregation {
		m.aggs = make([]*aggregator, n)
		for c := range n {
			if m.isPK[c] {
				continue
			}
			fn := info.AggFunction(m.names[c])
			if fn == "" {
				fn = catalog.AggDefault
			}
			a, err := newAggregator(fn, m.types[c], info.AggDelimiter(m.names[c]))
			if err != nil {
				return nil, errs.New(errs.Internal, "merge: table %s: column %q: %w", m.table, m.names[c], err)
			}
			m.aggs[c] = a
		}
	}
	return m, nil
}

// Write is one write stream's merge plan: its target columns and merge mode,
// validated once. Its methods reuse buffers, so a Write serves one goroutine
// at a time, and the changes a call returns are valid until the next call.
type Write struct {
	m         *Merger
	target    []int  // the columns written, ascending (never the auto-increment one)
	inTarget  []bool // by column
	nonTarget []int  // the columns kept from the stored row (the auto-increment one among them)
	whole     bool   // every column except the auto-increment one is written
	pkOnly    bool   // exactly the primary key is written, and the table has more columns
	engine    engine // lastRow under OVERWRITE
	deletes   string // allow under OVERWRITE
	needsOld  bool
	checks    []int // aggregation: target columns whose inputs are validated even when stored as they are

	changes [2]Change
	bm      bitmaps
}

// NewWrite validates a write stream's target columns (nil: the whole row) and
// merge mode (overwrite bypasses the merge engine, as undo needs) by Fluss's
// rules, with PROTOCOL.md §1's error kinds.
//
// The auto-increment column can never be written (Precondition, even under
// OVERWRITE, as in Fluss). Fluss makes writers of such a table send partial
// updates; fluxgate instead treats target nil, or every column except the
// auto-increment one, as a whole-row write: no nullability rule applies, and a
// delete through it removes the row (PROTOCOL.md §5.2).
//
// OVERWRITE is accepted on every table, also without a merge engine (where it
// only differs by allowing deletes): Fluss's server accepts it too, only its
// client refuses it there.
func (m *Merger) NewWrite(target []int, overwrite bool) (*Write, error) {
	n := len(m.types)
	w := &Write{m: m, inTarget: make([]bool, n), engine: m.engine, deletes: m.deletes}
	if overwrite {
		w.engine, w.deletes = lastRow, catalog.DeleteAllow
	}
	if len(target) == 0 {
		for c := range n {
			if c != m.autoInc {
				w.inTarget[c] = true
			}
		}
	} else {
		for _, c := range target {
			switch {
			case c < 0 || c >= n:
				return nil, errs.New(errs.InvalidArgument, "table %s: target column %d is out of range (the table has %d columns)", m.table, c, n)
			case w.inTarget[c]:
				return nil, errs.New(errs.InvalidArgument, "table %s: target column %q is listed twice", m.table, m.names[c])
			case c == m.autoInc:
				return nil, errs.New(errs.FailedPrecondition, "table %s: column %q is the auto-increment column; its values are assigned by the server and cannot be written", m.table, m.names[c])
			}
			w.inTarget[c] = true
		}
	}
	w.whole = true
	for c := range n {
		if w.inTarget[c] {
			w.target = append(w.target, c)
		} else {
			w.nonTarget = append(w.nonTarget, c)
			if c != m.autoInc {
				w.whole = false
			}
		}
	}
	if !w.whole {
		if w.engine == firstRow || w.engine == versioned {
			return nil, errs.New(errs.FailedPrecondition, "table %s: partial update is not supported for the %s merge engine", m.table, engineNames[w.engine])
		}
		for _, c := range m.pk {
			if !w.inTarget[c] {
				return nil, errs.New(errs.InvalidArgument, "table %s: the target write columns %s must contain the primary key columns %s", m.table, m.nameList(w.target), m.nameList(m.pk))
			}
		}
		// Fluss checks every non-key column, written or not. The auto-increment
		// column is exempt: the server always fills it.
		for c := range n {
			if !m.isPK[c] && !m.nullable[c] && c != m.autoInc {
				return nil, errs.New(errs.InvalidArgument, "table %s: Partial Update requires all columns except primary key to be nullable, but column %q is NOT NULL", m.table, m.names[c])
			}
		}
	}
	w.pkOnly = len(w.target) == len(m.pk) && len(m.pk) < n
	if w.engine == aggregation {
		for _, c := range w.target {
			if !m.isPK[c] && m.aggs[c].check != nil {
				w.checks = append(w.checks, c)
			}
		}
	}
	// Fluss's WAL shortcut: with nothing to merge, the stored row is not read
	// and every upsert, of a new key too, is logged as +U.
	w.needsOld = !(m.wal && w.engine == lastRow && w.whole && m.autoInc < 0)
	return w, nil
}

// Target returns the columns the write carries, ascending; for a whole-row
// write every column except the auto-increment one.
func (w *Write) Target() []int { return w.target }

// Partial reports whether the write is a partial update (not every column but
// the auto-increment one is written).
func (w *Write) Partial() bool { return !w.whole }

// NeedsOld reports whether Upsert needs the stored row. It does not only for
// Fluss's WAL shortcut: WAL image, no merge engine (or OVERWRITE), whole-row
// write and no auto-increment column; then Upsert ignores old.
func (w *Write) NeedsOld() bool { return w.needsOld }

// DeleteNeedsOld reports whether Delete needs the stored row: not when the
// table ignores or refuses deletes.
func (w *Write) DeleteNeedsOld() bool { return w.deletes == catalog.DeleteAllow }

// Upsert merges a written row into the stored one. old is the stored row (nil
// if the key is absent); in is the written row in table column order, columns
// outside the target nil. nextID is called only when a new key is inserted
// into a table with an auto-increment column.
//
// It returns the row to store (nil: unchanged) and the changes to log, in
// order. Upsert takes ownership of in: it may modify it and return it as the
// stored row or in a change. It never modifies old. On an error in may be
// partly merged and the write must be abandoned.
func (w *Write) Upsert(old, in row.Row, nextID func() (int64, error)) (stored row.Row, changes []Change, err error) {
	m := w.m
	if len(in) != len(m.types) {
		return nil, nil, errs.New(errs.Internal, "merge: table %s: upsert of a row with %d columns, the table has %d", m.table, len(in), len(m.types))
	}
	if !w.needsOld {
		return in, w.emit(Change{UpdateAfter, in}), nil
	}
	for _, c := range w.nonTarget {
		in[c] = nil
	}
	if old == nil {
		// A new key: every engine stores the written row as it came (aggregation
		// included: its first row is not aggregated with anything).
		for _, c := range w.checks {
			if in[c] != nil {
				if err := m.aggs[c].check(&w.bm, in[c]); err != nil {
					return nil, nil, m.columnError(c, err)
				}
			}
		}
		if m.autoInc >= 0 {
			if in[m.autoInc], err = m.assignID(nextID); err != nil {
				return nil, nil, err
			}
		}
		return in, w.emit(Change{Insert, in}), nil
	}
	old = m.pad(old)
	switch w.engine {
	case firstRow:
		return nil, nil, nil
	case versioned:
		ov, err := m.versionOf(old[m.ver])
		if err != nil {
			return nil, nil, err
		}
		nv, err := m.versionOf(in[m.ver])
		if err != nil {
			return nil, nil, err
		}
		if ov > nv {
			return nil, nil, nil // stale: the stored version is newer
		}
	case aggregation:
		// Aggregation never detects "no change", not even for a write of the key
		// alone: every write is -U/+U.
		for _, c := range w.target {
			if m.isPK[c] {
				continue
			}
			if in[c], err = m.aggs[c].apply(&w.bm, old[c], in[c]); err != nil {
				return nil, nil, m.columnError(c, err)
			}
		}
	default:
		if w.pkOnly {
			return nil, nil, nil // Fluss returns the old row: nothing changes
		}
	}
	for _, c := range w.nonTarget {
		in[c] = old[c]
	}
	return in, w.update(old, in), nil
}

// Delete applies a delete of a key. old is the stored row (nil if absent; not
// looked at when DeleteNeedsOld is false). It returns whether to remove the
// row, else the row to store instead (a partial delete; nil: unchanged), and
// the changes to log.
func (w *Write) Delete(old row.Row) (remove bool, stored row.Row, changes []Change, err error) {
	m := w.m
	switch w.deletes {
	case catalog.DeleteIgnore:
		return false, nil, nil, nil
	case catalog.DeleteDisable:
		return false, nil, nil, errs.New(errs.FailedPrecondition, "table %s: deletes are disabled (%s = %s)", m.table, catalog.OptDeleteBehavior, catalog.DeleteDisable)
	}
	if old == nil {
		return false, nil, nil, nil
	}
	old = m.pad(old)
	if !w.whole {
		// Partial delete: the row goes only if nothing outside the target is set.
		// The auto-increment column does not count (fluxgate's choice; in Fluss
		// it is always set, so a partial writer could never delete such a row).
		keep := false
		for _, c := range w.nonTarget {
			if c != m.autoInc && old[c] != nil {
				keep = true
				break
			}
		}
		if keep {
			nw := slices.Clone(old)
			for _, c := range w.target {
				if !m.isPK[c] {
					nw[c] = nil
				}
			}
			return false, nw, w.update(old, nw), nil
		}
	}
	return true, nil, w.emit(Change{Delete, old}), nil
}

// UndoOf is undo recovery's (Fluss's FIP-21, UndoComputer) inverse of the first changelog record of a key after a
// baseline: the write (under OVERWRITE) that restores the key's state at the
// baseline. +I: delete the key; -U or -D: upsert that row; +U: nothing (its
// -U came first, or, in a WAL changelog, the state before it is unknown).
func UndoOf(first Change) (upsert row.Row, del bool) {
	switch first.Kind {
	case Insert:
		return nil, true
	case UpdateBefore, Delete:
		return first.Row, false
	}
	return nil, false
}

func (w *Write) emit(c Change) []Change {
	w.changes[0] = c
	return w.changes[:1]
}

// update logs a changed row: -U(old) +U(new), or only +U(new) in WAL.
func (w *Write) update(old, nw row.Row) []Change {
	if w.m.wal {
		return w.emit(Change{UpdateAfter, nw})
	}
	w.changes[0], w.changes[1] = Change{UpdateBefore, old}, Change{UpdateAfter, nw}
	return w.changes[:2]
}

func (m *Merger) columnError(c int, err error) error {
	return fmt.Errorf("table %s: column %q (%s): %w", m.table, m.names[c], m.aggs[c].name, err)
}

func (m *Merger) assignID(nextID func() (int64, error)) (any, error) {
	if nextID == nil {
		return nil, errs.New(errs.Internal, "merge: table %s: no id source for auto-increment column %q", m.table, m.names[m.autoInc])
	}
	id, err := nextID()
	if err != nil {
		return nil, err
	}
	if m.types[m.autoInc].ID() == arrow.INT32 {
		if id > math.MaxInt32 || id < math.MinInt32 {
			return nil, errs.New(errs.ResourceExhausted, "table %s: auto-increment column %q (INT) ran out of ids: %d", m.table, m.names[m.autoInc], id)
		}
		return int32(id), nil
	}
	return id, nil
}

// pad widens a row stored under an older, narrower schema with NULLs.
func (m *Merger) pad(r row.Row) row.Row {
	if len(r) >= len(m.types) {
		return r
	}
	p := make(row.Row, len(m.types))
	copy(p, r)
	return p
}

func (m *Merger) nameList(cols []int) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = m.names[c]
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// versionOf is a version column's value as Fluss compares it: NULL is the
// type's minimum (so NULL vs NULL, or NULL vs the minimum, is a tie, and a tie
// lets the new row win).
func (m *Merger) versionOf(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		if m.types[m.ver].ID() == arrow.INT32 {
			return math.MinInt32, nil
		}
		return math.MinInt64, nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case arrow.Timestamp:
		return int64(x), nil
	}
	return 0, errs.New(errs.Internal, "merge: table %s: version column %q holds a %T", m.table, m.names[m.ver], v)
}
