package io.fluxgate.client;

import java.util.List;

/**
 * The {"write": ...} command of DoPut (PROTOCOL.md §5). Null fields take the server's defaults: a
 * request with only the table is the table's own mode, append to a log table or upsert of whole
 * rows to a primary-key table.
 *
 * @param columns a partial update of these columns, which include the whole primary key
 * @param mergeMode "default", or "overwrite" to bypass the merge engine
 * @param writerId makes the writes idempotent: batch i of the stream has sequence firstSequence +
 *     i, and a batch whose (writer, sequence) was applied is acknowledged again without being
 *     applied twice
 * @param createPartitions false refuses rows of a partition that does not exist (NOT_FOUND) instead
 *     of creating it (Fluss's client.writer.dynamic-create-partition.enabled); null is true
 */
public record WriteRequest(
    String table,
    WriteMode mode,
    List<String> columns,
    String mergeMode,
    String writerId,
    Long firstSequence,
    Boolean createPartitions) {

  public static WriteRequest of(String table) {
    return new WriteRequest(table, null, null, null, null, null, null);
  }

  public WriteRequest withMode(WriteMode mode) {
    return new WriteRequest(
        table, mode, columns, mergeMode, writerId, firstSequence, createPartitions);
  }

  public WriteRequest withColumns(String... columns) {
    return new WriteRequest(
        table, mode, List.of(columns), mergeMode, writerId, firstSequence, createPartitions);
  }

  public WriteRequest withMergeMode(String mergeMode) {
    return new WriteRequest(
        table, mode, columns, mergeMode, writerId, firstSequence, createPartitions);
  }

  public WriteRequest withWriter(String writerId, long firstSequence) {
    return new WriteRequest(
        table, mode, columns, mergeMode, writerId, firstSequence, createPartitions);
  }

  /** Whether rows of a missing partition create it (the default) or fail the batch. */
  public WriteRequest withCreatePartitions(boolean create) {
    return new WriteRequest(table, mode, columns, mergeMode, writerId, firstSequence, create);
  }

  /** Whether a PATH descriptor says all of this request. */
  boolean isPlain() {
    return mode == null
        && (columns == null || columns.isEmpty())
        && mergeMode == null
        && writerId == null
        && firstSequence == null
        && createPartitions == null;
  }
}
