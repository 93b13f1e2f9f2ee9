package pkwrite

import (
	"context"

	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/merge"
	"github.com/fluxgate-io/fluxgate/row"
)

// UndoOps reads a bucket's changelog in [from, to) and returns, per key in
// order of first change, the write that restores the key's state at from.
// The caller holds the bucket's lock, with its changelog all durable.
func UndoOps(ctx context.Context, t *table.Table, sch *table.Schema, bucket int, from, to int64) ([]Op, error) {
	info, st := sch.Info, t.PK
	reader, err := t.Log.NewReader(bucket, from, table.Indexes(len(sch.Types)))
	if err != nil {
		return nil, err
	}
	defer reader.Close()
	seen := map[string]bool{}
	var ops []Op
	var key []byte
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := reader.Next(to)
		if err != nil || f == nil {
			return ops, err
		}
		rec, err := f.Record(sch.Decoder, info.ArrowSchema())
		if err != nil {
			return nil, err
		}
		skip := int(max(from-f.BaseOffset, 0))
		for i := skip; i < f.Rows; i++ {
			r := row.FromRecord(rec, i, nil)
			if key, err = st.Key(key[:0], r); err != nil {
				rec.Release()
				return nil, err
			}
			if seen[string(key)] {
				continue
			}
			seen[string(key)] = true
			upsert, del := merge.UndoOf(merge.Change{Kind: merge.Kind(f.ChangeTypes[i]), Row: r})
			switch {
			case del:
				ops = append(ops, Op{Del: true, Row: r})
			case upsert != nil:
				ops = append(ops, Op{Row: upsert})
			}
		}
		rec.Release()
	}
}
