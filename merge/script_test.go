package merge_test

// The testdata scripts replay the worked examples of Fluss's merge engines and
// changelog rules (Fluss's documentation and its KvTablet/RowMerger tests)
// against one table held in a map, as the kv store would drive the merger.
//
// A script is a list of blocks, separated by blank lines; lines starting with #
// between blocks are comments. A block is a command line, optional input lines,
// a line "----" and the expected output (cockroachdb/datadriven's format). go
// test ./merge -run Script -rewrite regenerates the expected output.
//
// Commands:
//
//	table                    input: one column per line, "name TYPE [NOT NULL]";
//	                         "primary key a, b"; options as "key = value"
//	write [overwrite] [a, b] the write stream that follows (default: whole row)
//	upsert (v, ...)          one row, values of the write's columns in table order
//	delete (k, ...)          one key, values of the primary key
//	offset n                 the offset of the next changelog row
//	checkpoint               remembers the log end offset and the table's rows
//	undo [a, b]              undo recovery (FIP-21): restores the checkpoint by OVERWRITE writes (of
//	                         those target columns) computed from the changelog
//	state                    every row, in key order
//	log                      the changelog so far
//
// Values: NULL, true, 1, 2.5, 'text' ('' escapes '), x'00ff' (bytes),
// rbm{1,2} and rbm64{1,2} (serialized RoaringBitmaps), 10:00 or 10:00:01.5
// (TIME), 2024-01-31 (DATE), and TIMESTAMP as an integer in the column's unit.

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cockroachdb/datadriven"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/row"
)

func TestScript(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{t: t}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var input []string
			if d.Input != "" {
				input = strings.Split(d.Input, "\n")
			}
			got := h.run(d.Cmd, commandArgs(d), input)
			if len(got) == 0 {
				return ""
			}
			return strings.Join(got, "\n") + "\n"
		})
	})
}

// commandArgs is the rest of d's command line: the commands take a tuple or a
// column list, which datadriven splits at spaces.
func commandArgs(d *datadriven.TestData) string {
	args := make([]string, len(d.CmdArgs))
	for i, a := range d.CmdArgs {
		args[i] = a.String()
	}
	return strings.Join(args, " ")
}

// harness is one table: its rows by key, its changelog, and the write stream
// in use.
type harness struct {
	t      *testing.T
	info   *catalog.TableInfo
	m      *merge.Merger
	w      *merge.Write
	rows   map[string]row.Row
	log    []logged
	next   int64 // offset of the next changelog row
	lastID int64

	baseline int64
	saved    map[string]row.Row
}

type logged struct {
	offset int64
	change merge.Change
}

func (h *harness) run(cmd, arg string, input []string) []string {
	if cmd != "table" && h.m == nil {
		return []string{"no table"}
	}
	switch cmd {
	case "table":
		return h.table(input)
	case "write":
		return h.write(arg)
	case "upsert":
		return h.upsert(arg)
	case "delete":
		return h.delete(arg)
	case "offset":
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return []string{err.Error()}
		}
		h.next = n
		return []string{"ok"}
	case "checkpoint":
		h.baseline, h.saved = h.next, maps.Clone(h.rows)
		return []string{fmt.Sprintf("baseline %d", h.baseline)}
	case "undo":
		return h.undo(arg)
	case "state":
		return h.state(h.rows)
	case "log":
		var out []string
		for _, l := range h.log {
			out = append(out, h.formatChange(l))
		}
		return out
	}
	return []string{"unknown command " + cmd}
}

func (h *harness) table(input []string) []string {
	spec := catalog.TableSpec{Table: "fluss.t", Options: map[string]string{}}
	for _, l := range input {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(l, "primary key "):
			for k := range strings.SplitSeq(strings.TrimPrefix(l, "primary key "), ",") {
				spec.PrimaryKey = append(spec.PrimaryKey, strings.TrimSpace(k))
			}
		case strings.Contains(l, "="):
			k, v, _ := strings.Cut(l, "=")
			v = strings.TrimSpace(v)
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				v = v[1 : len(v)-1]
			}
			spec.Options[strings.TrimSpace(k)] = v
		default:
			name, typ, _ := strings.Cut(l, " ")
			col := catalog.Column{Name: name, Type: typ}
			if s, ok := strings.CutSuffix(typ, " NOT NULL"); ok {
				f := false
				col.Type, col.Nullable = s, &f
			}
			spec.Columns = append(spec.Columns, col)
		}
	}
	info, err := catalog.NormalizeSpec(spec, catalog.Defaults{})
	if err != nil {
		return errLines(err)
	}
	m, err := merge.New(info)
	if err != nil {
		return errLines(err)
	}
	w, err := m.NewWrite(nil, false)
	if err != nil {
		return errLines(err)
	}
	*h = harness{t: h.t, info: info, m: m, w: w, rows: map[string]row.Row{}}
	return []string{"ok"}
}

