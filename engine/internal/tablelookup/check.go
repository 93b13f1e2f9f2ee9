package tablelookup

import (
	"slices"
	"strings"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/engine/internal/viewplan"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/protocol"
)

// Check checks a lookup against its table's definition and returns the
// answer's table columns.
func Check(info *catalog.TableInfo, path protocol.TablePath, req protocol.LookupRequest) ([]int, error) {
	if path.View != "" {
		return nil, errs.New(errs.FailedPrecondition, "lookup of %s: views cannot be looked up; look up %s", path.FullName(), path)
	}
	if !info.IsPrimaryKey() {
		return nil, errs.New(errs.FailedPrecondition, "lookup of %s: it is a log table; only primary-key tables can be looked up", path)
	}
	if req.Prefix && req.InsertIfNotExists {
		return nil, errs.New(errs.InvalidArgument, "lookup of %s: insert_if_not_exists needs a point lookup, not a prefix lookup", path)
	}
	if req.Prefix && !info.HasPrefixIndex() {
		var key []string // the physical primary key: without partition keys
		for _, c := range info.PhysicalKeyIndexes() {
			key = append(key, info.Columns[c].Name)
		}
		return nil, errs.New(errs.FailedPrecondition, "prefix lookup of %s: its bucket key (%s) is not a strict prefix of its primary key (%s), so it has no prefix index",
			path, strings.Join(info.BucketKey(), ", "), strings.Join(key, ", "))
	}
	var cols []int
	for _, name := range req.Columns {
		c := info.ColumnIndex(name)
		if c < 0 {
			return nil, errs.New(errs.NotFound, "lookup of %s: column %s does not exist (columns: %s)", path, errs.Quote(name), viewplan.ColumnNames(info.ArrowSchema()))
		}
		if slices.Contains(cols, c) {
			return nil, errs.New(errs.InvalidArgument, "lookup of %s: column %s is asked for twice", path, errs.Quote(name))
		}
		cols = append(cols, c)
	}
	if req.InsertIfNotExists {
		for c, col := range info.Columns {
			if !*col.Nullable && !slices.Contains(info.PrimaryKeyIndexes(), c) && col.Name != info.AutoIncrementColumn() {
				return nil, errs.New(errs.FailedPrecondition, "lookup of %s: insert_if_not_exists inserts keys with NULLs, but column %s is NOT NULL", path, errs.Quote(col.Name))
			}
		}
	}
	return cols, nil
}
