package io.fluxgate.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.fluxgate.client.Position;
import io.fluxgate.client.Predicates;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Pushes what the server does exactly into the scan request: the columns Spark needs, the filters
 * {@link SparkFilters} translates, and a limit when every filter was pushed. A bare {@code
 * COUNT(*)} is answered by the server's row count, without a scan ({@link CountScan}), unless the
 * option "pushdown.count" is "false".
 */
final class FluxgateScanBuilder
    implements ScanBuilder,
        SupportsPushDownFilters,
        SupportsPushDownRequiredColumns,
        SupportsPushDownLimit,
        SupportsPushDownAggregates {
  private final FluxgateTable table;
  private List<Field> columns;
  private final List<Filter> pushed = new ArrayList<>();
  private final List<JsonNode> predicates = new ArrayList<>();
  private Long limit;
  private boolean filtered; // whether Spark offered any filter, pushed or not
  private Long count; // the rows of a pushed COUNT(*)

  private final Position startup;
  private final boolean pushCount;

  FluxgateScanBuilder(FluxgateTable table, CaseInsensitiveStringMap options) {
    this.table = table;
    this.startup = startup(options);
    this.pushCount = options.getBoolean("pushdown.count", true);
    this.columns = table.arrowSchema().getFields();
  }

  @Override
  public Filter[] pushFilters(Filter[] filters) {
    filtered |= filters.length > 0;
    SparkFilters translator = new SparkFilters(table.arrowSchema());
    List<Filter> rest = new ArrayList<>();
    for (Filter f : filters) {
      Optional<JsonNode> p = translator.translate(f);
      if (p.isPresent()) {
        pushed.add(f);
        predicates.add(p.get());
      } else {
        rest.add(f);
      }
    }
    return rest.toArray(new Filter[0]);
  }

  @Override
  public Filter[] pushedFilters() {
    return pushed.toArray(new Filter[0]);
  }

  @Override
  public void pruneColumns(StructType required) {
    List<Field> kept = new ArrayList<>();
    for (StructField f : required.fields()) {
      kept.add(table.arrowSchema().findField(f.name()));
    }
    columns = kept;
  }

  @Override
  public boolean pushLimit(int limit) {
    this.limit = (long) limit;
    return true;
  }

  @Override
  public boolean supportCompletePushDown(Aggregation aggregation) {
    return isCountStar(aggregation);
  }

  /**
   * Takes a bare COUNT(*) when the server keeps the table's row count: a log table's retained rows,
   * a primary-key table's current rows; not a view, a WAL-image primary-key table or a lake-enabled
   * log table ({@link io.fluxgate.client.FluxgateClient#rowCount}).
   */
  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    if (!isCountStar(aggregation)) {
      return false;
    }
    OptionalLong rows = table.connection().call(c -> c.rowCount(table.name()));
    if (rows.isPresent()) {
      count = rows.getAsLong();
    }
    return rows.isPresent();
  }

  private boolean isCountStar(Aggregation a) {
    return pushCount
        && !filtered
        && limit == null
        && a.groupByExpressions().length == 0
        && a.aggregateExpressions().length == 1
        && a.aggregateExpressions()[0] instanceof CountStar;
  }

  @Override
  public Scan build() {
    if (count != null) {
      return new CountScan(table.name(), count);
    }
    JsonNode filter =
        switch (predicates.size()) {
          case 0 -> null;
          case 1 -> predicates.get(0);
          default -> Predicates.and(predicates.toArray(new JsonNode[0]));
        };
    return new FluxgateScan(table, new Schema(columns), filter, pushed, limit, startup);
  }

  /**
   * Where a stream without a checkpoint starts: option "startup" is "earliest" (the default),
   * "latest" or "timestamp" with "startup.timestamp" in epoch milliseconds.
   */
  static Position startup(CaseInsensitiveStringMap options) {
    String mode = options.getOrDefault("startup", "earliest");
    return switch (mode) {
      case "earliest" -> Position.EARLIEST;
      case "latest" -> Position.LATEST;
      case "timestamp" -> {
        String ms = options.get("startup.timestamp");
        if (ms == null) {
          throw new IllegalArgumentException(
              "fluxgate: startup \"timestamp\" needs the option startup.timestamp (epoch ms)");
        }
        yield Position.atTimestamp(Long.parseLong(ms));
      }
      default ->
          throw new IllegalArgumentException(
              "fluxgate: startup \"" + mode + "\": want earliest, latest or timestamp");
    };
  }
}
