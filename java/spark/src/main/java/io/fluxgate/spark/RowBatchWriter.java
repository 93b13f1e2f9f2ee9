package io.fluxgate.spark;

import io.fluxgate.client.Compression;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;

/**
 * Writes one task's rows: Spark's ArrowWriter fills a batch in Spark's form ({@link SparkForm}),
 * which is sent, in the table's types, through one pipelined DoPut stream. Batches are cut by row
 * count (and buffer size) alone, so the same input is cut into the same batches: a retried task
 * skips the batches its earlier attempt had applied.
 */
final class RowBatchWriter implements DataWriter<InternalRow> {
  /**
   * Rows per batch by default, and the buffer size at which a batch is sent sooner (under the 64
   * MiB limit).
   */
  static final int BATCH_ROWS = 65_536;

  static final long BATCH_BYTES = 16L << 20;

  private final BufferAllocator allocator;
  private final Clients.Lease lease;
  private final TableWriter writer;
  private final VectorSchemaRoot sparkRoot;
  private final VectorSchemaRoot tableRoot; // sparkRoot in the table's types, or sparkRoot itself
  private final ArrowWriter rows;
  private final UnsafeProjection cast; // to the table's types; null when the rows have them
  private final int batchRows;
  private long skip; // batches still to cut and drop: an earlier attempt applied them
  private int pending; // rows in sparkRoot
  private long written;

  /**
   * The writer (request's writer id) asks the server how many batches it applied before, in an
   * earlier attempt of the task, and skips that many. Rows of the schema input (null: of the
   * target's types) are cast to the target's types, in the session's timeZone.
   */
  RowBatchWriter(
      FluxgateOptions connection,
      WriteRequest request,
      Schema target,
      StructType input,
      String timeZone,
      int batchRows) {
    this.allocator = new RootAllocator();
    this.lease = Clients.lease(connection);
    this.batchRows = batchRows;
    try {
      this.skip = lease.client().writerState(request.table(), request.writerId());
      this.writer =
          lease
              .client()
              .newWriter(request.withWriter(request.writerId(), skip), Compression.NONE, 4);
    } catch (RuntimeException e) {
      lease.close();
      allocator.close();
      throw e;
    }
    List<Field> sparkFields = new ArrayList<>();
    for (Field f : target.getFields()) {
      sparkFields.add(SparkForm.of(f));
    }
    this.sparkRoot = VectorSchemaRoot.create(new Schema(sparkFields), allocator);
    this.tableRoot =
        target.getFields().stream().allMatch(SparkForm::is)
            ? sparkRoot
            : VectorSchemaRoot.create(target, allocator);
    this.rows = ArrowWriter.create(sparkRoot);
    this.cast =
        input == null
            ? null
            : StoreAssignment.projection(input, ArrowTypes.sparkSchema(target), timeZone);
  }

  @Override
  public void write(InternalRow row) {
    rows.write(cast == null ? row : cast.apply(row));
    pending++;
    if (pending >= batchRows || (pending % 1024 == 0 && bytes() >= BATCH_BYTES)) {
      send();
    }
  }

  private long bytes() {
    long b = 0;
    for (FieldVector v : sparkRoot.getFieldVectors()) {
      b += v.getBufferSize();
    }
    return b;
  }

  /** Sends the rows gathered so far as one batch in the table's types, unless it is skipped. */
  private void send() {
    rows.finish();
    try {
      if (skip > 0) {
        skip--;
        return;
      }
      if (tableRoot != sparkRoot) {
        SparkForm.load(sparkRoot.getFieldVectors(), pending, tableRoot, allocator);
      }
      writer.send(tableRoot);
      written += pending;
    } finally {
      rows.reset();
      pending = 0;
    }
  }

  @Override
  public WriterCommitMessage commit() {
    if (pending > 0) {
      send();
    }
    writer.flush();
    writer.close();
    return new Written(written);
  }

  /** Batches already sent are applied or not each as a whole; nothing else is to undo. */
  @Override
  public void abort() {}

  @Override
  public void close() {
    try {
      writer.close(); // after commit, a no-op; else it ends the stream (and throws its error)
    } finally {
      if (tableRoot != sparkRoot) {
        tableRoot.close();
      }
      sparkRoot.close();
      lease.close();
      allocator.close();
    }
  }

  /** What a task wrote. */
  record Written(long rows) implements WriterCommitMessage {}
}
