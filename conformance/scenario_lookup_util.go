package conformance

// What the lookup-* scenarios share: key batches built from Go rows, lookup
// answers checked against PROTOCOL.md §6.1 (_key_index INT32 first, then the
// requested columns; app_metadata {"keys": n, "rows": m}; rows ascending by
// _key_index, within the key batch) and turned into Go rows, and the error
// of a lookup that must fail.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluxgate-io/fluxgate/client"
)

// lookupRow is one row of a lookup answer: the key's row in its key batch
// and the requested columns.
type lookupRow struct {
	key int
	row []any
}

func (r lookupRow) String() string { return fmt.Sprintf("key %d: %s", r.key, fmtRow(r.row)) }

// resultFields are the columns a lookup of t returns after _key_index: cols,
// or every table column.
func (t *pkTable) resultFields(cols []string) []arrow.Field {
	if cols == nil {
		return t.schema.Fields()
	}
	return t.fields(cols)
}

// describeLookup renders a lookup request for failure messages.
func describeLookup(req client.LookupRequest) string {
	var opts []string
	if req.Prefix {
		opts = append(opts, "prefix")
	}
	if req.InsertIfNotExists {
		opts = append(opts, "insert_if_not_exists")
	}
	if req.Columns != nil {
		opts = append(opts, fmt.Sprintf("columns %v", req.Columns))
	}
	s := "lookup of " + req.Table
	if len(opts) > 0 {
		s += " (" + strings.Join(opts, ", ") + ")"
	}
	return s
}

// answerRows checks one answer to a batch of keys keys and returns its rows.
// want are the columns expected after _key_index. A point lookup (unique)
// has at most one row per key.
func answerRows(what string, ans arrow.RecordBatch, meta client.LookupMeta, keys int, want []arrow.Field, unique bool) ([]lookupRow, error) {
	sc := ans.Schema()
	if sc.NumFields() != len(want)+1 || sc.Field(0).Name != client.KeyIndexColumn || !arrow.TypeEqual(sc.Field(0).Type, arrow.PrimitiveTypes.Int32) {
		return nil, fmt.Errorf("%s: answer schema %s; want %s INT32 followed by %s", what, sc, client.KeyIndexColumn, fieldList(want))
	}
	for i, f := range want {
		if g := sc.Field(i + 1); g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) {
			return nil, fmt.Errorf("%s: answer column %d is %s %s, want %s %s (answer schema %s)", what, i+1, g.Name, g.Type, f.Name, f.Type, sc)
		}
	}
	if meta.Keys != keys || meta.Rows != int(ans.NumRows()) {
		return nil, fmt.Errorf("%s: answer app_metadata {keys: %d, rows: %d} for %d keys and %d rows", what, meta.Keys, meta.Rows, keys, ans.NumRows())
	}
	idx := ans.Column(0).(*array.Int32)
	rows := make([]lookupRow, ans.NumRows())
	for i := range rows {
		if idx.IsNull(i) {
			return nil, fmt.Errorf("%s: answer row %d has a null %s", what, i, client.KeyIndexColumn)
		}
		k := int(idx.Value(i))
		if k < 0 || k >= keys {
			return nil, fmt.Errorf("%s: answer row %d has %s %d, outside the %d keys of the batch", what, i, client.KeyIndexColumn, k, keys)
		}
		if i > 0 {
			prev := rows[i-1].key
			if k < prev || (unique && k == prev) {
				return nil, fmt.Errorf("%s: answer row %d has %s %d after %d; want rows ascending by %s, at most one per key of a point lookup", what, i, client.KeyIndexColumn, k, prev, client.KeyIndexColumn)
			}
		}
		r := lookupRow{key: k, row: make([]any, len(want))}
		for c := range want {
			r.row[c] = cell(ans.Column(c+1), i)
		}
		rows[i] = r
	}
	return rows, nil
}

