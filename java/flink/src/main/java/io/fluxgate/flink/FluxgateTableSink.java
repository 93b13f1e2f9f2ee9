package io.fluxgate.flink;

import java.util.stream.IntStream;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.SinkV2Provider;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * A fluxgate table as a Flink sink: log tables take inserts; primary-key tables take upserts and
 * deletes, and an {@code INSERT INTO t (a, b)} is a partial update of those columns.
 */
final class FluxgateTableSink implements DynamicTableSink {
  private static final int BATCH_ROWS = 8192;

  private final Connection connection;
  private final TableName name;
  private final RowType rowType;
  private final boolean primaryKey;
  private final boolean ignoreDelete;

  FluxgateTableSink(
      Connection connection,
      TableName name,
      RowType rowType,
      boolean primaryKey,
      boolean ignoreDelete) {
    this.connection = connection;
    this.name = name;
    this.rowType = rowType;
    this.primaryKey = primaryKey;
    this.ignoreDelete = ignoreDelete;
  }

  @Override
  public ChangelogMode getChangelogMode(ChangelogMode requested) {
    if (!primaryKey) {
      return ChangelogMode.insertOnly();
    }
    // An upsert sink: Flink sends no UPDATE_BEFORE and keys the rows by the primary key.
    return ChangelogMode.newBuilder()
        .addContainedKind(RowKind.INSERT)
        .addContainedKind(RowKind.UPDATE_AFTER)
        .addContainedKind(RowKind.DELETE)
        .build();
  }

  @Override
  public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
    int[] targets =
        context
            .getTargetColumns()
            .map(
                cols ->
                    java.util.Arrays.stream(cols)
                        .mapToInt(
                            path -> {
                              if (path.length != 1) {
                                throw new ValidationException(
                                    "fluxgate cannot write nested column paths");
                              }
                              return path[0];
                            })
                        .toArray())
            .orElse(IntStream.range(0, rowType.getFieldCount()).toArray());
    if (targets.length != rowType.getFieldCount() && !primaryKey) {
      throw new ValidationException(
          "log table " + name.base() + " is written whole: a partial INSERT needs a primary key");
    }
    return SinkV2Provider.of(
        new FluxgateSink(
            connection,
            new SinkSpec(name.writable(), rowType, targets, primaryKey, ignoreDelete, BATCH_ROWS)));
  }

  @Override
  public DynamicTableSink copy() {
    return new FluxgateTableSink(connection, name, rowType, primaryKey, ignoreDelete);
  }

  @Override
  public String asSummaryString() {
    return "fluxgate";
  }
}
