package engine

import (
	"context"

	"github.com/fluxgate-io/fluxgate/catalog"
	"github.com/fluxgate-io/fluxgate/errs"
	"github.com/fluxgate-io/fluxgate/lake"
)

// LakeTable returns the Iceberg table of a lake-enabled table, opening it if
// this server has not yet, for readers outside fluxgate (the served Iceberg
// catalog). A table that is not lake enabled is NOT_FOUND: its Iceberg table,
// if one is left, is no longer kept up to date.
func (e *Engine) LakeTable(ctx context.Context, name string) (*lake.Table, error) {
	t, path, err := e.resolve(name)
	if err != nil {
		return nil, err
	}
	if path.View != "" {
		return nil, errs.New(errs.NotFound, "%s is a view, not a lake table", path.FullName())
	}
	info := t.current().info
	if !info.DatalakeEnabled() {
		return nil, errs.New(errs.NotFound, "%s is not datalake enabled (%s is not true)", path, catalog.OptDatalakeEnabled)
	}
	return e.lakeTable(ctx, t, info)
}