func (h *harness) write(arg string) []string {
	overwrite := false
	if rest, ok := strings.CutPrefix(arg, "overwrite"); ok {
		overwrite, arg = true, strings.TrimSpace(rest)
	}
	target, err := h.columns(arg)
	if err != nil {
		return []string{err.Error()}
	}
	w, err := h.m.NewWrite(target, overwrite)
	if err != nil {
		return errLines(err)
	}
	h.w = w
	return []string{"ok"}
}

func (h *harness) columns(list string) ([]int, error) {
	var target []int
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		c := h.info.ColumnIndex(name)
		if c < 0 {
			return nil, fmt.Errorf("no column %q", name)
		}
		target = append(target, c)
	}
	return target, nil
}

func (h *harness) upsert(arg string) []string {
	cols := h.w.Target()
	vals, err := h.parseTuple(arg, cols)
	if err != nil {
		return []string{err.Error()}
	}
	in := make(row.Row, len(h.info.Columns))
	for i, c := range cols {
		in[c] = vals[i]
	}
	return h.apply(in, false, h.w)
}

func (h *harness) delete(arg string) []string {
	pk := h.info.PrimaryKeyIndexes()
	vals, err := h.parseTuple(arg, pk)
	if err != nil {
		return []string{err.Error()}
	}
	in := make(row.Row, len(h.info.Columns))
	for i, c := range pk {
		in[c] = vals[i]
	}
	return h.apply(in, true, h.w)
}

// apply runs one upsert or delete of in's key through w, as the kv store
// does, and checks that the stored row was not modified.
func (h *harness) apply(in row.Row, del bool, w *merge.Write) []string {
	key := h.key(in)
	old := h.rows[key]
	if !w.NeedsOld() && !del {
		old = nil
	}
	before := slices.Clone(old)
	var (
		stored  row.Row
		changes []merge.Change
		remove  bool
		err     error
	)
	if del {
		remove, stored, changes, err = w.Delete(old)
	} else {
		stored, changes, err = w.Upsert(old, in, h.nextID)
	}
	if !h.equalRows(before, old) {
		h.t.Errorf("the stored row changed under the merge: %s became %s", h.formatRow(before), h.formatRow(old))
	}
	if err != nil {
		return errLines(err)
	}
	var out []string
	for _, c := range changes {
		l := logged{h.next, merge.Change{Kind: c.Kind, Row: slices.Clone(c.Row)}}
		h.log = append(h.log, l)
		h.next++
		out = append(out, h.formatChange(l))
	}
	if len(changes) == 0 {
		out = append(out, "no change")
	}
	switch {
	case remove:
		delete(h.rows, key)
	case stored != nil:
		h.rows[key] = slices.Clone(stored)
	}
	if r, ok := h.rows[key]; ok {
		out = append(out, "stored "+h.formatRow(r))
	} else {
		out = append(out, "absent")
	}
	return out
}

func (h *harness) nextID() (int64, error) {
	h.lastID++
	return h.lastID, nil
}

