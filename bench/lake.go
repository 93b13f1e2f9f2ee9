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
	cat, err := hadoop.NewCatalog("baseline", filepath.Join(e.tmp, "iceberg-baseline"), nil)
	if err != nil {
		return benchSample{}, err
	}
	defer cat.Close()
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(ev.recs[0].Schema(), false)
	if err != nil {
		return benchSample{}, err
	}
	ns := table.Identifier{"baseline"}
	if rep == 0 {
		if err := cat.CreateNamespace(ctx, ns, nil); err != nil {
			return benchSample{}, err
		}
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"baseline", fmt.Sprintf("events_%d", rep)}, sc)
	if err != nil {
		return benchSample{}, err
	}
	start := time.Now()
	var recs iter.Seq2[arrow.RecordBatch, error] = func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range ev.recs {
			r.Retain() // WriteRecords releases what it writes
			if !yield(r, nil) {
				return
			}
		}
	}
	tx := tbl.NewTransaction()
	var files []iceberg.DataFile
	for df, err := range table.WriteRecords(ctx, tbl, ev.recs[0].Schema(), recs) {
		if err != nil {
			return benchSample{}, err
		}
		files = append(files, df)
	}
	if err := tx.AddDataFiles(ctx, files, nil); err != nil {
		return benchSample{}, err
	}
	if _, err := tx.Commit(ctx); err != nil {
		return benchSample{}, err
	}
	return benchSample{rows: ev.rows, bytes: ev.bytes, d: time.Since(start)}, nil
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
