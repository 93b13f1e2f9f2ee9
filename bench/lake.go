package bench

// The lake workloads of fluxgate bench: a tiering round against iceberg-go
// appending the same batches itself, and a union read of a table half in
// the lake and half in the log against a log scan of the same rows.

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/fluxgate-io/fluxgate/client"
)

func benchLakeSpec(name string) client.TableSpec {
	spec := benchEventSpec(name, "none")
	spec.Options["table.datalake.enabled"] = "true"
	spec.Options["table.datalake.freshness"] = "1h" // rounds come from tier-now only
	return spec
}

// benchTier writes the events to a new lake-enabled table, untimed, and
// times one tier-now of them.
func benchTier(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	ev := e.eventData()
	name := fmt.Sprintf("fluss.bench_tier_%d", rep)
	if _, err := e.fg.CreateTable(ctx, benchLakeSpec(name), false); err != nil {
		return benchSample{}, err
	}
	defer e.fg.DropTable(context.WithoutCancel(ctx), name, true)
	if err := benchWrite(ctx, e.fg, name, ev.recs); err != nil {
		return benchSample{}, err
	}
	start := time.Now()
	if _, err := e.fg.TierNow(ctx, name); err != nil {
		return benchSample{}, err
	}
	return benchSample{rows: ev.rows, bytes: ev.bytes, d: time.Since(start)}, nil
}

// benchIcebergAppend appends the events to a new Iceberg table with
// iceberg-go alone: Parquet files through WriteRecords, then one commit.
func benchIcebergAppend(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	ev := e.eventData()
	cat, tbl, err := e.icebergTable(ctx, "iceberg-baseline", fmt.Sprintf("events_%d", rep), rep, ev.recs[0].Schema())
	if err != nil {
		return benchSample{}, err
	}
	defer cat.Close()
	start := time.Now()
	if _, err := benchIcebergCommit(ctx, tbl, ev.recs[0].Schema(), ev.recs); err != nil {
		return benchSample{}, err
	}
	return benchSample{rows: ev.rows, bytes: ev.bytes, d: time.Since(start)}, nil
}

// icebergTable creates the baseline table baseline.name of schema in a
// hadoop catalog at dir under the run's temporary directory, the namespace
// with it on the first run (rep 0). The caller closes the catalog.
func (e *benchEnv) icebergTable(ctx context.Context, dir, name string, rep int, schema *arrow.Schema) (*hadoop.Catalog, *table.Table, error) {
	cat, err := hadoop.NewCatalog("baseline", filepath.Join(e.tmp, dir), nil)
	if err != nil {
		return nil, nil, err
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(schema, false)
	if err == nil && rep == 0 {
		err = cat.CreateNamespace(ctx, table.Identifier{"baseline"}, nil)
	}
	var tbl *table.Table
	if err == nil {
		tbl, err = cat.CreateTable(ctx, table.Identifier{"baseline", name}, sc)
	}
	if err != nil {
		cat.Close()
		return nil, nil, err
	}
	return cat, tbl, nil
}

// benchIcebergCommit appends recs of schema to tbl as iceberg-go alone does:
// Parquet files through WriteRecords, then one commit. recs stay the
// caller's.
func benchIcebergCommit(ctx context.Context, tbl *table.Table, schema *arrow.Schema, recs []arrow.RecordBatch) (*table.Table, error) {
	var seq iter.Seq2[arrow.RecordBatch, error] = func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			r.Retain() // WriteRecords releases what it writes
			if !yield(r, nil) {
				return
			}
		}
	}
	var files []iceberg.DataFile
	for df, err := range table.WriteRecords(ctx, tbl, schema, seq) {
		if err != nil {
			return nil, err
		}
		files = append(files, df)
	}
	tx := tbl.NewTransaction()
	if err := tx.AddDataFiles(ctx, files, nil); err != nil {
		return nil, err
	}
	return tx.Commit(ctx)
}

const benchUnionTable = "fluss.bench_union"

// benchUnionPrepare loads the event table (the baseline reads it) and a
// lake-enabled copy whose first half is tiered and second half only in the
// log.
func benchUnionPrepare(ctx context.Context, e *benchEnv) error {
	if err := benchLoadEvents("none")(ctx, e); err != nil {
		return err
	}
	if _, err := e.fg.CreateTable(ctx, benchLakeSpec(benchUnionTable), true); err != nil {
		return err
	}
	recs := e.eventData().recs
	half := len(recs) / 2
	if err := benchWrite(ctx, e.fg, benchUnionTable, recs[:half]); err != nil {
		return err
	}
	if _, err := e.fg.TierNow(ctx, benchUnionTable); err != nil {
		return err
	}
	return benchWrite(ctx, e.fg, benchUnionTable, recs[half:])
}

func benchUnionScan(ctx context.Context, e *benchEnv, _ int) (benchSample, error) {
	return benchScan(ctx, e.fg, client.ScanRequest{Table: benchUnionTable}, e.eventData().rows)
}
