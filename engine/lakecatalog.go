package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
)

// LakeTableNames lists the names of a database's lake-enabled tables, the
// tables of the served Iceberg catalog; it is NOT_FOUND for a database that
// does not exist.
func (e *Engine) LakeTableNames(database string) ([]string, error) {
	infos, err := e.cat.ListTables(database)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, info := range infos {
		if info.DatalakeEnabled() {
			names = append(names, info.Path().Table)
		}
	}
	return names, nil
}

// LakeTable returns the Iceberg table of a lake-enabled table, opening it if
// this server has not yet, for readers outside fluxgate (the served Iceberg
// catalog). A table that is not lake enabled is NOT_FOUND: its Iceberg table,
// if one is left, is no longer kept up to date.
func (e *Engine) LakeTable(ctx context.Context, name string) (*lake.Table, error) {
	o, info, path, err := e.lakes.Resolve(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.NotFound, "%s is a view, not a lake table", path.FullName())
	}
	if !info.DatalakeEnabled() {
		return nil, errs.New(errs.NotFound, "%s is not datalake enabled (%s is not true)", path, catalog.OptDatalakeEnabled)
	}
	return e.lakes.Open(ctx, o.Tier, info)
}
