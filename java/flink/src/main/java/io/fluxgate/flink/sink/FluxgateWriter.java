package io.fluxgate.flink.sink;

import io.fluxgate.client.Compression;
import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.PutResult;
import io.fluxgate.client.ResendingWriter;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.SystemColumns;
import io.fluxgate.client.WriteMode;
import io.fluxgate.client.WriteRequest;
import io.fluxgate.flink.ArrowRows;
import io.fluxgate.flink.Release;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

/**
 * Writes rows as Arrow batches over one DoPut stream: appends to a log table; to a primary-key
 * table a changelog write, whose _change_type column carries each row's kind. Batches go out when
 * full, at most {@link #LINGER_MS} after their first row, and at every checkpoint, which waits for
 * their acknowledgements (at-least-once). With undo recovery ({@link UndoRecovery}) the subtask's
 * buckets are undone before anything is written, and each checkpoint keeps their offsets.
 *
 * <p>The stream is idempotent under a writer id of this execution attempt (job, subtask, attempt):
 * a broken stream (a server restart) is reopened and its unacknowledged batches resent, which the
 * server applies once however often they arrive ({@link ResendingWriter}; 16 in flight, of the 32
 * it remembers per writer). The id is not reused by a restored attempt on purpose: the input
 * replayed after a restore is batched anew, so a restored sequence number would name different rows
 * and the server would drop them as already applied. Across restores, upserts are idempotent by
 * key, aggregation tables are exact through undo recovery, and log tables are at-least-once, as in
 * Fluss.
 */
