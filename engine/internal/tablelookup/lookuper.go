// Package tablelookup answers the lookups of a table: it resolves the table a
// lookup names, checks the lookup against its definition, opens the lookup
// package's lookuper over the table (or routes each key to its partition's)
// and turns an inline lookup's JSON keys into a key batch. The keys that
// insert_if_not_exists inserts are written through pkwrite.
package tablelookup

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/pkwrite"
	"github.com/fluxgate-io/fluxgate/engine/internal/table"
	"github.com/fluxgate-io/fluxgate/engine/internal/tables"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/kv"
	"github.com/fluxgate-io/fluxgate/lake"
	"github.com/fluxgate-io/fluxgate/lookup"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Env is what lookups use of the engine, built once by it.
type Env struct {
	Alloc  memory.Allocator
	KV     *kv.Store
	Tables *tables.Set  // the table a lookup names, the partition a key is of
	PK     *pkwrite.Env // inserts the keys insert_if_not_exists does not find
	// KeysCounter returns the recorder of a table's looked-up keys (a
	// metric), made once per lookup.
	KeysCounter func(table string) func(keys int)
}

// Lookuper answers the key batches of one lookup: of a table, or routed to
// the partitions of a partitioned one.
type Lookuper struct {
	l     *lookup.Lookuper
	parts *partitionLookup
}

// Open validates a lookup against the table it names and returns the
// lookuper that answers its key batches.
func (env *Env) Open(req protocol.LookupRequest) (*Lookuper, error) {
	info, path, err := env.Tables.Info(req.Table)
	if err != nil {
		return nil, err
	}
	cols, err := Check(info, path, req)
	if err != nil {
		return nil, err
	}
	if info.IsPartitioned() {
		return env.openPartitioned(info, path, req, cols), nil
	}
	if req.CreatePartitions != nil {
		return nil, errs.New(errs.InvalidArgument, "lookup of %s: create_partitions applies to partitioned tables only", path)
	}
	t, err := env.Tables.Table(info)
	if err != nil {
		return nil, err
	}
	return &Lookuper{l: env.tableLookup(t, path, req, cols)}, nil
}

// Schema is the schema of the answers.
func (l *Lookuper) Schema() *arrow.Schema {
	if l.parts != nil {
		return l.parts.schema
	}
	return l.l.Schema()
}

// Lookup answers one batch of keys; the answer is the caller's to release.
func (l *Lookuper) Lookup(ctx context.Context, keys arrow.RecordBatch) (arrow.RecordBatch, protocol.LookupMeta, error) {
	if l.parts != nil {
		return l.parts.lookup(ctx, keys)
	}
	ans, meta, err := l.l.Lookup(ctx, keys)
	return ans, protocol.LookupMeta{Keys: meta.Keys, Rows: meta.Rows}, err
}

// tableLookup is the lookuper of one table (or partition) of a checked
// lookup.
func (env *Env) tableLookup(t *table.Table, path protocol.TablePath, req protocol.LookupRequest, cols []int) *lookup.Lookuper {
	info := t.Current().Info
	lt := lookup.Table{
		Name: path.String(), ID: info.TableID, Schema: info.ArrowSchema(), Types: func() []arrow.DataType { return t.Current().Types },
		PK: info.PrimaryKeyIndexes(), BucketKey: info.BucketKeyIndexes(), Buckets: info.BucketCount(),
		Fixed: info.PartitionKeyIndexes(), // not in a partition's stored key (table.NewPK)
	}
	count := env.KeysCounter(path.String())
	opts := lookup.Options{Columns: cols, Prefix: req.Prefix, Observe: func(m lookup.Meta) { count(m.Keys) }}
	if req.InsertIfNotExists {
		opts.Insert = func(ctx context.Context, keys []lookup.Missing) error {
			if err := lakeRange(t.Current().Info, keys); err != nil {
				return err
			}
			return env.PK.Insert(t, keys)
		}
	}
	return lookup.New(env.KV, lt, opts, env.Alloc)
}

// lakeRange refuses, on a lake-enabled table, to insert a key the lake
// cannot hold, as writes refuse such values (PROTOCOL.md §7.4).
func lakeRange(info *catalog.TableInfo, keys []lookup.Missing) error {
	if !info.DatalakeEnabled() {
		return nil
	}
	for _, k := range keys {
		if err := lake.CheckRow(info.ArrowSchema(), k.Row); err != nil {
			return errs.New(errs.InvalidArgument, "lookup of %s: insert_if_not_exists of a key: %v; the table is lake-enabled (%s), so it takes only what its Iceberg table can hold",
				info.Path(), err, catalog.OptDatalakeEnabled)
		}
	}
	return nil
}
