package io.fluxgate.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Creates a columnar reader per ticket; fluxgate's batches are Arrow, so rows are never built. */
final class TicketReaderFactory implements PartitionReaderFactory {
  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("fluxgate partitions are read as columnar batches");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    return new TicketReader((TicketPartition) partition);
  }
}