func fieldList(fs []arrow.Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + " " + f.Type.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// lookuper is a lookup stream of the scenarios: it builds key batches from
// rows and checks every answer.
type lookuper struct {
	env    *Env
	req    client.LookupRequest
	l      *client.Lookuper
	keys   []arrow.Field
	want   []arrow.Field
	unique bool
	what   string
}

// openLookup opens a lookup stream of t whose key batches carry keyFields.
func openLookup(ctx context.Context, env *Env, t *pkTable, req client.LookupRequest, keyFields []arrow.Field) (*lookuper, error) {
	l, err := env.Client.Lookup(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describeLookup(req), err)
	}
	return &lookuper{env: env, req: req, l: l, keys: keyFields, want: t.resultFields(req.Columns),
		unique: !req.Prefix, what: describeLookup(req)}, nil
}

// lookup sends one batch of keys and returns the checked answer.
func (lk *lookuper) lookup(keys [][]any) ([]lookupRow, error) {
	rec, err := buildRecord(lk.env.Mem, lk.keys, keys)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	ans, meta, err := lk.l.Lookup(rec)
	if err != nil {
		return nil, fmt.Errorf("%s, keys %s: %w", lk.what, abbrevRows(keys), err)
	}
	defer ans.Release()
	return answerRows(fmt.Sprintf("%s, keys %s", lk.what, abbrevRows(keys)), ans, meta, len(keys), lk.want, lk.unique)
}

// send sends a batch without waiting; recv takes the answers in order.
func (lk *lookuper) send(keys [][]any) error {
	rec, err := buildRecord(lk.env.Mem, lk.keys, keys)
	if err != nil {
		return err
	}
	defer rec.Release()
	if err := lk.l.Send(rec); err != nil {
		return fmt.Errorf("%s: send keys %s: %w", lk.what, abbrevRows(keys), err)
	}
	return nil
}

func (lk *lookuper) recv(keys int) ([]lookupRow, error) {
	ans, meta, err := lk.l.Recv()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lk.what, err)
	}
	defer ans.Release()
	return answerRows(lk.what, ans, meta, keys, lk.want, lk.unique)
}

func (lk *lookuper) close() error {
	if err := lk.l.Close(); err != nil {
		return fmt.Errorf("%s: close: %w", lk.what, err)
	}
	return nil
}

// lookupOnce looks one batch of keys up through a stream of its own.
func lookupOnce(ctx context.Context, env *Env, t *pkTable, req client.LookupRequest, keyFields []arrow.Field, keys [][]any) ([]lookupRow, error) {
	lk, err := openLookup(ctx, env, t, req, keyFields)
	if err != nil {
		return nil, err
	}
	rows, err := lk.lookup(keys)
	if cerr := lk.close(); err == nil {
		err = cerr
	}
	return rows, err
}

// lookupError runs a lookup that should fail and returns its error: that of
// the first answer, else of closing the stream; nil if it succeeded.
func lookupError(ctx context.Context, env *Env, req client.LookupRequest, keyFields []arrow.Field, keys [][]any) error {
	l, err := env.Client.Lookup(ctx, req)
	if err != nil {
		return err
	}
	return lookupErrorOn(l, env, keyFields, keys)
}

func lookupErrorOn(l *client.Lookuper, env *Env, keyFields []arrow.Field, keys [][]any) error {
	rec, err := buildRecord(env.Mem, keyFields, keys)
	if err != nil {
		l.Close()
		return fmt.Errorf("conformance: %w", err)
	}
	defer rec.Release()
	ans, _, lerr := l.Lookup(rec)
	if ans != nil {
		ans.Release()
	}
	cerr := l.Close()
	if lerr != nil {
		return lerr
	}
	return cerr
}

// abbrevRows renders key rows, shortened when there are many.
func abbrevRows(rows [][]any) string {
	n := len(rows)
	shown := rows
	if n > 4 {
		shown = rows[:4]
	}
	parts := make([]string, len(shown))
	for i, r := range shown {
		parts[i] = fmtRow(r)
	}
	s := "[" + strings.Join(parts, " ")
	if n > 4 {
		s += fmt.Sprintf(" ... (%d in all)", n)
	}
	return s + "]"
}

// scenarioLog is where scenarios report measurements that are not failures
// (the Env has no log of its own).
var scenarioLog io.Writer = os.Stderr
