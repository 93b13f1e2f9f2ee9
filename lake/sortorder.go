package lake

import (
	"fmt"

	"github.com/apache/iceberg-go"
)

// withSortOrder returns df with sort_order_id set to orderID. A round's rows
// reach the writer in __offset order, bucket by bucket, and iceberg-go's
// clustered writer keeps that order within each file, so every data file is
// sorted by the table's sort order; iceberg-go's rolling writer does not
// claim it (it sorts only batch by batch), so the entry is rebuilt with the
// claim and everything else it had.
func withSortOrder(spec iceberg.PartitionSpec, sc *iceberg.Schema, df iceberg.DataFile, orderID int) (iceberg.DataFile, error) {
	b, err := iceberg.NewDataFileBuilder(spec, df.ContentType(), df.FilePath(), df.FileFormat(),
		df.Partition(), logicalTypes(spec, sc), nil, df.Count(), df.FileSizeBytes())
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", df.FilePath(), err)
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		NaNValueCounts(df.NaNValueCounts()).DistinctValueCounts(df.DistinctValueCounts()).
		LowerBoundValues(df.LowerBoundValues()).UpperBoundValues(df.UpperBoundValues()).
		SplitOffsets(df.SplitOffsets()).KeyMetadata(df.KeyMetadata()).SortOrderID(orderID)
	return b.Build(), nil
}
