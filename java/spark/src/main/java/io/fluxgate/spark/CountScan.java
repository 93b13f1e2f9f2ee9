package io.fluxgate.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A pushed-down {@code COUNT(*)}: the table's rows as the server counted them when the query was
 * planned ({@link io.fluxgate.client.FluxgateClient#rowCount}), one partition of one row, nothing
 * read.
 */
final class CountScan implements Scan, Batch {
  private final String table;
  private final long rows;

  CountScan(String table, long rows) {
    this.table = table;
    this.rows = rows;
  }

  @Override
  public StructType readSchema() {
    return new StructType().add("count(*)", DataTypes.LongType, false);
  }

  @Override
  public String description() {
    return "fluxgate " + table + " [PushedAggregates: [COUNT(*)], counted by table-stats]";
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    return new InputPartition[] {new Count(rows)};
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new Reader.Factory();
  }

  /** The partition: the count itself. */
  private record Count(long rows) implements InputPartition {}

  /** Reads the one row of a {@link Count}. */
  private static final class Reader implements PartitionReader<InternalRow> {
    private final long rows;
    private boolean read;

    private Reader(long rows) {
      this.rows = rows;
    }

    @Override
    public boolean next() {
      boolean first = !read;
      read = true;
      return first;
    }

    @Override
    public InternalRow get() {
      return new GenericInternalRow(new Object[] {rows});
    }

    @Override
    public void close() {}

    private static final class Factory implements PartitionReaderFactory {
      @Override
      public PartitionReader<InternalRow> createReader(InputPartition partition) {
        return new Reader(((Count) partition).rows());
      }
    }
  }
}
