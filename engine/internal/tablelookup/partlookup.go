package tablelookup

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lookup"
	"github.com/fluxgate-io/fluxgate/partition"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// partitionLookup is a lookup of a partitioned table: the keys carry the
// partition columns (they are in the primary key; a prefix lookup's keys are
// the bucket key and the partition keys, as in Fluss), each key is looked up
// in its partition, and a partition that does not exist has no rows (as in
// Fluss) unless insert_if_not_exists creates it.
type partitionLookup struct {
	env     *Env
	info    *catalog.TableInfo
	path    protocol.TablePath
	req     protocol.LookupRequest
	cols    []int
	create  bool
	schema  *arrow.Schema
	lookups map[string]*partitionLookuper // by partition name
}

type partitionLookuper struct {
	t *table.Table
	l *lookup.Lookuper
}

// openPartitioned returns the lookuper of a checked lookup (Check) of a
// partitioned table.
func (env *Env) openPartitioned(info *catalog.TableInfo, path protocol.TablePath, req protocol.LookupRequest, cols []int) *Lookuper {
	// The answer's schema is every partition's: made as a lookup of the
	// table makes it, without touching data.
	schema := lookup.New(env.KV, lookup.Table{Schema: info.ArrowSchema()}, lookup.Options{Columns: cols}, env.Alloc).Schema()
	p := &partitionLookup{env: env, info: info, path: path, req: req, cols: cols, schema: schema,
		create:  req.InsertIfNotExists && (req.CreatePartitions == nil || *req.CreatePartitions),
		lookups: map[string]*partitionLookuper{}}
	return &Lookuper{parts: p}
}

// partition returns the lookuper of a partition; nil when it does not exist
// and may not be created.
func (p *partitionLookup) partition(values []string) (*lookup.Lookuper, error) {
	name := partition.Name(values)
	if pl := p.lookups[name]; pl != nil && !pl.t.Dropped.Load() {
		return pl.l, nil
	}
	t, _, err := p.env.Tables.PartitionOf(p.info, values, p.create)
	if errs.Is(err, errs.NotFound) && !p.create {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l := p.env.tableLookup(t, p.path, p.req, p.cols)
	p.lookups[name] = &partitionLookuper{t: t, l: l}
	return l, nil
}

// lookup answers a key batch: each partition's keys are looked up there and
// the answers, their _key_index mapped back to the batch's rows, are joined
// in key order.
func (p *partitionLookup) lookup(ctx context.Context, keys arrow.RecordBatch) (arrow.RecordBatch, protocol.LookupMeta, error) {
	groups, err := partition.GroupRows(p.info.Path().String(), p.info.PartitionKeys, keys)
	if err != nil {
		return nil, protocol.LookupMeta{}, fmt.Errorf("lookup of %s: %w", p.path, err)
	}
	mem := p.env.Alloc
	var parts []arrow.RecordBatch
	defer func() {
		for _, r := range parts {
			r.Release()
		}
	}()
	for _, g := range groups {
		l, err := p.partition(g.Values)
		if err != nil {
			return nil, protocol.LookupMeta{}, err
		}
		if l == nil {
			continue
		}
		sub := keys
		if len(groups) > 1 {
			if sub, err = row.Take(ctx, keys, g.Rows, mem); err != nil {
				return nil, protocol.LookupMeta{}, err
			}
		} else {
			sub.Retain()
		}
		ans, _, err := l.Lookup(ctx, sub)
		sub.Release()
		if err != nil {
			return nil, protocol.LookupMeta{}, err
		}
		parts = append(parts, remapKeyIndex(ans, g.Rows, mem))
		ans.Release()
	}
	out, err := p.env.joinByKey(ctx, p.schema, parts)
	if err != nil {
		return nil, protocol.LookupMeta{}, err
	}
	return out, protocol.LookupMeta{Keys: int(keys.NumRows()), Rows: int(out.NumRows())}, nil
}

// remapKeyIndex returns ans with its _key_index (column 0, a row of the
// partition's keys) turned into the row of the whole key batch.
func remapKeyIndex(ans arrow.RecordBatch, rows []int32, mem memory.Allocator) arrow.RecordBatch {
	ki := ans.Column(0).(*array.Int32)
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for i := range ki.Len() {
		b.Append(rows[ki.Value(i)])
	}
	mapped := b.NewArray()
	defer mapped.Release()
	cols := append([]arrow.Array{mapped}, ans.Columns()[1:]...)
	return array.NewRecordBatch(ans.Schema(), cols, ans.NumRows())
}

// joinByKey concatenates the partitions' answers and orders the rows by
// _key_index, as a lookup of a table that is not partitioned answers.
func (env *Env) joinByKey(ctx context.Context, schema *arrow.Schema, parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	mem := env.Alloc
	if len(parts) == 0 {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		return b.NewRecordBatch(), nil
	}
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c := range cols {
		arrs := make([]arrow.Array, len(parts))
		for i, r := range parts {
			arrs[i] = r.Column(c)
		}
		var err error
		if cols[c], err = array.Concatenate(arrs, mem); err != nil {
			return nil, fmt.Errorf("join lookup answers: %w", err)
		}
	}
	all := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
	defer all.Release()
	ki := cols[0].(*array.Int32)
	order := make([]int32, ki.Len())
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(ki.Value(int(a)), ki.Value(int(b))) })
	return row.Take(ctx, all, order, mem)
}
