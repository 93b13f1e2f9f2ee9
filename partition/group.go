package partition

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluxgate-io/fluxgate/errs"
)

// Group is the rows of a batch that belong to one partition.
type Group struct {
	Values []string
	Rows   []int32
}

// GroupRows returns the partitions of rec's rows by the partition keys, in
// the order they first appear. A row with a NULL partition value is an
// error naming the column; table names the table in errors.
func GroupRows(table string, keys []string, rec arrow.RecordBatch) ([]*Group, error) {
	cols := make([]arrow.Array, len(keys))
	for i, k := range keys {
		idx := rec.Schema().FieldIndices(k)
		if len(idx) == 0 {
			return nil, errs.New(errs.InvalidArgument, "table %s: the batch lacks partition key column %s", table, errs.Quote(k))
		}
		cols[i] = rec.Column(idx[0])
	}
	var order []*Group
	byName := map[string]*Group{}
	values := make([]string, len(cols))
	for row := range int(rec.NumRows()) {
		for i, c := range cols {
			v, err := ValueString(keys[i], c, row)
			if err != nil {
				return nil, err
			}
			values[i] = v
		}
		name := Name(values)
		g := byName[name]
		if g == nil {
			g = &Group{Values: append([]string(nil), values...)}
			byName[name] = g
			order = append(order, g)
		}
		g.Rows = append(g.Rows, int32(row))
	}
	return order, nil
}
