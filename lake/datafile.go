package lake

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// recorded returns the entry of a data file iceberg-go wrote as the lake
// records it, rebuilt with everything else it had:
//
//   - sort_order_id is the table's sort order: a round's rows reach the
//     writer in __offset order, bucket by bucket, and so do a compaction
//     group's, and iceberg-go's clustered writer keeps that order within
//     each file; its rolling writer does not claim it (it sorts only batch
//     by batch).
//   - the path is the file's real URI (realURI).
func recorded(tbl *table.Table, df iceberg.DataFile) (iceberg.DataFile, error) {
	spec := tbl.Metadata().PartitionSpecByID(int(df.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("data file %s has partition spec %d, which the lake table lacks", df.FilePath(), df.SpecID())
	}
	b, err := iceberg.NewDataFileBuilder(*spec, df.ContentType(), realURI(df.FilePath()), df.FileFormat(),
		df.Partition(), logicalTypes(*spec, tbl.Schema()), nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", df.FilePath(), err)
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		NaNValueCounts(df.NaNValueCounts()).
		LowerBoundValues(df.LowerBoundValues()).UpperBoundValues(df.UpperBoundValues()).
		SplitOffsets(df.SplitOffsets()).KeyMetadata(df.KeyMetadata()).SortOrderID(tbl.SortOrder().OrderID())
	return b.Build(), nil
}

// realURI is the URI of the file iceberg-go's local file system wrote at
// path p. iceberg-go names a partition's directory with its values
// query-escaped ("ts=2026-12-01T10%3A00%3A00", "p=1e%2B300") and its local
// file system decodes the file:// URI before writing, so the file is at
// the unescaped path. Readers disagree on such a URI: pyiceberg, Hadoop's
// Path (Spark) and DuckDB take its path as it is, iceberg-go decodes it.
// The unescaped URI has no escapes left (partition values, column and
// table names are of characters a URI path may hold), so every reader
// finds the file. Object stores keep keys as written: p itself.
func realURI(p string) string {
	if !strings.HasPrefix(p, "file:") || !strings.Contains(p, "%") {
		return p
	}
	u, err := url.Parse(p)
	if err != nil {
		return p
	}
	return "file://" + u.Host + u.Path
}
