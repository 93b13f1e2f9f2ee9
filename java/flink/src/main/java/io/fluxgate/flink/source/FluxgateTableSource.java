package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.JsonNode;
import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.Predicates;
import io.fluxgate.client.SystemColumns;
import io.fluxgate.flink.FluxgateOptions;
import io.fluxgate.flink.TableName;
import io.fluxgate.flink.lookup.LookupTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.connector.source.abilities.SupportsAggregatePushDown;
import org.apache.flink.table.connector.source.abilities.SupportsFilterPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsLimitPushDown;
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.expressions.AggregateExpression;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.types.RowKind;

/**
 * A fluxgate table (or view) as a Flink scan source, with Fluss's meanings of scan.startup.mode and
 * changelog modes that follow the table's options. A batch read of a partitioned table is a {@link
 * PartitionPrunedSource}.
 */
public class FluxgateTableSource
    implements ScanTableSource,
        SupportsProjectionPushDown,
        SupportsFilterPushDown,
        SupportsLimitPushDown,
        LookupTableSource,
        SupportsAggregatePushDown {
  private final ConnectionSettings connection;
  private final TableName name;
  private final boolean primaryKey;

  /** The primary key's columns; empty for log tables. */
  private final List<String> keyColumns;

  private final Map<String, String> tableOptions;
  private final FluxgateOptions.StartupMode startup;

  /** Null unless scan.startup.mode was set: $changelog's default differs from the tables'. */
  private final boolean startupGiven;

  private final Long startupTimestamp;
  private final boolean batch;

  /** The table's partition keys; empty when it is not partitioned. */
  final List<String> partitionKeys;

  /** scan.partition.discovery.interval in milliseconds. */
  private final long discoveryMillis;

  private DataType produced;

  /** What lookup joins need (the table's keys, the lookup options); set by the factory. */
  public LookupTable lookups;

  private String filter;
  private Long limit;

  /** A point lookup's key instead of a scan (see {@link PointLookup}), or null. */
  private String lookupKey;

  /** Whether the query is COUNT(*), answered by the server (see {@link CountStar}). */
  private boolean countStar;

  /** The partitions the planner left after pruning, by name; null: all. */
  List<String> partitions;

  /** A batch read of a partitioned table prunes partitions in the planner, else reads them all. */
  public static FluxgateTableSource of(
      ConnectionSettings connection,
      TableName name,
      List<String> keyColumns,
      Map<String, String> tableOptions,
      FluxgateOptions.StartupMode startup,
      boolean startupGiven,
      Long startupTimestamp,
      boolean batch,
      DataType produced,
      List<String> partitionKeys,
      long discoveryMillis) {
    FluxgateTableSource source =
        new FluxgateTableSource(
            connection,
            name,
            keyColumns,
            tableOptions,
            startup,
            startupGiven,
            startupTimestamp,
            batch,
            produced,
            partitionKeys,
            discoveryMillis);
    // A streaming read is not pruned by the planner: it would fix the partitions at planning
    // time, and a filter on partition columns prunes them on the server, also those discovered
    // later.
    return batch && !partitionKeys.isEmpty() ? new PartitionPrunedSource(source) : source;
  }

  FluxgateTableSource(
      ConnectionSettings connection,
      TableName name,
      List<String> keyColumns,
      Map<String, String> tableOptions,
      FluxgateOptions.StartupMode startup,
      boolean startupGiven,
      Long startupTimestamp,
      boolean batch,
      DataType produced,
      List<String> partitionKeys,
      long discoveryMillis) {
    this.connection = connection;
    this.name = name;
    this.keyColumns = keyColumns;
    this.primaryKey = !keyColumns.isEmpty();
    this.tableOptions = tableOptions;
    this.startup = startup;
    this.startupGiven = startupGiven;
    this.startupTimestamp = startupTimestamp;
    this.batch = batch;
    this.produced = produced;
    this.partitionKeys = List.copyOf(partitionKeys);
    this.discoveryMillis = discoveryMillis;
  }

  /** A copy of other, as planned so far. */
  FluxgateTableSource(FluxgateTableSource other) {
    this(
        other.connection,
        other.name,
        other.keyColumns,
        other.tableOptions,
        other.startup,
        other.startupGiven,
        other.startupTimestamp,
        other.batch,
        other.produced,
        other.partitionKeys,
        other.discoveryMillis);
    this.filter = other.filter;
    this.limit = other.limit;
    this.lookups = other.lookups;
    this.lookupKey = other.lookupKey;
    this.countStar = other.countStar;
    this.partitions = other.partitions;
  }

  /** Whether rows are the changes of a primary-key table (a streaming read of its name). */
  private boolean changes() {
    return primaryKey && name.view() == null && !batch;
  }

  private boolean bounded() {
    return batch || name.view() == TableName.View.LAKE;
  }

  @Override
  public ChangelogMode getChangelogMode() {
    if (!changes()) {
      return ChangelogMode.insertOnly();
    }
    String engine = tableOptions.getOrDefault("table.merge-engine", "");
    String deletes = tableOptions.getOrDefault("table.delete.behavior", "allow");
    if (engine.equals("first_row")) {
      return ChangelogMode.insertOnly();
    }
    if ("wal".equals(tableOptions.get("table.changelog.image"))) {
      return ChangelogMode.upsert();
    }
    ChangelogMode.Builder b =
        ChangelogMode.newBuilder()
            .addContainedKind(RowKind.INSERT)
            .addContainedKind(RowKind.UPDATE_BEFORE)
            .addContainedKind(RowKind.UPDATE_AFTER);
    if (deletes.equals("allow") && !engine.equals("versioned")) {
      b.addContainedKind(RowKind.DELETE);
    }
    return b.build();
  }

  @Override
  public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
    if (countStar) {
      return new CountStar(connection, name.scanned())
          .provider(context.createTypeInformation(produced));
    }
    return SourceProvider.of(
        new FluxgateSource(connection, spec(), context.createTypeInformation(produced)));
  }

  ScanSpec spec() {
    String startupName = startupName();
    List<String> columns = new ArrayList<>();
    if (changes()) {
      columns.add(SystemColumns.CHANGE_TYPE);
    }
    columns.addAll(((RowType) produced.getLogicalType()).getFieldNames());
    return new ScanSpec(
        changes() ? name.base() + TableName.View.CHANGELOG.suffix : name.scanned(),
        columns,
        filter,
        startupName,
        startup == FluxgateOptions.StartupMode.TIMESTAMP ? startupTimestamp : null,
        bounded(),
        limit,
        changes(),
        snapshotKey(startupName),
        lookupKey,
        !partitionKeys.isEmpty(),
        partitions,
        discoveryMillis);
  }

  /** The key columns a snapshot resumes by (see {@link ScanSpec}'s keyColumns). */
  private List<String> snapshotKey(String startupName) {
    if (name.view() == null) {
      return keyColumns;
    }
    return name.view() == TableName.View.CHANGELOG && "full".equals(startupName) ? null : List.of();
  }

  private String startupName() {
    if (name.view() == TableName.View.LAKE) {
      if (startupGiven) {
        throw new ValidationException(
            name.scanned() + " is bounded: it takes no scan.startup.mode");
      }
      return null;
    }
    if (!startupGiven && name.view() == TableName.View.CHANGELOG) {
      return "earliest"; // Fluss's full on $changelog: the changelog from the start, no snapshot
    }
    if (primaryKey && name.view() == null && batch && startup != FluxgateOptions.StartupMode.FULL) {
      throw new ValidationException(
          "a batch read of primary-key table "
              + name.base()
              + " reads its current rows: scan.startup.mode must be full, not "
              + startup.name().toLowerCase());
    }
    if (startup == FluxgateOptions.StartupMode.TIMESTAMP) {
      if (startupTimestamp == null) {
        throw new ValidationException(
            "scan.startup.mode=timestamp needs '"
                + FluxgateOptions.SCAN_STARTUP_TIMESTAMP.key()
                + "'");
      }
      if (startupTimestamp > System.currentTimeMillis()) {
        throw new ValidationException(
            "scan.startup.timestamp " + startupTimestamp + " is in the future");
      }
      return null;
    }
    return startup.name().toLowerCase();
  }

  @Override
  public LookupRuntimeProvider getLookupRuntimeProvider(LookupContext context) {
    return lookups.provider(context.getKeys(), (RowType) produced.getLogicalType());
  }

  @Override
  public boolean supportsNestedProjection() {
    return false;
  }

  @Override
  public void applyProjection(int[][] projectedFields, DataType producedDataType) {
    this.produced = producedDataType;
  }

  @Override
  public Result applyFilters(List<ResolvedExpression> filters) {
    if (changes()) {
      // A filter on a changelog could split an update's before and after images apart.
      return Result.of(List.of(), filters);
    }
    if (batch && primaryKey && name.view() == null) {
      Optional<PointLookup> lookup = PointLookup.of(keyColumns, filters);
      if (lookup.isPresent()) {
        lookupKey = lookup.get().key();
        List<ResolvedExpression> remaining = new ArrayList<>(filters);
        remaining.removeAll(lookup.get().used());
        return Result.of(lookup.get().used(), remaining);
      }
    }
    List<ResolvedExpression> accepted = new ArrayList<>();
    List<ResolvedExpression> remaining = new ArrayList<>();
    List<JsonNode> predicates = new ArrayList<>();
    for (ResolvedExpression f : filters) {
      Optional<JsonNode> p = FilterTranslator.translate(f);
      if (p.isPresent()) {
        predicates.add(p.get());
      }
      // A partition filter stays for the planner's partition pruning, which takes it off.
      (p.isPresent() && !prunedByPlanner(f) ? accepted : remaining).add(f);
    }
    if (!predicates.isEmpty()) {
      JsonNode all =
          predicates.size() == 1
              ? predicates.get(0)
              : Predicates.and(predicates.toArray(JsonNode[]::new));
      filter = all.toString();
    }
    return Result.of(accepted, remaining);
  }

  ConnectionSettings connection() {
    return connection;
  }

  TableName tableName() {
    return name;
  }

  /** Whether the planner prunes partitions by filter: then it needs to see it. */
  boolean prunedByPlanner(ResolvedExpression filter) {
    return false;
  }

  @Override
  public void applyLimit(long limit) {
    if (bounded() && !changes()) {
      this.limit = limit;
    }
  }

  @Override
  public boolean applyAggregates(
      List<int[]> groupingSets, List<AggregateExpression> aggregates, DataType producedDataType) {
    if (!counted() || filter != null || limit != null || !CountStar.is(groupingSets, aggregates)) {
      return false;
    }
    countStar = true;
    produced = producedDataType;
    return true;
  }

  /**
   * Whether the server's row count (PROTOCOL.md §3 table-stats) is what a batch read of this table
   * returns: a primary-key table's current rows, unless its WAL image keeps no count; a log table's
   * rows read from its start, unless it is lake-enabled (a union read).
   */
  private boolean counted() {
    if (!batch || name.view() != null || partitions != null) {
      return false;
    }
    if (primaryKey) {
      return !"wal".equals(tableOptions.get("table.changelog.image"));
    }
    return !"true".equals(tableOptions.get("table.datalake.enabled"))
        && (startup == FluxgateOptions.StartupMode.FULL
            || startup == FluxgateOptions.StartupMode.EARLIEST);
  }

  @Override
  public DynamicTableSource copy() {
    return new FluxgateTableSource(this);
  }

  @Override
  public String asSummaryString() {
    return lookupKey == null ? "fluxgate" : "fluxgate point lookup " + lookupKey;
  }
}
