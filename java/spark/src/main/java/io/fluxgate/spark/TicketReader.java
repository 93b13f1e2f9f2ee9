package io.fluxgate.spark;

import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.TicketStream;
import org.apache.arrow.vector.FieldVector;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one ticket (DoGet) as Spark columnar batches, skipping batches with no rows. A ticket of a
 * partition dropped since it was planned ends where the drop cut it, with a warning, as Fluss's
 * readers end a dropped partition's bucket: the partition is gone, not the query.
 */
final class TicketReader implements PartitionReader<ColumnarBatch> {
  private static final Logger LOG = LoggerFactory.getLogger(TicketReader.class);

  private final byte[] ticket;
  private final Clients.Lease lease;
  private final TicketStream stream;
  private final ColumnarBatches batches;
  private final int width;
  private ColumnarBatch current;
  private long bytesRead;

  TicketReader(TicketPartition partition) {
    this.ticket = partition.ticket();
    this.width = partition.width();
    this.lease = Clients.lease(partition.connection());
    try {
      this.stream = lease.client().read(partition.ticket());
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
    this.batches = new ColumnarBatches(lease.client().allocator());
  }

  @Override
  public boolean next() {
    try {
      return advance();
    } catch (FluxgateException.NotFound e) {
      if (!lease.client().partitionDropped(ticket)) {
        throw e;
      }
      LOG.warn("fluxgate: {}; its partition was dropped, so its rows are gone", e.getMessage());
      return false;
    }
  }

  private boolean advance() {
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
    lease.close();
  }
}
