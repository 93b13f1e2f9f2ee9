package io.fluxgate.spark;

import io.fluxgate.client.WriteRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.types.StructType;

/**
 * Makes each task's writer, named after the write's query id and the partition (and the epoch,
 * streaming), so that every attempt of a task is the same idempotent writer. Holds the target
 * schema as Arrow JSON, since it is sent to the executors.
 *
 * @param columns the columns of a partial update, or null for whole rows
 * @param input the DataFrame's schema when its types are cast to the target's, else null
 * @param timeZone the session's time zone, which casts of timestamps use
 * @param batchRows rows per batch sent
 * @param createPartitions whether rows of a missing partition create it, or fail the write
 */
record RowBatchWriterFactory(
    FluxgateOptions connection,
    String table,
    List<String> columns,
    String targetJson,
    StructType input,
    String timeZone,
    String queryId,
    int batchRows,
    boolean createPartitions)
    implements DataWriterFactory, StreamingDataWriterFactory {

  /**
   * The same id for every attempt of a partition (the task id changes, the partition does not): a
   * retry skips the batches already applied.
   */
  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    return writer(queryId + "/" + partitionId);
  }

  /**
   * The same id for every attempt of an epoch's partition, also after the query restarts from its
   * checkpoint (the query id is kept there): the replay skips the batches already applied.
   */
  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
    return writer(queryId + "/" + epochId + "/" + partitionId);
  }

  private RowBatchWriter writer(String writerId) {
    WriteRequest request = WriteRequest.of(table);
    if (columns != null) {
      request = request.withColumns(columns.toArray(new String[0]));
    }
    if (!createPartitions) {
      request = request.withCreatePartitions(false);
    }
    request = request.withWriter(writerId, 0);
    try {
      return new RowBatchWriter(
          connection, request, Schema.fromJSON(targetJson), input, timeZone, batchRows);
    } catch (IOException e) {
      throw new UncheckedIOException("the write's target schema", e);
    }
  }
}
