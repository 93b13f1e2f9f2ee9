package io.fluxgate.spark;

import io.fluxgate.client.Column;
import io.fluxgate.client.TableInfo;
import io.fluxgate.client.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * An append to a log table (a nullable column the DataFrame lacks is NULL), or an upsert into a
 * primary-key table: of whole rows when the DataFrame has every column, else a partial update of
 * its columns (which include the key). Columns of other types than the table's are cast as Spark
 * casts a table insertion ({@link StoreAssignment}). Each batch is durable once acknowledged; the
 * write as a whole is not atomic across tasks.
 *
 * <p>A task's rows are written exactly once across its attempts: its writer is named after the
 * write's query id and the partition (the same for every attempt of the task), its rows are cut
 * into batches by count ({@code sink.batch-rows}), and a retry asks the server how many batches the
 * writer applied ({@code writer-state}) and sends only the rest. A streaming query writes each
 * micro-batch (epoch) the same way, its writer named after the query, the epoch and the partition;
 * a replayed epoch, also after a restart from the checkpoint, has the same input. This holds when
 * an attempt sees the task's rows in the same order, as Spark gives them from a deterministic plan.
 * The server forgets a writer idle past its {@code --writer-expiration} (7 days): a task retried
 * later than that is written again.
 */
final class FluxgateWrite
    implements WriteBuilder, SupportsTruncate, Write, BatchWrite, StreamingWrite {
  /** Write option: rows per batch sent (default {@link RowBatchWriter#BATCH_ROWS}). */
  static final String BATCH_ROWS = "sink.batch-rows";

  /**
   * Write option: "false" fails a write with rows of a partition that does not exist instead of
   * creating it (Fluss's client option of the same name).
   */
  static final String CREATE_PARTITIONS = "client.writer.dynamic-create-partition.enabled";

  private final FluxgateTable table;
  private final LogicalWriteInfo info;

  FluxgateWrite(FluxgateTable table, LogicalWriteInfo info) {
    this.table = table;
    this.info = info;
  }

  @Override
  public Write build() {
    return this;
  }

  /**
   * mode("overwrite"), INSERT OVERWRITE and a stream's complete output mode would first remove
   * every row: fluxgate, as Fluss, does not truncate tables (a log only appends; its rows go by
   * retention).
   */
  @Override
  public WriteBuilder truncate() {
    throw new UnsupportedOperationException(
        "fluxgate does not truncate "
            + table.name()
            + ", so it cannot overwrite it: write with mode(\"append\") (a primary-key table"
            + " upserts by key), or drop and create the table first");
  }

  @Override
  public BatchWrite toBatch() {
    return this;
  }

  @Override
  public String description() {
    return "fluxgate write " + table.name();
  }

  @Override
  public StreamingWrite toStreaming() {
    return this;
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo physical) {
    return factory();
  }

  @Override
  public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo physical) {
    return factory();
  }

  private RowBatchWriterFactory factory() {
    TableInfo described = table.connection().call(c -> c.describeTable(table.name()));
    Schema target = target(info.schema(), table.arrowSchema());
    WriteRequest request = WriteRequest.of(table.name());
    if (target.getFields().size() < table.arrowSchema().getFields().size()) {
      if (described.hasPrimaryKey()) {
        request =
            request.withColumns(
                target.getFields().stream().map(Field::getName).toArray(String[]::new));
      } else {
        requireLogColumns(described, target);
      }
    }
    int batchRows = info.options().getInt(BATCH_ROWS, RowBatchWriter.BATCH_ROWS);
    if (batchRows <= 0) {
      throw new IllegalArgumentException(BATCH_ROWS + " must be positive, not " + batchRows);
    }
    StructType targetSpark = ArrowTypes.sparkSchema(target);
    return new RowBatchWriterFactory(
        table.connection(),
        table.name(),
        request.columns(),
        target.toJson(),
        StoreAssignment.needsCast(info.schema(), targetSpark) ? info.schema() : null,
        SQLConf.get().sessionLocalTimeZone(),
        info.queryId(),
        batchRows,
        info.options().getBoolean(CREATE_PARTITIONS, true));
  }

  /**
   * A log table's batch may leave out nullable columns, which are NULL in its rows (PROTOCOL.md
   * §5), so that a producer goes on unchanged after a column is added; it must carry every NOT NULL
   * column and partition key.
   */
  private void requireLogColumns(TableInfo described, Schema target) {
    List<String> required = new ArrayList<>();
    for (Column c : described.columns()) {
      boolean key = described.isPartitioned() && described.partitionKeys().contains(c.name());
      if ((!c.nullable() || key) && field(target, c.name()) == null) {
        required.add(c.name());
      }
    }
    if (!required.isEmpty()) {
      throw new IllegalArgumentException(
          "write "
              + table.name()
              + ": the DataFrame lacks "
              + required
              + "; a log table's rows may leave out nullable columns (stored as NULL), not NOT NULL"
              + " columns or partition keys");
    }
  }

  @Override
  public boolean useCommitCoordinator() {
    return false; // every batch is applied when acknowledged; there is nothing to coordinate
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {}

  @Override
  public void abort(WriterCommitMessage[] messages) {}

  /** Each epoch's batches are applied when acknowledged; a replay skips them (see above). */
  @Override
  public void commit(long epochId, WriterCommitMessage[] messages) {}

  @Override
  public void abort(long epochId, WriterCommitMessage[] messages) {}

  /**
   * The table's fields for the DataFrame's columns, in the DataFrame's order: by name, or by
   * position when no name is a column and the DataFrame has as many columns as the table (SQL's
   * INSERT ... VALUES names them col1, col2, ...). Each Spark type must be the table's or one
   * Spark's ANSI store assignment casts to it ({@link StoreAssignment}).
   */
  static Schema target(StructType data, Schema table) {
    List<Field> fields = new ArrayList<>();
    int named = 0;
    for (StructField f : data.fields()) {
      named += field(table, f.name()) != null ? 1 : 0;
    }
    boolean byName = named == data.fields().length;
    boolean byPosition = named == 0 && data.fields().length == table.getFields().size();
    if (!byName && !byPosition) {
      List<String> unknown = new ArrayList<>();
      for (StructField f : data.fields()) {
        if (field(table, f.name()) == null) {
          unknown.add(f.name());
        }
      }
      throw new IllegalArgumentException(
          "columns " + unknown + " are not in the table; it has " + names(table));
    }
    for (int i = 0; i < data.fields().length; i++) {
      StructField f = data.fields()[i];
      Field t = byName ? field(table, f.name()) : table.getFields().get(i);
      DataType want = ArrowTypes.sparkType(t);
      if (!StoreAssignment.allowed(f.dataType(), want)) { // the server checks nullability
        throw new IllegalArgumentException(
            "column "
                + t.getName()
                + " is "
                + want.sql()
                + " in the table but "
                + f.dataType().sql()
                + " in the DataFrame, which Spark's store assignment (ANSI) does not cast; cast it");
      }
      fields.add(t);
    }
    return new Schema(fields);
  }

  private static Field field(Schema schema, String name) {
    for (Field f : schema.getFields()) {
      if (f.getName().equals(name)) {
        return f;
      }
    }
    return null;
  }

  private static List<String> names(Schema schema) {
    return schema.getFields().stream().map(Field::getName).toList();
  }
}
