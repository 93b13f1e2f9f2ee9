package io.fluxgate.flink;

import com.fasterxml.jackson.databind.JsonNode;
import io.fluxgate.client.Predicates;
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
 * changelog modes that follow the table's options.
 */
final class FluxgateTableSource
    implements ScanTableSource,
        SupportsProjectionPushDown,
        SupportsFilterPushDown,
        SupportsLimitPushDown,
        LookupTableSource,
        SupportsAggregatePushDown {
  private final Connection connection;
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

  private DataType produced;

  /** What lookup joins need (the table's keys, the lookup options); set by the factory. */
  LookupTable lookups;
  private String filter;
  private Long limit;

  /** A point lookup's key instead of a scan (see {@link PointLookup}), or null. */
  private String lookupKey;

  /** Whether the query is COUNT(*), answered by the server (see {@link CountStar}). */
  private boolean countStar;

  FluxgateTableSource(
      Connection connection,
      TableName name,
      List<String> keyColumns,
      Map<String, String> tableOptions,
      FluxgateOptions.StartupMode startup,
      boolean startupGiven,
      Long startupTimestamp,
      boolean batch,
      DataType produced) {
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
      columns.add(FluxgateTables.CHANGE_TYPE);
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
        lookupKey);
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
        accepted.add(f);
        predicates.add(p.get());
      } else {
        remaining.add(f);
      }
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
    if (!batch || name.view() != null) {
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
    FluxgateTableSource copy =
        new FluxgateTableSource(
            connection,
            name,
            keyColumns,
            tableOptions,
            startup,
            startupGiven,
            startupTimestamp,
            batch,
            produced);
    copy.filter = filter;
    copy.limit = limit;
    copy.lookups = lookups;
    copy.lookupKey = lookupKey;
    copy.countStar = countStar;
    return copy;
  }

  @Override
  public String asSummaryString() {
    return lookupKey == null ? "fluxgate" : "fluxgate point lookup " + lookupKey;
  }
}
