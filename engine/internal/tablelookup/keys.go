package tablelookup

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
	"github.com/fluxgate-io/fluxgate/row"
)

// Keys turns the JSON keys of an inline lookup into a key batch of the
// table's key (or bucket-key) columns.
func Keys(info *catalog.TableInfo, path protocol.TablePath, req protocol.LookupRequest, mem memory.Allocator) (arrow.RecordBatch, error) {
	keyCols := info.PrimaryKeyIndexes()
	if req.Prefix {
		keyCols = append(slices.Clone(info.BucketKeyIndexes()), info.PartitionKeyIndexes()...)
	}
	schema := info.ArrowSchema()
	fields := make([]arrow.Field, len(keyCols))
	for i, c := range keyCols {
		fields[i] = schema.Field(c)
	}
	b := array.NewRecordBuilder(mem, arrow.NewSchema(fields, nil))
	defer b.Release()
	for k, key := range req.Keys {
		for name := range key {
			if !slices.ContainsFunc(fields, func(f arrow.Field) bool { return f.Name == name }) {
				return nil, errs.New(errs.InvalidArgument, "lookup of %s: key %d has column %s, which is not one of the key columns %s", path, k, errs.Quote(name), viewplan.ColumnNames(arrow.NewSchema(fields, nil)))
			}
		}
		for i, f := range fields {
			raw, ok := key[f.Name]
			if !ok {
				return nil, errs.New(errs.InvalidArgument, "lookup of %s: key %d lacks column %s", path, k, errs.Quote(f.Name))
			}
			v, err := row.Coerce(f.Type, raw)
			if err != nil {
				return nil, errs.New(errs.InvalidArgument, "lookup of %s: key %d, column %s: %w", path, k, errs.Quote(f.Name), err)
			}
			if v == nil {
				return nil, errs.New(errs.InvalidArgument, "lookup of %s: key %d, column %s is null", path, k, errs.Quote(f.Name))
			}
			row.Append(b.Field(i), v)
		}
	}
	return b.NewRecordBatch(), nil
}
