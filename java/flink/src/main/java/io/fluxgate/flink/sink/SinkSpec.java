package io.fluxgate.flink.sink;

import java.io.Serializable;
import java.util.List;
import org.apache.flink.table.types.logical.RowType;

/**
 * What a sink writes, shipped with the job.
 *
 * @param rowType the rows the sink receives: every column of the table
 * @param targets positions in rowType of the columns written; all of them but on partial updates
 * @param primaryKey whether the table is a primary-key table (changelog writes) or a log table
 * @param partitioned whether the table is partitioned: offsets are then per partition
 * @param ignoreDelete drop DELETE rows instead of deleting
 * @param bucketer the server's buckets, when rows are shuffled by bucket; else null
 * @param undo whether the sink undoes, on restore, what it wrote after the checkpoint
 * @param producerId what undo recovery registers its offsets under; null: the job id
 * @param createPartitions whether rows of a missing partition create it, or fail the write
 */
public record SinkSpec(
    String table,
    RowType rowType,
    int[] targets,
    boolean primaryKey,
    boolean partitioned,
    boolean ignoreDelete,
    int batchRows,
    Bucketer bucketer,
    boolean undo,
    String producerId,
    boolean createPartitions)
    implements Serializable {

  List<String> targetNames() {
    return java.util.Arrays.stream(targets).mapToObj(i -> rowType.getFieldNames().get(i)).toList();
  }

  boolean partial() {
    return targets.length != rowType.getFieldCount();
  }
}