// undo is Fluss's undo recovery (FIP-21) against this table: the first changelog row of each key since
// the baseline, inverted, written with OVERWRITE.
func (h *harness) undo(arg string) []string {
	target, err := h.columns(arg)
	if err != nil {
		return []string{err.Error()}
	}
	w, err := h.m.NewWrite(target, true)
	if err != nil {
		return errLines(err)
	}
	var order []string
	first := map[string]merge.Change{}
	for _, l := range h.log {
		if l.offset < h.baseline {
			continue
		}
		k := h.key(l.change.Row)
		if _, ok := first[k]; !ok {
			first[k] = l.change
			order = append(order, k)
		}
	}
	end := h.next
	var out []string
	for _, k := range order {
		up, del := merge.UndoOf(first[k])
		switch {
		case del:
			out = append(out, fmt.Sprintf("%s %s: delete", first[k].Kind, k))
			out = append(out, h.apply(first[k].Row, true, w)...)
		case up != nil:
			in := make(row.Row, len(up))
			for _, c := range w.Target() {
				in[c] = up[c]
			}
			out = append(out, fmt.Sprintf("%s %s: upsert %s", first[k].Kind, k, h.formatRow(up)))
			out = append(out, h.apply(in, false, w)...)
		default:
			out = append(out, fmt.Sprintf("%s %s: nothing", first[k].Kind, k))
		}
	}
	out = append(out, fmt.Sprintf("undid [%d, %d)", h.baseline, end))
	if h.equalStates(h.rows, h.saved) {
		out = append(out, "state == checkpoint")
	} else {
		out = append(out, "state != checkpoint; checkpoint was:")
		out = append(out, h.state(h.saved)...)
	}
	return out
}

func (h *harness) state(rows map[string]row.Row) []string {
	if len(rows) == 0 {
		return []string{"empty"}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(rows)) {
		out = append(out, h.formatRow(rows[k]))
	}
	return out
}

func (h *harness) equalStates(a, b map[string]row.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for k, r := range a {
		if !h.equalRows(r, b[k]) {
			return false
		}
	}
	return true
}

func (h *harness) equalRows(a, b row.Row) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	schema := h.info.ArrowSchema()
	for i := range a {
		if !row.Equal(schema.Field(i).Type, a[i], b[i]) {
			return false
		}
	}
	return true
}

func (h *harness) key(r row.Row) string {
	var parts []string
	for _, c := range h.info.PrimaryKeyIndexes() {
		parts = append(parts, h.formatValue(c, r[c]))
	}
	return strings.Join(parts, ",")
}

func errLines(err error) []string {
	return []string{fmt.Sprintf("error (%s): %v", errs.KindOf(err), err)}
}

func (h *harness) formatChange(l logged) string {
	return fmt.Sprintf("%d %s%s", l.offset, l.change.Kind, h.formatRow(l.change.Row))
}

