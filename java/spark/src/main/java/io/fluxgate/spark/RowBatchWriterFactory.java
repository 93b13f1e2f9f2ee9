package io.fluxgate.spark;

import io.fluxgate.client.WriteRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;

/**
 * Makes each task's writer, named after the query and the partition for idempotence. Holds the
 * target schema as Arrow JSON, since it is sent to the executors.
 *
 * @param columns the columns of a partial update, or null for whole rows
 */
record RowBatchWriterFactory(
    FluxgateOptions connection,
    String table,
    List<String> columns,
    String targetJson,
    String queryId)
    implements DataWriterFactory {

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    WriteRequest request = WriteRequest.of(table);
    if (columns != null) {
      request = request.withColumns(columns.toArray(new String[0]));
    }
    // The same id for every attempt of a partition: a retry's batches already applied are skipped.
    request = request.withWriter(queryId + "/" + partitionId, 0);
    try {
      return new RowBatchWriter(connection, request, Schema.fromJSON(targetJson));
    } catch (IOException e) {
      throw new UncheckedIOException("the write's target schema", e);
    }
  }
}
