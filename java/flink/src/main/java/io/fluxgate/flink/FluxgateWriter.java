package io.fluxgate.flink;

import io.fluxgate.client.Compression;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteMode;
import io.fluxgate.client.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

/**
 * Writes rows as Arrow batches over one DoPut stream: appends to a log table; to a primary-key
 * table a changelog write, whose _change_type column carries each row's kind. Batches go out when
 * full, at most {@link #LINGER_MS} after their first row, and at every checkpoint, which waits for
 * their acknowledgements (at-least-once).
 */
final class FluxgateWriter implements SinkWriter<RowData> {
  /** How long a row waits for more to share its batch: jobs without checkpoints write too. */
  static final long LINGER_MS = 200;

  private final SinkSpec spec;
  private final ProcessingTimeService time;
  private boolean timerSet;
  private final FluxgateClient client;
  private final BufferAllocator allocator;
  private final TableWriter writer;
  private final VectorSchemaRoot root;
  private final VarCharVector changeType; // null for log tables
  private final ArrowRows.Setter[] setters;
  private final RowData.FieldGetter[] getters;
  private final List<FieldVector> columns;
  private int rows;

  FluxgateWriter(Connection connection, SinkSpec spec, ProcessingTimeService time) {
    this.spec = spec;
    this.time = time;
    this.allocator = new RootAllocator();
    this.client = connection.connect();
    List<String> names = spec.targetNames();
    // The table's own Arrow types for the target columns: what the server compares against.
    Schema tableSchema =
        client
            .plan(ScanRequest.of(spec.table()).withColumns(names.toArray(String[]::new)))
            .schema();
    List<Field> fields = new ArrayList<>();
    if (spec.primaryKey()) {
      fields.add(new Field("_change_type", FieldType.notNullable(ArrowType.Utf8.INSTANCE), null));
    }
    fields.addAll(tableSchema.getFields());
    this.root = VectorSchemaRoot.create(new Schema(fields), allocator);
    this.changeType = spec.primaryKey() ? (VarCharVector) root.getVector(0) : null;
    this.columns = root.getFieldVectors().subList(spec.primaryKey() ? 1 : 0, fields.size());
    this.setters = new ArrowRows.Setter[names.size()];
    this.getters = new RowData.FieldGetter[names.size()];
    for (int i = 0; i < names.size(); i++) {
      int pos = spec.targets()[i];
      setters[i] = ArrowRows.setter(columns.get(i), spec.rowType().getTypeAt(pos));
      getters[i] = RowData.createFieldGetter(spec.rowType().getTypeAt(pos), pos);
    }
    WriteRequest request =
        WriteRequest.of(spec.table())
            .withMode(spec.primaryKey() ? WriteMode.CHANGELOG : WriteMode.APPEND);
    if (spec.partial()) {
      request = request.withColumns(names.toArray(String[]::new));
    }
    this.writer = client.newWriter(request, Compression.ZSTD, 16);
  }

  @Override
  public void write(RowData row, Context context) {
    RowKind kind = row.getRowKind();
    if (kind == RowKind.UPDATE_BEFORE || (kind == RowKind.DELETE && spec.ignoreDelete())) {
      return; // the update's after image says it all; deletes may be switched off
    }
    if (!spec.primaryKey() && kind != RowKind.INSERT) {
      throw new IllegalStateException(
          "log table " + spec.table() + " only appends, got a " + kind + " row");
    }
    if (changeType != null) {
      changeType.setSafe(
          rows,
          (kind == RowKind.DELETE ? "delete" : "insert")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    for (int i = 0; i < setters.length; i++) {
      ArrowRows.write(columns.get(i), setters[i], rows, getters[i].getFieldOrNull(row));
    }
    rows++;
    if (rows >= spec.batchRows()) {
      send();
    } else if (!timerSet) {
      timerSet = true;
      time.registerTimer(
          time.getCurrentProcessingTime() + LINGER_MS,
          now -> {
            timerSet = false;
            send();
          });
    }
  }

  private void send() {
    if (rows == 0) {
      return;
    }
    root.setRowCount(rows);
    writer.send(root);
    root.clear();
    root.allocateNew();
    rows = 0;
  }

  @Override
  public void flush(boolean endOfInput) {
    send();
    writer.flush();
  }

  @Override
  public void close() throws Exception {
    try {
      writer.close();
      root.close();
      client.close();
    } finally {
      allocator.close();
    }
  }
}