public final class FluxgateWriter
    implements StatefulSinkWriter<RowData, SinkState>,
        CommittingSinkWriter<RowData, SinkCheckpoint> {
  /** How long a row waits for more to share its batch: jobs without checkpoints write too. */
  static final long LINGER_MS = 200;

  private static final int MAX_IN_FLIGHT = 16;

  /** How long a broken stream is reopened and its batches resent before the task fails. */
  private static final Duration RESEND_FOR = Duration.ofSeconds(30);

  private final SinkSpec spec;
  private final ProcessingTimeService time;
  private boolean timerSet;
  private final FluxgateClient client;
  private final BufferAllocator allocator;
  private final ResendingWriter writer;
  private final VectorSchemaRoot root;
  private final VarCharVector changeType; // null for log tables
  private final ArrowRows.Setter[] setters;
  private final RowData.FieldGetter[] getters;
  private final List<FieldVector> columns;
  private int rows;

  private final String producerId;
  private final int parallelism;

  /**
   * With undo recovery, each owned bucket's log end offset after our last write, per partition
   * ({@link SinkState}); else null.
   */
  private final Map<String, Map<Integer, Long>> offsets;

  FluxgateWriter(
      ConnectionSettings connection,
      SinkSpec spec,
      WriterInitContext context,
      Collection<SinkState> restored) {
    this.spec = spec;
    this.time = context.getProcessingTimeService();
    String jobId = context.getJobInfo().getJobId().toString();
    int subtask = context.getTaskInfo().getIndexOfThisSubtask();
    this.parallelism = context.getTaskInfo().getNumberOfParallelSubtasks();
    this.producerId = spec.producerId() != null ? spec.producerId() : jobId;
    this.allocator = new RootAllocator();
    this.client = connection.connect();
    VectorSchemaRoot batch = null;
    try {
      this.offsets = recover(restored, subtask);
      List<String> names = spec.targetNames();
      batch = VectorSchemaRoot.create(arrowSchema(names), allocator);
      this.changeType = spec.primaryKey() ? (VarCharVector) batch.getVector(0) : null;
      List<FieldVector> vectors = batch.getFieldVectors();
      this.columns = vectors.subList(spec.primaryKey() ? 1 : 0, vectors.size());
      this.setters = new ArrowRows.Setter[names.size()];
      this.getters = new RowData.FieldGetter[names.size()];
      for (int i = 0; i < names.size(); i++) {
        int pos = spec.targets()[i];
        setters[i] = ArrowRows.setter(columns.get(i), spec.rowType().getTypeAt(pos));
        getters[i] = RowData.createFieldGetter(spec.rowType().getTypeAt(pos), pos);
      }
      WriteRequest request =
          WriteRequest.of(spec.table())
              .withMode(spec.primaryKey() ? WriteMode.CHANGELOG : WriteMode.APPEND)
              .withWriter(
                  jobId + "-" + subtask + "-" + context.getTaskInfo().getAttemptNumber(), 0);
      if (!spec.createPartitions()) {
        request = request.withCreatePartitions(false);
      }
      if (spec.partial()) {
        request = request.withColumns(names.toArray(String[]::new));
      }
      this.writer =
          new ResendingWriter(client, request, Compression.ZSTD, MAX_IN_FLIGHT, RESEND_FOR);
    } catch (RuntimeException e) {
      // A writer that was never made is never closed: release what it holds now.
      Release.all(this, batch, client, allocator);
      throw e;
    }
    this.root = batch;
  }

  /** With undo recovery, undoes the subtask's buckets: their offsets after the undo; else null. */
  private Map<String, Map<Integer, Long>> recover(Collection<SinkState> restored, int subtask) {
    if (!spec.undo()) {
      return null;
    }
    return UndoRecovery.recover(
        client,
        spec.table(),
        spec.partitioned(),
        producerId,
        subtask,
        parallelism,
        spec.bucketer().numBuckets(),
        restored);
  }

  /**
   * The batches' schema: _change_type for a primary-key table, then the table's own Arrow types of
   * the target columns, which the server compares against.
   */
  private Schema arrowSchema(List<String> names) {
    Schema tableSchema =
        client
            .plan(ScanRequest.of(spec.table()).withColumns(names.toArray(String[]::new)))
            .schema();
    List<Field> fields = new ArrayList<>();
    if (spec.primaryKey()) {
      fields.add(
          new Field(
              SystemColumns.CHANGE_TYPE, FieldType.notNullable(ArrowType.Utf8.INSTANCE), null));
    }
    fields.addAll(tableSchema.getFields());
    return new Schema(fields);
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
    // At most MAX_IN_FLIGHT batches await their result: the older ones' results are here.
    while (writer.pending() > MAX_IN_FLIGHT) {
      acknowledged(writer.recv());
    }
  }

  private void acknowledged(PutResult result) {
    if (offsets == null) {
      return;
    }
    Map<String, Map<Integer, Long>> ends =
        spec.partitioned()
            ? result.partitionOffsets()
            : Map.of(SinkState.UNPARTITIONED, result.buckets());
    ends.forEach(
        (partition, buckets) -> {
          Map<Integer, Long> into = offsets.computeIfAbsent(partition, p -> new HashMap<>());
          buckets.forEach((bucket, end) -> into.merge(bucket, end, Math::max));
        });
  }

  @Override
  public void flush(boolean endOfInput) {
    send();
    writer.flush().forEach(this::acknowledged);
  }

  @Override
  public List<SinkState> snapshotState(long checkpointId) {
    return offsets == null
        ? List.of()
        : List.of(new SinkState(parallelism, SinkState.copy(offsets)));
  }

  @Override
  public Collection<SinkCheckpoint> prepareCommit() {
    return offsets == null ? List.of() : List.of(new SinkCheckpoint(producerId, parallelism));
  }

  /**
   * Releases the stream, the buffers and the connection, throwing nothing ({@link Release}). The
   * stream is abandoned, not flushed: rows not flushed yet (flush(true) ends the input) are in no
   * checkpoint, so a restore replays them.
   */
  @Override
  public void close() {
    Release.all(this, writer::abandon, root, client, allocator);
  }

  @Override
  public String toString() {
    return "the fluxgate writer of " + spec.table();
  }
}
