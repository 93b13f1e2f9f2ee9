package io.fluxgate.flink.sink;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.TableInfo;
import io.fluxgate.flink.FluxgateOptions.DistributionMode;
import io.fluxgate.flink.TableName;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.RowLevelModificationScanContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.sink.abilities.SupportsPartitioning;
import org.apache.flink.table.connector.sink.abilities.SupportsRowLevelDelete;
import org.apache.flink.table.connector.sink.abilities.SupportsRowLevelUpdate;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * A fluxgate table as a Flink sink: log tables take inserts; primary-key tables take upserts and
 * deletes, and an {@code INSERT INTO t (a, b)} is a partial update of those columns. Rows are
 * shuffled by bucket as sink.distribution-mode says (Fluss's rules), and aggregation tables get
 * undo recovery (exactly-once).
 */
public final class FluxgateTableSink
    implements DynamicTableSink,
        SupportsRowLevelDelete,
        SupportsRowLevelUpdate,
        SupportsPartitioning {
  static final int BATCH_ROWS = 16384;

  private final ConnectionSettings connection;
  private final TableName name;
  private final RowType rowType;
  private final boolean primaryKey;
  private final boolean ignoreDelete;
  private final SinkOptions options;

  /** The table as the server describes it; fetched once, when planning needs it. */
  private TableInfo info;

  /** An UPDATE statement: Flink's target columns are then not the written ones (FLINK-36736). */
  private boolean update;

  /** A DELETE statement: its rows are whole, and only their keys matter. */
  private boolean delete;

  public FluxgateTableSink(
      ConnectionSettings connection,
      TableName name,
      RowType rowType,
      boolean primaryKey,
      boolean ignoreDelete,
      SinkOptions options) {
    this.connection = connection;
    this.name = name;
    this.rowType = rowType;
    this.primaryKey = primaryKey;
    this.ignoreDelete = ignoreDelete;
    this.options = options;
  }

  /**
   * Nothing to do: the planner puts the values of {@code INSERT ... PARTITION (dt = '...')} into
   * the rows, and the server routes every row by its partition values.
   */
  @Override
  public void applyStaticPartition(Map<String, String> partition) {}

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
            .filter(cols -> cols.length > 0)
            .map(
                cols ->
                    Arrays.stream(cols)
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
    if (update || delete) {
      targets = IntStream.range(0, rowType.getFieldCount()).toArray();
    }
    if (targets.length != rowType.getFieldCount() && !primaryKey) {
      throw new ValidationException(
          "log table " + name.base() + " is written whole: a partial INSERT needs a primary key");
    }
    TableInfo info = info();
    String mergeEngine = info.options().get("table.merge-engine");
    targets = withoutAutoIncrement(targets, info);
    if (primaryKey) {
      checkPartialUpdate(targets, info, mergeEngine);
    }
    Bucketer bucketer = shuffle(info, mergeEngine);
    boolean undo = "aggregation".equals(mergeEngine) && options.undoRecovery();
    SinkSpec spec =
        new SinkSpec(
            name.writable(),
            rowType,
            targets,
            primaryKey,
            info.isPartitioned(),
            ignoreDelete,
            BATCH_ROWS,
            bucketer,
            undo,
            options.producerId(),
            options.createPartitions());
    FluxgateSink sink = new FluxgateSink(connection, spec);
    return new DataStreamSinkProvider() {
      @Override
      public DataStreamSink<?> consumeDataStream(
          ProviderContext provider, DataStream<RowData> rows) {
        DataStream<RowData> in =
            bucketer == null ? rows : rows.partitionCustom(new Bucketer.ToOwner(), bucketer);
        DataStreamSink<RowData> out = in.sinkTo(sink).setParallelism(rows.getParallelism());
        provider.generateUid("writer").ifPresent(out::uid);
        return out;
      }
    };
  }

  /**
   * The server assigns the auto-increment column: an INSERT that writes it is refused here, at
   * planning, and DELETE and UPDATE statements (whose rows carry it unchanged) leave it out.
   */
  private int[] withoutAutoIncrement(int[] targets, TableInfo info) {
    String column = info.options().get("auto-increment.fields");
    int auto = column == null ? -1 : rowType.getFieldIndex(column.trim());
    if (auto < 0 || Arrays.stream(targets).noneMatch(t -> t == auto)) {
      return targets;
    }
    if (!update && !delete) {
      List<String> others =
          Arrays.stream(targets)
              .filter(t -> t != auto)
              .mapToObj(rowType.getFieldNames()::get)
              .toList();
      throw new ValidationException(
          String.format(
              "Table %s: column '%s' is the auto-increment column; its values are assigned by the"
                  + " server and cannot be written. Name the other columns: INSERT INTO %s (%s)"
                  + " ...",
              name.base(), column, name.base(), String.join(", ", others)));
    }
    return Arrays.stream(targets).filter(t -> t != auto).toArray();
  }

  /**
   * Fluss's and the server's rules for a partial update (a write of some of the columns other than
   * the auto-increment one), checked at planning with Flink's exception instead of when the job's
   * writer first meets the server. (Flink's validator itself refuses one that leaves out a NOT NULL
   * column, such as a primary-key one.)
   */
  private void checkPartialUpdate(int[] targets, TableInfo info, String mergeEngine) {
    int autoIncrement = info.options().containsKey("auto-increment.fields") ? 1 : 0;
    boolean whole = targets.length == rowType.getFieldCount() - autoIncrement;
    if (!whole && ("first_row".equals(mergeEngine) || "versioned".equals(mergeEngine))) {
      throw new ValidationException(
          String.format(
              "Table %s uses the '%s' merge engine which does not support partial updates. Please"
                  + " make sure the number of specified columns in INSERT INTO matches columns of"
                  + " the table.",
              name.base(), mergeEngine.toUpperCase()));
    }
  }

  private TableInfo info() {
    if (info == null) {
      try (FluxgateClient client = connection.connect()) {
        info = client.describeTable(name.writable());
      }
    }
    return info;
  }

  // ---- DELETE and UPDATE statements (batch), with Fluss's rules and errors ----

  @Override
  public RowLevelDeleteInfo applyRowLevelDelete(RowLevelModificationScanContext context) {
    checkUpdatable();
    if ("disable".equals(info().options().get("table.delete.behavior"))) {
      throw new UnsupportedOperationException(
          String.format(
              "Table %s has delete behavior set to 'disable' which does not support DELETE"
                  + " statements.",
              name.base()));
    }
    delete = true;
    return new RowLevelDeleteInfo() {}; // the deleted rows, whole
  }

  @Override
  public RowLevelUpdateInfo applyRowLevelUpdate(
      List<Column> updatedColumns, RowLevelModificationScanContext context) {
    checkUpdatable();
    List<String> updated = updatedColumns.stream().map(Column::getName).toList();
    if (updated.stream().anyMatch(info().primaryKey()::contains)) {
      throw new UnsupportedOperationException(
          String.format(
              "Updates to primary keys are not supported, primaryKeys (%s), updatedColumns (%s)",
              info().primaryKey(), updated));
    }
    update = true;
    return new RowLevelUpdateInfo() {}; // the updated rows, whole: an upsert each
  }

  private void checkUpdatable() {
    if (!primaryKey) {
      throw new UnsupportedOperationException(
          String.format(
              "Table %s is a Log Table. Log Table doesn't support DELETE and UPDATE statements.",
              name.base()));
    }
    String mergeEngine = info().options().get("table.merge-engine");
    if (mergeEngine != null) {
      throw new UnsupportedOperationException(
          String.format(
              "Table %s uses the '%s' merge engine which does not support DELETE or UPDATE"
                  + " statements.",
              name.base(), mergeEngine.toUpperCase()));
    }
  }

  /**
   * Fluss's sink.distribution-mode: the Bucketer rows are shuffled with, or null for Flink's own
   * distribution.
   */
  private Bucketer shuffle(TableInfo info, String mergeEngine) {
    DistributionMode mode = options.distribution();
    List<String> bucketKey = bucketKey(info);
    int buckets = Integer.parseInt(info.options().get("bucket.num"));
    if (primaryKey) {
      if (mergeEngine != null && mode != DistributionMode.AUTO && mode != DistributionMode.BUCKET) {
        throw new ValidationException(
            String.format(
                "For primary key tables with merge engine ('%s'), 'sink.distribution-mode' must be"
                    + " 'bucket' or 'auto' (default). Disabling shuffle breaks merge semantics"
                    + " because records with the same key must be processed by the same task."
                    + " Current mode: %s",
                mergeEngine.toUpperCase(), mode));
      }
      return switch (mode) {
        case NONE -> null;
        case AUTO, BUCKET -> new Bucketer(rowType, bucketKey, buckets);
        case PARTITION_DYNAMIC ->
            throw new ValidationException(
                "Unsupported distribution mode: PARTITION_DYNAMIC for primary key table");
      };
    }
    return switch (mode) {
      case NONE -> null;
      case AUTO -> bucketKey.isEmpty() ? null : new Bucketer(rowType, bucketKey, buckets);
      case BUCKET -> {
        if (bucketKey.isEmpty()) {
          throw new ValidationException(
              "BUCKET mode is only supported for log tables with bucket keys");
        }
        yield new Bucketer(rowType, bucketKey, buckets);
      }
      case PARTITION_DYNAMIC ->
          throw new ValidationException(
              "PARTITION_DYNAMIC is only supported for partitioned tables");
    };
  }

  /** The table's bucket key: bucket.key, else the primary key; empty for a keyless log table. */
  private static List<String> bucketKey(TableInfo info) {
    String key = info.options().get("bucket.key");
    if (key != null && !key.isBlank()) {
      return Arrays.stream(key.split(",")).map(String::trim).toList();
    }
    return info.hasPrimaryKey() ? info.primaryKey() : List.of();
  }

  @Override
  public DynamicTableSink copy() {
    FluxgateTableSink copy =
        new FluxgateTableSink(connection, name, rowType, primaryKey, ignoreDelete, options);
    copy.info = info;
    copy.update = update;
    copy.delete = delete;
    return copy;
  }

  @Override
  public String asSummaryString() {
    return "fluxgate";
  }
}