func (h *harness) formatRow(r row.Row) string {
	if r == nil {
		return "nil"
	}
	parts := make([]string, len(r))
	for i, v := range r {
		parts[i] = h.formatValue(i, v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func (h *harness) formatValue(c int, v any) string {
	if v == nil {
		return "NULL"
	}
	t := h.info.ArrowSchema().Field(c).Type
	switch x := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case float64:
		return formatFloat(x, 64)
	case float32:
		return formatFloat(float64(x), 32)
	case decimal128.Num:
		return x.ToString(t.(*arrow.Decimal128Type).Scale)
	case []byte:
		switch h.info.AggFunction(h.info.Columns[c].Name) {
		case "rbm32":
			var bm roaring.Bitmap
			if _, err := bm.ReadFrom(bytes.NewReader(x)); err == nil {
				return "rbm" + formatSet(bm.ToArray())
			}
		case "rbm64":
			var bm roaring64.Bitmap
			if err := bm.UnmarshalBinary(x); err == nil {
				return "rbm64" + formatSet(bm.ToArray())
			}
		}
		return "x'" + hex.EncodeToString(x) + "'"
	case arrow.Date32:
		return x.FormattedString()
	case arrow.Time32:
		return formatTime(time.Duration(x) * t.(*arrow.Time32Type).Unit.Multiplier())
	case arrow.Time64:
		return formatTime(time.Duration(x) * t.(*arrow.Time64Type).Unit.Multiplier())
	}
	return fmt.Sprint(v)
}

func formatFloat(f float64, bits int) string {
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return s
}

func formatSet[T uint32 | uint64](vals []T) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprint(v)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func formatTime(d time.Duration) string {
	h, m := d/time.Hour, d%time.Hour/time.Minute
	s := d % time.Minute
	if s == 0 {
		return fmt.Sprintf("%02d:%02d", h, m)
	}
	return fmt.Sprintf("%02d:%02d:%s", h, m, strconv.FormatFloat(s.Seconds(), 'f', -1, 64))
}

// parseTuple parses "(v, ...)" as values of the columns cols.
func (h *harness) parseTuple(s string, cols []int) ([]any, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return nil, fmt.Errorf("want (v, ...), got %q", s)
	}
	lits := splitTop(s[1 : len(s)-1])
	if len(lits) != len(cols) {
		return nil, fmt.Errorf("want %d values (%s), got %d", len(cols), h.names(cols), len(lits))
	}
	vals := make([]any, len(cols))
	for i, c := range cols {
		v, err := parseValue(h.info.ArrowSchema().Field(c).Type, lits[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %v", h.info.Columns[c].Name, err)
		}
		vals[i] = v
	}
	return vals, nil
}

func (h *harness) names(cols []int) string {
	var names []string
	for _, c := range cols {
		names = append(names, h.info.Columns[c].Name)
	}
	return strings.Join(names, ", ")
}

// splitTop splits at the commas outside quotes and brackets.
func splitTop(s string) []string {
	var out []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(' || c == '{':
			depth++
		case c == ')' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if strings.TrimSpace(s) != "" {
		out = append(out, strings.TrimSpace(s[start:]))
	}
	return out
}

func parseValue(t arrow.DataType, lit string) (any, error) {
	if lit == "NULL" {
		return nil, nil
	}
	switch t.ID() {
	case arrow.BOOL:
		return strconv.ParseBool(lit)
	case arrow.INT8:
		v, err := strconv.ParseInt(lit, 10, 8)
		return int8(v), err
	case arrow.INT16:
		v, err := strconv.ParseInt(lit, 10, 16)
		return int16(v), err
	case arrow.INT32:
		v, err := strconv.ParseInt(lit, 10, 32)
		return int32(v), err
	case arrow.INT64:
		return strconv.ParseInt(lit, 10, 64)
	case arrow.FLOAT32:
		v, err := strconv.ParseFloat(lit, 32)
		return float32(v), err
	case arrow.FLOAT64:
		return strconv.ParseFloat(lit, 64)
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		return decimal128.FromString(lit, d.Precision, d.Scale)
	case arrow.STRING:
		if len(lit) < 2 || lit[0] != '\'' || lit[len(lit)-1] != '\'' {
			return nil, fmt.Errorf("want a quoted string, got %s", lit)
		}
		return strings.ReplaceAll(lit[1:len(lit)-1], "''", "'"), nil
	case arrow.BINARY:
		return parseBytes(lit)
	case arrow.DATE32:
		d, err := time.Parse("2006-01-02", lit)
		return arrow.Date32FromTime(d), err
	case arrow.TIME32:
		d, err := parseTime(lit)
		return arrow.Time32(d / t.(*arrow.Time32Type).Unit.Multiplier()), err
	case arrow.TIME64:
		d, err := parseTime(lit)
		return arrow.Time64(d / t.(*arrow.Time64Type).Unit.Multiplier()), err
	case arrow.TIMESTAMP:
		v, err := strconv.ParseInt(lit, 10, 64)
		return arrow.Timestamp(v), err
	}
	return nil, fmt.Errorf("no literals of type %s", t)
}

func parseBytes(lit string) (any, error) {
	switch {
	case strings.HasPrefix(lit, "x'") && strings.HasSuffix(lit, "'"):
		return hex.DecodeString(lit[2 : len(lit)-1])
	case strings.HasPrefix(lit, "rbm64{"):
		bm := roaring64.New()
		for _, v := range setValues(lit[len("rbm64{") : len(lit)-1]) {
			bm.Add(v)
		}
		return bm.ToBytes()
	case strings.HasPrefix(lit, "rbm{"):
		bm := roaring.New()
		for _, v := range setValues(lit[len("rbm{") : len(lit)-1]) {
			bm.Add(uint32(v))
		}
		return bm.ToBytes()
	}
	return nil, fmt.Errorf("want x'hex', rbm{...} or rbm64{...}, got %s", lit)
}

func setValues(s string) []uint64 {
	var out []uint64
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			v, _ := strconv.ParseUint(p, 10, 64)
			out = append(out, v)
		}
	}
	return out
}

func parseTime(lit string) (time.Duration, error) {
	parts := strings.Split(lit, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("want HH:MM[:SS], got %s", lit)
	}
	h, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("want HH:MM[:SS], got %s", lit)
	}
	d := time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
	if len(parts) == 3 {
		s, err := strconv.ParseFloat(parts[2], 64)
		if err != nil {
			return 0, err
		}
		d += time.Duration(s * float64(time.Second))
	}
	return d, nil
}
