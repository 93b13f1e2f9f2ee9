package io.fluxgate.spark;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.TicketStream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Reads one ticket (DoGet) as Spark columnar batches, skipping batches with no rows. */
final class TicketReader implements PartitionReader<ColumnarBatch> {
  private final BufferAllocator allocator;
  private final FluxgateClient client;
  private final TicketStream stream;
  private final ColumnarBatches batches;
  private final int width;
  private ColumnarBatch current;
  private long bytesRead;

  TicketReader(TicketPartition partition) {
    this.width = partition.width();
    this.allocator = new RootAllocator();
    try {
      this.client = partition.connection().connect(allocator);
      this.stream = client.read(partition.ticket());
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
    this.batches = new ColumnarBatches(allocator);
  }

  @Override
  public boolean next() {
    while (stream.next()) {
      for (FieldVector v : stream.root().getFieldVectors()) {
        bytesRead += v.getBufferSize();
      }
      if (stream.root().getRowCount() > 0) {
        current = batches.wrap(stream.root(), width);
        return true;
      }
    }
    return false;
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public CustomTaskMetric[] currentMetricsValues() {
    return new CustomTaskMetric[] {new BytesRead.Value(bytesRead)};
  }

  @Override
  public void close() {
    batches.close();
    stream.close();
    client.close();
    allocator.close();
  }
}
