package bench

// The lake compaction workload of fluxgate bench: compact-lake of a log
// table tiered in many small rounds against iceberg-go's own bin-pack
// planner and RewriteDataFiles over a table appended in as many commits.

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/util"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/fluxgate-io/fluxgate/client"
	"github.com/fluxgate-io/fluxgate/lake"
)

// benchCompactRounds is how many small rounds (commits) the compacted
// table had.
const benchCompactRounds = 50

// benchCompactRound returns the records of one round of the workload.
func benchCompactRound(e *benchEnv, r int) []arrow.RecordBatch {
	n := min(e.cfg.rows, benchPKTierRows) / benchCompactRounds
	return benchPKRecords(n, e.cfg.batchRows, func(i int) int64 { return int64(r*n + i) })
}

func benchRowsAndBytes(recs []arrow.RecordBatch) (rows, bytes int64) {
	for _, r := range recs {
		rows += r.NumRows()
		bytes += util.TotalRecordSize(r)
	}
	return rows, bytes
}

// benchCompactLake tiers a one-bucket log table in small rounds (untimed)
// and times one compact-lake.
func benchCompactLake(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	name := fmt.Sprintf("fluss.bench_compact_%d", rep)
	_, err := e.fg.CreateTable(ctx, client.TableSpec{
		Table:   name,
		Columns: benchPKTierColumns,
		Options: map[string]string{"bucket.num": "1", "table.datalake.enabled": "true", "table.datalake.freshness": "1h"},
	}, false)
	if err != nil {
		return benchSample{}, err
	}
	defer e.fg.DropTable(context.WithoutCancel(ctx), name, true)
	var rows, bytes int64
	for r := range benchCompactRounds {
		recs := benchCompactRound(e, r)
		n, b := benchRowsAndBytes(recs)
		rows, bytes = rows+n, bytes+b
		err := benchWrite(ctx, e.fg, name, recs)
		release(recs)
		if err == nil {
			_, err = e.fg.TierNow(ctx, name)
		}
		if err != nil {
			return benchSample{}, err
		}
	}
	start := time.Now()
	res, err := e.fg.CompactLake(ctx, name)
	if err != nil {
		return benchSample{}, err
	}
	if res.RewrittenFiles != benchCompactRounds {
		return benchSample{}, fmt.Errorf("compact-lake rewrote %d files, want %d", res.RewrittenFiles, benchCompactRounds)
	}
	return benchSample{rows: rows, bytes: bytes, d: time.Since(start)}, nil
}

// benchIcebergCompact appends the same rounds to an Iceberg table with
// iceberg-go alone, a commit each (untimed), and times iceberg-go's
// bin-pack planning and RewriteDataFiles of them toward the same target.
func benchIcebergCompact(ctx context.Context, e *benchEnv, rep int) (benchSample, error) {
	cat, tbl, err := e.icebergTable(ctx, "iceberg-compact", fmt.Sprintf("compact_%d", rep), rep, benchPKTierSchema)
	if err != nil {
		return benchSample{}, err
	}
	defer cat.Close()
	var rows, bytes int64
	for r := range benchCompactRounds {
		recs := benchCompactRound(e, r)
		n, b := benchRowsAndBytes(recs)
		rows, bytes = rows+n, bytes+b
		tbl, err = benchIcebergCommit(ctx, tbl, benchPKTierSchema, recs)
		release(recs)
		if err != nil {
			return benchSample{}, err
		}
	}
	start := time.Now()
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes, cfg.MinFileSizeBytes, cfg.MaxFileSizeBytes = lake.DefaultCompactionTarget, lake.DefaultCompactionTarget*3/4, lake.DefaultCompactionTarget*9/5
	plan, err := compaction.Analyze(ctx, tbl, cfg)
	if err != nil {
		return benchSample{}, err
	}
	var groups []table.CompactionTaskGroup
	for _, g := range plan.Groups {
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
	}
	res, err := tbl.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{})
	if err != nil {
		return benchSample{}, err
	}
	if res.RemovedDataFiles != benchCompactRounds {
		return benchSample{}, fmt.Errorf("iceberg-go rewrote %d files, want %d", res.RemovedDataFiles, benchCompactRounds)
	}
	return benchSample{rows: rows, bytes: bytes, d: time.Since(start)}, nil
}
