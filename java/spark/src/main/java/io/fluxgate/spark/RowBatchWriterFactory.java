package io.fluxgate.spark;

import io.fluxgate.client.WriteRequest;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;

/** Makes each task's writer, named after the query and the partition for idempotence. */
record RowBatchWriterFactory(
    FluxgateOptions connection, WriteRequest request, Schema target, String queryId)
    implements DataWriterFactory {

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    // The same id for every attempt of a partition: a retry's batches already applied are skipped.
    return new RowBatchWriter(
        connection, request.withWriter(queryId + "/" + partitionId, 0), target);
  }
}
